//! The merge phase's data: the word table (every distinct word of two or more symbols as a run of
//! token ids in one flat array, with its count) and the pair index (each adjacent pair's count,
//! weighted by word counts, and the words that may hold it).
//!
//! Performance note: one map from pair to `PairInfo` (count and word list) instead of two maps
//! halves the hash lookups of the merge loop; the initial word lists are sized exactly in a first
//! pass (growing them by doubling wasted ~40% of their memory on the benchmark mix).

use super::queue::{pair, Pair};
use super::words::WordCounts;
use rustc_hash::FxHashMap;

/// A pair's count and the words that may contain it (a superset: stale entries are skipped).
#[derive(Debug, Default)]
pub struct PairInfo {
    pub count: u64,
    pub words: Vec<u32>,
}

pub type PairIndex = FxHashMap<Pair, PairInfo>;

/// Where a word's symbols are and how often it occurs (kept together: one cache line per visit).
#[derive(Debug, Clone, Copy)]
pub struct Word {
    pub start: usize,
    pub count: u64,
    pub len: u32,
}

pub struct Words {
    pub symbols: Vec<u32>,
    pub words: Vec<Word>,
}

impl Words {
    /// The words of `counts` with at least two bytes (a single byte has no pair and never changes).
    pub fn new(counts: &WordCounts) -> Self {
        let mut w = Words::with_capacity(counts);
        for (word, c) in counts.iter() {
            w.push(word, c);
        }
        w
    }

    /// [`Words::new`], freeing each word of `counts` once it is copied.
    pub fn from_owned(counts: WordCounts) -> Self {
        let mut w = Words::with_capacity(&counts);
        for (word, c) in counts.into_words() {
            w.push(&word, c);
        }
        w
    }

    fn with_capacity(counts: &WordCounts) -> Self {
        let n = counts.len();
        let total: usize = counts.iter().map(|(w, _)| w.len()).filter(|&n| n > 1).sum();
        Words { symbols: Vec::with_capacity(total), words: Vec::with_capacity(n) }
    }

    fn push(&mut self, word: &[u8], count: u64) {
        if word.len() < 2 || count == 0 {
            return;
        }
        self.words.push(Word { start: self.symbols.len(), count, len: word.len() as u32 });
        self.symbols.extend(word.iter().map(|&b| u32::from(b)));
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    #[inline]
    pub fn get(&self, i: usize) -> &[u32] {
        let w = self.words[i];
        &self.symbols[w.start..w.start + w.len as usize]
    }

    /// Counts every adjacent pair and lists, for each pair, the words holding it (each once).
    /// Every symbol is still a byte here, so a pair indexes a dense 256 x 256 table: no hashing
    /// (this took ~0.4 s of the 2.9 s merge phase of the benchmark with a hash map).
    pub fn index_pairs(&self) -> PairIndex {
        const N: usize = 256 * 256;
        let key = |win: &[u32]| ((win[0] as usize) << 8 | win[1] as usize) & (N - 1);
        let mut counts = vec![0u64; N];
        let mut sizes = vec![0u32; N];
        let mut last = vec![u32::MAX; N];
        for i in 0..self.len() {
            let c = self.words[i].count;
            for win in self.get(i).windows(2) {
                let k = key(win);
                counts[k] = counts[k].saturating_add(c);
                if last[k] != i as u32 {
                    sizes[k] += 1;
                    last[k] = i as u32;
                }
            }
        }
        let mut lists: Vec<Vec<u32>> = sizes.iter().map(|&n| Vec::with_capacity(n as usize)).collect();
        for i in 0..self.len() {
            for win in self.get(i).windows(2) {
                let list = &mut lists[key(win)];
                if list.last() != Some(&(i as u32)) {
                    list.push(i as u32);
                }
            }
        }
        let mut index = PairIndex::default();
        index.reserve(counts.iter().filter(|&&c| c > 0).count());
        for (k, words) in lists.into_iter().enumerate() {
            if counts[k] > 0 {
                index.insert(pair((k >> 8) as u32, (k & 255) as u32), PairInfo { count: counts[k], words });
            }
        }
        index
    }
}
