//! Tests of the pre-token cache: lookups, replacement within a bucket, hash collisions, the budget
//! bound, pieces and id lists at and past the size of a line, and the pause on text that does not
//! repeat.

use super::lines::{fits, Table, BUCKET_BYTES, PAYLOAD, WAYS};
use super::*;

fn get(c: &mut PieceCache, piece: &[u8]) -> Option<Vec<Rank>> {
    let mut out = vec![99];
    let n = c.get_into(piece, hash_of(piece), &mut out)?;
    assert_eq!(n, out.len() - 1, "the count matches the ids appended");
    assert_eq!(out[0], 99, "ids are appended, not written over");
    Some(out[1..].to_vec())
}

fn put(c: &mut PieceCache, piece: &[u8], ids: &[Rank], cap: usize) {
    c.insert(piece, hash_of(piece), ids, cap);
}

fn table_get(t: &mut Table, piece: &[u8], hash: u64) -> Option<Vec<Rank>> {
    let mut out = Vec::new();
    t.get_into(piece, hash, &mut out).map(|_| out)
}

#[test]
fn stores_finds_and_stays_within_budget() {
    let mut c = PieceCache::default();
    assert_eq!(get(&mut c, b"abc"), None);
    let cap = 64 << 10;
    put(&mut c, b"abc", &[1, 2], cap);
    put(&mut c, b"abd", &[3], cap);
    assert_eq!(get(&mut c, b"abc"), Some(vec![1, 2]));
    assert_eq!(get(&mut c, b"abd"), Some(vec![3]));
    assert_eq!(get(&mut c, b"ab"), None);
    for i in 0..20_000u32 {
        let key = format!("piece{i}");
        put(&mut c, key.as_bytes(), &[i, i + 1, u32::MAX - i], cap);
        assert_eq!(get(&mut c, key.as_bytes()), Some(vec![i, i + 1, u32::MAX - i]));
    }
    let used = c.memory_bytes();
    assert!(used <= cap && used + BUCKET_BYTES > cap, "{used} bytes of a {cap}-byte budget");
    // a new budget rebuilds the table, empty
    put(&mut c, b"x", &[5], 8192);
    assert_eq!(get(&mut c, b"piece19999"), None);
    assert_eq!(get(&mut c, b"x"), Some(vec![5]));
    assert!(c.memory_bytes() <= 8192 && c.memory_bytes() + BUCKET_BYTES > 8192);
}

#[test]
fn memory_never_exceeds_the_budget() {
    for cap in [0, 1, 63, BUCKET_BYTES - 1, BUCKET_BYTES, BUCKET_BYTES + 1, 3 * BUCKET_BYTES, 100_000, 1 << 20] {
        let mut c = PieceCache::default();
        for i in 0..500u32 {
            put(&mut c, &i.to_le_bytes(), &[i], cap);
        }
        let used = c.memory_bytes();
        assert!(used <= cap, "{used} > {cap}");
        assert!(used + 2 * BUCKET_BYTES > cap, "{used} leaves a bucket of {cap} unused");
        if used == 0 {
            assert_eq!(get(&mut c, &7u32.to_le_bytes()), None, "a budget under one bucket caches nothing");
        }
    }
}

/// One bucket: every piece lands in it, so the least recently used one is replaced.
#[test]
fn a_full_bucket_replaces_its_least_recently_used_line() {
    let mut c = PieceCache::default();
    let cap = 2 * BUCKET_BYTES - 1; // one bucket and the alignment slack
    let keys: Vec<Vec<u8>> = (0..=WAYS as u8).map(|i| vec![b'k', i]).collect();
    for (i, k) in keys[..WAYS].iter().enumerate() {
        put(&mut c, k, &[i as Rank], cap);
    }
    // use the oldest, so the second oldest becomes the least recently used
    assert_eq!(get(&mut c, &keys[0]), Some(vec![0]));
    put(&mut c, &keys[WAYS], &[WAYS as Rank], cap);
    assert_eq!(get(&mut c, &keys[WAYS]), Some(vec![WAYS as Rank]));
    assert_eq!(get(&mut c, &keys[0]), Some(vec![0]), "the recently used line stays");
    let gone = if WAYS == 1 { 0 } else { 1 };
    assert_eq!(get(&mut c, &keys[gone]), None, "the least recently used line is replaced");
    assert!(c.memory_bytes() <= cap);
}

