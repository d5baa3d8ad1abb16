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

pub struct Words {
    pub symbols: Vec<u32>,
    pub starts: Vec<usize>,
    pub lens: Vec<u32>,
    pub counts: Vec<u64>,
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
        Words {
            symbols: Vec::with_capacity(total),
            starts: Vec::with_capacity(n),
            lens: Vec::with_capacity(n),
            counts: Vec::with_capacity(n),
        }
    }

    fn push(&mut self, word: &[u8], count: u64) {
        if word.len() < 2 || count == 0 {
            return;
        }
        self.starts.push(self.symbols.len());
        self.lens.push(word.len() as u32);
        self.counts.push(count);
        self.symbols.extend(word.iter().map(|&b| u32::from(b)));
    }

    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    #[inline]
    pub fn get(&self, i: usize) -> &[u32] {
        &self.symbols[self.starts[i]..self.starts[i] + self.lens[i] as usize]
    }

    /// Counts every adjacent pair and lists, for each pair, the words holding it (each once).
    pub fn index_pairs(&self) -> PairIndex {
        // pass 1: count, and how many words hold each pair (`last` avoids counting a word twice)
        let mut sizes: FxHashMap<Pair, (u64, u32, u32)> = FxHashMap::default();
        for i in 0..self.len() {
            let c = self.counts[i];
            for win in self.get(i).windows(2) {
                let e = sizes.entry(pair(win[0], win[1])).or_insert((0, 0, u32::MAX));
                e.0 = e.0.saturating_add(c);
                if e.2 != i as u32 {
                    e.1 += 1;
                    e.2 = i as u32;
                }
            }
        }
        let mut index: PairIndex = FxHashMap::default();
        index.reserve(sizes.len());
        for (p, (count, n, _)) in sizes {
            index.insert(p, PairInfo { count, words: Vec::with_capacity(n as usize) });
        }
        // pass 2: fill the lists
        for i in 0..self.len() {
            for win in self.get(i).windows(2) {
                if let Some(info) = index.get_mut(&pair(win[0], win[1])) {
                    if info.words.last() != Some(&(i as u32)) {
                        info.words.push(i as u32);
                    }
                }
            }
        }
        index
    }
}
