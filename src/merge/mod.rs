//! The rank merge: turn one pre-tokenized piece into token ids by repeatedly merging the adjacent
//! pair whose concatenated bytes have the lowest rank (ties: leftmost).
//!
//! Two implementations give the same result: [`small`] rescans a flat array (fastest for the short
//! pieces that dominate real text) and [`heap`] keeps a priority queue over a linked list
//! (O(n log n), used for long pieces so that no input is quadratic).

pub mod cache;
pub mod heap;
pub mod lookup;
pub mod small;

pub use lookup::{FastRanks, RankLookup};

use crate::error::{Error, Result};
use crate::vocab::Rank;
use rustc_hash::FxHashMap;

/// Pieces at least this long go to the heap merge.
/// Performance note: below ~64 bytes the flat rescan wins (fewer branches, no allocation beyond
/// one small vector); at 100+ bytes the heap wins and keeps the worst case O(n log n).
pub const HEAP_THRESHOLD: usize = 64;

pub type Ranks = FxHashMap<Vec<u8>, Rank>;

/// Encodes one piece (which is not itself a token) and appends its ids to `out`.
#[inline]
pub fn byte_pair_encode_into<R: RankLookup>(ranks: &R, piece: &[u8], out: &mut Vec<Rank>) -> Result<()> {
    byte_pair_encode_bounded(ranks, usize::MAX, piece, out)
}

/// As [`byte_pair_encode_into`], knowing that no token is longer than `max_len` bytes, so that
/// pairs longer than that are never looked up (this keeps long pieces from hashing long slices).
#[inline]
pub fn byte_pair_encode_bounded<R: RankLookup>(ranks: &R, max_len: usize, piece: &[u8], out: &mut Vec<Rank>) -> Result<()> {
    if piece.len() == 1 {
        out.push(ranks.rank_of(piece).ok_or_else(|| Error::NoToken(piece.to_vec()))?);
        return Ok(());
    }
    if piece.len() < HEAP_THRESHOLD {
        small::encode_into(ranks, piece, out)
    } else {
        heap::encode_into(ranks, max_len, piece, out)
    }
}

/// Encodes one piece from scratch (no whole-piece shortcut needed, but it is harmless).
pub fn byte_pair_encode<R: RankLookup>(ranks: &R, piece: &[u8]) -> Result<Vec<Rank>> {
    let mut out = Vec::new();
    if piece.is_empty() {
        return Ok(out);
    }
    byte_pair_encode_into(ranks, piece, &mut out)?;
    Ok(out)
}

#[inline]
pub(crate) fn lookup<R: RankLookup>(ranks: &R, bytes: &[u8]) -> Result<Rank> {
    ranks.rank_of(bytes).ok_or_else(|| Error::NoToken(bytes.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toy() -> Ranks {
        let mut r = Ranks::default();
        for b in 0..=255u8 {
            r.insert(vec![b], b as Rank);
        }
        for (i, t) in ["ab", "bc", "abc", "aa", "aaaa", "cd", "bcd", "abcd"].iter().enumerate() {
            r.insert(t.as_bytes().to_vec(), 256 + i as Rank);
        }
        r
    }

    #[test]
    fn small_and_heap_agree() {
        let r = toy();
        let inputs = ["abcd", "aaaaaaa", "abcabcabcd", "aab", "bcbcbcab", "zzzz"];
        for s in inputs {
            let mut a = vec![];
            let mut b = vec![];
            small::encode_into(&r, s.as_bytes(), &mut a).unwrap();
            heap::encode_into(&r, usize::MAX, s.as_bytes(), &mut b).unwrap();
            assert_eq!(a, b, "{s}");
        }
        let long: String = "abcdaab".repeat(50);
        let mut a = vec![];
        let mut b = vec![];
        small::encode_into(&r, long.as_bytes(), &mut a).unwrap();
        heap::encode_into(&r, 4, long.as_bytes(), &mut b).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn leftmost_tie_and_priority() {
        let r = toy();
        // "ab" (256) beats "bc" (257): a b c -> ab c -> abc
        assert_eq!(byte_pair_encode(&r, b"abc").unwrap(), vec![258]);
        // aaaa: aa at 0 first (leftmost), then aa at 2, then aaaa
        assert_eq!(byte_pair_encode(&r, b"aaaaa").unwrap(), vec![260, b'a' as Rank]);
    }

    #[test]
    fn missing_byte_is_an_error() {
        let mut r = Ranks::default();
        r.insert(b"a".to_vec(), 0);
        assert!(matches!(byte_pair_encode(&r, b"ab"), Err(Error::NoToken(_))));
    }
}
