//! A bounded, per-thread pre-token cache: piece bytes -> token ids, for pieces that needed merging.
//!
//! Performance note: in natural text most pieces are whole tokens (one vocabulary lookup) and never
//! reach the cache; the rest — rare words, most non-Latin text — repeat a lot, and one cache probe
//! replaces a merge that costs ~2 lookups per byte. The cache is per thread (no locks, no
//! contention in batches) and per encoder; when it reaches its byte budget it is emptied, which
//! keeps memory strictly bounded and costs nothing on the hot path.
//!
//! Layout: one open-addressing table of 16-byte slots (hash, offsets, lengths) over two arenas
//! (piece bytes, ids), so an insert allocates nothing and emptying the cache is two truncations
//! and one `fill`. A `HashMap<Box<[u8]>, Box<[Rank]>>` spent ~12% of multilingual encode time in
//! malloc/free (two allocations per entry, and freeing every entry when the budget was reached);
//! see `src/PERFORMANCE.md`.
//!
//! Performance note 2: on text that does not repeat (random Unicode) every probe misses and every
//! insert only fills the table, and with the cache off such text encoded 1.34x faster. The cache
//! therefore counts its hits per window of 1,024 probes; under 1/8 hits pauses it (no probe, no
//! insert) for 8K pieces, doubling with every further poor window up to 1M, and a good window ends
//! the pauses. Random Unicode 1.51x; natural text (hit rates 56–73%) unchanged.

use crate::vocab::Rank;
use rustc_hash::{FxHashMap, FxHasher};
use std::cell::RefCell;
use std::hash::Hasher;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Default budget per thread and encoder.
pub const DEFAULT_CAPACITY_BYTES: usize = 4 << 20;
/// Longer pieces are not cached (they are rare, and hashing them costs as much as it saves).
pub const MAX_CACHED_PIECE: usize = 48;
const SLOT_BYTES: usize = std::mem::size_of::<Slot>();

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

/// One entry: `hash == 0` marks an empty slot (real hashes have bit 0 set).
#[derive(Clone, Copy, Default)]
struct Slot {
    hash: u32,
    key_at: u32,
    ids_at: u32,
    key_len: u16,
    n_ids: u16,
}

