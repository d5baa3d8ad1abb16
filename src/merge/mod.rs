//! The rank merge: turn one pre-tokenized piece into token ids by repeatedly merging the adjacent
//! pair whose concatenated bytes have the lowest rank (ties: leftmost).
//!
//! Three implementations give the same result: [`small`] rescans a flat array (fastest for the
//! short pieces that dominate real text), [`heap`] keeps a priority queue over a linked list
//! (O(n log n)), and [`backtrack`] matches tokens left to right with pair-validity checks (linear,
//! for long pieces; it needs tables built once per vocabulary, and falls back to the heap for a
//! vocabulary whose merges are not in rank order).

pub mod agenda;
pub mod backtrack;
pub mod cache;
#[cfg(test)]
pub(crate) mod equivalence_tests;
pub mod heap;
pub mod lookup;
pub mod pairs;
pub mod small;
pub mod tokens;
#[cfg(test)]
mod toy_vocab_tests;
pub mod trie;

pub use lookup::{FastRanks, RankLookup, ShortKeyLookup};

use crate::error::{Error, Result};
use crate::vocab::Rank;
use rustc_hash::FxHashMap;

/// Pieces at least this long go to the heap merge.
/// Performance note: below ~64 bytes the flat rescan wins (fewer branches, no allocation beyond
/// one small vector); at 100+ bytes the heap wins and keeps the worst case O(n log n).
pub const HEAP_THRESHOLD: usize = 64;

/// Pieces at least this long go to the backtracking merge once its tables exist.
/// Performance note: on natural text without spaces (several scripts), backtracking takes 0.6–0.8x
/// the heap's time from 64 bytes up, and about the same at 32; see `backtrack.rs`.
pub const LINEAR_THRESHOLD: usize = 64;

/// The tables of the backtracking merge are built once this many bytes of pieces of at least
/// `LINEAR_THRESHOLD` bytes have been merged, so text with a few long pieces never builds them.
/// Ski rental: merging 256 kB with the heap costs 50–150 ms, about what the build costs (35 ms for
/// r50k to 170–260 ms for o200k on the loaded machine of `backtrack.rs`'s notes).
pub const LINEAR_BUILD_AFTER: usize = 256 << 10;

pub type Ranks = FxHashMap<Vec<u8>, Rank>;

/// Encodes one piece (which is not itself a token) and appends its ids to `out`.
#[inline]
pub fn byte_pair_encode_into<R: ShortKeyLookup>(ranks: &R, piece: &[u8], out: &mut Vec<Rank>) -> Result<()> {
    byte_pair_encode_bounded(ranks, usize::MAX, piece, out)
}

/// As [`byte_pair_encode_into`], knowing that no token is longer than `max_len` bytes, so that
/// pairs longer than that are never looked up (this keeps long pieces from hashing long slices).
#[inline]
pub fn byte_pair_encode_bounded<R: ShortKeyLookup>(ranks: &R, max_len: usize, piece: &[u8], out: &mut Vec<Rank>) -> Result<()> {
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

/// As [`byte_pair_encode_bounded`], using the linear merge `linear` for long pieces if given.
#[inline]
pub fn byte_pair_encode_with<R: ShortKeyLookup>(
    ranks: &R,
    max_len: usize,
    linear: Option<&backtrack::Backtrack>,
    piece: &[u8],
    out: &mut Vec<Rank>,
) -> Result<()> {
    if let Some(bt) = linear {
        if piece.len() >= LINEAR_THRESHOLD && bt.encode_into(piece, out) {
            return Ok(());
        }
    }
    byte_pair_encode_bounded(ranks, max_len, piece, out)
}

/// Encodes one piece from scratch (no whole-piece shortcut needed, but it is harmless).
pub fn byte_pair_encode<R: ShortKeyLookup>(ranks: &R, piece: &[u8]) -> Result<Vec<Rank>> {
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
    fn dispatch_at_the_edges() {
        let mut r = toy();
        r.insert(b"abcdabcdabcdabcdab".to_vec(), 300); // a token longer than 15 bytes
        r.insert(b"abcdabcd".to_vec(), 301);
        r.insert(b"abcdabcdabcdabcd".to_vec(), 302);
        for n in [1, 2, 3, 15, 16, 17, 18, 62, 63, 64, 65, 130] {
            for base in ["abcd", "a", "zab"] {
                let piece: Vec<u8> = base.bytes().cycle().take(n).collect();
                let mut want = vec![];
                if n == 1 {
                    want.push(r[&piece]);
                } else {
                    heap::encode_into(&r, usize::MAX, &piece, &mut want).unwrap();
                }
                let mut got = vec![];
                byte_pair_encode_bounded(&r, usize::MAX, &piece, &mut got).unwrap();
                assert_eq!(got, want, "{n} x {base}");
                if n >= 2 {
                    got.clear();
                    small::encode_into(&r, &piece, &mut got).unwrap();
                    assert_eq!(got, want, "small, {n} x {base}");
                }
            }
        }
        let mut out = vec![];
        byte_pair_encode_bounded(&r, usize::MAX, b"abcdabcdabcdabcdab", &mut out).unwrap();
        assert_eq!(out, vec![300]);
        let mut missing = Ranks::default();
        missing.insert(b"a".to_vec(), 0);
        missing.insert(b"ab".to_vec(), 1);
        let cases: [(&[u8], &[u8]); 3] = [(b"b", b"b"), (b"ab\xff", b"\xff"), (b"\xffab", b"\xff")];
        for (piece, bad) in cases {
            let err = byte_pair_encode_bounded(&missing, usize::MAX, piece, &mut out);
            assert!(matches!(err, Err(Error::NoToken(ref b)) if b == bad), "{piece:?}");
        }
    }

    #[test]
    fn missing_byte_is_an_error() {
        let mut r = Ranks::default();
        r.insert(b"a".to_vec(), 0);
        assert!(matches!(byte_pair_encode(&r, b"ab"), Err(Error::NoToken(_))));
    }
}
