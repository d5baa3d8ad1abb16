//! minbpe's tie rule ("first seen"): among pairs with the highest count, the one whose first
//! occurrence comes first in the current token sequence, the words read in text order.
//!
//! A position is `word << 32 | byte offset of the pair's left token in the word`. Word ids are
//! arena offsets, which follow the order of the words given ([`super::table::Words::from_ordered`]:
//! distinct chunks in order of first appearance, or the whole text as one word); byte offsets,
//! unlike symbol indices, do not move when a merge shrinks the word. Merging never reorders
//! tokens, so ordering by this position is ordering by first occurrence.
//!
//! Every merge makes a new id, so the only pairs that gain occurrences are brand-new pairs
//! containing it; an existing pair only loses occurrences, so its first position only moves
//! later and its count only falls. A queue entry is therefore never worse than its pair's true
//! key, and the lazy queue stays exact: an entry popped from the top is checked against the
//! pair's current count and first position (recomputed here, since a merge may have destroyed
//! the occurrence that was first) and pushed back with them when it is stale.

use super::queue::{unpair, Pair};
use super::lists::Lists;
use super::table::{PairInfo, Words};

/// The current first position of pair `p`, dropping from the front of its (ascending) word list
/// the words that no longer hold it; such a word can never hold it again (see the module doc).
/// `None` if no listed word holds it.
pub fn first_position(words: &Words, lists: &mut Lists, info: &mut PairInfo, p: Pair, token_len: &[u32]) -> Option<u64> {
    let (a, b) = unpair(p);
    let mut found = None;
    let mut stale = 0;
    for &w in lists.get(info.words) {
        let syms = words.symbols(w);
        if let Some(k) = syms.windows(2).position(|x| x[0] == a && x[1] == b) {
            let offset: u64 = syms[..k].iter().map(|&t| u64::from(token_len[t as usize])).sum();
            found = Some(u64::from(w) << 32 | offset);
            break;
        }
        stale += 1;
    }
    lists.drop_front(&mut info.words, stale);
    found
}

/// The first position of every byte pair before any merge, as a dense `256 * 256` table
/// (`u64::MAX` where the pair does not occur).
pub fn initial_positions(words: &Words) -> Vec<u64> {
    let mut first = vec![u64::MAX; 256 * 256];
    for (w, _, syms) in words.iter_unmerged() {
        for (k, win) in syms.windows(2).enumerate() {
            let slot = &mut first[(win[0] as usize) << 8 | win[1] as usize];
            if *slot == u64::MAX {
                *slot = u64::from(w) << 32 | k as u64;
            }
        }
    }
    first
}

#[cfg(test)]
mod tests {
    use crate::train::merge::{learn_ordered, MergeOptions};

    /// minbpe's literal loop: recount pairs in first-seen order, take the first with the highest
    /// count, merge it everywhere (left to right, non-overlapping) with id 256 + i.
    fn naive(words: &[Vec<u32>], weights: &[u64], n: usize) -> Vec<(u32, u32)> {
        let mut words = words.to_vec();
        let mut merges = Vec::new();
        for i in 0..n {
            let mut order: Vec<(u32, u32)> = Vec::new();
            let mut count = std::collections::HashMap::new();
            for (w, &c) in words.iter().zip(weights) {
                for x in w.windows(2) {
                    let e = count.entry((x[0], x[1])).or_insert_with(|| {
                        order.push((x[0], x[1]));
                        0
                    });
                    *e += c;
                }
            }
            let Some(top) = order.iter().map(|p| count[p]).max() else { break };
            let best = order.into_iter().find(|p| count[p] == top).expect("a pair has the top count");
            let id = 256 + i as u32;
            for w in words.iter_mut() {
                let mut out = Vec::with_capacity(w.len());
                let mut k = 0;
                while k < w.len() {
                    if k + 1 < w.len() && (w[k], w[k + 1]) == best {
                        out.push(id);
                        k += 2;
                    } else {
                        out.push(w[k]);
                        k += 1;
                    }
                }
                *w = out;
            }
            merges.push(best);
        }
        merges
    }

    fn fast(words: &[Vec<u8>], weights: &[u64], n: usize) -> Vec<(u32, u32)> {
        let refs: Vec<&[u8]> = words.iter().map(|w| w.as_slice()).collect();
        let opts =
            MergeOptions { n_tokens: 256 + n, min_frequency: 1, max_token_length: None, threads: 1, first_seen: true };
        learn_ordered(&refs, weights, &opts, &mut |_| true).unwrap().merges
    }

    #[test]
    fn wikipedia_example_ties_to_first_seen() {
        assert_eq!(fast(&[b"aaabdaaabac".to_vec()], &[1], 3), vec![(97, 97), (256, 97), (257, 98)]);
    }

    #[test]
    fn random_texts_match_the_literal_loop() {
        let mut x: u64 = 7;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for round in 0..300 {
            let n_words = 1 + next(6) as usize;
            let words: Vec<Vec<u8>> = (0..n_words)
                .map(|_| (0..next(if round % 3 == 0 { 60 } else { 14 })).map(|_| b"aab c"[next(5) as usize]).collect())
                .collect();
            let weights: Vec<u64> = words.iter().map(|_| 1 + next(3)).collect();
            let n = next(25) as usize;
            let as_ids: Vec<Vec<u32>> = words.iter().map(|w| w.iter().map(|&b| u32::from(b)).collect()).collect();
            assert_eq!(fast(&words, &weights, n), naive(&as_ids, &weights, n), "{words:?} {weights:?} {n}");
        }
    }
}
