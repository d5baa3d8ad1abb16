//! SentencePiece BPE over normalized text (`bpe::Model::SampleEncode` without dropout, and the
//! processor's unknown handling). The Python reference is
//! `bpekit.formats.sentencepiece.bpe.BpeEncoder`; its module doc states the rules.
//!
//! A symbol is always a contiguous span of the text, so a pair's piece is the text between the
//! left symbol's start and the right one's end: no string is built per candidate. A candidate
//! is stale when either side was merged away or the right side grew (its end moved).

use super::normalize::UserDefined;
use rustc_hash::FxHashMap;
use crate::merge::agenda::{Agenda, Candidate, Laned, Queue};
use crate::utf8::len_of;

/// sentencepiece stops undoing UNUSED merges below this depth.
pub const MAX_RESEGMENT_DEPTH: usize = 100;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Normal,
    UserDefined,
    Unused,
}

/// A piece a merge may produce (NORMAL, USER_DEFINED or UNUSED).
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The score's order (`bpe.score_rank`): higher merges first.
    pub rank: i32,
    pub id: u32,
    pub kind: Kind,
}

/// `(id, start, end)`: one output symbol before unknown handling; `id` is the unk id when the
/// symbol is not an emittable piece.
pub type Segment = Vec<(u32, u32, u32)>;

pub struct Bpe {
    table: FxHashMap<Box<[u8]>, Entry>,
    /// `(id of A, id of B)` -> the entry of `A + B`, for every piece that splits into two pieces:
    /// the pair test of two symbols that are pieces, without hashing or comparing their text.
    pairs: FxHashMap<u64, Entry>,
    /// The id of each ASCII character that is a piece, else `NONE`.
    ascii: [u32; 128],
    pub unk_id: u32,
    /// `byte_ids[b]` under byte fallback, else empty.
    pub byte_ids: Vec<u32>,
    user_defined: UserDefined,
    has_unused: bool,
}

/// Buffers of [`Bpe::segment`], kept between calls.
#[derive(Default)]
pub struct Scratch {
    syms: Vec<Sym>,
    heap: Agenda,
    laned: Laned,
    pub segment: Segment,
}

/// Texts of at least this many symbols merge with the laned agenda ([`Laned`]).
const LANE_FROM: usize = 256;

#[derive(Clone, Copy)]
struct Sym {
    start: u32,
    end: u32,
    prev: u32,
    next: u32,
    /// The id of the symbol's text when that is a piece, else `NONE`.
    id: u32,
    frozen: bool,
}

const NONE: u32 = u32::MAX;

/// The end of a piece span that stands for one byte piece `<0xHH>`.
pub const BYTE_PIECE: u32 = u32::MAX;

#[inline(always)]
fn pair_key(a: u32, b: u32) -> u64 {
    ((a as u64) << 32) | b as u64
}

impl Bpe {
    pub fn new(table: FxHashMap<Box<[u8]>, Entry>, unk_id: u32, byte_ids: Vec<u32>, user_defined: UserDefined) -> Bpe {
        let mut pairs = FxHashMap::default();
        for (piece, e) in &table {
            let text = std::str::from_utf8(piece).unwrap_or_default(); // pieces are strs
            for (k, _) in text.char_indices().skip(1) {
                if let (Some(a), Some(b)) = (table.get(&piece[..k]), table.get(&piece[k..])) {
                    pairs.insert(pair_key(a.id, b.id), *e);
                }
            }
        }
        let mut ascii = [NONE; 128];
        for (b, id) in ascii.iter_mut().enumerate() {
            if let Some(e) = table.get(&[b as u8][..]) {
                *id = e.id;
            }
        }
        let has_unused = table.values().any(|e| e.kind == Kind::Unused);
        Bpe { table, pairs, ascii, unk_id, byte_ids, user_defined, has_unused }
    }

    /// The symbols of `text` after every merge, with their ids (unknown ones as the unk id), in
    /// `scratch.segment` (its buffers are reused from call to call).
    pub fn segment(&self, text: &[u8], scratch: &mut Scratch) {
        let Scratch { syms, heap, laned, segment: out } = scratch;
        out.clear();
        self.symbols(text, syms);
        let rev = if syms.len() >= LANE_FROM { self.merge_all(text, syms, laned) } else { self.merge_all(text, syms, heap) };
        let live = syms.iter().filter(|s| s.start != NONE);
        if self.has_unused {
            for s in live {
                self.resegment(text, s.start, s.end, &rev, out, 0);
            }
        } else {
            // no UNUSED piece: every piece a symbol can be is NORMAL or USER_DEFINED
            out.extend(live.map(|s| (if s.id == NONE { self.unk_id } else { s.id }, s.start, s.end)));
        }
    }

