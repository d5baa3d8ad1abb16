//! The merge phase: learn merges over the deduplicated word table with incremental pair counts.
//!
//! State: every word (distinct pre-token with two or more symbols) as a run of token ids in one
//! flat array, its count, the count of every adjacent pair weighted by word counts, and for each
//! pair the list of words that may contain it (a superset: stale entries are skipped).
//!
//! One merge of the best pair `(a, b)` into token `n`:
//! 1. visit only the words listed for `(a, b)` and rewrite them, collecting exact pair-count
//!    deltas ([`super::apply`]);
//! 2. apply the deltas with one index lookup per distinct pair; pairs that gained are pushed on
//!    the [`Queue`] with their new count, and new pairs record the words they appeared in.
//!
//! The queue is lazy: a popped entry whose count differs from the current count is stale. If the
//! current count is lower, it is pushed again with that count; if higher, a newer entry exists
//! (every rise pushes one). So every live pair always has an entry at least as high as its count,
//! and a popped entry that is up to date is the true best by (count, left bytes, right bytes).
//!
//! A merge whose bytes are already a token (`a + bc` after `ab + c`) reuses that token's id and
//! adds no new one, as in Hugging Face's trainer; it still appears in the merge list.
//! (Not in the first-seen mode, `first_seen.rs`, where every merge makes a new id, as in minbpe.)
//!
//! Performance notes (50 MB benchmark mix, vocab 32,768, 603k words): most of the time goes to
//! hash lookups and to visiting words, so the per-merge deltas (with the words gaining each new
//! pair) are gathered in a small local map and applied with one lookup per distinct pair; words
//! only shrink and are rewritten in place; word lists are neither sorted nor deduplicated in the
//! serial path (a word visited twice no longer holds the pair and is skipped like a stale entry).
//!
//! With two threads or more, the thread that merges never frees the word counts (600k small
//! allocations): they are dropped on a pool thread, and the table and index are built on every
//! thread ([`super::table_build`]). (The state at the end, a list per pair, was dropped there too
//! until the lists moved into one pool, `lists.rs`; it now takes ~10 ms to free.) The
//! merging thread's CPU time went from 2.79 to 2.43 s for the frees alone (from saved counts, best
//! of 2). With the prefetch of `apply.rs`, the whole merge phase after counting: 2.10 -> 1.46 s on
//! 2 threads, 2.17 -> 1.76 s on 1 (best of 3, load average ~10). The cost was memory: the counts were still being freed while the index was allocated,
//! and glibc kept their pages, so training from saved counts peaked at 196 MB instead of 168 MB;
//! `malloc_trim` after the free now hands them back (158-159 MB, see `release_free_memory`).
//! After a merge that touched many pairs, the delta map is shrunk again, so that the small merges
//! that follow do not scatter their few entries over megabytes (not measurable at load ~9).

use super::apply::{merge_words, Scratch};
use super::first_seen;
use super::lists::Lists;
use super::queue::{unpair, Entry, Pair, Queue};
use super::table::{PairIndex, PairInfo, Words};
use super::words::WordCounts;
use crate::parallel::thread_count;
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry as MapEntry;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// Ordinary tokens to reach, the 256 bytes included (vocab size minus special tokens).
    pub n_tokens: usize,
    /// Stop when the best pair occurs fewer times than this.
    pub min_frequency: u64,
    /// Never create a token longer than this many bytes.
    pub max_token_length: Option<usize>,
    /// Threads for merges that touch many words (0 = every core). The result does not depend on it.
    pub threads: usize,
    /// minbpe's rule: ties go to the pair seen first (words must be in text order, see
    /// [`learn_ordered`]) and every merge makes a new id, even if its bytes are already a token.
    pub first_seen: bool,
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

