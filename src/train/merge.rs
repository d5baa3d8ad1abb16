//! The merge phase: learn merges over the deduplicated word table with incremental pair counts.
//!
//! State: every word (distinct pre-token with two or more symbols) as a run of token ids in one
//! flat array, its count, the count of every adjacent pair weighted by word counts, and for each
//! pair the list of words that may contain it (a superset: stale entries are skipped).
//!
//! One merge of the best pair `(a, b)` into token `n`:
//! 1. visit only the words listed for `(a, b)`; in each, merge the non-overlapping occurrences
//!    left to right (the textbook rule: `a a a` -> `aa a`);
//! 2. pair-count deltas come from comparing the word before and after: every old pair touching
//!    a merged position is subtracted and every new pair touching a new `n` is added; all other
//!    pairs are the same on both sides and cancel, so the counts stay exactly those a full recount
//!    would give;
//! 3. pairs that gained are pushed on the [`Queue`] with their new count, and new pairs record
//!    the word in their list.
//!
//! The queue is lazy: a popped entry whose count differs from the current count is stale. If the
//! current count is lower, it is pushed again with that count; if higher, a newer entry exists
//! (every rise pushes one). So every live pair always has an entry at least as high as its count,
//! and a popped entry that is up to date is the true best by (count, left bytes, right bytes).
//!
//! A merge whose bytes are already a token (`a + bc` after `ab + c`) reuses that token's id and
//! adds no new one, as in Hugging Face's trainer; it still appears in the merge list.
//!
//! Performance notes: words only shrink, so they are rewritten in place; pair keys are packed
//! `u64`s in Fx hash maps; the initial pair count runs in parallel over word ranges. Most of the
//! time goes to the first few thousand merges, which touch many words each.

use super::queue::{pair, unpair, Entry, Pair, Queue};
use super::words::WordCounts;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// Ordinary tokens to reach, the 256 bytes included (vocab size minus special tokens).
    pub n_tokens: usize,
    /// Stop when the best pair occurs fewer times than this.
    pub min_frequency: u64,
    /// Never create a token longer than this many bytes.
    pub max_token_length: Option<usize>,
    /// Threads for the initial pair count (0 = every core).
    pub threads: usize,
}

/// Reported to the progress callback.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub tokens: usize,
    pub target: usize,
    pub merges: usize,
}

/// The training result.
#[derive(Debug, Clone, Default)]
pub struct Learned {
    /// Every merge in order, as token ids (including merges that re-spell an existing token).
    pub merges: Vec<(u32, u32)>,
    /// The pair count of each merge when it was chosen.
    pub counts: Vec<u64>,
    /// Token bytes by id: the 256 single bytes, then one per new token.
    pub tokens: Vec<Vec<u8>>,
}

/// Training was stopped by the progress callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// How often the progress callback runs (it is also where Ctrl-C is noticed).
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

struct Words {
    symbols: Vec<u32>,
    starts: Vec<usize>,
    lens: Vec<u32>,
    counts: Vec<u64>,
}

struct State {
    words: Words,
    pair_counts: FxHashMap<Pair, u64>,
    where_: FxHashMap<Pair, Vec<u32>>,
    tokens: Vec<Vec<u8>>,
    by_bytes: FxHashMap<Vec<u8>, u32>,
    queue: Queue,
    opts: MergeOptions,
}

