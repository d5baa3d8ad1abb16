//! The word table and the pair index built on several threads, with exactly the result of the
//! serial [`Words::new`] and [`Words::index_pairs`] (same arena, same word lists in the same order).
//!
//! The word table is cut by shard of the word counts: every shard's words get their own range of
//! the arena, sized beforehand, and are copied there by one thread. The pair index is counted per
//! group of shards (one dense 256 x 256 table per group, as in the serial build), the word lists
//! are allocated once at their final size, and each group writes its words into its own slice of
//! every list; groups are in arena order, so every list stays sorted by word id.
//!
//! Performance note (50 MB benchmark mix, 603k words, 2 threads): these two steps come before the
//! first merge and were ~8% of the merge phase's CPU time (`perf`). Built on 2 threads, the merging
//! thread's CPU time for the whole merge phase went from 2.35 and 2.47 s to 2.29 and 2.08 s (two
//! runs each, load average ~12: within the noise, never worse).

use super::queue::pair;
use super::lists::Lists;
use super::table::{PairIndex, PairInfo, Words, HEADER};
use super::words::WordCounts;
use rayon::prelude::*;
use std::ops::Range;

const N: usize = 256 * 256;

/// The arena cut at shard boundaries into about `n` consecutive ranges of similar size.
fn groups(sizes: &[usize], n: usize) -> Vec<Range<usize>> {
    let total: usize = sizes.iter().sum();
    let per = total.div_ceil(n.max(1)).max(1);
    let (mut out, mut at, mut size) = (Vec::new(), 0, 0);
    for (i, &s) in sizes.iter().enumerate() {
        size += s;
        if size >= per || i + 1 == sizes.len() {
            out.push(at..at + size);
            (at, size) = (at + size, 0);
        }
    }
    out
}

/// The arena size of every shard (words of two or more bytes with a non-zero count).
fn shard_sizes(counts: &WordCounts) -> Vec<usize> {
    let sized = |s: &super::words::Shard| s.iter().filter(|&(w, &c)| w.len() > 1 && c > 0).map(|(w, _)| w.len() + HEADER).sum();
    counts.shards().iter().map(sized).collect()
}

impl Words {
    /// [`Words::new`] on `threads` threads; also returns the groups for [`Words::index_pairs_on`].
    pub fn new_on(counts: &WordCounts, threads: usize) -> (Self, Vec<Range<usize>>) {
        let sizes = shard_sizes(counts);
        let total: usize = sizes.iter().sum();
        assert!(total < u32::MAX as usize, "the word table exceeds 16 GB (2^32 entries)");
        let mut arena = vec![0u32; total];
        let mut regions: Vec<(usize, &mut [u32])> = Vec::with_capacity(sizes.len());
        let mut rest: &mut [u32] = &mut arena;
        for (s, &size) in sizes.iter().enumerate() {
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(size);
            regions.push((s, mine));
            rest = tail;
        }
        let shards = counts.shards();
        let n_words: usize = crate::parallel::pool(threads).install(|| {
            regions
                .into_par_iter()
                .map(|(s, region)| {
                    let (mut at, mut n) = (0, 0);
                    for (word, &c) in shards[s].iter().filter(|&(w, &c)| w.len() > 1 && c > 0) {
                        region[at..at + HEADER].copy_from_slice(&[word.len() as u32, c as u32, (c >> 32) as u32]);
                        for (x, &b) in region[at + HEADER..at + HEADER + word.len()].iter_mut().zip(word.iter()) {
                            *x = u32::from(b);
                        }
                        (at, n) = (at + HEADER + word.len(), n + 1);
                    }
                    n
                })
                .sum()
        });
        let ranges = groups(&sizes, threads);
        (Words::from_parts(arena, n_words), ranges)
    }

