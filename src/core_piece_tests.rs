//! `CoreBpe::encode_piece`: a two-byte piece that is not a token is encoded as its two byte tokens
//! without the cache or the merge, with the merge's result and errors.

use super::*;
use crate::merge::heap;

/// Every byte but `x`, and `ab` (256) and `é` (257); pieces of up to two ASCII letters or spaces,
/// or one other char.
fn toy() -> CoreBpe {
    let mut ranks: Ranks = (0..=255u8).filter(|&b| b != b'x').map(|b| (vec![b], b as Rank)).collect();
    ranks.insert(b"ab".to_vec(), 256);
    ranks.insert("é".as_bytes().to_vec(), 257);
    CoreBpe::new(ranks, vec![], r"[a-z ]{1,2}|[^a-z ]").unwrap()
}

/// Worked out by hand: `ab` and `é` are tokens; `ba`, `b ` and `ü` (0xC3 0xBC) are not, so they are
/// their two bytes; `c` is a one-byte piece at the end.
#[test]
fn two_bytes_that_are_not_a_token_are_their_bytes() {
    let bpe = toy();
    let text = "abbab éüc";
    let want: Vec<Rank> = vec![256, 98, 97, 98, 32, 257, 0xC3, 0xBC, 99];
    assert_eq!(bpe.encode_ordinary(text).unwrap(), want);
    assert_eq!(bpe.count_ordinary(text).unwrap(), want.len());
    // the same as merging each piece
    let mut merged = vec![];
    for piece in bpe.pretokenizer.split(text).unwrap() {
        heap::encode_into(bpe.vocab.encoder(), usize::MAX, piece.as_bytes(), &mut merged).unwrap();
    }
    assert_eq!(merged, want);
    // and the same with the pre-token cache off
    bpe.set_cache_capacity(0);
    assert_eq!(bpe.encode_ordinary(text).unwrap(), want);
}

/// A two-byte piece with a byte that has no token is still the merge's error.
#[test]
fn a_missing_byte_in_two_bytes_is_an_error() {
    let bpe = toy();
    for text in ["ax", "xa", "xx"] {
        match bpe.encode_ordinary(text) {
            Err(Error::NoToken(b)) => assert_eq!(b, b"x", "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
}

/// `unmerged_into`: a piece that is a token is its id, any other piece its bytes' ids, each
/// piece's first id marked; merging each marked run gives `encode_ordinary`.
#[test]
fn unmerged_pieces_are_tokens_or_bytes_with_marks() {
    let bpe = toy();
    let mut got = vec![];
    bpe.unmerged_into("abbab éüc", &mut got).unwrap();
    let m = PIECE_START;
    let want: Vec<Rank> = vec![256 | m, 98 | m, 97, 98 | m, 32, 257 | m, 0xC3 | m, 0xBC, 99 | m];
    assert_eq!(got, want);
    let mut merged = vec![];
    let starts: Vec<usize> = (0..got.len()).filter(|&i| got[i] & m != 0).chain([got.len()]).collect();
    for w in starts.windows(2) {
        let bytes: Vec<u8> = got[w[0]..w[1]].iter().flat_map(|&t| bpe.vocab.token_bytes(t & !m).unwrap().to_vec()).collect();
        merged.extend(bpe.encode_single_piece(&bytes).unwrap());
    }
    assert_eq!(merged, bpe.encode_ordinary("abbab éüc").unwrap());
    // `x` has no token
    let mut out = vec![];
    assert_eq!(bpe.unmerged_into("ax", &mut out), Err(Error::NoToken(vec![b'x'])));
    // the mark hides no id: the vocabulary refuses ids of 2^31 and more
    let mut ranks: Ranks = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
    ranks.insert(b"ab".to_vec(), PIECE_START);
    assert!(matches!(CoreBpe::new(ranks, vec![], "."), Err(Error::Vocab(_))));
}
