//! `CoreBpe` and the linear merge: when its tables are built, and that every path gives the
//! heap merge's tokens.

use super::*;
use crate::merge::backtrack::lazy::{PARTIAL_BUILD_AFTER, PARTIAL_FIRST};
use crate::merge::heap;
use crate::merge::LINEAR_BUILD_AFTER;

fn toy() -> CoreBpe {
    let mut ranks: Ranks = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
    for (i, t) in ["ab", "abab", "ba", "bab", "abababab"].iter().enumerate() {
        ranks.insert(t.as_bytes().to_vec(), 256 + i as Rank);
    }
    CoreBpe::new(ranks, vec![], r"\S+|\s+").unwrap()
}

fn reference(bpe: &CoreBpe, piece: &[u8]) -> Vec<Rank> {
    let mut out = vec![];
    heap::encode_into(bpe.vocab.encoder(), usize::MAX, piece, &mut out).unwrap();
    out
}

#[test]
fn linear_tables_are_built_only_after_enough_long_pieces() {
    let bpe = toy();
    let piece = "abb".repeat(400);
    assert_eq!(
        bpe.encode_ordinary(&piece).unwrap(),
        reference(&bpe, piece.as_bytes())
    );
    assert_eq!(
        bpe.linear_tables(),
        None,
        "one 1.2 kB piece must not build the tables"
    );
    // many distinct bytes (ASCII, UTF-8 lead and continuation bytes): too many tokens for tables
    // of its own bytes, so the full ones
    let wide: String = (b'!'..=b'~')
        .map(char::from)
        .chain((0xC0..0x800).filter_map(char::from_u32))
        .collect();
    let long = format!("aba{wide}").repeat(LINEAR_BUILD_AFTER / (3 + wide.len()) + 1);
    assert_eq!(
        bpe.encode_ordinary(&long).unwrap(),
        reference(&bpe, long.as_bytes())
    );
    assert_eq!(bpe.linear_tables(), Some(true));
    // now every piece of LINEAR_THRESHOLD bytes or more goes through them
    let text = format!("{} {}", "ab".repeat(LINEAR_THRESHOLD), "bab".repeat(50));
    let want: Vec<Rank> = text
        .split_inclusive(' ')
        .flat_map(|p| {
            let (word, space) = p.split_at(p.trim_end().len());
            let mut ids = reference(&bpe, word.as_bytes());
            ids.extend(bpe.encode_single_piece(space.as_bytes()).unwrap());
            ids
        })
        .collect();
    assert_eq!(bpe.encode_ordinary(&text).unwrap(), want);
    assert_eq!(bpe.clone().linear_tables(), Some(true));
}

#[test]
fn pieces_with_a_token_out_of_rank_order_keep_the_heap() {
    // "abc" (300) is built from "a" + "bc" (301): not in rank order, so the tables leave it out
    // and refuse the pieces holding it
    let mut ranks: Ranks = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
    ranks.insert(b"abc".to_vec(), 300);
    ranks.insert(b"bc".to_vec(), 301);
    let bpe = CoreBpe::new(ranks, vec![], r"\S+|\s+").unwrap();
    let long = "abcab".repeat(LINEAR_BUILD_AFTER / 5 + 1);
    assert_eq!(
        bpe.encode_ordinary(&long).unwrap(),
        reference(&bpe, long.as_bytes())
    );
    assert_eq!(bpe.linear_tables(), None, "the full tables wait for LINEAR_BUILD_AFTER of pieces they can take");
    let without = "bcab".repeat(LINEAR_BUILD_AFTER / 4 + 1);
    assert_eq!(bpe.encode_ordinary(&without).unwrap(), reference(&bpe, without.as_bytes()));
}

#[test]
fn pieces_of_few_bytes_get_tables_of_their_own_tokens() {
    let bpe = toy();
    // a 20 kB piece over {a, b}: past PARTIAL_BUILD_AFTER, below LINEAR_BUILD_AFTER
    let long = "abbab".repeat(PARTIAL_BUILD_AFTER / 5 + 1);
    assert_eq!(bpe.encode_ordinary(&long).unwrap(), reference(&bpe, long.as_bytes()));
    assert_eq!(bpe.partial_linear_tables(), 1);
    assert_eq!(bpe.linear_tables(), None, "the full tables wait for LINEAR_BUILD_AFTER");
    // a piece over a subset of {a, b} reuses them; one with another byte does not
    let aa = "a".repeat(LINEAR_THRESHOLD * 3);
    assert_eq!(bpe.encode_ordinary(&aa).unwrap(), reference(&bpe, aa.as_bytes()));
    assert_eq!(bpe.partial_linear_tables(), 1);
    let abc = "abcab".repeat(LINEAR_THRESHOLD);
    assert_eq!(bpe.encode_ordinary(&abc).unwrap(), reference(&bpe, abc.as_bytes()));
    assert_eq!(bpe.partial_linear_tables(), 2);
    assert_eq!(bpe.clone().partial_linear_tables(), 2);
}

