//! One merge applied to the word table: rewrite every listed word and collect the pair-count
//! deltas, serially or, for merges that touch many words, on several threads.
//!
//! In one word, the non-overlapping occurrences of `(a, b)` are merged left to right (`a a a` ->
//! `aa a`). Every old pair touching a merged position is subtracted and every new pair touching a
//! new token is added; all other pairs are the same before and after and cancel, so the counts
//! stay exactly those a full recount would give.
//!
//! Performance note: the first few hundred merges of a large corpus each touch tens of thousands
//! of words and take most of the merge phase (the first 1,000 of 32,512 merges: 1.5 of 2.9 s on
//! the benchmark mix). With 4 threads or more, those are split into chunks of consecutive words,
//! each chunk rewritten on its own thread into its own delta map; the chunks' arena ranges are disjoint, so they are
//! handed out with `split_at_mut`, no locks.
//!
//! Performance note 2: visiting a word is a cache miss (the arena is ~30 MB, the words of one merge
//! lie anywhere in it): `perf annotate` put 70% of `merge_at` (a third of the merge phase) on the
//! load of the word's header. The word loops now ask for the header [`PREFETCH_AHEAD`] list
//! entries ahead (and for the first ones before starting), so several misses overlap: merge phase
//! from saved counts, 1 thread, 3.60 -> 2.80 s of CPU (same build, prefetch off/on, best of 2,
//! load average ~9; a distance of 16 was no better than 8). The prefetch is a hint (`crate::prefetch`).

use super::queue::{pair, unpair, Pair};
use super::table::{header_count, Words, HEADER};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Merges touching at least this many words run in parallel...
const PARALLEL_WORDS: usize = 8192;
/// ...when at least this many threads are available. On 2 cores (shared with other jobs) the
/// parallel rewrite was slower than the serial one (12.5 vs 10.1 ms for a 57k-word merge; each
/// merge is a barrier, so a descheduled worker stalls it, and every chunk grows a fresh delta
/// map). Not measured on an idle machine with more cores, where the first merges should scale.
/// Session 5 tried 2 again, with a cheaper split (the arena cut at sampled quantiles of the list,
/// no sort, one region per thread, the first merged straight into the main deltas): the 142
/// merges of 8,192 words or more (benchmark mix) took 0.47-0.49 s serially and 0.64-0.75 s on two
/// threads at load ~8, and the whole merge phase 3.4-4.7 vs 2.8-4.7 s at load ~5 (rayon's idle
/// workers spin, and a descheduled worker stalls every merge). The most it could save on an idle
/// machine is about half of those merges' ~0.2 s there, so 2 cores stay serial.
const PARALLEL_THREADS: usize = 4;

/// One merge's change to one pair: the count delta, how many words the pair appeared in (listed
/// in [`Scratch::links`] from `head`, see [`Scratch::words_of`]), and (when positions are tracked)
/// its first new occurrence as `word << 32 | byte offset`.
#[derive(Clone, Copy)]
pub struct Delta {
    pub count: i64,
    pub first: u64,
    pub n_words: u32,
    head: u32,
    tail: u32,
    last_word: u32,
}

impl Default for Delta {
    fn default() -> Self {
        Delta { count: 0, first: u64::MAX, n_words: 0, head: NONE, tail: NONE, last_word: NONE }
    }
}

/// The end of a word list in [`Scratch::links`].
const NONE: u32 = u32::MAX;

/// The deltas of the merge being applied, and what the pass needs to know of the tokens.
///
/// Performance note 3: the words gaining each pair used to be a `Vec` per delta entry, which made
/// most of the merge loop's ~800k allocations and ~1M reallocations (benchmark mix, counting
/// allocator) and a free or a `shrink_to_fit` per entry when the deltas were applied. They are now
/// linked lists threaded through one reused `links` array, so a delta costs no allocation and a
/// new pair's list is allocated once, at its final size, in `merge.rs`.
#[derive(Default)]
pub struct Scratch {
    pub delta: FxHashMap<Pair, Delta>,
    /// `(word, next)` nodes of every delta's word list (cleared after each merge).
    pub links: Vec<(u32, u32)>,
    /// Byte length of every token; when not empty, new pairs record their first position.
    pub token_len: Vec<u32>,
    /// The new pairs of one word and where they start (reused from word to word).
    added: Vec<(Pair, u64)>,
}

