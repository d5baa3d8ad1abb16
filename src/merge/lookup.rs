//! Rank lookup: token bytes -> rank, the operation the merge loops spend most of their time in.
//!
//! Performance note: profiling o200k on multilingual text put ~28% of encode time in
//! `HashMap<Vec<u8>, _>::get` plus `memcmp`. Almost every lookup is of a short byte string (a pair
//! of parts), so [`FastRanks`] packs keys of up to 7 bytes with their length into one `u64` (one
//! multiply to hash, one integer compare, no memcmp) and keeps longer tokens in a byte map.

use crate::vocab::Rank;
use rustc_hash::FxHashMap;

/// Anything the merge loops can look ranks up in.
pub trait RankLookup {
    fn rank_of(&self, bytes: &[u8]) -> Option<Rank>;
}

impl RankLookup for FxHashMap<Vec<u8>, Rank> {
    #[inline]
    fn rank_of(&self, bytes: &[u8]) -> Option<Rank> {
        self.get(bytes).copied()
    }
}

const SHORT: usize = 7;

#[inline(always)]
fn pack(bytes: &[u8]) -> u64 {
    debug_assert!(bytes.len() <= SHORT);
    let mut buf = [0u8; 8];
    buf[..bytes.len()].copy_from_slice(bytes);
    buf[7] = bytes.len() as u8;
    u64::from_le_bytes(buf)
}

/// Ranks split by key length: short keys packed into `u64`s, the rest by bytes.
#[derive(Debug, Clone, Default)]
pub struct FastRanks {
    short: FxHashMap<u64, Rank>,
    long: FxHashMap<Box<[u8]>, Rank>,
}

impl FastRanks {
    pub fn new<'a>(ranks: impl IntoIterator<Item = (&'a Vec<u8>, &'a Rank)>) -> Self {
        let mut t = FastRanks::default();
        for (k, &v) in ranks {
            if k.len() <= SHORT {
                t.short.insert(pack(k), v);
            } else {
                t.long.insert(k.as_slice().into(), v);
            }
        }
        t
    }
}

impl RankLookup for FastRanks {
    #[inline(always)]
    fn rank_of(&self, bytes: &[u8]) -> Option<Rank> {
        if bytes.len() <= SHORT {
            self.short.get(&pack(bytes)).copied()
        } else {
            self.long.get(bytes).copied()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_keys_are_distinct_by_length() {
        let mut r: FxHashMap<Vec<u8>, Rank> = FxHashMap::default();
        for (i, k) in [&b"a"[..], b"a\0", b"\0", b"", b"abcdefg", b"abcdefgh", b"\0\0\0\0\0\0\0"].iter().enumerate() {
            r.insert(k.to_vec(), i as Rank);
        }
        let f = FastRanks::new(&r);
        for (k, v) in &r {
            assert_eq!(f.rank_of(k), Some(*v), "{k:?}");
        }
        assert_eq!(f.rank_of(b"b"), None);
        assert_eq!(f.rank_of(b"a\0\0"), None);
        assert_eq!(f.rank_of(b"abcdefghi"), None);
    }
}
