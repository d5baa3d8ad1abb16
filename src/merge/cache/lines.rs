//! The pre-token cache's table: set-associative buckets of 64-byte lines, each line one whole
//! entry (tag, lengths, the piece's bytes and its ids inline), so a hit reads one cache line and
//! an insert overwrites the least recently used line of its bucket. Memory is the table alone,
//! fixed when it is built.
//!
//! Performance note: the table this replaces kept 16-byte slots over two arenas, so a hit was
//! three dependent loads (slot, key bytes, ids), each a likely miss once the table outgrew L2, and
//! a full table was emptied (every hot entry lost). Numbers in `src/PERFORMANCE.md`, "Seventh
//! round: the pre-token cache".
//!
//! Line layout (bytes): 0..4 tag (0 = empty; real tags have bit 0 set), 4 piece length, 5 id
//! count, 8.. the piece's bytes, padded to 4, then its ids (native-endian `u32`s).
//!
//! The table is a `Vec` of 16-byte units whose buckets start at the first 128-byte boundary
//! (found from the address, no `unsafe`). An over-aligned element type (`#[repr(align(128))]`)
//! would do the same, but glibc serves such allocations with `memalign`, whose leftovers
//! fragmented the pool threads' arenas: a 4 MiB table per encoder, built and dropped 8 times,
//! grew RSS by 23–37 MB, where a plain allocation stays flat
//! (`test_limits.py::test_dropped_encoders_leave_no_caches_on_pool_threads`).

use crate::vocab::Rank;

/// Bytes of a line after its 8-byte header: the piece's bytes, padded to 4, then its ids.
pub const PAYLOAD: usize = 56;
/// Lines per bucket.
pub const WAYS: usize = 2;
const LINE: usize = 64;
const UNIT: usize = 16;
const LINE_UNITS: usize = LINE / UNIT;
const BUCKET_UNITS: usize = WAYS * LINE_UNITS;
pub const BUCKET_BYTES: usize = WAYS * LINE;

/// Where a piece of `key_len` bytes keeps its ids in a line.
#[inline(always)]
const fn ids_at(key_len: usize) -> usize {
    8 + ((key_len + 3) & !3)
}

/// Whether a piece of `key_len` bytes with `n_ids` ids fits one line.
#[inline(always)]
pub const fn fits(key_len: usize, n_ids: usize) -> bool {
    ids_at(key_len) + 4 * n_ids <= LINE
}

#[inline(always)]
fn tag_of(hash: u64) -> u32 {
    hash as u32 | 1
}

#[inline(always)]
fn holds(line: &[u8], tag: u32, piece: &[u8]) -> bool {
    line[..4] == tag.to_ne_bytes() && line[4] as usize == piece.len() && &line[8..8 + piece.len()] == piece
}

#[inline(always)]
fn append_ids(line: &[u8], out: &mut Vec<Rank>) -> usize {
    let at = ids_at(line[4] as usize);
    let n = line[5] as usize;
    out.extend(line[at..at + 4 * n].chunks_exact(4).map(|c| Rank::from_ne_bytes([c[0], c[1], c[2], c[3]])));
    n
}

#[derive(Default)]
pub struct Table {
    units: Vec<[u8; UNIT]>,
    /// Units before the first bucket (to its 128-byte boundary).
    start: usize,
    /// Number of buckets.
    n: u64,
}

impl Table {
    /// A table of the most buckets that fit in `budget` bytes, alignment slack included; none
    /// if not one.
    pub fn with_budget(budget: usize) -> Self {
        let n = budget.saturating_sub(BUCKET_BYTES - UNIT) / BUCKET_BYTES;
        if n == 0 {
            return Table::default();
        }
        let units = vec![[0u8; UNIT]; n * BUCKET_UNITS + BUCKET_UNITS - 1];
        let misalign = units.as_ptr() as usize % BUCKET_BYTES;
        let start = (BUCKET_BYTES - misalign) % BUCKET_BYTES / UNIT;
        Table { units, start, n: n as u64 }
    }

    pub fn memory_bytes(&self) -> usize {
        self.units.len() * UNIT
    }

    /// The units of the bucket of `hash` (its high 32 bits scaled to the number of buckets).
    #[inline(always)]
    fn bucket(&mut self, hash: u64) -> &mut [[u8; UNIT]] {
        let at = self.start + (((hash >> 32) * self.n) >> 32) as usize * BUCKET_UNITS;
        &mut self.units[at..at + BUCKET_UNITS]
    }

    /// Appends the ids of `piece` to `out` if it is in the table; returns how many. A hit on an
    /// older line makes it the bucket's most recent.
    #[inline]
    pub fn get_into(&mut self, piece: &[u8], hash: u64, out: &mut Vec<Rank>) -> Option<usize> {
        if self.units.is_empty() {
            return None;
        }
        let tag = tag_of(hash);
        let bucket = self.bucket(hash);
        let first = bucket[..LINE_UNITS].as_flattened();
        if holds(first, tag, piece) {
            return Some(append_ids(first, out));
        }
        let way = (1..WAYS).find(|&w| holds(bucket[w * LINE_UNITS..(w + 1) * LINE_UNITS].as_flattened(), tag, piece))?;
        bucket[..(way + 1) * LINE_UNITS].rotate_right(LINE_UNITS);
        Some(append_ids(bucket[..LINE_UNITS].as_flattened(), out))
    }

    /// Stores `piece -> ids` as its bucket's most recent line, dropping the least recent one.
    /// The caller checks [`fits`] and that `piece` is not in the table.
    #[inline]
    pub fn insert(&mut self, piece: &[u8], hash: u64, ids: &[Rank]) {
        if self.units.is_empty() {
            return;
        }
        let tag = tag_of(hash);
        let bucket = self.bucket(hash);
        bucket.rotate_right(LINE_UNITS);
        let line = bucket[..LINE_UNITS].as_flattened_mut();
        line[..4].copy_from_slice(&tag.to_ne_bytes());
        line[4] = piece.len() as u8;
        line[5] = ids.len() as u8;
        line[8..8 + piece.len()].copy_from_slice(piece);
        let at = ids_at(piece.len());
        for (dst, id) in line[at..at + 4 * ids.len()].chunks_exact_mut(4).zip(ids) {
            dst.copy_from_slice(&id.to_ne_bytes());
        }
    }
}