/// xorshift64*: deterministic test inputs.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }

    fn text(&mut self, alphabet: &[u8], n: usize) -> Vec<u8> {
        (0..n).map(|_| alphabet[self.below(alphabet.len())]).collect()
    }
}

/// The 256 bytes, then `n_merges` random merges of two earlier tokens over `alphabet` (a merge
/// list in rank order, as BPE training makes one; repeated concatenations are skipped).
fn random_ranks(rng: &mut Rng, alphabet: &[u8], n_merges: usize) -> Ranks {
    let mut ranks: Ranks = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
    let mut tokens: Vec<Vec<u8>> = alphabet.iter().map(|&b| vec![b]).collect();
    for _ in 0..n_merges * 4 {
        if ranks.len() >= 256 + n_merges {
            break;
        }
        // favour short tokens, as real merge lists do
        let pick = |rng: &mut Rng| rng.below(tokens.len()).min(rng.below(tokens.len()));
        let joined = [tokens[pick(rng)].as_slice(), tokens[pick(rng)].as_slice()].concat();
        if joined.len() <= 12 && !ranks.contains_key(&joined) {
            ranks.insert(joined.clone(), ranks.len() as Rank);
            tokens.push(joined);
        }
    }
    ranks
}

#[test]
fn sub_vocabulary_tables_agree_with_the_heap_on_random_vocabularies() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut checked = 0;
    for round in 0..40 {
        let alphabet = &b"abcdefghij"[..3 + round % 8];
        let n_merges = 20 + rng.below(400);
        let ranks = random_ranks(&mut rng, alphabet, n_merges);
        let bpe = CoreBpe::new(ranks.clone(), vec![], r"\S+|\s+").unwrap();
        // the whole alphabet and a part of it: different sub-vocabularies of one vocabulary
        for sub in [alphabet, &alphabet[..2 + rng.below(alphabet.len() - 1)]] {
            let Some(bt) = Backtrack::for_bytes(&ranks, &ByteSet::of(sub)) else { continue };
            // short pieces, and one long enough for the memo to decide whether it pays
            let long = 5_000 + rng.below(20_000);
            for len in (1..200).step_by(7).chain([long]) {
                let piece = rng.text(sub, len);
                let mut got = vec![];
                if bt.avoids(&piece) {
                    continue; // a token built out of rank order occurs in it
                }
                assert!(bt.encode_into(&piece, &mut got), "round {round}: no sequence");
                assert_eq!(got, reference(&bpe, &piece), "round {round}, {len} bytes");
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "only {checked} pieces compared: the vocabularies were all refused");
}

#[test]
fn every_threshold_gives_the_heap_merge() {
    let mut rng = Rng(42);
    let ranks = random_ranks(&mut rng, b"abcdefgh", 300);
    let bpe = CoreBpe::new(ranks, vec![], r"\S+|\s+").unwrap();
    let sizes = [
        LINEAR_THRESHOLD - 1,
        LINEAR_THRESHOLD,
        PARTIAL_FIRST - 1,
        PARTIAL_FIRST,
        PARTIAL_BUILD_AFTER + 1,
        LINEAR_BUILD_AFTER + 1,
        3_000,
        PARTIAL_FIRST + 1,
    ];
    let alphabets: [&[u8]; 3] = [b"abc", b"abcdefgh", b"defgh"];
    for (i, &n) in sizes.iter().enumerate() {
        let piece = rng.text(alphabets[i % 3], n);
        let text = String::from_utf8(piece.clone()).unwrap();
        assert_eq!(bpe.encode_ordinary(&text).unwrap(), reference(&bpe, &piece), "{n} bytes");
    }
    // "abcdefgh" has more than half the tokens: the full tables are tried after
    // LINEAR_BUILD_AFTER bytes (a random merge list may be refused: then the heap merges);
    // "defgh" and "abc" get tables of their own
    assert_eq!(bpe.partial_linear_tables(), 2);
    assert!(bpe.linear_tables().is_some(), "the full tables were never tried");
    // with the full tables decided, a long piece over a new byte set still gets tables of its own
    let long = rng.text(b"xyz", PARTIAL_FIRST);
    let text = String::from_utf8(long.clone()).unwrap();
    assert_eq!(bpe.encode_ordinary(&text).unwrap(), reference(&bpe, &long));
    assert_eq!(bpe.partial_linear_tables(), 3);
}