    /// [`Words::index_pairs`] on `threads` threads, one per arena range of [`Words::new_on`]
    /// (ranges in order, each made of whole words). Only before the first merge.
    pub fn index_pairs_on(&self, ranges: &[Range<usize>], threads: usize) -> (PairIndex, Lists) {
        let pool = crate::parallel::pool(threads);
        let key = |win: &[u32]| ((win[0] as usize) << 8 | win[1] as usize) & (N - 1);
        // pass 1: per range, the pair counts and how many words hold each pair
        let tables: Vec<(Vec<u64>, Vec<u32>)> = pool.install(|| {
            ranges
                .par_iter()
                .map(|r| self.byte_pair_counts(r.clone()))
                .collect()
        });
        let sizes = (0..N).map(|k| tables.iter().map(|t| t.1[k] as usize).sum());
        let (mut lists, heads) = Lists::with_sizes(sizes);
        // pass 2: every range fills its own slice of every list (lists lie in order in the pool)
        let mut slices: Vec<Vec<&mut [u32]>> = (0..ranges.len()).map(|_| Vec::with_capacity(N)).collect();
        let mut all: &mut [u32] = lists.data_mut();
        for (k, head) in heads.iter().enumerate() {
            let (list, tail) = std::mem::take(&mut all).split_at_mut(head.len());
            all = tail;
            let mut rest: &mut [u32] = list;
            for (t, (_, sizes)) in tables.iter().enumerate() {
                let (mine, tail) = std::mem::take(&mut rest).split_at_mut(sizes[k] as usize);
                slices[t].push(mine);
                rest = tail;
            }
        }
        pool.install(|| {
            slices.into_par_iter().zip(ranges.par_iter()).for_each(|(mut out, r)| {
                let mut fill = vec![0u32; N];
                for (i, _, syms) in self.iter_range(r.clone()) {
                    for win in syms.windows(2) {
                        let k = key(win);
                        let f = fill[k] as usize;
                        if f == 0 || out[k][f - 1] != i {
                            out[k][f] = i;
                            fill[k] += 1;
                        }
                    }
                }
            })
        });
        let mut index = PairIndex::default();
        index.reserve(heads.iter().filter(|l| !l.is_empty()).count());
        for (k, &words) in heads.iter().enumerate() {
            let count = tables.iter().fold(0u64, |a, t| a.saturating_add(t.0[k]));
            if count > 0 {
                index.insert(pair((k >> 8) as u32, (k & 255) as u32), PairInfo { count, words });
            }
        }
        (index, lists)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_counts(n: usize, seed: u64) -> WordCounts {
        let mut wc = WordCounts::new();
        let mut x = seed;
        for _ in 0..n {
            let mut next = || {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                x >> 33
            };
            let len = 1 + next() as usize % 12;
            let word: Vec<u8> = (0..len).map(|_| b"abcde \xff\x00"[next() as usize % 8]).collect();
            wc.add_word(&word, (x >> 20) % 1000 + u64::from((x >> 40) % 7 == 0) * (1 << 40));
        }
        wc.add_word(b"zero", 0);
        wc
    }

    #[test]
    fn parallel_build_equals_serial() {
        for (n, seed) in [(0, 1), (1, 2), (50, 3), (20_000, 4)] {
            let wc = random_counts(n, seed);
            let serial = Words::new(&wc);
            let (want, want_lists) = serial.index_pairs();
            for threads in [1, 2, 3, 8] {
                let (words, ranges) = Words::new_on(&wc, threads);
                assert_eq!(words.arena, serial.arena, "n {n}, threads {threads}");
                assert_eq!(words.len(), serial.len());
                let (got, got_lists) = words.index_pairs_on(&ranges, threads);
                assert_eq!(got.len(), want.len());
                for (p, info) in &want {
                    let g = &got[p];
                    let (gw, ww) = (got_lists.get(g.words), want_lists.get(info.words));
                    assert_eq!((g.count, gw), (info.count, ww), "n {n}, threads {threads}");
                }
            }
        }
    }

    #[test]
    fn groups_cover_the_arena_in_order() {
        let sizes = [5, 0, 7, 1, 0, 0, 9, 2];
        for n in 1..10 {
            let g = groups(&sizes, n);
            assert_eq!((g[0].start, g[g.len() - 1].end), (0, 24));
            assert!(g.windows(2).all(|w| w[0].end == w[1].start));
            assert!(g.len() <= n.max(1) + 1);
        }
        assert_eq!(groups(&[], 2), Vec::<Range<usize>>::new());
    }
}
