//! A per-thread, per-owner cache of byte strings -> ids for the models whose parts all go through
//! a cache (SentencePiece's chunks, pair-merge pieces), emptied when it outgrows its owner's
//! budget ([`super::CacheSlot`]; default [`BUDGET`]). The pre-token cache's line table (`lines`)
//! was tried for SentencePiece and was slower there: every part, not only the pieces that need
//! merging, goes through this one (`src/PERFORMANCE.md`, "Eleventh round").
//!
//! Performance note (`src/PERFORMANCE.md`, "Eighteenth round"): the keys and ids of all entries
//! sit back to back in two arenas, and a map from each key's 64-bit hash to its entry finds
//! them (the bytes compared on a hit: a hash collision is a miss, never a wrong answer). Until
//! session 18 every entry was two boxed slices in a map keyed by the bytes: two allocations per
//! insert, and emptying the cache freed them one by one and let the map grow again from nothing.
//! On text whose pieces rarely repeat (a stream of 159 languages) that made the cache a loss:
//! Qwen 2's GGUF, one thread, 28.0 MB/s against 33.7 without it.

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
/// Bytes counted per entry besides its own bytes and ids (its record, 16, and its map slot, 17 at
/// full load and up to twice that after the map grows; rounded up).
pub const ENTRY_OVERHEAD: usize = 64;

/// One owner's bytes -> ids cache on one thread.
#[derive(Default)]
pub struct BytesCache {
    /// The 64-bit hash of each key -> its entry.
    map: FxHashMap<u64, u32>,
    entries: Vec<Entry>,
    /// Every entry's key bytes, back to back.
    keys: Vec<u8>,
    /// Every entry's ids, back to back.
    ids: Vec<u32>,
    bytes: usize,
    /// The owner's budget (set by [`with_bytes`]; 0 until then: every insert empties the map).
    budget: usize,
}

/// Where an entry's key and ids are in the arenas.
#[derive(Clone, Copy)]
struct Entry {
    key: u32,
    key_len: u32,
    ids: u32,
    ids_len: u32,
}

#[inline]
fn hash(key: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(key);
    h.write_usize(key.len());
    h.finish()
}

/// Room for `extra` more items in `v`, growing its capacity by doubling but never past `most`
/// items unless the items themselves need it (so the arenas stay within the budget).
fn reserve<T>(v: &mut Vec<T>, extra: usize, most: usize) {
    let need = v.len() + extra;
    if need > v.capacity() {
        let want = (v.capacity() * 2).clamp(need, most.max(need));
        v.reserve_exact(want - v.len());
    }
}

impl BytesCache {
    #[inline]
    pub fn get(&self, key: &[u8]) -> Option<&[u32]> {
        let e = self.entries[*self.map.get(&hash(key))? as usize];
        let (k, n) = (e.key as usize, e.key_len as usize);
        (self.keys[k..k + n] == *key).then(|| &self.ids[e.ids as usize..e.ids as usize + e.ids_len as usize])
    }

    /// Caches `key -> ids`, emptying the cache first (its memory kept for what follows) if the
    /// entry would take it past the budget (an entry larger than the whole budget is not cached).
    pub fn insert(&mut self, key: &[u8], ids: &[u32]) {
        let cost = key.len() + 4 * ids.len() + ENTRY_OVERHEAD;
        if cost > self.budget {
            return;
        }
        self.bytes += cost;
        if self.bytes > self.budget || self.keys.len() + key.len() > u32::MAX as usize || self.ids.len() + ids.len() > u32::MAX as usize {
            self.map.clear();
            self.entries.clear();
            self.keys.clear();
            self.ids.clear();
            self.bytes = cost;
        }
        let at = self.entries.len() as u32;
        reserve(&mut self.keys, key.len(), self.budget);
        reserve(&mut self.ids, ids.len(), self.budget / 4);
        reserve(&mut self.entries, 1, self.budget / ENTRY_OVERHEAD);
        self.entries.push(Entry { key: self.keys.len() as u32, key_len: key.len() as u32, ids: self.ids.len() as u32, ids_len: ids.len() as u32 });
        self.keys.extend_from_slice(key);
        self.ids.extend_from_slice(ids);
        self.map.insert(hash(key), at); // (a key of the same hash loses its place)
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

    /// Every entry since the last emptying answers with its ids, an emptied cache forgets all
    /// (its arenas kept), and the arenas' capacities stay within the budget.
    #[test]
    fn arenas_hold_every_entry_within_the_budget() {
        let budget = 64 << 10;
        let mut c = with_budget(budget);
        let mut since_empty: Vec<(Vec<u8>, Vec<u32>)> = Vec::new();
        let mut emptied = 0;
        for i in 0u32..20_000 {
            let key: Vec<u8> = (0..1 + i % 37).map(|j| (i.wrapping_mul(2654435761) >> (j % 24)) as u8).chain(i.to_le_bytes()).collect();
            let ids: Vec<u32> = (0..1 + i % 9).map(|j| i ^ j).collect();
            let before = c.bytes();
            c.insert(&key, &ids);
            if c.bytes() < before {
                emptied += 1;
                assert!(since_empty.iter().all(|(k, _)| c.get(k).is_none()));
                since_empty.clear();
            }
            since_empty.push((key, ids));
            if i % 97 == 0 {
                assert!(since_empty.iter().all(|(k, v)| c.get(k) == Some(&v[..])));
            }
            assert!(c.bytes() <= budget);
            assert!(c.keys.capacity() <= budget && c.ids.capacity() <= budget / 4 && c.entries.capacity() <= budget / ENTRY_OVERHEAD);
        }
        assert!(emptied > 10, "{emptied}");
        assert_eq!(c.get(b"never inserted"), None);
    }
}
