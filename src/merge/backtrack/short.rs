//! `valid_pair` answers for pairs of short tokens (the at most `MAX_SHORT` shortest: one or two
//! bytes for letters, every token for digits), kept in a dense table that fills itself as the
//! backtracking loop asks.
//!
//! Performance notes (`src/PERFORMANCE.md`, "Fifteenth round"). On a megabyte of random lowercase
//! letters (o200k's 25.8k lowercase tokens) the backtracking loop asks `valid_pair` about a
//! million pairs, two thirds of them pairs of one- or two-byte tokens (673 such tokens for o200k,
//! 649 for cl100k), each unwinding two merge trees through the hashed merge table. Here such a
//! pair costs one load from a table of 2 bits per pair (113 kB for 673 tokens): the loop took
//! 27.3 -> 20.5 ms (o200k) and 23.2 -> 18.0 ms (cl100k) once the table knows the pairs, and 1 MB of
//! digits with GPT-2's tokens (994, all of them short) 27.5 -> 11.2 ms. A first megabyte fills
//! the table (250k of its 688k asks are new) and costs what it did before: filled eagerly, the
//! 453k pairs took 9.6 ms, as long as the asks they save. Sets with more than [`MAX_SHORT`] tokens
//! of one and two bytes (the full vocabularies) get no table.
//!
//! The table belongs to the shared, read-only tables, so its words are atomics, read and written
//! with relaxed loads and stores: an answer is the same whichever thread computes it, and a store
//! that overwrites another thread's answer in the same word only makes that pair unknown again.

use super::tables::Tables;
use super::valid_pair;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Sets with more short tokens than this get no table (2 bits per pair: 1 MiB at most). Unit
/// tests use a cap that splits their small vocabularies into short and other tokens, so that
/// both paths run.
pub(super) const MAX_SHORT: usize = if cfg!(test) { 300 } else { 2048 };

/// Marks a token that is not short.
const LONG: u16 = u16::MAX;

/// Pair states: not asked yet, valid, invalid.
const VALID: u64 = 1;
const INVALID: u64 = 2;

pub(super) struct ShortPairs {
    /// Per local id, the token's index among the short tokens, or `LONG`; empty: no table.
    index: Vec<u16>,
    /// How many short tokens.
    count: usize,
    /// 2 bits per pair `(i, j)` of short tokens, at `i * count + j`.
    states: Vec<AtomicU64>,
}

impl ShortPairs {
    /// The table for the producible tokens `t` of `0..k` up to the longest length `L` such that
    /// at most `MAX_SHORT` tokens have `len(t) <= L` (none if `L` would be 0 or 1: the one-byte
    /// pairs are the merge table's dense part already).
    pub(super) fn new(k: usize, len: impl Fn(u32) -> usize, producible: impl Fn(u32) -> bool) -> ShortPairs {
        let mut by_len = Vec::new();
        for t in (0..k as u32).filter(|&t| producible(t)) {
            let l = len(t);
            if by_len.len() <= l {
                by_len.resize(l + 1, 0usize);
            }
            by_len[l] += 1;
        }
        let (mut max_len, mut count) = (0, 0);
        for (l, &n) in by_len.iter().enumerate() {
            if count + n > MAX_SHORT {
                break;
            }
            (max_len, count) = (l, count + n);
        }
        if max_len < 2 {
            return ShortPairs::none();
        }
        let mut index = vec![LONG; k];
        for (i, t) in (0..k as u32).filter(|&t| len(t) <= max_len && producible(t)).enumerate() {
            index[t as usize] = i as u16;
        }
        let states = (0..(count * count).div_ceil(32)).map(|_| AtomicU64::new(0)).collect();
        ShortPairs { index, count, states }
    }

    fn none() -> ShortPairs {
        ShortPairs {
            index: Vec::new(),
            count: 0,
            states: Vec::new(),
        }
    }

    /// `valid_pair(toks, a, b)`, from the table when `a` and `b` are both short.
    #[inline(always)]
    pub(super) fn valid_pair<T: Tables>(&self, toks: &T, a: u32, b: u32, otherwise: impl FnOnce() -> bool) -> bool {
        let (Some(&i), Some(&j)) = (self.index.get(a as usize), self.index.get(b as usize)) else {
            return otherwise();
        };
        if i == LONG || j == LONG {
            return otherwise();
        }
        let n = i as usize * self.count + j as usize;
        let (word, shift) = (&self.states[n / 32], 2 * (n % 32));
        let w = word.load(Relaxed);
        match (w >> shift) & 3 {
            VALID => true,
            INVALID => false,
            _ => {
                let valid = valid_pair(toks, a, b);
                word.store(w | (if valid { VALID } else { INVALID }) << shift, Relaxed);
                valid
            }
        }
    }

    pub(super) fn memory_bytes(&self) -> usize {
        self.index.len() * 2 + self.states.len() * 8
    }
}

impl Clone for ShortPairs {
    fn clone(&self) -> Self {
        ShortPairs {
            index: self.index.clone(),
            count: self.count,
            states: self.states.iter().map(|w| AtomicU64::new(w.load(Relaxed))).collect(),
        }
    }
}