    /// Every merge of `syms`, best candidate first; returns, for each UNUSED piece, the
    /// (start, mid, end) of the last pair recorded for it.
    #[inline(always)]
    fn merge_all<'t, Q: Queue>(&self, text: &'t [u8], syms: &mut [Sym], heap: &mut Q) -> FxHashMap<&'t [u8], (u32, u32, u32)> {
        heap.clear();
        let mut rev: FxHashMap<&[u8], (u32, u32, u32)> = FxHashMap::default();
        for i in 1..syms.len() {
            self.candidate(text, syms, i as u32 - 1, i as u32, heap, &mut rev);
        }
        while let Some(c) = heap.pop() {
            let (left, end, id) = (c.left(), c.end, c.id);
            let l = syms[left as usize];
            // stale unless `left` lives and the pair after it still ends where it did: the right
            // symbol can only have grown (its end moved) or been merged into `left` (the next
            // symbol then starts at that end)
            if l.start == NONE || l.next == NONE || syms[l.next as usize].end != end {
                continue;
            }
            let right = l.next;
            let r = syms[right as usize];
            syms[left as usize].end = r.end;
            syms[left as usize].next = r.next;
            syms[left as usize].id = id;
            syms[right as usize].start = NONE;
            if r.next != NONE {
                syms[r.next as usize].prev = left;
            }
            if l.prev != NONE {
                self.candidate(text, syms, l.prev, left, heap, &mut rev);
            }
            if r.next != NONE {
                self.candidate(text, syms, left, r.next, heap, &mut rev);
            }
        }
        rev
    }

    #[inline]
    fn candidate<'t>(
        &self,
        text: &'t [u8],
        syms: &[Sym],
        a: u32,
        b: u32,
        heap: &mut impl Queue,
        rev: &mut FxHashMap<&'t [u8], (u32, u32, u32)>,
    ) {
        let (sa, sb) = (&syms[a as usize], &syms[b as usize]);
        if sa.frozen || sb.frozen {
            return;
        }
        let piece = &text[sa.start as usize..sb.end as usize];
        let found = if sa.id != NONE && sb.id != NONE {
            self.pairs.get(&pair_key(sa.id, sb.id))
        } else {
            self.table.get(piece) // a side is no piece (a character outside the vocabulary)
        };
        if let Some(e) = found {
            heap.push(Candidate::new(e.rank, a, sb.end, e.id));
            if e.kind == Kind::Unused {
                rev.insert(piece, (sa.start, sb.start, sb.end));
            }
        }
    }

    /// One symbol per character, or per user-defined piece (frozen: never merged).
    fn symbols(&self, text: &[u8], syms: &mut Vec<Sym>) {
        syms.clear();
        let mut pos = 0;
        while pos < text.len() {
            let ud = self.user_defined.longest(text, pos);
            let len = if ud > 0 { ud } else { len_of(text[pos]) };
            let i = syms.len() as u32;
            let id = match text[pos] {
                b if b < 0x80 && ud == 0 => self.ascii[b as usize],
                _ => self.table.get(&text[pos..pos + len]).map_or(NONE, |e| e.id),
            };
            syms.push(Sym {
                start: pos as u32,
                end: (pos + len) as u32,
                prev: if i == 0 { NONE } else { i - 1 },
                next: i + 1,
                id,
                frozen: ud > 0,
            });
            pos += len;
        }
        if let Some(last) = syms.last_mut() {
            last.next = NONE;
        }
    }

    fn resegment(
        &self,
        text: &[u8],
        start: u32,
        end: u32,
        rev: &FxHashMap<&[u8], (u32, u32, u32)>,
        out: &mut Segment,
        depth: usize,
    ) {
        let piece = &text[start as usize..end as usize];
        let entry = self.table.get(piece);
        if let Some(e) = entry.filter(|e| e.kind == Kind::Unused) {
            if depth > MAX_RESEGMENT_DEPTH {
                out.push((e.id, start, end)); // sentencepiece gives up and keeps the UNUSED piece
                return;
            }
            if let Some(&(s, m, t)) = rev.get(piece) {
                // the halves recorded may sit elsewhere in the text: re-anchor them here
                let (mid, stop) = (start + (m - s), start + (t - s));
                self.resegment(text, start, mid, rev, out, depth + 1);
                self.resegment(text, mid, stop, rev, out, depth + 1);
                return;
            }
        }
        let id = match entry {
            Some(e) if e.kind != Kind::Unused => e.id,
            _ => self.unk_id,
        };
        out.push((id, start, end));
    }

    /// Whether the model has UNUSED pieces (then its text is never cut: see `super::Cuts`).
    pub fn has_unused(&self) -> bool {
        self.has_unused
    }

    /// Each piece a merge may produce: its text and id.
    pub fn piece_ids(&self) -> impl Iterator<Item = (&[u8], u32)> + Clone {
        self.table.iter().map(|(k, e)| (&k[..], e.id))
    }

    /// The id of a one-byte text that is a piece by itself (a digit in most vocabularies).
    #[inline]
    pub fn ascii_piece(&self, text: &[u8]) -> Option<u32> {
        match *text {
            [b] if b < 0x80 && self.ascii[b as usize] != NONE && !self.has_unused => Some(self.ascii[b as usize]),
            _ => None,
        }
    }

    /// Unknown handling (the processor's): byte fallback spells an unknown symbol in byte
    /// pieces; without it a run of unknown symbols is one unknown piece. `pieces` gets each id's
    /// span of the text, `(start, BYTE_PIECE)` for a byte piece (the byte at `start`).
    pub fn finish(&self, text: &[u8], segment: &Segment, ids: &mut Vec<u32>, mut pieces: Option<&mut Vec<(u32, u32)>>) {
        let mut prev_unk = false;
        for &(id, s, e) in segment {
            if id != self.unk_id {
                ids.push(id);
                if let Some(p) = pieces.as_deref_mut() {
                    p.push((s, e));
                }
                prev_unk = false;
            } else if !self.byte_ids.is_empty() {
                for (k, &b) in text[s as usize..e as usize].iter().enumerate() {
                    ids.push(self.byte_ids[b as usize]);
                    if let Some(p) = pieces.as_deref_mut() {
                        p.push((s + k as u32, BYTE_PIECE));
                    }
                }
                prev_unk = true;
            } else if prev_unk {
                if let Some(p) = pieces.as_deref_mut() {
                    if let Some(last) = p.last_mut() {
                        last.1 = e; // the run's piece grows over this symbol
                    }
                }
            } else {
                ids.push(id);
                if let Some(p) = pieces.as_deref_mut() {
                    p.push((s, e));
                }
                prev_unk = true;
            }
        }
    }
}

