//! The flat-array rank merge for short pieces (tiktoken's algorithm).
//!
//! `parts[i] = (start, rank of the pair starting at part i)`. Each round finds the minimum rank,
//! merges that pair and recomputes only the two neighbouring pair ranks. O(n·m) for n bytes and m
//! merges, which beats anything cleverer for the 2–20 byte pieces of natural text. Pieces of
//! [`STACK_PARTS`] bytes or more go to the heap merge (the encoder never sends them here).
//!
//! Performance notes (`src/PERFORMANCE.md`, "Sixth round: the flat merge"):
//! - Parts and bytes live in fixed-size stack arrays, so a merge allocates nothing (the heap
//!   allocation per piece was ~10% of encode time on multilingual text) and indexing them needs
//!   few bounds checks.
//! - Keys of 3–7 bytes (nearly every pair looked up after a merge, and most output tokens) are
//!   packed from a copy of the piece padded by 8 bytes: one 8-byte load, a mask and the length,
//!   with no branch on the length, and looked up in the packed table directly
//!   ([`ShortKeyLookup`]). The generic lookup branches on the length twice, and the lengths of a
//!   merge's pairs (3, 4, 6, 5, …) follow no pattern: 1.04–1.15x on the merge alone (random
//!   Unicode 0.99–1.10), 1.04–1.06x on encoding multilingual text.
//! - The output ids are not looked up (seventh round): a merged part's id is the rank of the pair
//!   it was merged from, kept in a small array indexed by the part's first byte (the left part of
//!   a merge keeps its start, so later merges overwrite it and nothing moves it); single bytes
//!   still come from the byte table. Carrying the id inside `parts` (12-byte parts) lost in the
//!   sixth round; this costs one store per merge: 1.03–1.07x on the merge alone (random Unicode
//!   1.12–1.15), 1.02–1.06x on encoding multilingual text.

use super::{heap, RankLookup, ShortKeyLookup};
use crate::error::{Error, Result};
use crate::vocab::Rank;

/// Pieces shorter than this are merged here, in stack arrays.
pub const STACK_PARTS: usize = 64;

/// The piece padded by 8 bytes, so that an 8-byte load at any start stays in bounds.
type Padded = [u8; STACK_PARTS + 8];

/// The rank of `piece[s..e]` (`padded` holds the same bytes), `None` if it is not a token.
/// `SHORT_FROM` is 3, or 0 where the caller knows the span has at least 3 bytes (a pair after a
/// merge), which saves a compare on the hottest path.
#[inline(always)]
fn rank_of_span<R: ShortKeyLookup, const SHORT_FROM: usize>(
    ranks: &R,
    piece: &[u8],
    padded: &Padded,
    s: usize,
    e: usize,
) -> Option<Rank> {
    let n = e - s;
    if n <= 7 && n >= SHORT_FROM {
        debug_assert!(n >= 3);
        let at = s % STACK_PARTS; // s < STACK_PARTS already: only drops the bounds check
        let mut word = [0u8; 8];
        word.copy_from_slice(&padded[at..at + 8]);
        let key = u64::from_le_bytes(word) & ((1u64 << (8 * n)) - 1) | (n as u64) << 56;
        ranks.rank_of_short(key, &piece[s..e])
    } else {
        ranks.rank_of(&piece[s..e])
    }
}

