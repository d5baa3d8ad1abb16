//! backtrack == heap == small on hundreds of tiny vocabularies made by a real BPE training loop
//! (most frequent adjacent pair first), and on deliberately broken ones: ranks swapped so merges
//! are out of rank order, extra tokens BPE cannot produce, missing bytes, duplicate ranks.

use super::backtrack::Backtrack;
use super::equivalence_tests::{check, Rng};
use super::Ranks;
use crate::vocab::Rank;
use rustc_hash::FxHashMap;

/// How many vocabularies each test makes (fewer in unoptimized builds).
fn vocab_count(release: usize) -> usize {
    if cfg!(debug_assertions) {
        release / 5
    } else {
        release
    }
}

fn byte_ranks() -> Ranks {
    (0..=255u8).map(|b| (vec![b], b as Rank)).collect()
}

/// Trains `n_merges` merges on `words`: count adjacent pairs, merge the most frequent (ties: the
/// smallest concatenation) everywhere, left to right; a pair whose bytes are already a token is
/// skipped, so every token has a unique rank.
fn train(words: &[Vec<u8>], n_merges: usize) -> Ranks {
    let mut ranks = byte_ranks();
    let mut parts: Vec<Vec<Vec<u8>>> = words
        .iter()
        .map(|w| w.iter().map(|&b| vec![b]).collect())
        .collect();
    for _ in 0..n_merges {
        let mut counts: FxHashMap<(&[u8], &[u8]), usize> = FxHashMap::default();
        for w in &parts {
            for p in w.windows(2) {
                *counts.entry((&p[0], &p[1])).or_default() += 1;
            }
        }
        let best = counts
            .into_iter()
            .map(|((a, b), c)| (c, [a, b].concat(), a.len()))
            .filter(|(_, joined, _)| !ranks.contains_key(joined))
            .min_by(|x, y| {
                y.0.cmp(&x.0)
                    .then_with(|| x.1.cmp(&y.1))
                    .then_with(|| x.2.cmp(&y.2))
            });
        let Some((_, joined, cut)) = best else { break };
        let (a, b) = joined.split_at(cut);
        for w in &mut parts {
            let mut i = 0;
            while i + 1 < w.len() {
                if w[i] == a && w[i + 1] == b {
                    w[i] = joined.clone();
                    w.remove(i + 1);
                }
                i += 1;
            }
        }
        let rank = ranks.len() as Rank;
        ranks.insert(joined, rank);
    }
    ranks
}

fn random_word(rng: &mut Rng, alphabet: &[u8], max_len: usize) -> Vec<u8> {
    // a skewed choice (the first letters are frequent) gives realistic, repetitive merges
    let len = 1 + rng.below(max_len);
    (0..len)
        .map(|_| alphabet[rng.below(alphabet.len()).min(rng.below(alphabet.len()))])
        .collect()
}

fn random_vocab(rng: &mut Rng) -> (Ranks, Vec<u8>) {
    let alphabet: Vec<u8> = b"abcdef"[..2 + rng.below(4)].to_vec();
    let words: Vec<Vec<u8>> = (0..20 + rng.below(200))
        .map(|_| random_word(rng, &alphabet, 12))
        .collect();
    (train(&words, 5 + rng.below(60)), alphabet)
}

/// Runs `check` on random strings over `alphabet` (plus one foreign byte) of lengths up to 700.
fn check_strings(
    rng: &mut Rng,
    ranks: &Ranks,
    alphabet: &[u8],
    count: usize,
    what: &str,
) -> Option<Backtrack> {
    let bt = Backtrack::new(ranks);
    let mut letters = alphabet.to_vec();
    letters.push(b'z');
    for i in 0..count {
        let max = if i % 4 == 0 { 700 } else { 40 };
        let s: Vec<u8> = random_word(rng, &letters, max);
        check(ranks, bt.as_ref(), &s, 700, what);
        let run = vec![letters[rng.below(letters.len())]; 1 + rng.below(300)];
        check(ranks, bt.as_ref(), &run, 700, what);
    }
    bt
}

#[test]
fn trained_vocabularies() {
    let mut rng = Rng::new(1);
    let mut accepted = 0;
    let n = vocab_count(300);
    for v in 0..n {
        let (ranks, alphabet) = random_vocab(&mut rng);
        if check_strings(
            &mut rng,
            &ranks,
            &alphabet,
            25,
            &format!("trained vocab {v}"),
        )
        .is_some()
        {
            accepted += 1;
        }
    }
    // a trained vocabulary builds every token from earlier ones, so the tables almost always apply
    assert!(
        accepted * 10 >= n * 9,
        "only {accepted}/{n} trained vocabularies accepted"
    );
}

