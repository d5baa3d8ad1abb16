//! Rank lookup: token bytes -> rank, the operation the merge loops spend most of their time in.
//!
//! Performance notes (see `src/PERFORMANCE.md` for the measurements):
//! - Profiling o200k on multilingual text put ~28% of encode time in `HashMap<Vec<u8>, _>::get`
//!   plus `memcmp`. Almost every lookup is of a short byte string (a pair of parts), so
//!   [`FastRanks`] packs keys of up to 15 bytes with their length into integers (one multiply to
//!   hash, integer compares, no memcmp) and keeps only longer tokens in a byte map.
//! - One- and two-byte keys (every initial pair of a merge, and most whole-token lookups of
//!   punctuation and short words) are answered from a direct 64K-entry table (256 kB) with no
//!   hashing at all.
//! - The packed tables are open-addressing arrays whose slot holds key and rank together, so a
//!   lookup touches one cache line where `hashbrown` touches two (control bytes, then bucket).
//! - A 16-bit-per-key filter in front of them answers most absent keys (most pairs tried by a
//!   merge of multi-byte text are not tokens) without touching the slots: multilingual 1.28x
//!   (cl100k) and 1.07x (o200k), English and code unchanged within noise.
//! - That filter is a blocked Bloom filter (fourth round): 3 bits per key in one 64-bit word,
//!   8 bits per key rounded up to a power of two (o200k's 3–7-byte keys: 256 kB instead of the
//!   512 kB of one bit per key at 16 bits). Its word load was most of the merge's samples; half
//!   the bytes stay in L2 better, and 3 bits keep false positives below one bit's: 1.07–1.10x on
//!   multilingual text and random Unicode.
//! - The packed tables are filled in rank order (sixth round), so the frequent tokens (low ranks)
//!   sit in their home slots: ~1.25x on whole-token lookups of English pieces alone, +2–4% on
//!   encoding.

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

/// Keys of up to this many bytes go in a `u64` (7 bytes and the length).
const SHORT: usize = 7;
/// Keys of up to this many bytes go in two `u64`s (15 bytes and the length).
const MEDIUM: usize = 15;
const NO_RANK: Rank = Rank::MAX;

/// `bytes` (at most 7) as a little-endian integer with the length in the top byte. Read as two
/// overlapping loads, not a copy into a buffer: `copy_from_slice` of a variable length became a
/// `memcpy` call whose narrow stores the following 8-byte load had to wait for (store
/// forwarding fails), ~10% of `encode_piece`'s samples.
#[inline(always)]
fn pack(bytes: &[u8]) -> u64 {
    debug_assert!(bytes.len() <= SHORT);
    let n = bytes.len();
    let v = if n >= 4 {
        let lo = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as u64;
        let hi = u32::from_le_bytes([bytes[n - 4], bytes[n - 3], bytes[n - 2], bytes[n - 1]]) as u64;
        lo | hi << (8 * (n - 4))
    } else if n >= 2 {
        let lo = u16::from_le_bytes([bytes[0], bytes[1]]) as u64;
        let hi = u16::from_le_bytes([bytes[n - 2], bytes[n - 1]]) as u64;
        lo | hi << (8 * (n - 2))
    } else {
        bytes.first().map_or(0, |&b| b as u64)
    };
    v | (n as u64) << 56
}

/// `bytes` (8 to 15) as two integers, the second with the length in its top byte; two
/// overlapping 8-byte loads, as in [`pack`].
#[inline(always)]
fn pack2(bytes: &[u8]) -> [u64; 2] {
    debug_assert!(bytes.len() > SHORT && bytes.len() <= MEDIUM);
    let n = bytes.len();
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(w)
    };
    let hi = word(n - 8).checked_shr(8 * (16 - n) as u32).unwrap_or(0);
    [word(0), hi | (n as u64) << 56]
}

/// A key the open-addressing table can hold: `EMPTY` is never a real key (the length byte of a
/// packed key is at most 15, the empty key's is 0xFF).
trait PackedKey: Copy + Eq {
    const EMPTY: Self;
    fn hash(self) -> u64;
}

