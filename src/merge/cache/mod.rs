//! A bounded, per-thread pre-token cache: piece bytes -> token ids, for pieces that needed merging.
//!
//! Performance note: in natural text most pieces are whole tokens (one vocabulary lookup) and never
//! reach the cache; the rest — rare words, most non-Latin text — repeat a lot, and one cache probe
//! replaces a merge that costs ~2 lookups per byte. The cache is per thread (no locks, no
//! contention in batches) and per encoder, and its memory is one table fixed by the byte budget.
//!
//! Layout (`lines`): 2-way buckets of 64-byte lines, each line a whole entry (tag, lengths, the
//! piece's bytes and its ids inline), so a hit reads one cache line; a miss's insert replaces the
//! least recently used line of its bucket. Pieces whose bytes (padded to 4) and ids take more than
//! 56 bytes are not cached (~2% of the repeats in multilingual text). The default budget is
//! small (256 KiB, 4,096 entries: the table stays in L2); 1–4 MiB tables were slower on every
//! corpus measured, see `src/PERFORMANCE.md`, "Seventh round: the pre-token cache".
//!
//! Performance note 2: on text that does not repeat (random Unicode) every probe misses and every
//! insert only fills the table, and with the cache off such text encoded 1.34x faster (with the
//! arena table this replaced). The cache therefore counts its hits per window of 1,024 probes;
//! under 1/8 hits pauses it (no probe, no insert) for 8K pieces, doubling with every further poor
//! window up to 1M, and a good window ends the pauses. With the line table, random Unicode is
//! 1.07–1.10x faster with the pause than without; natural text is unchanged.

mod bytes;
mod lines;

pub use bytes::{with_bytes, BytesCache, BUDGET as BYTES_BUDGET};
#[cfg(test)]
pub use bytes::cached;

use crate::vocab::Rank;
use lines::Table;
use rustc_hash::{FxHashMap, FxHasher};
use std::cell::RefCell;
use std::hash::Hasher;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Default budget per thread and encoder.
pub const DEFAULT_CAPACITY_BYTES: usize = 256 << 10;
/// Longer pieces are not cached: a line holds at most this many bytes of piece and ids together.
pub const MAX_CACHED_PIECE: usize = lines::PAYLOAD - 4;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The owners (encoders) still alive. A dropped encoder can only free its cache on the dropping
/// thread; the caches it left on other threads (a batch's pool threads) are pruned when such a
/// thread next meets a new owner. Without this, every encoder built, used in a batch and dropped
/// left up to the cache budget on each pool thread (measured: +4.5 MB per encoder, unbounded).
static LIVE: Mutex<BTreeSet<u64>> = Mutex::new(BTreeSet::new());

fn live() -> std::sync::MutexGuard<'static, BTreeSet<u64>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether encoder `owner` is still alive (other per-thread caches prune by it too).
pub fn is_live(owner: u64) -> bool {
    live().contains(&owner)
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

/// An encoder's identity for its per-thread caches and their byte budget (0 = off). Setting the
/// budget takes a new identity, so every thread's cache starts empty, a batch's pool threads'
/// included: this thread drops the old one's cache at once and other threads prune it when they
/// next meet the new identity. A clone is a new encoder with the same budget; dropping the slot
/// retires its identity.
#[derive(Debug)]
pub struct CacheSlot {
    owner: AtomicU64,
    capacity: AtomicUsize,
}

impl CacheSlot {
    pub fn new(capacity: usize) -> CacheSlot {
        CacheSlot { owner: AtomicU64::new(new_owner_id()), capacity: AtomicUsize::new(capacity) }
    }

    /// The identity the caches are kept under now.
    #[inline]
    pub fn owner(&self) -> u64 {
        self.owner.load(Ordering::Relaxed)
    }

    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity.load(Ordering::Relaxed)
    }

    /// Sets the budget and empties every thread's cache of this encoder.
    pub fn set_capacity(&self, bytes: usize) {
        self.capacity.store(bytes, Ordering::Relaxed);
        retire(self.owner.swap(new_owner_id(), Ordering::Relaxed));
    }
}

impl Clone for CacheSlot {
    fn clone(&self) -> Self {
        CacheSlot::new(self.capacity())
    }
}

impl Drop for CacheSlot {
    fn drop(&mut self) {
        retire(*self.owner.get_mut());
    }
}

#[derive(Default)]
pub struct PieceCache {
    table: Table,
    /// The budget the table was built for (it is rebuilt when the budget changes).
    capacity: usize,
    /// Probes and hits in the current window of [`WINDOW`] probes.
    probes: u32,
    hits: u32,
    /// Pieces still to pass without probing or inserting, and the length of the last such pause.
    skip: u32,
    backoff: u32,
}

