//! When an encoder builds its [`Backtrack`] tables: the full ones once enough long pieces have
//! been merged, and before that, tables over the few bytes of a long piece (`'a' x 1M`, spaces,
//! digits, random letters). Shared by the tiktoken encoder (`CoreBpe`) and the pair merge of
//! `tokenizer.json` / GGUF models (`PairBpe`); each says how to build tables for a byte set.

use super::{Backtrack, ByteSet};
use crate::merge::LINEAR_BUILD_AFTER;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Tables for sub-vocabularies built so far (at most this many).
const MAX_PARTIAL: usize = 4;
/// A sub-vocabulary is only worth its own tables if it has at most 1/this of the tokens.
const PARTIAL_FRACTION: usize = 2;
/// Pieces at least this long look for sub-vocabulary tables even when the full ones exist.
pub const PARTIAL_FIRST: usize = 4 << 10;
/// Long-piece bytes after which a table for a small sub-vocabulary is built.
pub const PARTIAL_BUILD_AFTER: usize = 16 << 10;
/// A piece at least this long gets tables over its bytes even when all [`MAX_PARTIAL`] are taken
/// (the least recently used go) or [`MAX_PARTIAL`] x 2 sets were found too big (the oldest is
/// forgotten): its merge costs more than the build (random letters, 1 MiB: a few ms to build,
/// 16 ms to merge against 25 with the full tables), so even a stream of such pieces in turns
/// over more byte sets than there are slots costs at most about 1.3x. Before, a process that had
/// met four byte sets in long pieces (a few scripts without spaces) merged every later one with
/// the full tables: `benches/hostile.py`'s 10 MB of random letters (cl100k) 0.17 -> 0.25 s.
pub const PARTIAL_REPLACE_FROM: usize = 1 << 20;

/// Whether tables over `tokens` of a vocabulary of `total` tokens are worth building for a
/// sub-vocabulary (else the full tables serve its pieces).
pub fn worth_partial(tokens: usize, total: usize) -> bool {
    tokens * PARTIAL_FRACTION <= total
}

/// What building tables for a byte set gives.
pub enum Built {
    Tables(Arc<Backtrack>),
    /// Tables of their own are not worth it (a partial set with too many tokens).
    NotWorth,
    /// The tokens do not suit the algorithm; then no larger set's do either (a token's merges
    /// only involve the tokens over its own bytes), the full vocabulary's included.
    Unsuitable,
}

impl Built {
    /// `Tables` or `Unsuitable`.
    pub fn from(tables: Option<Backtrack>) -> Built {
        tables.map_or(Built::Unsuitable, |t| Built::Tables(Arc::new(t)))
    }
}

/// Linear-merge tables for the tokens over a byte set, and the byte sets found too large to be
/// worth it (or whose tokens do not suit the algorithm).
#[derive(Debug, Clone, Default)]
struct Partial {
    built: Vec<(ByteSet, Arc<Backtrack>)>,
    too_big: Vec<ByteSet>,
}

/// An encoder's linear-merge tables, built on demand.
#[derive(Debug, Default)]
pub struct LazyTables {
    /// The full tables (`None` inside: the vocabulary does not suit them, the heap merge is used).
    full: OnceLock<Option<Arc<Backtrack>>>,
    /// Bytes of long pieces merged so far (the full tables are built once this passes
    /// `LINEAR_BUILD_AFTER`).
    long_bytes: AtomicUsize,
    partial: Mutex<Partial>,
}

impl Clone for LazyTables {
    fn clone(&self) -> Self {
        LazyTables {
            full: self.full.clone(),
            long_bytes: AtomicUsize::new(self.long_bytes.load(Ordering::Relaxed)),
            partial: Mutex::new(self.partial().clone()),
        }
    }
}