#[test]
fn tables_shared_by_threads_answer_as_alone() {
    // the short-pair table (`backtrack/short.rs`) fills itself as threads ask
    let mut rng = Rng::new(5);
    for _ in 0..vocab_count(20) {
        let (ranks, alphabet) = random_vocab(&mut rng);
        let Some(alone) = Backtrack::new(&ranks) else { continue };
        let texts: Vec<Vec<u8>> = (0..200).map(|_| random_word(&mut rng, &alphabet, 300)).collect();
        let want: Vec<Option<Vec<Rank>>> = texts
            .iter()
            .map(|t| {
                let mut out = Vec::new();
                alone.encode_into(t, &mut out).then_some(out)
            })
            .collect();
        let shared = std::sync::Arc::new(Backtrack::new(&ranks).expect("built once already"));
        std::thread::scope(|s| {
            for k in 0..4 {
                let (shared, texts, want) = (shared.clone(), &texts, &want);
                s.spawn(move || {
                    for i in (0..texts.len()).map(|i| (i * (2 * k + 1) + k) % texts.len()) {
                        let mut out = Vec::new();
                        let got = shared.encode_into(&texts[i], &mut out).then_some(out);
                        assert_eq!(got, want[i], "thread {k}, text {i}");
                    }
                });
            }
        });
    }
}

#[test]
fn extra_tokens_that_bpe_cannot_produce() {
    let mut rng = Rng::new(2);
    let mut excluded = 0;
    for v in 0..vocab_count(150) {
        let (mut ranks, alphabet) = random_vocab(&mut rng);
        for _ in 0..1 + rng.below(8) {
            let w = random_word(&mut rng, &alphabet, 6);
            let next = ranks.len() as Rank;
            ranks.entry(w).or_insert(next);
        }
        let bt = check_strings(
            &mut rng,
            &ranks,
            &alphabet,
            20,
            &format!("extra-token vocab {v}"),
        );
        excluded += bt.map_or(0, |b| b.excluded);
    }
    assert!(
        excluded > 0,
        "no generated vocabulary had an unproducible token"
    );
}

#[test]
fn ranks_out_of_merge_order() {
    let mut rng = Rng::new(3);
    let mut rejected = 0;
    for v in 0..vocab_count(150) {
        let (mut ranks, alphabet) = random_vocab(&mut rng);
        let merged: Vec<Vec<u8>> = ranks.keys().filter(|k| k.len() > 1).cloned().collect();
        for _ in 0..1 + rng.below(4) {
            if merged.len() < 2 {
                break;
            }
            let (x, y) = (
                &merged[rng.below(merged.len())],
                &merged[rng.below(merged.len())],
            );
            let (rx, ry) = (ranks[x], ranks[y]);
            ranks.insert(x.clone(), ry);
            ranks.insert(y.clone(), rx);
        }
        // refused, or built without the tokens BPE makes out of rank order
        if refused_or_avoids(&check_strings(&mut rng, &ranks, &alphabet, 20, &format!("swapped vocab {v}"))) {
            rejected += 1;
        }
    }
    assert!(
        rejected > 0,
        "no swapped vocabulary was rejected or avoided tokens; the consistency check is untested"
    );
}

#[test]
fn hand_made_vocabularies() {
    // "abc" (300) is built from "a" + "bc" (301): BPE produces it, but not in rank order
    let mut r = byte_ranks();
    r.insert(b"abc".to_vec(), 300);
    r.insert(b"bc".to_vec(), 301);
    let bt = Backtrack::new(&r).expect("tables without \"abc\"");
    assert_eq!(bt.avoided(), 1);
    assert!(bt.avoids(b"xxabcxx") && !bt.avoids(b"abbcab"));
    let mut rng = Rng::new(4);
    check_strings(&mut rng, &r, b"abc", 20, "out of order");
    // "aaa" (1) is built from "aa" (2) + "a", and then refused wherever it occurs, as "aaaa"
    // (3) is, which contains it
    let mut r = byte_ranks();
    for (t, rank) in [("aaa", 1), ("aa", 2), ("aaaa", 3), ("ab", 4), ("aab", 5)] {
        r.insert(t.as_bytes().to_vec(), 256 + rank);
    }
    let bt = Backtrack::new(&r).expect("tables without \"aaa\"");
    assert!(bt.avoids(b"baaab") && !bt.avoids(b"aabaab"));
    check_strings(&mut rng, &r, b"ab", 40, "late aaa");

    // "abcd" (257) and "xyz" (258) cannot be produced: BPE stops at ab + c + d and x + y + z
    let mut r = byte_ranks();
    for (i, t) in ["ab", "abcd", "xyz"].iter().enumerate() {
        r.insert(t.as_bytes().to_vec(), 256 + i as Rank);
    }
    let bt = Backtrack::new(&r).expect("tables");
    assert_eq!(bt.excluded, 2);
    check_strings(&mut rng, &r, b"abcd", 20, "unproducible");
    let mut out = vec![];
    assert!(bt.encode_into(b"abcabcd", &mut out));
    let (c, d) = (b'c' as Rank, b'd' as Rank);
    assert_eq!(out, vec![256, c, 256, c, d]);

    let mut missing = byte_ranks();
    missing.remove(&vec![0xff]);
    assert!(
        Backtrack::new(&missing).is_none(),
        "a missing byte must disable the tables"
    );
    let mut dup = byte_ranks();
    dup.insert(b"ab".to_vec(), 5);
    assert!(
        Backtrack::new(&dup).is_none(),
        "a duplicate rank must disable the tables"
    );
}

/// Refused, or tables that avoid some tokens (see `Backtrack::avoids`).
fn refused_or_avoids(bt: &Option<Backtrack>) -> bool {
    match bt {
        None => true,
        Some(b) => b.avoided() > 0,
    }
}
