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
//! handed out with `split_at_mut`, no locks and no unsafe code.

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
const PARALLEL_THREADS: usize = 4;

/// One merge's change to one pair: the count delta and the words where the pair appeared.
#[derive(Default)]
pub struct Delta {
    pub count: i64,
    pub words: Vec<u32>,
}

/// Buffers reused from word to word, and the deltas of the merge being applied.
#[derive(Default)]
pub struct Scratch {
    old: Vec<u32>,
    old_merged: Vec<bool>,
    new_merged: Vec<bool>,
    pub delta: FxHashMap<Pair, Delta>,
}

/// Rewrites the words in `list` (ids, possibly stale or repeated) for the merge `p` -> `n`,
/// leaving the pair-count deltas in `s.delta`.
pub fn merge_words(words: &mut Words, list: &mut Vec<u32>, p: Pair, n: u32, threads: usize, s: &mut Scratch) {
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |t| t.get()),
        t => t,
    };
    if threads < PARALLEL_THREADS || list.len() < PARALLEL_WORDS {
        for &w in list.iter() {
            merge_at(&mut words.arena[w as usize..], w, p, n, s);
        }
        return;
    }
    list.sort_unstable();
    list.dedup(); // chunks must not share a word
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
    let deltas: Vec<FxHashMap<Pair, Delta>> = crate::parallel::pool(threads).install(|| {
        jobs.into_par_iter()
            .map(|(ids, region, lo)| {
                let mut local = Scratch::default();
                for &w in ids {
                    merge_at(&mut region[w as usize - lo..], w, p, n, &mut local);
                }
                local.delta
            })
            .collect()
    });
    for delta in deltas {
        for (q, d) in delta {
            let e = s.delta.entry(q).or_default();
            e.count += d.count;
            if e.words.is_empty() {
                e.words = d.words;
            } else {
                e.words.extend_from_slice(&d.words);
            }
        }
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
fn merge_in_word(syms: &mut [u32], w: u32, count: u64, p: Pair, n: u32, s: &mut Scratch) -> Option<u32> {
    let (a, b) = unpair(p);
    let len = syms.len();
    let first = syms.windows(2).position(|x| x[0] == a && x[1] == b)?;
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
    let c = count as i64;
    // every old pair touching a merged position goes (the merged pair itself is dropped whole)
    for k in first.saturating_sub(1)..len - 1 {
        if s.old_merged[k] || s.old_merged[k + 1] {
            let q = pair(s.old[k], s.old[k + 1]);
            if q != p {
                s.delta.entry(q).or_default().count -= c;
            }
        }
    }
    // every new pair touching a new token comes
    for k in first.saturating_sub(1)..j.saturating_sub(1) {
        if s.new_merged[k] || s.new_merged[k + 1] {
            let d = s.delta.entry(pair(syms[k], syms[k + 1])).or_default();
            d.count += c;
            if d.words.last() != Some(&w) {
                d.words.push(w);
            }
        }
    }
    Some(j as u32)
}