impl LazyTables {
    fn partial(&self) -> std::sync::MutexGuard<'_, Partial> {
        self.partial.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The tables `piece` (a long one) should use, if any. The full tables are built once
    /// `LINEAR_BUILD_AFTER` bytes of long pieces have been seen (this one included), so a few
    /// long pieces never pay for the build, and a flood of them pays at most about twice.
    /// Before that, after `PARTIAL_BUILD_AFTER` bytes, a piece gets tables for just the tokens
    /// over its bytes if `build` finds them worth it ([`worth_partial`]; their build costs in
    /// proportion to those tokens: a few ms). Pieces of `PARTIAL_FIRST` bytes or more use such
    /// tables even when the full ones exist: they are smaller, so the merge's random accesses
    /// stay in cache.
    ///
    /// `build(set, partial)` builds the tables over `set` (`ByteSet::ALL` for the full ones).
    /// A partial set found `Unsuitable` settles the full tables as absent without building them.
    /// `known` is the piece's byte set when the caller has it already (`ByteSet::of(piece)`).
    pub fn for_piece(&self, piece: &[u8], known: Option<ByteSet>, build: impl Fn(&ByteSet, bool) -> Built) -> Option<Arc<Backtrack>> {
        let full = self.full.get();
        if let Some(tables) = full {
            if piece.len() < PARTIAL_FIRST {
                return tables.clone();
            }
        }
        let set = known.unwrap_or_else(|| ByteSet::of(piece));
        let mut partial = self.partial();
        if let Some(i) = partial.built.iter().position(|(s, _)| s.contains(&set)) {
            partial.built[i..].rotate_left(1); // the most recently used last
            return partial.built.last().map(|(_, t)| t.clone());
        }
        let seen = self.long_bytes.fetch_add(piece.len(), Ordering::Relaxed).saturating_add(piece.len());
        let replace = piece.len() >= PARTIAL_REPLACE_FROM;
        if seen >= PARTIAL_BUILD_AFTER
            && (partial.built.len() < MAX_PARTIAL || replace)
            && (partial.too_big.len() < 2 * MAX_PARTIAL || replace)
            && !partial.too_big.iter().any(|s| set.contains(s))
        {
            match build(&set, true) {
                Built::Tables(t) => {
                    if partial.built.len() == MAX_PARTIAL {
                        partial.built.remove(0);
                    }
                    partial.built.push((set, t.clone()));
                    return Some(t);
                }
                Built::NotWorth => {}
                Built::Unsuitable => {
                    let _ = self.full.set(None);
                }
            }
            if partial.too_big.len() == 2 * MAX_PARTIAL {
                partial.too_big.remove(0);
            }
            partial.too_big.push(set);
        }
        drop(partial);
        if let Some(tables) = self.full.get() {
            return tables.clone();
        }
        if seen < LINEAR_BUILD_AFTER {
            return None;
        }
        self.full
            .get_or_init(|| match build(&ByteSet::ALL, false) {
                Built::Tables(t) => Some(t),
                Built::NotWorth | Built::Unsuitable => None,
            })
            .clone()
    }

    /// Whether the full tables are built (`Some(false)`: the vocabulary does not suit them and
    /// the heap merge is used), or `None` if not yet.
    pub fn full_built(&self) -> Option<bool> {
        self.full.get().map(Option::is_some)
    }

    /// How many sub-vocabulary tables are built.
    pub fn partial_count(&self) -> usize {
        self.partial().built.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::Ranks;
    use std::cell::RefCell;

    /// All [`MAX_PARTIAL`] slots taken: a short piece over a new byte set gets no tables of its
    /// own, a piece of [`PARTIAL_REPLACE_FROM`] bytes replaces the least recently used ones.
    #[test]
    fn a_long_piece_replaces_the_least_recently_used_tables() {
        let ranks: Ranks = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        let lazy = LazyTables::default();
        let builds = RefCell::new(Vec::new());
        let build = |set: &ByteSet, partial: bool| {
            assert!(partial, "the full tables are never due here");
            builds.borrow_mut().push(*set);
            Built::from(Backtrack::for_bytes(&ranks, set))
        };
        let piece = |b: u8, n: usize| vec![b; n];
        // four byte sets, each past PARTIAL_BUILD_AFTER at once (below LINEAR_BUILD_AFTER in all)
        for b in 0..MAX_PARTIAL as u8 {
            assert!(lazy.for_piece(&piece(b, 20 << 10), None, build).is_some());
        }
        assert_eq!((builds.borrow().len(), lazy.partial_count()), (MAX_PARTIAL, MAX_PARTIAL));
        // the first set used again: now the most recent
        assert!(lazy.for_piece(&piece(0, 100), None, build).is_some());
        // a short piece over a fifth set: no room, no build (and no full tables yet)
        assert!(lazy.for_piece(&piece(9, 100), None, build).is_none());
        assert_eq!(builds.borrow().len(), MAX_PARTIAL);
        // a long one: built, replacing set 1 (the least recently used), not set 0
        assert!(lazy.for_piece(&piece(9, PARTIAL_REPLACE_FROM), None, build).is_some());
        assert_eq!((builds.borrow().len(), lazy.partial_count()), (MAX_PARTIAL + 1, MAX_PARTIAL));
        let n = builds.borrow().len();
        assert!(lazy.for_piece(&piece(0, 100), None, build).is_some());
        assert!(lazy.for_piece(&piece(9, 100), None, build).is_some());
        assert_eq!(builds.borrow().len(), n, "sets 0 and 9 are still built");
        assert!(lazy.for_piece(&piece(1, PARTIAL_REPLACE_FROM), None, build).is_some());
        assert_eq!(builds.borrow().len(), n + 1, "set 1 was replaced and is built again");
    }
}