/// A second, independent hash for the filter bit of a key.
#[inline(always)]
fn filter_hash(h: u64) -> u64 {
    (h ^ (h >> 29)).wrapping_mul(0xD6E8_FEB8_6659_FD93)
}

impl PackedKey for u64 {
    const EMPTY: u64 = u64::MAX;
    #[inline(always)]
    fn hash(self) -> u64 {
        self.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

impl PackedKey for [u64; 2] {
    const EMPTY: [u64; 2] = [u64::MAX; 2];
    #[inline(always)]
    fn hash(self) -> u64 {
        (self[0] ^ self[1].rotate_left(29).wrapping_mul(0xD6E8_FEB8_6659_FD93))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// The filter word of a key (the top bits of its second hash) and its `FILTER_K` bits in that
/// word (the low bits, 6 per bit; they may coincide).
#[inline(always)]
fn filter_probe(h: u64, word_shift: u32) -> (usize, u64) {
    let f = filter_hash(h);
    let mut mask = 0u64;
    for j in 0..FILTER_K {
        mask |= 1u64 << ((f >> (6 * j)) & 63);
    }
    ((f >> word_shift) as usize, mask)
}

/// Linear probing at load <= 1/2 over `(key, rank)` slots, behind a blocked Bloom filter of
/// `FILTER_BITS` bits per entry (small enough to stay in L2, so most absent keys are answered
/// without touching the slots).
#[derive(Debug, Clone)]
struct PackedTable<K> {
    slots: Box<[(K, Rank)]>,
    shift: u32,
    filter: Box<[u64]>,
    filter_shift: u32,
}

const FILTER_BITS: usize = 8;
/// Bits set per key, all in one word (a blocked Bloom filter).
const FILTER_K: u32 = 3;

impl<K: PackedKey> PackedTable<K> {
    /// The table, and whether a key came twice (the first, lowest-rank, entry is kept).
    fn new(entries: &[(K, Rank)]) -> (Self, bool) {
        let n = (entries.len() * 2).max(16).next_power_of_two();
        let bits = (entries.len() * FILTER_BITS).max(128).next_power_of_two();
        let mut t = PackedTable {
            slots: vec![(K::EMPTY, NO_RANK); n].into_boxed_slice(),
            shift: 64 - n.trailing_zeros(),
            filter: vec![0u64; bits / 64].into_boxed_slice(),
            filter_shift: 64 - (bits / 64).trailing_zeros(),
        };
        let mask = n - 1;
        let mut repeated = false;
        for &(k, r) in entries {
            let (word, bits) = filter_probe(k.hash(), t.filter_shift);
            t.filter[word] |= bits;
            let mut i = (k.hash() >> t.shift) as usize;
            while t.slots[i].0 != K::EMPTY && t.slots[i].0 != k {
                i = (i + 1) & mask;
            }
            if t.slots[i].0 == k {
                repeated = true;
                continue;
            }
            t.slots[i] = (k, r);
        }
        (t, repeated)
    }

    #[inline(always)]
    fn get(&self, k: K) -> Option<Rank> {
        let h = k.hash();
        let (word, bits) = filter_probe(h, self.filter_shift);
        if self.filter[word] & bits != bits {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = (h >> self.shift) as usize;
        loop {
            let (key, rank) = self.slots[i];
            if key == k {
                return Some(rank);
            }
            if key == K::EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }
}

/// Ranks split by key length: one and two bytes in a direct table, up to 7 and up to 15 bytes
/// packed into integers, the rest by bytes.
#[derive(Debug, Clone)]
pub struct FastRanks {
    /// Index `b0` (one byte) or `256 + (b0 << 8 | b1)` (two bytes); `NO_RANK` if not a token.
    direct: Box<[Rank]>,
    short: PackedTable<u64>,
    medium: PackedTable<[u64; 2]>,
    long: FxHashMap<Box<[u8]>, Rank>,
}

impl Default for FastRanks {
    fn default() -> Self {
        FastRanks::new(std::iter::empty())
    }
}

impl FastRanks {
    pub fn new<'a>(ranks: impl IntoIterator<Item = (&'a Vec<u8>, &'a Rank)>) -> Self {
        Self::from_pairs(ranks.into_iter().map(|(k, &v)| (k.as_slice(), v))).0
    }

    /// The tables of `(token, rank)` pairs, and whether a token came more than once (the last
    /// one's rank is kept for a token of up to 2 or over 15 bytes, the lowest otherwise).
    pub fn from_pairs<'a>(ranks: impl IntoIterator<Item = (&'a [u8], Rank)>) -> (Self, bool) {
        let mut direct = vec![NO_RANK; 256 + (1 << 16)].into_boxed_slice();
        let (mut short, mut medium) = (Vec::new(), Vec::new());
        let mut long = FxHashMap::default();
        let mut repeated = false;
        for (k, v) in ranks {
            let slot = match k.len() {
                1 => Some(&mut direct[k[0] as usize]),
                2 => Some(&mut direct[256 + ((k[0] as usize) << 8 | k[1] as usize)]),
                _ => None,
            };
            if let Some(slot) = slot {
                repeated |= *slot != NO_RANK;
                *slot = v;
            }
            if k.len() <= SHORT {
                short.push((pack(k), v));
            } else if k.len() <= MEDIUM {
                medium.push((pack2(k), v));
            } else {
                repeated |= long.insert(k.into(), v).is_some();
            }
        }
        // In rank order, so that a token's home slot is only ever taken by a token of lower rank:
        // the most frequent tokens (the lowest ranks) are found by the first probe.
        short.sort_unstable_by_key(|e| e.1);
        medium.sort_unstable_by_key(|e| e.1);
        let (short, r1) = PackedTable::new(&short);
        let (medium, r2) = PackedTable::new(&medium);
        (FastRanks { direct, short, medium, long }, repeated || r1 || r2)
    }
}

impl RankLookup for FastRanks {
    #[inline(always)]
    fn rank_of(&self, bytes: &[u8]) -> Option<Rank> {
        let r = match bytes.len() {
            1 => self.direct[bytes[0] as usize],
            2 => self.direct[256 + ((bytes[0] as usize) << 8 | bytes[1] as usize)],
            0 | 3..=SHORT => return self.short.get(pack(bytes)),
            8..=MEDIUM => return self.medium.get(pack2(bytes)),
            _ => return self.long.get(bytes).copied(),
        };
        (r != NO_RANK).then_some(r)
    }
}

/// Lookups of keys of 3 to 7 bytes that the caller has packed itself: `key` is `bytes` as a
/// little-endian integer with the length in the top byte, as [`pack`] makes it. The flat merge
/// (`small.rs`) packs its keys from a padded copy of the piece with one load and a mask, where
/// `pack` branches on the length twice (once in [`FastRanks::rank_of`], once in `pack`) and the
/// lengths of the pairs a merge looks up follow no pattern a branch predictor can learn.
pub trait ShortKeyLookup: RankLookup {
    #[inline(always)]
    fn rank_of_short(&self, key: u64, bytes: &[u8]) -> Option<Rank> {
        debug_assert_eq!(key, pack(bytes));
        self.rank_of(bytes)
    }
}

impl ShortKeyLookup for FxHashMap<Vec<u8>, Rank> {}

impl ShortKeyLookup for FastRanks {
    #[inline(always)]
    fn rank_of_short(&self, key: u64, bytes: &[u8]) -> Option<Rank> {
        debug_assert_eq!(key, pack(bytes));
        self.short.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_keys_are_distinct_by_length() {
        let mut r: FxHashMap<Vec<u8>, Rank> = FxHashMap::default();
        let keys: [&[u8]; 12] = [
            b"a",
            b"a\0",
            b"\0",
            b"",
            b"abcdefg",
            b"abcdefgh",
            b"\0\0\0\0\0\0\0",
            b"ab",
            b"\xff\xff",
            b"abcdefghijklmno",
            b"abcdefghijklmnop",
            b"abcdefgh\0",
        ];
        for (i, k) in keys.iter().enumerate() {
            r.insert(k.to_vec(), i as Rank);
        }
        let f = FastRanks::new(&r);
        for (k, v) in &r {
            assert_eq!(f.rank_of(k), Some(*v), "{k:?}");
        }
        for missing in [
            &b"b"[..],
            b"a\0\0",
            b"abcdefghi",
            b"ba",
            b"\xff",
            b"abcdefghijklmn",
            b"abcdefgh\0\0",
        ] {
            assert_eq!(f.rank_of(missing), None, "{missing:?}");
        }
    }

    /// The overlapping-load packing equals the plain definition (bytes, zero padding, length in
    /// the last byte) for every length and every start in a buffer.
    #[test]
    fn packing_matches_the_byte_layout() {
        let buf: Vec<u8> = (0..64u32).map(|i| (i.wrapping_mul(0x9E) ^ 0xA5) as u8).collect();
        for start in 0..16 {
            for n in 0..=MEDIUM {
                let bytes = &buf[start..start + n];
                let mut want = [0u8; 16];
                want[..n].copy_from_slice(bytes);
                if n <= SHORT {
                    want[7] = n as u8;
                    assert_eq!(pack(bytes).to_le_bytes(), want[..8], "{n}");
                } else {
                    want[15] = n as u8;
                    let got = pack2(bytes);
                    assert_eq!([got[0].to_le_bytes(), got[1].to_le_bytes()].concat(), want, "{n}");
                }
            }
        }
    }

    /// Every slot between a key's home slot and its own holds a lower rank: filled in rank order,
    /// a token is only ever pushed on by tokens of lower rank (the frequent ones find their home).
    fn displaced_only_by_lower_ranks<K: PackedKey + std::fmt::Debug>(t: &PackedTable<K>) {
        let mask = t.slots.len() - 1;
        for (at, &(k, r)) in t.slots.iter().enumerate() {
            if k == K::EMPTY {
                continue;
            }
            let mut i = (k.hash() >> t.shift) as usize;
            while i != at {
                assert!(t.slots[i].1 < r, "{k:?} (rank {r}) behind rank {}", t.slots[i].1);
                i = (i + 1) & mask;
            }
        }
    }

    #[test]
    fn agrees_with_a_hash_map_on_many_keys() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut r: FxHashMap<Vec<u8>, Rank> = FxHashMap::default();
        while r.len() < 20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = 1 + (seed % 20) as usize;
            let key: Vec<u8> = (0..len).map(|i| (seed >> (i % 8 * 8)) as u8 % 4).collect();
            let n = r.len() as Rank;
            r.entry(key).or_insert(n);
        }
        let f = FastRanks::new(&r);
        displaced_only_by_lower_ranks(&f.short);
        displaced_only_by_lower_ranks(&f.medium);
        for (k, v) in &r {
            assert_eq!(f.rank_of(k), Some(*v));
            let mut other = k.clone();
            other.push(9);
            assert_eq!(f.rank_of(&other), r.get(&other).copied());
        }
    }

    /// Every token of the real vocabularies is found with its rank; each token with one byte
    /// added, or its last byte changed, is found exactly when the vocabulary has it.
    #[test]
    fn every_rank_of_the_real_vocabularies() {
        for name in ["cl100k_base", "o200k_base"] {
            let path = crate::fuzzing::data_dir().join("ranks").join(format!("{name}.tiktoken"));
            let Ok(data) = std::fs::read(&path) else {
                eprintln!("skipping {name}: {} not found", path.display());
                continue;
            };
            let r = crate::rankfile::parse(&data, name).unwrap();
            let f = FastRanks::new(&r);
            displaced_only_by_lower_ranks(&f.short);
            displaced_only_by_lower_ranks(&f.medium);
            for (k, &v) in &r {
                assert_eq!(f.rank_of(k), Some(v), "{name} {k:?}");
                let mut other = k.clone();
                other.push(k[0] ^ 0x5A);
                assert_eq!(f.rank_of(&other), r.get(&other).copied(), "{name} {other:?}");
                other.pop();
                *other.last_mut().unwrap() ^= 0x80;
                assert_eq!(f.rank_of(&other), r.get(&other).copied(), "{name} {other:?}");
            }
        }
    }
}