/// Learns merges from `counts`. `progress` is called now and then; returning `false` stops.
pub fn learn(
    counts: &WordCounts,
    opts: &MergeOptions,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Learned, Stopped> {
    let t = thread_count(opts.threads);
    if t < 2 {
        return run(State::new(Words::new(counts), opts.clone()), progress);
    }
    let (words, ranges) = Words::new_on(counts, t);
    let (pairs, lists) = words.index_pairs_on(&ranges, t);
    run(State::with_index(words, pairs, lists, opts.clone()), progress)
}

/// [`learn`], consuming the counts: each word's memory is freed as the word table is built.
pub fn learn_owned(
    counts: WordCounts,
    opts: &MergeOptions,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Learned, Stopped> {
    let t = thread_count(opts.threads);
    if t < 2 {
        return run(State::new(Words::from_owned(counts), opts.clone()), progress);
    }
    let (words, ranges) = Words::new_on(&counts, t);
    // freeing the counts word by word (as `from_owned` does) took ~0.3 s; a pool thread does it
    // while the index is built, then hands the freed pages back (see `release_free_memory`)
    crate::parallel::pool(t).spawn(move || {
        drop(counts);
        release_free_memory();
    });
    let (pairs, lists) = words.index_pairs_on(&ranges, t);
    run(State::with_index(words, pairs, lists, opts.clone()), progress)
}

/// Gives the pages of freed blocks back to the OS (glibc keeps the 600k freed words of the counts
/// in its heaps, and the word table, the index and its list pool are allocated elsewhere, so they
/// could not reuse them). Peak memory of counting then merging on 2 threads: 177-182 -> 167-171
/// MB (3 runs each, alternated), the merging thread's CPU time unchanged (it runs on a pool
/// thread). Nothing on other platforms.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: glibc's `malloc_trim` only hands free pages of its own heaps back to the OS
        // (under the heaps' locks); it takes no pointer and changes no live allocation.
        unsafe {
            malloc_trim(0);
        }
    }
}