/// The ids of a piece of two to four bytes **that is not a token**, appended to `out`, without
/// the flat merge's arrays, scans or cache: `None` (nothing appended) if one of its bytes has no
/// token, for the caller's general path to report. Such a piece takes at most two merges, and
/// the merge that would join the last two parts is never looked up: that pair is the whole
/// piece. Two bytes are their byte tokens; three need only the direct table.
#[inline(always)]
pub fn encode_tiny<R: RankLookup>(ranks: &R, piece: &[u8], out: &mut Vec<Rank>) -> Option<usize> {
    const NO: Rank = Rank::MAX;
    let byte = |x: u8| ranks.rank_of(&[x]);
    let pair = |s: &[u8]| ranks.rank_of(s).unwrap_or(NO);
    match *piece {
        [a, b] => {
            out.extend_from_slice(&[byte(a)?, byte(b)?]);
            Some(2)
        }
        [a, b, c] => {
            let (x, y, z) = (byte(a)?, byte(b)?, byte(c)?);
            let (ab, bc) = (pair(&[a, b]), pair(&[b, c]));
            // the lower pair merges (the left one on a tie); then only the whole piece is left
            let (ids, n) = match (ab, bc) {
                (NO, NO) => ([x, y, z], 3),
                _ if ab <= bc => ([ab, z, 0], 2),
                _ => ([x, bc, 0], 2),
            };
            out.extend_from_slice(&ids[..n]);
            Some(n)
        }
        [a, b, c, d] => {
            let (x, y, z, w) = (byte(a)?, byte(b)?, byte(c)?, byte(d)?);
            let (ab, bc, cd) = (pair(&[a, b]), pair(&[b, c]), pair(&[c, d]));
            // After the first merge three parts are left, and the lower of their two pairs (the
            // left one on a tie) is the second and last.
            let second = |l: Rank, r: Rank, left: [Rank; 2], right: [Rank; 2], none: [Rank; 3]| match (l, r) {
                (NO, NO) => (none, 3),
                _ if l <= r => ([left[0], left[1], 0], 2),
                _ => ([right[0], right[1], 0], 2),
            };
            let (ids, n) = if ab == NO && bc == NO && cd == NO {
                out.extend_from_slice(&[x, y, z, w]);
                return Some(4);
            } else if ab <= bc && ab <= cd {
                // [ab, c, d]: the pairs abc and cd
                let abc = pair(&piece[..3]);
                second(abc, cd, [abc, w], [ab, cd], [ab, z, w])
            } else if bc <= cd {
                // [a, bc, d]: the pairs abc and bcd
                let (abc, bcd) = (pair(&piece[..3]), pair(&piece[1..]));
                second(abc, bcd, [abc, w], [x, bcd], [x, bc, w])
            } else {
                // [a, b, cd]: the pairs ab and bcd
                let bcd = pair(&piece[1..]);
                second(ab, bcd, [ab, cd], [x, bcd], [x, y, cd])
            };
            out.extend_from_slice(&ids[..n]);
            Some(n)
        }
        _ => None,
    }
}

