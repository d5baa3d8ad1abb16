//! The merge phase's data: the word table (every distinct word of two or more symbols as a run of
//! token ids in one flat array, with its count) and the pair index (each adjacent pair's count,
//! weighted by word counts, and the words that may hold it).
//!
//! Performance notes: one map from pair to `PairInfo` (count and word list) instead of two maps
//! halves the hash lookups of the merge loop; the initial word lists are sized exactly in a first
//! pass (growing them by doubling wasted ~40% of their memory on the benchmark mix). Each word's
//! length and count sit right before its symbols: a third of the merge phase was waiting for
//! memory on word visits, and a separate metadata array cost a second cache miss per visit.

use super::lists::{List, Lists};
use super::queue::{pair, Pair};
use super::words::WordCounts;
use rustc_hash::FxHashMap;

/// A pair's count and the words that may contain it (a superset: stale entries are skipped), as
/// a list in the [`Lists`] pool.
#[derive(Debug, Default, Clone, Copy)]
pub struct PairInfo {
    pub count: u64,
    pub words: List,
}

pub type PairIndex = FxHashMap<Pair, PairInfo>;

/// Words are stored one after another in one `u32` arena, each as a header `[len, count low,
/// count high]` followed by its `len` symbols. A word is named by the arena offset of its header,
/// so visiting a word touches one place in memory.
pub const HEADER: usize = 3;

pub struct Words {
    pub arena: Vec<u32>,
    n_words: usize,
}

/// The count stored in a word header.
#[inline]
pub fn header_count(h: &[u32]) -> u64 {
    u64::from(h[1]) | u64::from(h[2]) << 32
}

impl Words {
    /// The words of `counts` with at least two bytes (a single byte has no pair and never changes).
    pub fn new(counts: &WordCounts) -> Self {
        let mut w = Words::with_capacity(counts.iter().map(|(w, _)| w.len()));
        for (word, c) in counts.iter() {
            w.push(word, c);
        }
        w
    }

    /// [`Words::new`], freeing each word of `counts` once it is copied.
    pub fn from_owned(counts: WordCounts) -> Self {
        let mut w = Words::with_capacity(counts.iter().map(|(w, _)| w.len()));
        for (word, c) in counts.into_words() {
            w.push(&word, c);
        }
        w
    }

    /// Words in the given order (word ids then follow it; the first-seen rule needs this).
    pub fn from_ordered(words: &[&[u8]], counts: &[u64]) -> Self {
        let mut w = Words::with_capacity(words.iter().map(|w| w.len()));
        for (word, &c) in words.iter().zip(counts) {
            w.push(word, c);
        }
        w
    }

    fn with_capacity(lengths: impl Iterator<Item = usize>) -> Self {
        let total: usize = lengths.filter(|&n| n > 1).map(|n| n + HEADER).sum();
        assert!(total < u32::MAX as usize, "the word table exceeds 16 GB (2^32 entries)");
        Words { arena: Vec::with_capacity(total), n_words: 0 }
    }

    /// The symbols of word `w`.
    #[inline]
    pub fn symbols(&self, w: u32) -> &[u32] {
        let at = w as usize;
        &self.arena[at + HEADER..at + HEADER + self.arena[at] as usize]
    }

    fn push(&mut self, word: &[u8], count: u64) {
        if word.len() < 2 || count == 0 {
            return;
        }
        self.arena.extend([word.len() as u32, count as u32, (count >> 32) as u32]);
        self.arena.extend(word.iter().map(|&b| u32::from(b)));
        self.n_words += 1;
    }

    pub fn len(&self) -> usize {
        self.n_words
    }

    pub fn is_empty(&self) -> bool {
        self.n_words == 0
    }

    /// A table from its arena (words laid out as [`Words::push`] does) and its number of words.
    pub(crate) fn from_parts(arena: Vec<u32>, n_words: usize) -> Self {
        Words { arena, n_words }
    }

    /// Every word as (its id, its count, its symbols), walking the arena by the headers' lengths:
    /// valid only before the first merge (a merged word shrinks in place and leaves a gap).
    pub(crate) fn iter_unmerged(&self) -> impl Iterator<Item = (u32, u64, &[u32])> + '_ {
        self.iter_range(0..self.arena.len())
    }

    /// [`Words::iter_unmerged`] over the words of `range` of the arena (which starts at a word).
    pub(crate) fn iter_range(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = (u32, u64, &[u32])> + '_ {
        let mut pos = range.start;
        std::iter::from_fn(move || {
            let h = self.arena[..range.end].get(pos..pos + HEADER)?;
            let (id, len) = (pos, h[0] as usize);
            pos += HEADER + len;
            Some((id as u32, header_count(h), &self.arena[id + HEADER..id + HEADER + len]))
        })
    }

    /// For the words in `range` (whole words, before any merge): the count of every byte pair
    /// (dense 256 x 256, weighted by word counts) and how many words hold it.
    pub(crate) fn byte_pair_counts(&self, range: std::ops::Range<usize>) -> (Vec<u64>, Vec<u32>) {
        const N: usize = 256 * 256;
        let key = |win: &[u32]| ((win[0] as usize) << 8 | win[1] as usize) & (N - 1);
        let (mut counts, mut sizes, mut last) = (vec![0u64; N], vec![0u32; N], vec![u32::MAX; N]);
        for (i, c, syms) in self.iter_range(range) {
            for win in syms.windows(2) {
                let k = key(win);
                counts[k] = counts[k].saturating_add(c);
                if last[k] != i {
                    sizes[k] += 1;
                    last[k] = i;
                }
            }
        }
        (counts, sizes)
    }

    /// Counts every adjacent pair and lists, for each pair, the words holding it (each once).
    /// Called once, before any merge.
    /// Every symbol is still a byte here, so a pair indexes a dense 256 x 256 table: no hashing
    /// (this took ~0.4 s of the 2.9 s merge phase of the benchmark with a hash map).
    pub fn index_pairs(&self) -> (PairIndex, Lists) {
        const N: usize = 256 * 256;
        let key = |win: &[u32]| ((win[0] as usize) << 8 | win[1] as usize) & (N - 1);
        let (counts, sizes) = self.byte_pair_counts(0..self.arena.len());
        let (mut lists, heads) = Lists::with_sizes(sizes.iter().map(|&n| n as usize));
        let mut fill: Vec<usize> = vec![0; N];
        let data = lists.data_mut();
        let start = |k: usize| heads[k].start();
        for (i, _, syms) in self.iter_unmerged() {
            for win in syms.windows(2) {
                let k = key(win);
                let f = fill[k];
                if f == 0 || data[start(k) + f - 1] != i {
                    data[start(k) + f] = i;
                    fill[k] += 1;
                }
            }
        }
        let mut index = PairIndex::default();
        index.reserve(counts.iter().filter(|&&c| c > 0).count());
        for (k, &words) in heads.iter().enumerate() {
            if counts[k] > 0 {
                index.insert(pair((k >> 8) as u32, (k & 255) as u32), PairInfo { count: counts[k], words });
            }
        }
        (index, lists)
    }
}