/// [`learn`] over words in a given order with their counts (for the first-seen rule: distinct
/// chunks in order of first appearance, or a whole text as one word).
pub fn learn_ordered(
    words: &[&[u8]],
    counts: &[u64],
    opts: &MergeOptions,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Learned, Stopped> {
    run(State::new(Words::from_ordered(words, counts), opts.clone()), progress)
}

fn run(mut st: State, progress: &mut dyn FnMut(&Progress) -> bool) -> Result<Learned, Stopped> {
    let target = st.opts.n_tokens;
    let mut out = Learned::default();
    let mut last = Instant::now();
    while st.tokens.len() < target {
        let Some((p, count)) = st.next_best() else { break };
        st.apply(p);
        out.merges.push(unpair(p));
        out.counts.push(count);
        if out.merges.len() % 64 == 0 && last.elapsed() >= PROGRESS_EVERY {
            last = Instant::now();
            let pr = Progress { tokens: st.tokens.len(), target, merges: out.merges.len() };
            if !progress(&pr) {
                return Err(Stopped);
            }
        }
    }
    let pr = Progress { tokens: st.tokens.len(), target, merges: out.merges.len() };
    if !progress(&pr) {
        return Err(Stopped);
    }
    // the state is a few large blocks (the word lists share one pool, `lists.rs`): freeing it
    // takes ~10 ms, so it is no longer handed to a pool thread
    out.tokens = std::mem::take(&mut st.tokens);
    Ok(out)
}

struct State {
    words: Words,
    pairs: PairIndex,
    lists: Lists,
    tokens: Vec<Vec<u8>>,
    by_bytes: FxHashMap<Vec<u8>, u32>,
    queue: Queue,
    opts: MergeOptions,
    scratch: Scratch,
}

impl State {
    fn new(words: Words, opts: MergeOptions) -> Self {
        let (pairs, lists) = words.index_pairs();
        Self::with_index(words, pairs, lists, opts)
    }

    fn with_index(words: Words, pairs: PairIndex, lists: Lists, opts: MergeOptions) -> Self {
        let tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let by_bytes = tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        let first_seen = opts.first_seen;
        let token_len = if first_seen { vec![1; 256] } else { Vec::new() };
        let scratch = Scratch::tracking(token_len);
        let mut st = State { words, pairs, lists, tokens, by_bytes, queue: Queue::default(), opts, scratch };
        let first = if first_seen { first_seen::initial_positions(&st.words) } else { Vec::new() };
        let entries: Vec<Entry> = st
            .pairs
            .iter()
            .filter(|&(&p, info)| st.eligible(p, info.count))
            .map(|(&p, info)| {
                let (l, r) = unpair(p);
                let pos = if first_seen { first[(l as usize) << 8 | r as usize] } else { 0 };
                Entry { count: info.count, pair: p, pos }
            })
            .collect();
        st.queue = Queue::from_vec(entries, &st.tokens, first_seen);
        st
    }

    /// The current first position of `p` (first-seen rule only; 0 otherwise).
    fn position(&mut self, p: Pair) -> Option<u64> {
        if !self.opts.first_seen {
            return Some(0);
        }
        let info = self.pairs.get_mut(&p)?;
        first_seen::first_position(&self.words, &mut self.lists, info, p, &self.scratch.token_len)
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
            let current = self.pairs.get(&top.pair).map_or(0, |i| i.count);
            if current == 0 {
                continue;
            }
            let Some(pos) = self.position(top.pair) else { continue };
            if current == top.count && pos == top.pos {
                return Some((top.pair, current));
            }
            // stale (lower count or later first position): push back with the true key; an entry
            // below the true key has a newer entry
            let lower = current < top.count || (current == top.count && pos > top.pos);
            if lower && self.eligible(top.pair, current) {
                self.queue.push(Entry { count: current, pair: top.pair, pos }, &self.tokens);
            }
        }
        None
    }

    /// Merges pair `p` everywhere; returns the id of the merged token.
    fn apply(&mut self, p: Pair) -> u32 {
        let (a, b) = unpair(p);
        let mut bytes = self.tokens[a as usize].clone();
        bytes.extend_from_slice(&self.tokens[b as usize]);
        let reuse = if self.opts.first_seen { None } else { self.by_bytes.get(&bytes) };
        let n = match reuse {
            Some(&id) => id,
            None if self.opts.first_seen => {
                self.scratch.token_len.push(bytes.len() as u32);
                self.tokens.push(bytes);
                self.tokens.len() as u32 - 1
            }
            None => {
                let id = self.tokens.len() as u32;
                self.by_bytes.insert(bytes.clone(), id);
                self.tokens.push(bytes);
                id
            }
        };
        let list = self.pairs.remove(&p).map(|i| i.words).unwrap_or_default();
        merge_words(&mut self.words, self.lists.get_mut(list), p, n, self.opts.threads, &mut self.scratch);
        self.lists.free(list);
        let mut delta = std::mem::take(&mut self.scratch.delta);
        let links = std::mem::take(&mut self.scratch.links);
        let used = delta.len();
        for (q, d) in delta.drain() {
            if d.count == 0 && d.n_words == 0 {
                continue;
            }
            match self.pairs.entry(q) {
                MapEntry::Occupied(mut e) => {
                    let new = (e.get().count as i128 + d.count as i128).max(0) as u64;
                    if new == 0 {
                        self.lists.free(e.remove().words);
                        continue;
                    }
                    let info = e.get_mut();
                    info.count = new;
                    self.lists.extend(&mut info.words, d.n_words as usize, Scratch::words_of(&links, &d));
                    if d.count > 0 && self.eligible(q, new) {
                        let Some(pos) = self.position(q) else { continue };
                        self.queue.push(Entry { count: new, pair: q, pos }, &self.tokens);
                    }
                }
                MapEntry::Vacant(e) => {
                    if d.count <= 0 {
                        continue;
                    }
                    let count = d.count as u64;
                    let words = self.lists.new_list(d.n_words as usize, Scratch::words_of(&links, &d));
                    e.insert(PairInfo { count, words });
                    if self.eligible(q, count) {
                        let pos = if self.opts.first_seen { d.first } else { 0 };
                        self.queue.push(Entry { count, pair: q, pos }, &self.tokens);
                    }
                }
            }
        }
        self.scratch.links = links;
        self.scratch.links.clear();
        if delta.capacity() > 1024 && delta.capacity() > 8 * used {
            delta.shrink_to(2 * used);
        }
        self.scratch.delta = delta;
        n
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
        let opts = MergeOptions { n_tokens, min_frequency, max_token_length: None, threads: 1, first_seen: false };
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
        let opts = MergeOptions { n_tokens: 1000, min_frequency: 1, max_token_length: Some(3), threads: 1, first_seen: false };
        let l = learn(&wc, &opts, &mut |_| true).unwrap();
        assert!(l.tokens.iter().all(|t| t.len() <= 3));
        assert!(!l.merges.is_empty());
    }

    #[test]
    fn parallel_merges_equal_serial() {
        // enough words that the first merges take the parallel path (PARALLEL_WORDS)
        let mut wc = WordCounts::new();
        let mut x: u64 = 12345;
        for _ in 0..40_000 {
            let mut word = Vec::new();
            for _ in 0..(2 + x % 9) {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                word.push(b"aabbcdde "[(x >> 33) as usize % 9]);
            }
            wc.add_word(&word, 1 + (x >> 40) % 50);
        }
        let run = |threads| {
            let opts = MergeOptions { n_tokens: 600, min_frequency: 1, max_token_length: None, threads, first_seen: false };
            learn(&wc, &opts, &mut |_| true).unwrap()
        };
        let one = run(1);
        for threads in [2, 3, 4, 0] {
            let other = run(threads);
            assert_eq!(one.merges, other.merges, "{threads} threads");
            assert_eq!(one.counts, other.counts, "{threads} threads");
        }
        assert!(one.counts[0] > 8192);
    }

    #[test]
    fn callback_can_stop() {
        let wc = counts(&[("abcdefgh", 100)]);
        let opts = MergeOptions { n_tokens: 1000, min_frequency: 1, max_token_length: None, threads: 1, first_seen: false };
        assert_eq!(learn(&wc, &opts, &mut |_| false).unwrap_err(), Stopped);
    }
}