impl Scratch {
    /// Scratch that records first positions, given the byte length of every token so far.
    pub fn tracking(token_len: Vec<u32>) -> Self {
        Scratch { token_len, ..Scratch::default() }
    }

    /// The words listed in `d`, in the order they were added.
    pub fn words_of<'a>(links: &'a [(u32, u32)], d: &Delta) -> impl Iterator<Item = u32> + 'a {
        let mut at = d.head;
        std::iter::from_fn(move || {
            let &(w, next) = links.get(at as usize)?;
            at = next;
            Some(w)
        })
    }
}

/// Appends word `w` to the list of `d` unless it is already its last word.
#[inline]
fn add_word(links: &mut Vec<(u32, u32)>, d: &mut Delta, w: u32) {
    if d.last_word == w {
        return;
    }
    let at = links.len() as u32;
    links.push((w, NONE));
    match d.tail {
        NONE => d.head = at,
        tail => links[tail as usize].1 = at,
    }
    (d.tail, d.last_word, d.n_words) = (at, w, d.n_words + 1);
}

/// Rewrites the words in `list` (ids, possibly stale or repeated) for the merge `p` -> `n`,
/// leaving the pair-count deltas in `s.delta`.
pub fn merge_words(words: &mut Words, list: &mut [u32], p: Pair, n: u32, threads: usize, s: &mut Scratch) {
    let threads = crate::parallel::thread_count(threads);
    if threads < PARALLEL_THREADS || list.len() < PARALLEL_WORDS {
        for &w in list.iter().take(PREFETCH_AHEAD) {
            prefetch(&words.arena, w as usize);
        }
        for (i, &w) in list.iter().enumerate() {
            if let Some(&next) = list.get(i + PREFETCH_AHEAD) {
                prefetch(&words.arena, next as usize);
            }
            merge_at(&mut words.arena[w as usize..], w, p, n, s);
        }
        return;
    }
    list.sort_unstable();
    let mut unique = 0; // chunks must not share a word
    for i in 0..list.len() {
        if unique == 0 || list[unique - 1] != list[i] {
            list[unique] = list[i];
            unique += 1;
        }
    }
    let list = &list[..unique];
    let chunk = list.len().div_ceil(threads * 4);
    // cut the arena into one disjoint region per chunk: from its first word to its last word's end
    let mut jobs = Vec::new();
    let (mut rest, mut base): (&mut [u32], usize) = (&mut words.arena, 0);
    for ids in list.chunks(chunk) {
        let (lo, last) = (ids[0] as usize, ids[ids.len() - 1] as usize);
        let hi = last + HEADER + rest[last - base] as usize;
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(lo - base);
        let (mine, tail) = tail.split_at_mut(hi - lo);
        rest = tail;
        jobs.push((ids, mine, lo));
        base = hi;
    }
    let deltas: Vec<Scratch> = crate::parallel::pool(threads).install(|| {
        jobs.into_par_iter()
            .map(|(ids, region, lo)| {
                let mut local = Scratch::tracking(s.token_len.clone());
                for (i, &w) in ids.iter().enumerate() {
                    if let Some(&next) = ids.get(i + PREFETCH_AHEAD) {
                        prefetch(region, next as usize - lo);
                    }
                    merge_at(&mut region[w as usize - lo..], w, p, n, &mut local);
                }
                local
            })
            .collect()
    });
    for local in deltas {
        for (q, d) in local.delta {
            let e = s.delta.entry(q).or_default();
            e.count += d.count;
            e.first = e.first.min(d.first);
            for w in Scratch::words_of(&local.links, &d) {
                add_word(&mut s.links, e, w);
            }
        }
    }
}

