//! The merge table of the backtracking merge, `(left, right) -> merged token`: a dense table for
//! pairs of the lowest ids (the one-byte tokens, which tiktoken-style vocabularies rank first)
//! in front of the hashed [`Pairs`].
//!
//! Performance note: every `valid_pair` that succeeds ends by asking about the two bytes at the
//! boundary, which always form a merge, so the hashed table answers from its slot array (a cache
//! miss) rather than its filter. With 26 one-byte tokens (random lowercase letters) the dense
//! table has 676 entries and stays in L1.

use crate::merge::pairs::Pairs;
use crate::merge::trie::NONE;

/// Ids below this many may get the dense table (256 x 256 x 4 bytes at most).
const MAX_LOW: u32 = 256;

#[derive(Clone)]
pub(super) struct Merges {
    pairs: Pairs,
    /// `dense[a * low + b]` for `a, b < low`, else the hashed table.
    dense: Vec<u32>,
    low: u32,
}

impl Merges {
    /// An empty table for up to `capacity` merges; the dense part covers ids below `low` (the
    /// one past the largest one-byte token), if that is at most `MAX_LOW`.
    pub(super) fn new(capacity: usize, low: u32) -> Merges {
        let low = if low <= MAX_LOW { low } else { 0 };
        Merges {
            pairs: Pairs::new(capacity),
            dense: vec![NONE; (low * low) as usize],
            low,
        }
    }

    /// Records the merge `(a, b) -> merged` (each pair at most once).
    pub(super) fn insert(&mut self, a: u32, b: u32, merged: u32) {
        if a < self.low && b < self.low {
            self.dense[(a * self.low + b) as usize] = merged;
        } else {
            self.pairs.insert(a, b, merged);
        }
    }

    /// The token that `(a, b)` merges into, if any.
    #[inline(always)]
    pub(super) fn get(&self, a: u32, b: u32) -> Option<u32> {
        if a < self.low && b < self.low {
            Some(self.dense[(a * self.low + b) as usize]).filter(|&t| t != NONE)
        } else {
            self.pairs.get(a, b)
        }
    }

    pub(super) fn memory_bytes(&self) -> usize {
        self.pairs.memory_bytes() + self.dense.len() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_hashed_parts_answer_alike() {
        for low in [0, 3, 4, 300] {
            let mut m = Merges::new(20, low);
            let merges = [(0, 1, 10), (1, 0, 11), (3, 3, 12), (2, 10, 13), (10, 11, 14)];
            for (a, b, t) in merges {
                m.insert(a, b, t);
            }
            for a in 0..16 {
                for b in 0..16 {
                    let want = merges.iter().find(|x| (x.0, x.1) == (a, b)).map(|x| x.2);
                    assert_eq!(m.get(a, b), want, "low {low}: ({a}, {b})");
                }
            }
        }
    }
}
