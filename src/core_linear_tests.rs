//! `CoreBpe` and the linear merge: when its tables are built, and that every path gives the
//! heap merge's tokens.

use super::*;
use crate::merge::heap;

fn toy() -> CoreBpe {
    let mut ranks: Ranks = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
    for (i, t) in ["ab", "abab", "ba", "bab", "abababab"].iter().enumerate() {
        ranks.insert(t.as_bytes().to_vec(), 256 + i as Rank);
    }
    CoreBpe::new(ranks, vec![], r"\S+|\s+").unwrap()
}

fn reference(bpe: &CoreBpe, piece: &[u8]) -> Vec<Rank> {
    let mut out = vec![];
    heap::encode_into(bpe.ranks(), usize::MAX, piece, &mut out).unwrap();
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
    // many distinct bytes: too many tokens for tables of its own bytes, so the full ones
    let wide: String = (b'!'..=b'~').map(char::from).collect();
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
fn unsuitable_vocabulary_keeps_the_heap() {
    // "abc" (300) is built from "a" + "bc" (301): not in rank order, so no tables
    let mut ranks: Ranks = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
    ranks.insert(b"abc".to_vec(), 300);
    ranks.insert(b"bc".to_vec(), 301);
    let bpe = CoreBpe::new(ranks, vec![], r"\S+|\s+").unwrap();
    let long = "abcab".repeat(LINEAR_BUILD_AFTER / 5 + 1);
    assert_eq!(
        bpe.encode_ordinary(&long).unwrap(),
        reference(&bpe, long.as_bytes())
    );
    assert_eq!(bpe.linear_tables(), Some(false));
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