#[derive(Default)]
pub struct PieceCache {
    slots: Vec<Slot>,
    keys: Vec<u8>,
    ids: Vec<Rank>,
    len: usize,
    /// The budget the table was sized for (it is rebuilt when the budget changes).
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

#[inline(always)]
fn hash_of(piece: &[u8]) -> u32 {
    let mut h = FxHasher::default();
    h.write(piece);
    (h.finish() >> 32) as u32 | 1
}

impl PieceCache {
    #[inline]
    fn find(&self, piece: &[u8], hash: u32) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let s = self.slots[i];
            if s.hash == 0 {
                return Err(i);
            }
            if s.hash == hash && s.key_len as usize == piece.len() {
                let k = &self.keys[s.key_at as usize..s.key_at as usize + piece.len()];
                if k == piece {
                    return Ok(i);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Whether to use the cache for the next piece: false while paused after a window of few hits.
    #[inline]
    pub fn active(&mut self) -> bool {
        if self.skip == 0 {
            return true;
        }
        self.skip -= 1;
        false
    }

    /// Looks `piece` up, counting the probe (and the hit) towards the pause decision.
    #[inline]
    pub fn get(&mut self, piece: &[u8]) -> Option<&[Rank]> {
        self.probes += 1;
        if self.probes == WINDOW {
            self.end_window();
        }
        if self.len == 0 {
            return None;
        }
        let s = self.slots[self.find(piece, hash_of(piece)).ok()?];
        self.hits += 1;
        Some(&self.ids[s.ids_at as usize..s.ids_at as usize + s.n_ids as usize])
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

    /// Empties the cache and sizes it for `capacity` bytes: a quarter for the slots (load at most
    /// one half), the rest for the arenas.
    fn reset(&mut self, capacity: usize) {
        if capacity != self.capacity || self.slots.is_empty() {
            let want = (capacity / 4 / SLOT_BYTES).max(16);
            let n_slots = 1 << (usize::BITS - 1 - want.leading_zeros());
            self.slots = vec![Slot::default(); n_slots];
            self.keys = Vec::new();
            self.ids = Vec::new();
            self.capacity = capacity;
        } else {
            self.slots.fill(Slot::default());
            self.keys.clear();
            self.ids.clear();
        }
        self.len = 0;
    }

    #[inline]
    pub fn insert(&mut self, piece: &[u8], ids: &[Rank], capacity: usize) {
        let cost = piece.len() + ids.len() * 4;
        if cost > capacity / 2 || piece.len() > u16::MAX as usize || ids.len() > u16::MAX as usize {
            return;
        }
        if capacity != self.capacity
            || self.slots.is_empty()
            || (self.len + 1) * 2 > self.slots.len()
            || self.memory_bytes() + cost > capacity
        {
            self.reset(capacity);
        }
        let hash = hash_of(piece);
        let Err(i) = self.find(piece, hash) else {
            return;
        };
        self.slots[i] = Slot {
            hash,
            key_at: self.keys.len() as u32,
            ids_at: self.ids.len() as u32,
            key_len: piece.len() as u16,
            n_ids: ids.len() as u16,
        };
        self.keys.extend_from_slice(piece);
        self.ids.extend_from_slice(ids);
        self.len += 1;
    }

    /// Bytes in use: the slot table and the arenas' contents.
    pub fn memory_bytes(&self) -> usize {
        self.slots.len() * SLOT_BYTES + self.keys.len() + self.ids.len() * 4
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_finds_and_stays_within_budget() {
        let mut c = PieceCache::default();
        assert_eq!(c.get(b"abc"), None);
        let cap = 4096;
        c.insert(b"abc", &[1, 2], cap);
        c.insert(b"abd", &[3], cap);
        assert_eq!(c.get(b"abc"), Some(&[1, 2][..]));
        assert_eq!(c.get(b"abd"), Some(&[3][..]));
        assert_eq!(c.get(b"ab"), None);
        for i in 0..2000u32 {
            let key = format!("piece{i}");
            c.insert(key.as_bytes(), &[i, i + 1], cap);
            assert_eq!(c.get(key.as_bytes()), Some(&[i, i + 1][..]));
            assert!(c.memory_bytes() <= cap, "{} > {cap}", c.memory_bytes());
        }
        // a piece bigger than half the budget is not cached
        c.insert(&[7u8; 3000], &[1], cap);
        assert_eq!(c.get(&[7u8; 3000]), None);
        // a new budget empties the cache
        c.insert(b"x", &[5], 8192);
        assert_eq!(c.get(b"piece1999"), None);
        assert_eq!(c.get(b"x"), Some(&[5][..]));
    }

    #[test]
    fn keys_of_every_length_up_to_the_limit() {
        let mut c = PieceCache::default();
        let cap = 1 << 20;
        let keys: Vec<Vec<u8>> = (1..=MAX_CACHED_PIECE)
            .flat_map(|n| [vec![b'x'; n], (1..=n as u8).collect(), vec![0u8; n]])
            .collect();
        for (i, k) in keys.iter().enumerate() {
            let ids: Vec<Rank> = (0..(i % 7) as Rank + 1).map(|j| j * 1000 + i as Rank).collect();
            c.insert(k, &ids, cap);
        }
        for (i, k) in keys.iter().enumerate() {
            let ids: Vec<Rank> = (0..(i % 7) as Rank + 1).map(|j| j * 1000 + i as Rank).collect();
            assert_eq!(c.get(k), Some(&ids[..]), "{k:?}");
            // the same bytes one shorter or with a zero byte more are other keys
            let mut longer = k.clone();
            longer.push(0);
            if !keys.contains(&longer) {
                assert_eq!(c.get(&longer), None, "{longer:?}");
            }
        }
        assert_eq!(c.get(b""), None);
    }

    /// Pieces that never repeat pause the cache after one window, for longer after each poor
    /// window; a window with enough hits ends the pauses.
    #[test]
    fn pauses_on_text_that_does_not_repeat() {
        let mut c = PieceCache::default();
        let cap = 1 << 20;
        let mut fresh = 0u32;
        let probe = |c: &mut PieceCache, key: &[u8]| -> bool {
            if !c.active() {
                return false;
            }
            if c.get(key).is_none() {
                c.insert(key, &[1], cap);
            }
            true
        };
        for _ in 0..WINDOW {
            fresh += 1;
            assert!(probe(&mut c, &fresh.to_le_bytes()));
        }
        let paused = (0..FIRST_PAUSE).filter(|_| !probe(&mut c, b"x")).count();
        assert_eq!(paused as u32, FIRST_PAUSE);
        for _ in 0..WINDOW {
            fresh += 1;
            assert!(probe(&mut c, &fresh.to_le_bytes()));
        }
        assert_eq!(c.skip, 2 * FIRST_PAUSE, "the second poor window pauses twice as long");
        c.skip = 0;
        // a window of repeated pieces (all hits but the first) ends the backoff
        for _ in 0..WINDOW {
            assert!(probe(&mut c, b"again"));
        }
        assert_eq!((c.skip, c.backoff), (0, 0));
        assert_eq!(c.get(b"again"), Some(&[1][..]), "the entries survive a pause");
    }
}
