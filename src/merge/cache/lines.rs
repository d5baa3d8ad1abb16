//! The pre-token cache's table: set-associative buckets of 64-byte lines, each line one whole
//! entry (tag, lengths, the piece's bytes and its ids inline), so a hit reads one cache line and
//! an insert overwrites the least recently used line of its bucket. Memory is the table alone,
//! fixed when it is built.
//!
//! Performance note: the table this replaces kept 16-byte slots over two arenas, so a hit was
//! three dependent loads (slot, key bytes, ids), each a likely miss once the table outgrew L2, and
//! a full table was emptied (every hot entry lost). Numbers in `src/PERFORMANCE.md`, "Seventh
//! round: the pre-token cache".

use crate::vocab::Rank;

/// Bytes of a line after its 8-byte header: the piece's bytes, padded to 4, then its ids.
pub const PAYLOAD: usize = 56;
/// Lines per bucket.
pub const WAYS: usize = 2;

/// One entry: `tag == 0` marks an empty line (real tags have bit 0 set).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line {
    tag: u32,
    key_len: u8,
    n_ids: u8,
    data: [u8; PAYLOAD],
}

const EMPTY: Line = Line { tag: 0, key_len: 0, n_ids: 0, data: [0; PAYLOAD] };

/// Where a piece of `key_len` bytes keeps its ids in a line's payload.
#[inline(always)]
const fn ids_at(key_len: usize) -> usize {
    (key_len + 3) & !3
}

/// Whether a piece of `key_len` bytes with `n_ids` ids fits one line.
#[inline(always)]
pub const fn fits(key_len: usize, n_ids: usize) -> bool {
    ids_at(key_len) + 4 * n_ids <= PAYLOAD
}

/// One bucket: its lines from most to least recently used (aligned to the adjacent-line
/// prefetch pair).
#[repr(C, align(128))]
#[derive(Clone, Copy)]
struct Bucket([Line; WAYS]);

pub const BUCKET_BYTES: usize = std::mem::size_of::<Bucket>();

#[derive(Default)]
pub struct Table {
    buckets: Vec<Bucket>,
}

impl Line {
    #[inline(always)]
    fn holds(&self, tag: u32, piece: &[u8]) -> bool {
        self.tag == tag && self.key_len as usize == piece.len() && &self.data[..piece.len()] == piece
    }

    #[inline(always)]
    fn append_ids(&self, out: &mut Vec<Rank>) -> usize {
        let at = ids_at(self.key_len as usize);
        let n = self.n_ids as usize;
        out.extend(self.data[at..at + 4 * n].chunks_exact(4).map(|c| Rank::from_ne_bytes([c[0], c[1], c[2], c[3]])));
        n
    }
}

impl Table {
    /// A table of the most buckets (a power of two) that fit in `budget` bytes; none if not one.
    pub fn with_budget(budget: usize) -> Self {
        let want = budget / BUCKET_BYTES;
        if want == 0 {
            return Table::default();
        }
        let n = 1 << (usize::BITS - 1 - want.leading_zeros());
        Table { buckets: vec![Bucket([EMPTY; WAYS]); n] }
    }

    pub fn memory_bytes(&self) -> usize {
        self.buckets.len() * BUCKET_BYTES
    }

    #[inline(always)]
    fn bucket_of(&self, hash: u64) -> usize {
        (hash >> 32) as usize & (self.buckets.len() - 1)
    }

    /// Appends the ids of `piece` to `out` if it is in the table; returns how many.
    #[inline]
    pub fn get_into(&mut self, piece: &[u8], hash: u64, out: &mut Vec<Rank>) -> Option<usize> {
        if self.buckets.is_empty() {
            return None;
        }
        let tag = hash as u32 | 1;
        let i = self.bucket_of(hash);
        let lines = &mut self.buckets[i].0;
        if lines[0].holds(tag, piece) {
            return Some(lines[0].append_ids(out));
        }
        let way = (1..WAYS).find(|&w| lines[w].holds(tag, piece))?;
        lines[..=way].rotate_right(1);
        Some(lines[0].append_ids(out))
    }

    /// Stores `piece -> ids` as its bucket's most recent line, dropping the least recent one.
    /// The caller checks [`fits`] and that `piece` is not in the table.
    #[inline]
    pub fn insert(&mut self, piece: &[u8], hash: u64, ids: &[Rank]) {
        if self.buckets.is_empty() {
            return;
        }
        let i = self.bucket_of(hash);
        let lines = &mut self.buckets[i].0;
        lines.rotate_right(1);
        let line = &mut lines[0];
        line.tag = hash as u32 | 1;
        line.key_len = piece.len() as u8;
        line.n_ids = ids.len() as u8;
        line.data[..piece.len()].copy_from_slice(piece);
        let at = ids_at(piece.len());
        for (dst, id) in line.data[at..at + 4 * ids.len()].chunks_exact_mut(4).zip(ids) {
            dst.copy_from_slice(&id.to_ne_bytes());
        }
    }
}
