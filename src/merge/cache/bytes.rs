//! A per-thread, per-owner cache of byte strings -> ids for the models whose parts all go through
//! a cache (SentencePiece's chunks, pair-merge pieces): a hash map looked up by the bytes
//! themselves, emptied when it outgrows its owner's budget ([`super::CacheSlot`]; default
//! [`BUDGET`]). The pre-token cache's line table (`lines`)
//! was tried for SentencePiece and was slower there: every part, not only the pieces that need
//! merging, goes through this one (`src/PERFORMANCE.md`, "Eleventh round").

use rustc_hash::FxHashMap;
use std::cell::RefCell;

thread_local! {
    /// Each thread's caches, by owner (model).
    static BYTES: RefCell<FxHashMap<u64, BytesCache>> = RefCell::default();
}

/// Runs `f` with this thread's cache for `slot`'s owner, within the slot's budget (`None` if
/// the budget is 0 or the cache is in use further up the stack). Meeting a new owner first drops
/// the caches of owners that are gone (`super::with_owned`).
pub fn with_bytes<R>(slot: &super::CacheSlot, f: impl FnOnce(Option<&mut BytesCache>) -> R) -> R {
    let budget = slot.capacity();
    if budget == 0 {
        return f(None);
    }
    BYTES.with(|c| {
        super::with_owned(c, slot.owner(), |mut cache: Option<&mut BytesCache>| {
            if let Some(c) = cache.as_deref_mut() {
                c.budget = budget;
            }
            f(cache)
        })
    })
}

/// Drops this thread's cache of `owner` (`super::forget`).
pub(super) fn forget(owner: u64) {
    let _ = BYTES.try_with(|c| c.try_borrow_mut().map(|mut caches| caches.remove(&owner)));
}

/// This thread's cached ids of `key` for `owner`, and whether it holds a cache of `owner` at all.
#[cfg(test)]
pub fn cached(owner: u64, key: &[u8]) -> (bool, Option<Vec<u32>>) {
    BYTES.with(|c| {
        let caches = c.borrow();
        let cache = caches.get(&owner);
        (cache.is_some(), cache.and_then(|c| c.get(key)).map(<[u32]>::to_vec))
    })
}

/// The default budget: bytes of cached entries (counted with [`ENTRY_OVERHEAD`] each) per owner
/// and thread; a cache that grows past its budget is emptied.
pub const BUDGET: usize = 8 << 20;
/// Bytes counted per entry besides its own bytes and ids (table slot, two allocations).
pub const ENTRY_OVERHEAD: usize = 64;

/// One owner's bytes -> ids cache on one thread.
#[derive(Default)]
pub struct BytesCache {
    map: FxHashMap<Box<[u8]>, Box<[u32]>>,
    bytes: usize,
    /// The owner's budget (set by [`with_bytes`]; 0 until then: every insert empties the map).
    budget: usize,
}

impl BytesCache {
    #[inline]
    pub fn get(&self, key: &[u8]) -> Option<&[u32]> {
        self.map.get(key).map(|ids| &ids[..])
    }

    /// Caches `key -> ids`, emptying the map first if the entry would take it past the budget
    /// (an entry larger than the whole budget is not cached).
    pub fn insert(&mut self, key: &[u8], ids: &[u32]) {
        let cost = key.len() + 4 * ids.len() + ENTRY_OVERHEAD;
        if cost > self.budget {
            return;
        }
        self.bytes += cost;
        if self.bytes > self.budget {
            self.map = FxHashMap::default(); // its memory back, not just its entries
            self.bytes = cost;
        }
        self.map.insert(key.into(), ids.into());
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Bytes counted against the budget.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_budget(budget: usize) -> BytesCache {
        BytesCache { budget, ..Default::default() }
    }

    #[test]
    fn stays_within_its_budget() {
        let mut c = with_budget(BUDGET);
        let key = [b'x'; 100];
        for i in 0..BUDGET / (100 + 4 + ENTRY_OVERHEAD) + 10 {
            c.insert(&key[..1 + i % 100], &[1]);
            assert!(c.bytes() <= BUDGET && c.len() <= 100);
        }
        let mut c = with_budget(BUDGET);
        for i in 0..BUDGET / (8 + 4 + ENTRY_OVERHEAD) + 10 {
            c.insert(&(i as u64).to_le_bytes(), &[1]);
            assert!(c.bytes() <= BUDGET);
        }
        assert!(c.len() < BUDGET / (8 + 4 + ENTRY_OVERHEAD));
        assert_eq!(c.get(&0u64.to_le_bytes()), None); // emptied once on the way
        c.insert(b"k", &[7, 8]);
        assert_eq!(c.get(b"k"), Some(&[7, 8][..]));
        // a budget smaller than an entry caches nothing
        let mut c = with_budget(ENTRY_OVERHEAD + 8);
        c.insert(b"k", &[7, 8]);
        assert_eq!((c.get(b"k"), c.bytes()), (None, 0));
        c.insert(b"k", &[7]);
        assert_eq!(c.get(b"k"), Some(&[7][..]));
    }
}