#[inline]
pub fn encode_into<R: ShortKeyLookup>(ranks: &R, piece: &[u8], out: &mut Vec<Rank>) -> Result<()> {
    debug_assert!(piece.len() >= 2);
    let n = piece.len();
    if n >= STACK_PARTS {
        return heap::encode_into(ranks, usize::MAX, piece, out);
    }
    let mut padded: Padded = [0; STACK_PARTS + 8];
    padded[..n].copy_from_slice(piece);
    let mut parts = [(0u32, Rank::MAX); STACK_PARTS + 1];
    let mut min_rank: (Rank, usize) = (Rank::MAX, usize::MAX);
    for i in 0..n - 1 {
        let rank = ranks.rank_of(&piece[i..i + 2]).unwrap_or(Rank::MAX);
        if rank < min_rank.0 {
            min_rank = (rank, i);
        }
        parts[i] = (i as u32, rank);
    }
    parts[n - 1] = ((n - 1) as u32, Rank::MAX);
    parts[n] = (n as u32, Rank::MAX);
    let mut len = n + 1;

    let pair_rank = |parts: &[(u32, Rank)], len: usize, i: usize| -> Rank {
        if i + 3 < len {
            let (s, e) = (parts[i].0 as usize, parts[i + 3].0 as usize);
            rank_of_span::<R, 0>(ranks, piece, &padded, s, e).unwrap_or(Rank::MAX)
        } else {
            Rank::MAX
        }
    };

    // The id of a merged part is the rank of the pair it was merged from; it is kept at the
    // part's first byte, which no later merge moves (the merged part keeps its left start).
    let mut ids = [0 as Rank; STACK_PARTS];
    while min_rank.0 != Rank::MAX {
        let i = min_rank.1;
        ids[parts[i].0 as usize % STACK_PARTS] = min_rank.0;
        if i > 0 {
            parts[i - 1].1 = pair_rank(&parts, len, i - 1);
        }
        parts[i].1 = pair_rank(&parts, len, i);
        parts.copy_within(i + 2..len, i + 1);
        len -= 1;
        min_rank = (Rank::MAX, usize::MAX);
        for (j, &(_, rank)) in parts[..len - 1].iter().enumerate() {
            if rank < min_rank.0 {
                min_rank = (rank, j);
            }
        }
    }
    for w in parts[..len].windows(2) {
        let (s, e) = (w[0].0 as usize, w[1].0 as usize);
        if e - s > 1 {
            out.push(ids[s % STACK_PARTS]);
        } else {
            let byte = &piece[s..e];
            out.push(ranks.rank_of(byte).ok_or_else(|| Error::NoToken(byte.to_vec()))?);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::equivalence_tests::Rng;
    use crate::merge::{FastRanks, RankLookup, Ranks};

    /// A part merged again at the same start gets the id of its last merge, and a part that
    /// was merged into its left neighbour leaves no id behind: "abcd" grows ab -> abc -> abcd
    /// at start 0; in "xabyy", "ab" (start 1) is merged into "xab" (start 0), "yy" stays.
    /// Ranks are chosen so that no id equals a byte's, and a lookup of the output would find
    /// the same ids (the heap merge checks that).
    #[test]
    fn output_ids_come_from_the_merges() {
        let mut ranks = Ranks::default();
        for b in 0..=255u8 {
            ranks.insert(vec![b], b as Rank);
        }
        for (t, r) in [("ab", 300), ("abc", 301), ("abcd", 302), ("xab", 303), ("yy", 304)] {
            ranks.insert(t.as_bytes().to_vec(), r);
        }
        let fast = FastRanks::new(&ranks);
        let cases = [("abcd", vec![302]), ("xabyy", vec![303, 304]), ("yxab", vec![b'y' as Rank, 303])];
        for (piece, want) in cases {
            let (mut got, mut heap_ids) = (Vec::new(), Vec::new());
            encode_into(&fast, piece.as_bytes(), &mut got).unwrap();
            heap::encode_into(&ranks, usize::MAX, piece.as_bytes(), &mut heap_ids).unwrap();
            assert_eq!(got, want, "{piece}");
            assert_eq!(heap_ids, want, "{piece}");
        }
    }

    /// `encode_tiny` equals the flat merge on every piece of two to four bytes over a small
    /// alphabet that is not a token, for random vocabularies over it (equal ranks included, so
    /// that the left-first rule on ties is exercised), and leaves `out` alone without a byte's
    /// token.
    #[test]
    fn tiny_pieces_merge_as_the_flat_merge() {
        let mut rng = Rng::new(3);
        let alphabet = b"ab\0\xff";
        let mut pieces: Vec<Vec<u8>> = Vec::new();
        for n in 2..=4u32 {
            for code in 0..4usize.pow(n) {
                pieces.push((0..n).map(|k| alphabet[code / 4usize.pow(k) % 4]).collect());
            }
        }
        for round in 0..400 {
            let mut ranks = Ranks::default();
            for (i, &b) in alphabet.iter().enumerate() {
                ranks.insert(vec![b], i as Rank);
            }
            let spread = if round % 2 == 0 { 1000 } else { 6 }; // few ranks: many ties
            for p in pieces.iter().filter(|p| p.len() > 1) {
                if rng.below(3) == 0 {
                    ranks.insert(p.clone(), 4 + rng.below(spread) as Rank);
                }
            }
            let fast = FastRanks::new(&ranks);
            for p in pieces.iter().filter(|p| !ranks.contains_key(*p)) {
                let (mut got, mut want) = (vec![7], vec![7]);
                let n = encode_tiny(&fast, p, &mut got);
                encode_into(&ranks, p, &mut want).unwrap();
                assert_eq!(n, Some(want.len() - 1), "{p:?}");
                assert_eq!(got, want, "{p:?} round {round}");
            }
        }
        let mut ranks = Ranks::default();
        ranks.insert(b"a".to_vec(), 0);
        ranks.insert(b"ab".to_vec(), 1);
        let mut out = vec![7];
        assert_eq!(encode_tiny(&FastRanks::new(&ranks), b"aab", &mut out), None);
        assert_eq!(encode_tiny(&FastRanks::new(&ranks), b"bb", &mut out), None);
        assert_eq!(encode_tiny(&FastRanks::new(&ranks), b"abcde", &mut out), None);
        assert_eq!(out, [7]);
    }

    /// The first `limit` bytes of each of `files` under the shared corpora, one after the other
    /// (a missing file is left out, with a message).
    fn corpus_sample(files: &[&str], limit: usize) -> Vec<u8> {
        let dir = crate::fuzzing::data_dir().join("corpora");
        let mut text = Vec::new();
        for name in files {
            match std::fs::read(dir.join(name)) {
                Ok(data) => text.extend_from_slice(&data[..data.len().min(limit)]),
                Err(e) => eprintln!("SKIPPED part: corpora/{name}: {e}"),
            }
        }
        text
    }

    /// cl100k_base and o200k_base from the shared data, each with its name (a missing one is
    /// left out, with a message).
    fn real_vocabularies() -> Vec<(&'static str, Ranks)> {
        let dir = crate::fuzzing::data_dir();
        let mut out = Vec::new();
        for name in ["cl100k_base", "o200k_base"] {
            let path = dir.join("ranks").join(format!("{name}.tiktoken"));
            match std::fs::read(&path) {
                Ok(data) => out.push((name, crate::rankfile::parse(&data, name).unwrap())),
                Err(_) => eprintln!("SKIPPED: {name}: {} not found; set BPEKIT_TEST_DATA", path.display()),
            }
        }
        out
    }

    /// `encode_tiny` equals the heap merge on the real vocabularies: every 2- to 4-byte window
    /// of the corpora that is not a token, and random ones.
    #[test]
    fn tiny_pieces_merge_as_the_heap_on_real_vocabularies() {
        let files = ["tatoeba/tatoeba.rus-eng.rus", "tatoeba/tatoeba.hin-eng.hin", "taylorswift.txt"];
        let mut text = corpus_sample(&files, 30_000);
        let mut rng = Rng::new(9);
        text.extend((0..20_000).map(|_| rng.next() as u8));
        for (name, ranks) in real_vocabularies() {
            let fast = FastRanks::new(&ranks);
            let mut checked = 0;
            for n in 2..=4 {
                for p in text.windows(n).filter(|p| !ranks.contains_key(*p)) {
                    let (mut got, mut want) = (Vec::new(), Vec::new());
                    assert_eq!(encode_tiny(&fast, p, &mut got), Some(got.len()));
                    heap::encode_into(&ranks, usize::MAX, p, &mut want).unwrap();
                    assert_eq!(got, want, "{name} {p:?}");
                    checked += 1;
                }
            }
            assert!(checked > 50_000, "{name}: {checked}");
        }
    }

    /// Every span of 1 to 9 bytes, at every start of pieces of every length up to 63 (so spans
    /// end right before the padding), gets the same rank from the packed path as from the
    /// generic lookup and the hash map: a key packed with one byte too many or too few, or with
    /// the wrong length, would find another token or none.
    #[test]
    fn packed_spans_match_the_generic_lookup() {
        let mut rng = Rng::new(11);
        // bytes from a small alphabet, so that many spans are tokens and many are not
        let buf: Vec<u8> = (0..STACK_PARTS - 1).map(|_| b"ab\0\xff"[rng.below(4)]).collect();
        let mut ranks = Ranks::default();
        for s in 0..buf.len() {
            for e in s + 1..=(s + 9).min(buf.len()) {
                if rng.below(3) > 0 {
                    let next = ranks.len() as Rank;
                    ranks.entry(buf[s..e].to_vec()).or_insert(next);
                }
            }
        }
        let fast = FastRanks::new(&ranks);
        for n in 1..buf.len() {
            let piece = &buf[..n];
            let mut padded: Padded = [0x55; STACK_PARTS + 8];
            padded[..n].copy_from_slice(piece);
            for s in 0..n {
                for e in s + 1..=(s + 9).min(n) {
                    let want = ranks.get(&piece[s..e]).copied();
                    assert_eq!(fast.rank_of(&piece[s..e]), want);
                    assert_eq!(rank_of_span::<_, 3>(&fast, piece, &padded, s, e), want, "{n} {s}..{e}");
                    assert_eq!(rank_of_span::<_, 3>(&ranks, piece, &padded, s, e), want, "{n} {s}..{e}");
                    if e - s >= 3 {
                        assert_eq!(rank_of_span::<_, 0>(&fast, piece, &padded, s, e), want, "{n} {s}..{e}");
                    }
                }
            }
        }
    }

    /// The flat merge over the packed tables (`FastRanks`, as the encoder calls it) equals the
    /// heap merge over a hash map on the real vocabularies: every piece of 2–63 bytes cut from
    /// a stride of the corpora, and random byte strings.
    #[test]
    fn packed_merge_equals_heap_on_real_vocabularies() {
        let files = ["cmn", "hin", "rus"].map(|l| format!("tatoeba/tatoeba.{l}-eng.{l}"));
        let names: Vec<&str> = files.iter().map(String::as_str).chain(["taylorswift.txt"]).collect();
        let text = corpus_sample(&names, 40_000);
        let mut rng = Rng::new(5);
        for (name, ranks) in real_vocabularies() {
            let fast = FastRanks::new(&ranks);
            let mut pieces: Vec<Vec<u8>> = Vec::new();
            let mut at = 0;
            while at + 2 < text.len() {
                let n = 2 + rng.below(STACK_PARTS - 2);
                pieces.push(text[at..(at + n).min(text.len())].to_vec());
                at += n;
            }
            for _ in 0..2000 {
                let n = 2 + rng.below(STACK_PARTS - 2);
                pieces.push((0..n).map(|_| rng.next() as u8).collect());
            }
            for piece in pieces.iter().filter(|p| p.len() >= 2) {
                let (mut got, mut want) = (Vec::new(), Vec::new());
                encode_into(&fast, piece, &mut got).unwrap();
                heap::encode_into(&ranks, usize::MAX, piece, &mut want).unwrap();
                assert_eq!(got, want, "{name} {:?}", String::from_utf8_lossy(piece));
            }
        }
    }
}
