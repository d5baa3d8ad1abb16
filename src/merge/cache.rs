//! A bounded, per-thread pre-token cache: piece bytes -> token ids, for pieces that needed merging.
//!
//! Performance note: in natural text most pieces are whole tokens (one vocabulary lookup) and never
//! reach the cache; the rest — rare words, most non-Latin text — repeat a lot, and one cache probe
//! replaces a merge that costs ~2 lookups per byte. The cache is per thread (no locks, no
//! contention in batches) and per encoder; when it reaches its byte budget it is cleared, which
//! keeps memory strictly bounded and costs nothing on the hot path.

use crate::vocab::Rank;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Default budget per thread and encoder.
pub const DEFAULT_CAPACITY_BYTES: usize = 4 << 20;
/// Longer pieces are not cached (they are rare, and hashing them costs as much as it saves).
pub const MAX_CACHED_PIECE: usize = 48;
const ENTRY_OVERHEAD: usize = 48;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The owners (encoders) still alive. A dropped encoder can only free its cache on the dropping
/// thread; the caches it left on other threads (a batch's pool threads) are pruned when such a
/// thread next meets a new owner. Without this, every encoder built, used in a batch and dropped
/// left up to the cache budget on each pool thread (measured: +4.5 MB per encoder, unbounded).
static LIVE: Mutex<BTreeSet<u64>> = Mutex::new(BTreeSet::new());

fn live() -> std::sync::MutexGuard<'static, BTreeSet<u64>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A fresh identity for an encoder's caches.
pub fn new_owner_id() -> u64 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    live().insert(id);
    id
}

/// The encoder `owner` is gone: drop this thread's cache of it, and let other threads prune theirs.
pub fn retire(owner: u64) {
    live().remove(&owner);
    forget(owner);
}

#[derive(Default)]
pub struct PieceCache {
    map: FxHashMap<Box<[u8]>, Box<[Rank]>>,
    bytes: usize,
}

impl PieceCache {
    #[inline]
    pub fn get(&self, piece: &[u8]) -> Option<&[Rank]> {
        self.map.get(piece).map(|v| &**v)
    }

    #[inline]
    pub fn insert(&mut self, piece: &[u8], ids: &[Rank], capacity: usize) {
        let cost = piece.len() + ids.len() * 4 + ENTRY_OVERHEAD;
        if self.bytes + cost > capacity {
            self.map.clear();
            self.bytes = 0;
            if cost > capacity {
                return;
            }
        }
        self.map.insert(piece.into(), ids.into());
        self.bytes += cost;
    }

    pub fn memory_bytes(&self) -> usize {
        self.bytes
    }
}

thread_local! {
    static CACHES: RefCell<FxHashMap<u64, PieceCache>> = RefCell::new(FxHashMap::default());
}

/// Runs `f` with this thread's cache for encoder `owner`; `None` if caching is off or the cache is
/// already in use further up this thread's stack.
pub fn with_cache<R>(owner: u64, enabled: bool, f: impl FnOnce(Option<&mut PieceCache>) -> R) -> R {
    if !enabled {
        return f(None);
    }
    CACHES.with(|c| match c.try_borrow_mut() {
        Ok(mut caches) => {
            if !caches.is_empty() && !caches.contains_key(&owner) {
                let live = live();
                caches.retain(|id, _| live.contains(id));
            }
            f(Some(caches.entry(owner).or_default()))
        }
        Err(_) => f(None),
    })
}

/// Drops this thread's cache of encoder `owner` (called when the encoder is dropped or resized).
pub fn forget(owner: u64) {
    let _ = CACHES.try_with(|c| {
        if let Ok(mut caches) = c.try_borrow_mut() {
            caches.remove(&owner);
        }
    });
}
