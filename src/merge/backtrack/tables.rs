//! The per-token tables that the backtracking merge reads, at two widths: [`Wide`] (32-bit ids,
//! any vocabulary; what the build fills) and [`Narrow`] (16-bit ids: 4-byte records and 8-byte
//! merge slots) for a sub-vocabulary of fewer than 65,535 tokens, which halves the working set of
//! the merge's random loads (o200k's lowercase tokens: ~0.5 MB instead of ~1 MB, so they stay in
//! the L2 cache). The merge is generic over [`Tables`], one copy per width.

use super::merges::{Merges, NarrowPairs};
use crate::merge::pairs::Pairs;
use crate::merge::trie::NONE;

/// What the merge reads per token.
pub(super) trait Tables {
    /// The last merge that builds `t`: `(left, right)`, `(t, t)` for one byte.
    fn split(&self, t: u32) -> (u32, u32);
    /// The token that `(a, b)` merges into, if any.
    fn merge(&self, a: u32, b: u32) -> Option<u32>;
    /// The longest proper prefix token of `t`, or `NONE`.
    fn next_prefix(&self, t: u32) -> u32;
    /// The length of `t` in bytes.
    fn len(&self, t: u32) -> usize;
}

/// The last merge building a token (`left == right == id` for one byte; `NONE` if none).
#[derive(Clone, Copy, Debug)]
pub(super) struct Split {
    pub left: u32,
    pub right: u32,
}

pub(super) const NO_SPLIT: Split = Split {
    left: NONE,
    right: NONE,
};

/// What the encoder reads when it tries a shorter token or backtracks.
#[derive(Clone, Copy, Debug)]
pub(super) struct Chain {
    /// The longest proper prefix token, or `NONE`.
    pub next_prefix: u32,
    pub len: u32,
}

/// 32-bit tables: `splits` apart from `chain`, so `valid_pair` reads 8 bytes per token.
#[derive(Clone)]
pub(super) struct Wide {
    pub splits: Vec<Split>,
    pub chain: Vec<Chain>,
    pub merges: Merges<Pairs>,
}

impl Tables for Wide {
    #[inline(always)]
    fn split(&self, t: u32) -> (u32, u32) {
        let s = self.splits[t as usize];
        (s.left, s.right)
    }
    #[inline(always)]
    fn merge(&self, a: u32, b: u32) -> Option<u32> {
        self.merges.get(a, b)
    }
    #[inline(always)]
    fn next_prefix(&self, t: u32) -> u32 {
        self.chain[t as usize].next_prefix
    }
    #[inline(always)]
    fn len(&self, t: u32) -> usize {
        self.chain[t as usize].len as usize
    }
}

/// 16-bit tables: `[left, right]` and `[next_prefix, len]` per token (`u16::MAX` for `NONE`).
#[derive(Clone)]
pub(super) struct Narrow {
    splits: Vec<[u16; 2]>,
    chain: Vec<[u16; 2]>,
    merges: Merges<NarrowPairs>,
}

const NARROW_NONE: u16 = u16::MAX;

impl Narrow {
    /// The same tables at 16 bits, or `None` if an id or a length does not fit.
    pub(super) fn from_wide(wide: &Wide) -> Option<Narrow> {
        let k = wide.chain.len();
        if k >= NARROW_NONE as usize || wide.chain.iter().any(|c| c.len >= NARROW_NONE as u32) {
            return None;
        }
        let narrow = |t: u32| if t == NONE { NARROW_NONE } else { t as u16 };
        let mut merges = Merges::new(k, wide.merges.low());
        for (t, s) in wide.splits.iter().enumerate() {
            if s.left != NONE && s.left != t as u32 {
                merges.insert(s.left, s.right, t as u32);
            }
        }
        Some(Narrow {
            splits: wide.splits.iter().map(|s| [narrow(s.left), narrow(s.right)]).collect(),
            chain: wide.chain.iter().map(|c| [narrow(c.next_prefix), c.len as u16]).collect(),
            merges,
        })
    }

    pub(super) fn len(&self) -> usize {
        self.chain.len()
    }

    pub(super) fn memory_bytes(&self) -> usize {
        (self.splits.len() + self.chain.len()) * 4 + self.merges.memory_bytes()
    }
}

impl Tables for Narrow {
    #[inline(always)]
    fn split(&self, t: u32) -> (u32, u32) {
        let [l, r] = self.splits[t as usize];
        (l as u32, r as u32)
    }
    #[inline(always)]
    fn merge(&self, a: u32, b: u32) -> Option<u32> {
        self.merges.get(a, b)
    }
    #[inline(always)]
    fn next_prefix(&self, t: u32) -> u32 {
        match self.chain[t as usize][0] {
            NARROW_NONE => NONE,
            p => p as u32,
        }
    }
    #[inline(always)]
    fn len(&self, t: u32) -> usize {
        self.chain[t as usize][1] as usize
    }
}