/// How many list entries ahead the word loops ask for a word's header (performance note 2).
const PREFETCH_AHEAD: usize = 8;

/// Asks the CPU to start loading `arena[at]` (a word header) into cache.
#[inline(always)]
fn prefetch(arena: &[u32], at: usize) {
    if let Some(x) = arena.get(at) {
        crate::prefetch::prefetch(x);
    }
}

/// Merges `p` -> `n` in the word whose header starts `at` (word id `w`), updating its length.
#[inline]
fn merge_at(at: &mut [u32], w: u32, p: Pair, n: u32, s: &mut Scratch) {
    let (header, rest) = at.split_at_mut(HEADER);
    let syms = &mut rest[..header[0] as usize];
    if let Some(new_len) = merge_in_word(syms, w, header_count(header), p, n, s) {
        header[0] = new_len;
    }
}

/// Merges `p = (a, b)` -> `n` in one word (`syms`, id `w`, occurring `count` times), adding the
/// deltas to `s.delta`. Returns the new length, or `None` if the word does not hold the pair
/// (a stale or repeated list entry).
///
/// One pass, in place (the write position `j` never passes the read position `i`): the runs
/// between occurrences are moved with `copy_within`, so a long word costs a scan plus a memmove
/// (a whole text as one word, minbpe's BasicTokenizer: 1.1 MB to 768 merges took 17.7 s with a
/// copy of the word and per-position flags, 4.2 s like this; both at load average ~12 on 2 cores).
fn merge_in_word(syms: &mut [u32], w: u32, count: u64, p: Pair, n: u32, s: &mut Scratch) -> Option<u32> {
    let (a, b) = unpair(p);
    let len = syms.len();
    let find = |syms: &[u32], from: usize| (from..len.saturating_sub(1)).find(|&k| syms[k] == a && syms[k + 1] == b);
    let mut k = find(syms, 0)?;
    let Scratch { delta, links, token_len, added } = s;
    added.clear();
    let track = !token_len.is_empty();
    let size = |t: u32| if track { u64::from(token_len[t as usize]) } else { 0 };
    let c = count as i64;
    let mut sub = |q: Pair| {
        if q != p {
            delta.entry(q).or_default().count -= c;
        }
    };
    // byte offset of new position `j`; new pairs record where their left token starts
    let mut off: u64 = if track { syms[..k].iter().map(|&t| size(t)).sum() } else { 0 };
    let (mut i, mut j) = (k, k);
    let mut merged_before = false; // whether new[j - 1] is a merged token
    loop {
        if k > i {
            if merged_before {
                added.push((pair(syms[j - 1], syms[i]), off - size(syms[j - 1])));
            }
            if track {
                off += syms[i..k].iter().map(|&t| size(t)).sum::<u64>();
            }
            syms.copy_within(i..k, j);
            (j, i, merged_before) = (j + k - i, k, false);
        }
        if j > 0 && !merged_before {
            sub(pair(syms[j - 1], a));
        }
        if i + 2 < len {
            sub(pair(b, syms[i + 2]));
        }
        if j > 0 {
            added.push((pair(syms[j - 1], n), off - size(syms[j - 1])));
        }
        syms[j] = n;
        off += size(n);
        (i, j, merged_before) = (i + 2, j + 1, true);
        match find(syms, i) {
            Some(next) => k = next,
            None => break,
        }
    }
    if i < len {
        if merged_before {
            added.push((pair(syms[j - 1], syms[i]), off - size(syms[j - 1])));
        }
        syms.copy_within(i..len, j);
        j += len - i;
    }
    for &(q, at) in added.iter() {
        let d = delta.entry(q).or_default();
        d.count += c;
        add_word(links, d, w);
        if track {
            d.first = d.first.min(u64::from(w) << 32 | at);
        }
    }
    Some(j as u32)
}
