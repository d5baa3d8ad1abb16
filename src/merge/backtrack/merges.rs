//! The merge table of the backtracking merge, `(left, right) -> merged token`: a dense table for
//! pairs of the lowest ids (the one-byte tokens, which tiktoken-style vocabularies rank first)
//! in front of a hashed table: [`Pairs`] for 32-bit ids, [`NarrowPairs`] (8-byte slots, a
//! filter of 8 bits per merge) when every id fits in 16 bits.
//!
//! Performance notes: every `valid_pair` that succeeds ends by asking about the two bytes at the
//! boundary, which always form a merge, so the hashed table answers from its slot array (a cache
//! miss) rather than its filter. With 26 one-byte tokens (random lowercase letters) the dense
//! table has 676 entries and stays in L1. For o200k's 25.8k lowercase tokens the narrow table is
//! 256 kB of slots and a 32 kB filter instead of 512 kB and 64 kB (`src/PERFORMANCE.md`, "Long
//! pieces, fourth round").

use crate::merge::pairs::Pairs;
use crate::merge::trie::NONE;

/// Ids below this many may get the dense table (256 x 256 x 4 bytes at most).
const MAX_LOW: u32 = 256;

/// A hashed `(a, b) -> merged` table.
pub(super) trait Hashed {
    fn with_capacity(capacity: usize) -> Self;
    fn insert(&mut self, a: u32, b: u32, merged: u32);
    fn get(&self, a: u32, b: u32) -> Option<u32>;
    fn memory_bytes(&self) -> usize;
}

impl Hashed for Pairs {
    fn with_capacity(capacity: usize) -> Self {
        Pairs::new(capacity)
    }
    fn insert(&mut self, a: u32, b: u32, merged: u32) {
        Pairs::insert(self, a, b, merged)
    }
    #[inline(always)]
    fn get(&self, a: u32, b: u32) -> Option<u32> {
        Pairs::get(self, a, b)
    }
    fn memory_bytes(&self) -> usize {
        Pairs::memory_bytes(self)
    }
}

/// Open addressing for ids below `u16::MAX`: slot `(a << 16 | b) << 32 | merged`, linear
/// probing at load <= 0.8, a one-hash bit filter in front (8 bits per merge).
#[derive(Clone)]
pub(super) struct NarrowPairs {
    slots: Vec<u64>,
    shift: u32,
    filter: Vec<u64>,
    filter_shift: u32,
    len: usize,
}

const EMPTY: u64 = u64::MAX;

impl NarrowPairs {
    #[inline(always)]
    fn key(a: u32, b: u32) -> u64 {
        ((a as u64) << 16) | b as u64
    }
}

impl Hashed for NarrowPairs {
    fn with_capacity(capacity: usize) -> Self {
        let slots = (capacity.max(8) + capacity / 4 + 1).next_power_of_two();
        let bits = (capacity.max(64) * 8).next_power_of_two();
        NarrowPairs {
            slots: vec![EMPTY; slots],
            shift: 64 - slots.trailing_zeros(),
            filter: vec![0; bits / 64],
            filter_shift: 64 - bits.trailing_zeros(),
            len: 0,
        }
    }

    /// Records `(a, b) -> merged`; ids below `u16::MAX`, each pair at most once, at most
    /// `capacity` merges.
    fn insert(&mut self, a: u32, b: u32, merged: u32) {
        assert!(a < 0xFFFF && b < 0xFFFF && self.len + 1 < self.slots.len(), "narrow merge table misused");
        let k = Self::key(a, b);
        let bit = (k.wrapping_mul(0xD6E8_FEB8_6659_FD93) >> self.filter_shift) as usize;
        self.filter[bit / 64] |= 1 << (bit % 64);
        let mask = self.slots.len() - 1;
        let mut i = (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize;
        while self.slots[i] != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = (k << 32) | merged as u64;
        self.len += 1;
    }

    #[inline(always)]
    fn get(&self, a: u32, b: u32) -> Option<u32> {
        let k = Self::key(a, b);
        let bit = (k.wrapping_mul(0xD6E8_FEB8_6659_FD93) >> self.filter_shift) as usize;
        if self.filter[bit / 64] & (1 << (bit % 64)) == 0 {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize;
        loop {
            let slot = self.slots[i];
            if slot >> 32 == k {
                return Some(slot as u32);
            }
            if slot == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    fn memory_bytes(&self) -> usize {
        (self.slots.len() + self.filter.len()) * 8
    }
}

#[derive(Clone)]
pub(super) struct Merges<H = Pairs> {
    hashed: H,
    /// `dense[a * low + b]` for `a, b < low`, else the hashed table.
    dense: Vec<u32>,
    low: u32,
}

impl<H: Hashed> Merges<H> {
    /// An empty table for up to `capacity` merges; the dense part covers ids below `low` (the
    /// one past the largest one-byte token), if that is at most `MAX_LOW`.
    pub(super) fn new(capacity: usize, low: u32) -> Merges<H> {
        let low = if low <= MAX_LOW { low } else { 0 };
        Merges {
            hashed: H::with_capacity(capacity),
            dense: vec![NONE; (low * low) as usize],
            low,
        }
    }

    /// Records the merge `(a, b) -> merged` (each pair at most once).
    pub(super) fn insert(&mut self, a: u32, b: u32, merged: u32) {
        if a < self.low && b < self.low {
            self.dense[(a * self.low + b) as usize] = merged;
        } else {
            self.hashed.insert(a, b, merged);
        }
    }

    /// The token that `(a, b)` merges into, if any.
    #[inline(always)]
    pub(super) fn get(&self, a: u32, b: u32) -> Option<u32> {
        if a < self.low && b < self.low {
            Some(self.dense[(a * self.low + b) as usize]).filter(|&t| t != NONE)
        } else {
            self.hashed.get(a, b)
        }
    }

    /// The id below which the dense table answers.
    pub(super) fn low(&self) -> u32 {
        self.low
    }

    pub(super) fn memory_bytes(&self) -> usize {
        self.hashed.memory_bytes() + self.dense.len() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense_and_hashed_parts_answer_alike<H: Hashed>() {
        for low in [0, 3, 4, 300] {
            let mut m = Merges::<H>::new(20, low);
            let merges = [(0, 1, 10), (1, 0, 11), (3, 3, 12), (2, 10, 13), (10, 11, 14), (9, 0, 15)];
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

    #[test]
    fn wide_and_narrow_tables_answer_alike() {
        dense_and_hashed_parts_answer_alike::<Pairs>();
        dense_and_hashed_parts_answer_alike::<NarrowPairs>();
    }

    #[test]
    fn narrow_table_agrees_with_a_map_when_full() {
        let mut seed = 777u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 0xFFFF) as u32
        };
        let mut reference = std::collections::HashMap::new();
        let mut table = NarrowPairs::with_capacity(20_000);
        while reference.len() < 20_000 {
            let (a, b) = (next(), next());
            let merged = next();
            if let std::collections::hash_map::Entry::Vacant(e) = reference.entry((a, b)) {
                e.insert(merged);
                table.insert(a, b, merged);
            }
        }
        for (&(a, b), &m) in &reference {
            assert_eq!(table.get(a, b), Some(m));
            assert_eq!(table.get(b, a), reference.get(&(b, a)).copied());
        }
        assert_eq!(table.get(0xFFFE, 0xFFFE), reference.get(&(0xFFFE, 0xFFFE)).copied());
    }
}