/// The hit rate is judged over this many probes.
const WINDOW: u32 = 1024;
/// A window with fewer hits than this pauses the cache: on text that does not repeat (random
/// Unicode) a probe and an insert cost more than the hits save.
const MIN_HITS: u32 = WINDOW / 8;
/// The first pause, in pieces; each further poor window doubles it, up to `MAX_PAUSE`.
const FIRST_PAUSE: u32 = 8 * WINDOW;
const MAX_PAUSE: u32 = 1 << 20;

/// The hash a piece is probed and stored under.
#[inline(always)]
pub fn hash_of(piece: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(piece);
    h.finish()
}

impl PieceCache {
    /// Whether to use the cache for the next piece: false while paused after a window of few hits.
    #[inline]
    pub fn active(&mut self) -> bool {
        if self.skip == 0 {
            return true;
        }
        self.skip -= 1;
        false
    }

    /// Appends the ids of `piece` (hashed by [`hash_of`]) to `out` if cached and returns how many,
    /// counting the probe (and the hit) towards the pause decision.
    #[inline]
    pub fn get_into(&mut self, piece: &[u8], hash: u64, out: &mut Vec<Rank>) -> Option<usize> {
        self.probes += 1;
        if self.probes == WINDOW {
            self.end_window();
        }
        let n = self.table.get_into(piece, hash, out)?;
        self.hits += 1;
        Some(n)
    }

    #[cold]
    fn end_window(&mut self) {
        if self.hits < MIN_HITS {
            self.backoff = (self.backoff * 2).clamp(FIRST_PAUSE, MAX_PAUSE);
            self.skip = self.backoff;
        } else {
            self.backoff = 0;
        }
        self.probes = 0;
        self.hits = 0;
    }

    /// Caches `piece -> ids` (after a miss of [`PieceCache::get_into`] with the same hash) if
    /// it fits one line, replacing the least recently used entry of its bucket. The table is
    /// built on the first insert, the largest that fits `capacity` bytes.
    #[inline]
    pub fn insert(&mut self, piece: &[u8], hash: u64, ids: &[Rank], capacity: usize) {
        if !lines::fits(piece.len(), ids.len()) {
            return;
        }
        if capacity != self.capacity || self.table.memory_bytes() == 0 {
            self.rebuild(capacity);
        }
        self.table.insert(piece, hash, ids);
    }

    #[cold]
    fn rebuild(&mut self, capacity: usize) {
        self.table = Table::with_budget(capacity);
        self.capacity = capacity;
    }

    /// Bytes in use: the table (fixed once built; at most the budget).
    pub fn memory_bytes(&self) -> usize {
        self.table.memory_bytes()
    }
}

thread_local! {
    static CACHES: RefCell<FxHashMap<u64, PieceCache>> = RefCell::new(FxHashMap::default());
}

/// Runs `f` with this thread's cache for `slot`'s owner; `None` if its budget is 0 or the cache
/// is already in use further up this thread's stack (as [`with_bytes`] for the other caches).
pub fn with_cache<R>(slot: &CacheSlot, f: impl FnOnce(Option<&mut PieceCache>) -> R) -> R {
    if slot.capacity() == 0 {
        return f(None);
    }
    CACHES.with(|c| with_owned(c, slot.owner(), f))
}

/// Runs `f` with `owner`'s entry of a thread's per-encoder caches (made if missing), or with
/// `None` if that map is in use further up the stack. Meeting a new owner first drops the
/// entries of owners that are gone (the pre-token caches here, SentencePiece's chunk caches).
pub fn with_owned<C: Default, R>(caches: &RefCell<FxHashMap<u64, C>>, owner: u64, f: impl FnOnce(Option<&mut C>) -> R) -> R {
    match caches.try_borrow_mut() {
        Ok(mut caches) => {
            if !caches.is_empty() && !caches.contains_key(&owner) {
                let live = live();
                caches.retain(|id, _| live.contains(id));
            }
            f(Some(caches.entry(owner).or_default()))
        }
        Err(_) => f(None),
    }
}

/// Drops this thread's cache of encoder `owner` (called when the encoder is dropped or resized).
pub fn forget(owner: u64) {
    let _ = CACHES.try_with(|c| {
        if let Ok(mut caches) = c.try_borrow_mut() {
            caches.remove(&owner);
        }
    });
    bytes::forget(owner);
}

#[cfg(test)]
mod tests;