/// Learns merges from `counts`. `progress` is called now and then; returning `false` stops.
pub fn learn(
    counts: &WordCounts,
    opts: &MergeOptions,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Learned, Stopped> {
    let mut st = State::new(counts, opts.clone());
    let mut out = Learned { tokens: Vec::new(), ..Default::default() };
    let mut last = Instant::now();
    let mut scratch = Scratch::default();
    while st.tokens.len() < opts.n_tokens {
        let Some((p, count)) = st.next_best() else { break };
        st.apply(p, &mut scratch);
        out.merges.push(unpair(p));
        out.counts.push(count);
        if out.merges.len() % 64 == 0 && last.elapsed() >= PROGRESS_EVERY {
            last = Instant::now();
            let pr = Progress { tokens: st.tokens.len(), target: opts.n_tokens, merges: out.merges.len() };
            if !progress(&pr) {
                return Err(Stopped);
            }
        }
    }
    let pr = Progress { tokens: st.tokens.len(), target: opts.n_tokens, merges: out.merges.len() };
    if !progress(&pr) {
        return Err(Stopped);
    }
    out.tokens = st.tokens;
    Ok(out)
}

#[derive(Default)]
struct Scratch {
    old: Vec<u32>,
    old_merged: Vec<bool>,
    new_merged: Vec<bool>,
    delta: FxHashMap<Pair, i64>,
}

impl Words {
    fn new(counts: &WordCounts) -> Self {
        let n = counts.map.len();
        let total: usize = counts.map.keys().map(|w| if w.len() > 1 { w.len() } else { 0 }).sum();
        let mut w = Words {
            symbols: Vec::with_capacity(total),
            starts: Vec::with_capacity(n),
            lens: Vec::with_capacity(n),
            counts: Vec::with_capacity(n),
        };
        for (word, &c) in &counts.map {
            if word.len() < 2 || c == 0 {
                continue; // a single byte has no pair and never changes
            }
            w.starts.push(w.symbols.len());
            w.lens.push(word.len() as u32);
            w.counts.push(c);
            w.symbols.extend(word.iter().map(|&b| u32::from(b)));
        }
        w
    }

    #[inline]
    fn get(&self, i: usize) -> &[u32] {
        &self.symbols[self.starts[i]..self.starts[i] + self.lens[i] as usize]
    }

    /// Pair counts and pair -> word lists for words `range`.
    fn count_pairs(
        &self,
        range: std::ops::Range<usize>,
    ) -> (FxHashMap<Pair, u64>, FxHashMap<Pair, Vec<u32>>) {
        let mut counts: FxHashMap<Pair, u64> = FxHashMap::default();
        let mut where_: FxHashMap<Pair, Vec<u32>> = FxHashMap::default();
        for i in range {
            let c = self.counts[i];
            for win in self.get(i).windows(2) {
                let p = pair(win[0], win[1]);
                let e = counts.entry(p).or_insert(0);
                *e = e.saturating_add(c);
                let list = where_.entry(p).or_default();
                if list.last() != Some(&(i as u32)) {
                    list.push(i as u32);
                }
            }
        }
        (counts, where_)
    }
}

impl State {
    fn new(counts: &WordCounts, opts: MergeOptions) -> Self {
        let words = Words::new(counts);
        let tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let by_bytes = tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        let n = words.counts.len();
        let threads = if opts.threads == 0 {
            std::thread::available_parallelism().map_or(1, |p| p.get())
        } else {
            opts.threads
        };
        let step = if threads <= 1 || n < 10_000 { n.max(1) } else { n.div_ceil(threads * 4) };
        let parts: Vec<std::ops::Range<usize>> = (0..n).step_by(step).map(|s| s..(s + step).min(n)).collect();
        let mut results: Vec<_> = if parts.len() <= 1 {
            vec![words.count_pairs(0..n)]
        } else {
            crate::parallel::pool(threads)
                .install(|| parts.par_iter().map(|r| words.count_pairs(r.clone())).collect())
        };
        let (mut pair_counts, mut where_) = results.remove(0);
        for (c, w) in results {
            for (p, n) in c {
                let e = pair_counts.entry(p).or_insert(0);
                *e = e.saturating_add(n);
            }
            for (p, list) in w {
                where_.entry(p).or_default().extend(list);
            }
        }
        let mut st = State { words, pair_counts, where_, tokens, by_bytes, queue: Queue::default(), opts };
        let entries: Vec<Entry> = st
            .pair_counts
            .iter()
            .filter(|&(&p, &c)| st.eligible(p, c))
            .map(|(&p, &c)| Entry { count: c, pair: p })
            .collect();
        st.queue = Queue::from_vec(entries, &st.tokens);
        st
    }

    #[inline]
    fn eligible(&self, p: Pair, count: u64) -> bool {
        if count < self.opts.min_frequency.max(1) {
            return false;
        }
        match self.opts.max_token_length {
            Some(max) => {
                let (l, r) = unpair(p);
                self.tokens[l as usize].len() + self.tokens[r as usize].len() <= max
            }
            None => true,
        }
    }

    /// The best live pair and its count, skipping stale queue entries.
    fn next_best(&mut self) -> Option<(Pair, u64)> {
        while let Some(top) = self.queue.pop(&self.tokens) {
            let current = self.pair_counts.get(&top.pair).copied().unwrap_or(0);
            if current == top.count {
                return Some((top.pair, current));
            }
            if current < top.count && self.eligible(top.pair, current) {
                self.queue.push(Entry { count: current, pair: top.pair }, &self.tokens);
            }
        }
        None
    }

    /// Merges pair `p` everywhere; returns the id of the merged token.
    fn apply(&mut self, p: Pair, s: &mut Scratch) -> u32 {
        let (a, b) = unpair(p);
        let mut bytes = self.tokens[a as usize].clone();
        bytes.extend_from_slice(&self.tokens[b as usize]);
        let n = match self.by_bytes.get(&bytes) {
            Some(&id) => id,
            None => {
                let id = self.tokens.len() as u32;
                self.by_bytes.insert(bytes.clone(), id);
                self.tokens.push(bytes);
                id
            }
        };
        let mut list = self.where_.remove(&p).unwrap_or_default();
        list.sort_unstable();
        list.dedup();
        s.delta.clear();
        for &w in &list {
            self.merge_word(w as usize, a, b, n, s);
        }
        self.pair_counts.remove(&p);
        let mut deltas: Vec<(Pair, i64)> = s.delta.drain().collect();
        deltas.sort_unstable();
        for (q, d) in deltas {
            if q == p || d == 0 {
                continue; // the merged pair is gone everywhere
            }
            let c = self.pair_counts.get(&q).copied().unwrap_or(0);
            let new = (c as i128 + d as i128).max(0) as u64;
            debug_assert!(c as i128 + d as i128 >= 0, "pair count below zero");
            if new == 0 {
                self.pair_counts.remove(&q);
                self.where_.remove(&q);
            } else {
                self.pair_counts.insert(q, new);
                if d > 0 && self.eligible(q, new) {
                    self.queue.push(Entry { count: new, pair: q }, &self.tokens);
                }
            }
        }
        n
    }

    /// Merges `(a, b)` -> `n` in word `w`, adding pair-count deltas to `s.delta`.
    fn merge_word(&mut self, w: usize, a: u32, b: u32, n: u32, s: &mut Scratch) {
        let start = self.words.starts[w];
        let len = self.words.lens[w] as usize;
        let syms = &mut self.words.symbols[start..start + len];
        let Some(first) = syms.windows(2).position(|x| x[0] == a && x[1] == b) else {
            return; // stale entry: the word no longer has the pair
        };
        s.old.clear();
        s.old.extend_from_slice(syms);
        s.old_merged.clear();
        s.old_merged.resize(len, false);
        s.new_merged.clear();
        s.new_merged.resize(len, false);
        let (mut i, mut j) = (first, first);
        while i < len {
            if i + 1 < len && s.old[i] == a && s.old[i + 1] == b {
                syms[j] = n;
                s.new_merged[j] = true;
                s.old_merged[i] = true;
                s.old_merged[i + 1] = true;
                i += 2;
            } else {
                syms[j] = s.old[i];
                i += 1;
            }
            j += 1;
        }
        self.words.lens[w] = j as u32;
        let c = self.words.counts[w] as i64;
        for k in first.saturating_sub(1)..len - 1 {
            if s.old_merged[k] || s.old_merged[k + 1] {
                *s.delta.entry(pair(s.old[k], s.old[k + 1])).or_insert(0) -= c;
            }
        }
        let syms = &self.words.symbols[start..start + j];
        for k in first.saturating_sub(1)..j.saturating_sub(1) {
            if s.new_merged[k] || s.new_merged[k + 1] {
                let q = pair(syms[k], syms[k + 1]);
                *s.delta.entry(q).or_insert(0) += c;
                let list = self.where_.entry(q).or_default();
                if list.last() != Some(&(w as u32)) {
                    list.push(w as u32);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(words: &[(&str, u64)]) -> WordCounts {
        let mut wc = WordCounts::new();
        for (w, c) in words {
            wc.add_word(w.as_bytes(), *c);
        }
        wc
    }

    fn run(wc: &WordCounts, n_tokens: usize, min_frequency: u64) -> Learned {
        let opts = MergeOptions { n_tokens, min_frequency, max_token_length: None, threads: 1 };
        learn(wc, &opts, &mut |_| true).unwrap()
    }

    fn spelled(l: &Learned) -> Vec<String> {
        l.merges
            .iter()
            .map(|&(a, b)| {
                format!(
                    "{}+{}",
                    String::from_utf8_lossy(&l.tokens[a as usize]),
                    String::from_utf8_lossy(&l.tokens[b as usize])
                )
            })
            .collect()
    }

    #[test]
    fn wikipedia_example_with_byte_order_ties() {
        // "aaabdaaabac" as one word: (a,a) 4 wins; then (aa,a)=2 ties (aaa? no) with
        // (aa,b)... worked out: after aa: [aa a b d aa a b a c]: (aa,a)=2, (a,b)=2, others 1;
        // byte order: "a"<"aa", so (a,b) wins; then [aa ab d aa ab a c]: (aa,ab)=2 -> "aaab".
        let l = run(&counts(&[("aaabdaaabac", 1)]), 259, 2);
        assert_eq!(spelled(&l), vec!["a+a", "a+b", "aa+ab"]);
        assert_eq!(l.counts, vec![4, 2, 2]);
    }

    #[test]
    fn overlapping_runs_and_respelled_tokens() {
        // "aaaa" x1 and "aaa" x1: (a,a) = 3 + 2 = 5 -> [aa aa], [aa a]: (aa,aa)=1, (aa,a)=1
        let l = run(&counts(&[("aaaa", 1), ("aaa", 1)]), 300, 1);
        assert_eq!(spelled(&l), vec!["a+a", "aa+a", "aa+aa"]);
        // xabc: "ab" first (count 3), "bc" never forms in the first word; "abc" re-spelled
        let wc = counts(&[("abc", 3), ("xbc", 2), ("yabc", 1)]);
        let l = run(&wc, 300, 1);
        assert!(l.tokens.iter().filter(|t| t.as_slice() == b"abc").count() == 1);
    }

    #[test]
    fn stops_at_target_and_min_frequency() {
        let wc = counts(&[("hello", 10), ("help", 3), ("hx", 1)]);
        let l = run(&wc, 257, 1);
        assert_eq!(l.tokens.len(), 257);
        let l = run(&wc, 10_000, 4);
        assert!(l.counts.iter().all(|&c| c >= 4));
        assert_eq!(spelled(&l), vec!["e+l", "h+el", "hel+l", "hell+o"]);
    }

    #[test]
    fn max_token_length_is_respected() {
        let wc = counts(&[("abcdefgh", 100)]);
        let opts = MergeOptions { n_tokens: 1000, min_frequency: 1, max_token_length: Some(3), threads: 1 };
        let l = learn(&wc, &opts, &mut |_| true).unwrap();
        assert!(l.tokens.iter().all(|t| t.len() <= 3));
        assert!(!l.merges.is_empty());
    }

    #[test]
    fn callback_can_stop() {
        let wc = counts(&[("abcdefgh", 100)]);
        let opts = MergeOptions { n_tokens: 1000, min_frequency: 1, max_token_length: None, threads: 1 };
        assert_eq!(learn(&wc, &opts, &mut |_| false).unwrap_err(), Stopped);
    }
}