/// Different pieces with the same hash (same bucket and tag) are told apart by their bytes and
/// lengths, including pieces that are prefixes of each other or differ only in zero bytes.
#[test]
fn colliding_hashes_are_told_apart_by_the_bytes() {
    let mut t = Table::with_budget(2 * BUCKET_BYTES - 1);
    let h = 0x1234_5678_9abc_def0;
    t.insert(b"ab", h, &[1]);
    assert_eq!(table_get(&mut t, b"ab", h), Some(vec![1]));
    assert_eq!(table_get(&mut t, b"ab\0", h), None);
    assert_eq!(table_get(&mut t, b"a", h), None);
    assert_eq!(table_get(&mut t, b"ba", h), None);
    assert_eq!(table_get(&mut t, b"ab", h ^ 1 << 4), None, "another tag");
    if WAYS > 1 {
        t.insert(b"ab\0", h, &[2, 3]);
        assert_eq!(table_get(&mut t, b"ab\0", h), Some(vec![2, 3]));
        assert_eq!(table_get(&mut t, b"ab", h), Some(vec![1]));
    }
    // an empty line matches nothing, not even the empty piece under tag 0's hash
    let mut empty = Table::with_budget(2 * BUCKET_BYTES - 1);
    assert_eq!(table_get(&mut empty, b"", 0), None);
}

/// Every length of piece and count of ids that fits a line round-trips; one byte or one id more
/// does not fit and is not cached.
#[test]
fn pieces_and_ids_up_to_a_line_and_not_past_it() {
    let cap = 1 << 20;
    let mut c = PieceCache::default();
    let mut cases = Vec::new();
    for len in 1..=MAX_CACHED_PIECE + 8 {
        for n_ids in [1, 2, 5, 8, 13, 14, 15] {
            let piece: Vec<u8> = (0..len).map(|j| (j * 7 + n_ids) as u8).collect();
            let ids: Vec<Rank> = (0..n_ids as Rank).map(|j| j * 100_003 + len as Rank).collect();
            cases.push((piece, ids));
        }
    }
    for (piece, ids) in &cases {
        put(&mut c, piece, ids, cap);
    }
    for (piece, ids) in &cases {
        let fit = piece.len().div_ceil(4) * 4 + 4 * ids.len() <= PAYLOAD;
        assert_eq!(fits(piece.len(), ids.len()), fit);
        let want = if fit { Some(ids.clone()) } else { None };
        assert_eq!(get(&mut c, piece), want, "{} bytes, {} ids", piece.len(), ids.len());
    }
    assert!(fits(MAX_CACHED_PIECE, 1) && !fits(MAX_CACHED_PIECE + 1, 1));
    assert!(fits(24, 8) && fits(4, 13) && !fits(1, 14));
}

/// Pieces that never repeat pause the cache after one window, for longer after each poor window;
/// a window with enough hits ends the pauses.
#[test]
fn pauses_on_text_that_does_not_repeat() {
    let mut c = PieceCache::default();
    let cap = 1 << 20;
    let mut fresh = 0u32;
    let probe = |c: &mut PieceCache, key: &[u8]| -> bool {
        if !c.active() {
            return false;
        }
        if get(c, key).is_none() {
            put(c, key, &[1], cap);
        }
        true
    };
    for _ in 0..WINDOW {
        fresh += 1;
        assert!(probe(&mut c, &fresh.to_le_bytes()));
    }
    let paused = (0..FIRST_PAUSE).filter(|_| !probe(&mut c, b"x")).count();
    assert_eq!(paused as u32, FIRST_PAUSE);
    for _ in 0..WINDOW {
        fresh += 1;
        assert!(probe(&mut c, &fresh.to_le_bytes()));
    }
    assert_eq!(c.skip, 2 * FIRST_PAUSE, "the second poor window pauses twice as long");
    c.skip = 0;
    // a window of repeated pieces (all hits but the first) ends the backoff
    for _ in 0..WINDOW {
        assert!(probe(&mut c, b"again"));
    }
    assert_eq!((c.skip, c.backoff), (0, 0));
    assert_eq!(get(&mut c, b"again"), Some(vec![1]), "the entries survive a pause");
}
