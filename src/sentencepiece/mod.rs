//! SentencePiece BPE models encoded as the `sentencepiece` package (0.2.3) does: normalize
//! ([`normalize`], with the [`charsmap`] trie), then merge by score ([`bpe`]). The pure-Python
//! reference is `bpekit.formats.sentencepiece` (`normalizer.py`, `bpe.py`); BPE-dropout stays
//! there. Decoding is `py/decode.rs`'s `SentencePieceIds`.
//!
//! Performance notes (numbers in `src/PERFORMANCE.md`, "Eleventh round"):
//! - The text is cut into parts that merge alone. When no piece has `▁` after another character
//!   (or only before one), no merge crosses a `▁` that follows (precedes) another character: the
//!   chunks are the words of a trained model with their leading spaces. Chunks over 64 bytes are
//!   cut again between two characters that no piece holds side by side ([`Cuts`]). Models with
//!   UNUSED pieces are never cut (which halves an UNUSED piece splits into is the last split
//!   recorded anywhere in the text).
//! - Each thread caches part -> ids per model ([`cache::BytesCache`]: a hash map emptied past
//!   8 MiB), and the heap merge runs only on a miss.

pub mod bpe;
pub mod charsmap;
pub mod normalize;

use crate::error::{Error, Result};
use crate::merge::cache::{self, CacheSlot};
use crate::merge::tokens::Tokens;
use bpe::{Bpe, Entry, Kind, Scratch};
use charsmap::CharsMap;
use normalize::{Normalizer, UserDefined, SPACE_SYMBOL};
use rustc_hash::FxHashMap;

/// Longer chunks are merged every time.
const CACHE_MAX_CHUNK: usize = 128;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Chunking {
    Before,
    After,
}

/// The piece types of the `.model` format (sentencepiece's numbering).
pub const NORMAL: u8 = 1;
pub const USER_DEFINED: u8 = 4;
pub const UNUSED: u8 = 5;

/// The normalizer options of a `NormalizerSpec` and the trainer spec.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
    pub treat_whitespace_as_suffix: bool,
}

/// A piece the model may merge into: `(piece, id, score rank, type)`.
pub type MergeablePiece = (String, u32, i32, u8);

pub struct SentencePiece {
    normalizer: Normalizer,
    bpe: Bpe,
    /// Where the text may be cut into parts that merge alone, and the chunks that are one piece
    /// once their merge is known to give it ([`Tokens`]); `None` with UNUSED pieces (the text
    /// is merged whole, so neither is built).
    chunks: Option<(Cuts, Tokens)>,
    /// This model's chunk caches (one per thread): their identity and byte budget.
    cache: CacheSlot,
}

/// Unknown runs across the cuts between parts: without byte fallback a run of unknown symbols is
/// one unk id, so a part that starts with unk after one that ended with unk loses its first id.
struct UnkRuns {
    join: bool,
    unk: u32,
    last: bool,
}

impl UnkRuns {
    fn new(bpe: &Bpe) -> UnkRuns {
        UnkRuns { join: bpe.byte_ids.is_empty(), unk: bpe.unk_id, last: false }
    }

    /// After a part appended `ids[from..]`: drops that first id when it continues the previous
    /// part's run, and says whether it did.
    fn after_part(&mut self, ids: &mut Vec<u32>, from: usize) -> bool {
        let ends_unk = ids.len() > from && ids.last() == Some(&self.unk);
        let joined = self.join && self.last && ids.get(from) == Some(&self.unk);
        if joined {
            ids.remove(from);
        }
        self.last = ends_unk;
        joined
    }
}

/// One encoded text: the normalized text, each id's span of it (`bpe::BYTE_PIECE` ends a byte
/// piece), and the ids.
pub struct Encoded {
    pub normalized: String,
    pub spans: Vec<(u32, u32)>,
    pub ids: Vec<u32>,
}

impl SentencePiece {
    /// `pieces`: the NORMAL, USER_DEFINED and UNUSED pieces; `byte_ids`: the 256 byte pieces'
    /// ids under byte fallback, else empty; `charsmap`: the `precompiled_charsmap` blob, if any.
    pub fn new(
        pieces: Vec<MergeablePiece>,
        unk_id: u32,
        byte_ids: Vec<u32>,
        charsmap: Option<&[u8]>,
        options: Options,
    ) -> Result<SentencePiece> {
        if !byte_ids.is_empty() && byte_ids.len() != 256 {
            return Err(Error::Vocab(format!("byte fallback needs 256 byte ids, got {}", byte_ids.len())));
        }
        let mut table = FxHashMap::default();
        let mut user_defined = Vec::new();
        for (piece, id, rank, kind) in pieces {
            let kind = match kind {
                NORMAL => Kind::Normal,
                USER_DEFINED => Kind::UserDefined,
                UNUSED => Kind::Unused,
                other => return Err(Error::Vocab(format!("piece {piece:?} (id {id}) of type {other} cannot be merged"))),
            };
            if piece.is_empty() {
                return Err(Error::Vocab(format!("piece {id} is empty")));
            }
            if kind == Kind::UserDefined {
                user_defined.push(piece.clone());
            }
            if table.insert(piece.clone().into_bytes().into_boxed_slice(), Entry { rank, id, kind }).is_some() {
                return Err(Error::Vocab(format!("piece {piece:?} is defined twice")));
            }
        }
        let charsmap = charsmap.map(CharsMap::new).transpose()?;
        let normalizer = Normalizer::new(charsmap, UserDefined::new(user_defined.iter().map(|p| p.as_bytes())), options);
        let bpe = Bpe::new(table, unk_id, byte_ids, UserDefined::new(user_defined.iter().map(|p| p.as_bytes())));
        let chunks = (!bpe.has_unused()).then(|| {
            let n = bpe.piece_ids().map(|(_, id)| id as usize + 1).max().unwrap_or(0);
            (Cuts::new(bpe.piece_ids().map(|(p, _)| p)), Tokens::new(bpe.piece_ids().filter(|(p, _)| p.len() > 1), n))
        });
        Ok(SentencePiece { normalizer, bpe, chunks, cache: CacheSlot::new(cache::BYTES_BUDGET) })
    }

    /// The normalized text of `data` (malformed UTF-8 allowed: each bad byte is U+FFFD).
    pub fn normalize(&self, data: &[u8]) -> Result<String> {
        self.normalizer.normalize(data)
    }

    /// Sets the per-thread chunk cache budget in bytes (0 turns the cache off) and empties every
    /// thread's cache of this model ([`CacheSlot::set_capacity`]).
    pub fn set_cache_capacity(&self, bytes: usize) {
        self.cache.set_capacity(bytes)
    }

    pub fn cache_capacity(&self) -> usize {
        self.cache.capacity()
    }

    /// The ids of `data`: normalized, then merged.
    pub fn encode(&self, data: &[u8]) -> Result<Vec<u32>> {
        let mut ids = Vec::with_capacity(data.len() / 3 + 1);
        self.encode_into(data, &mut ids)?;
        Ok(ids)
    }

    /// [`Self::encode`], appending to `ids`.
    pub fn encode_into(&self, data: &[u8], ids: &mut Vec<u32>) -> Result<()> {
        let normalized = self.normalizer.normalize(data)?;
        self.encode_normalized(normalized.as_bytes(), ids);
        Ok(())
    }

    /// The ids of already normalized text, appended to `ids`.
    pub fn encode_normalized(&self, text: &[u8], ids: &mut Vec<u32>) {
        let Some((cuts, tokens)) = &self.chunks else {
            let mut scratch = Scratch::default();
            self.bpe.segment(text, &mut scratch);
            self.bpe.finish(text, &scratch.segment, ids, None);
            return;
        };
        cache::with_bytes(&self.cache, |mut cache| {
            let mut runs = UnkRuns::new(&self.bpe);
            let mut scratch = Scratch::default();
            cuts.for_each_part(text, &mut |chunk| {
                let from = ids.len();
                if let Some(id) = self.bpe.ascii_piece(chunk) {
                    ids.push(id); // no cache probe for a one-byte part (1 MB of digits: 22 -> 17 ms)
                } else {
                    // a chunk that is one piece, once known to merge into it, from `tokens`
                    // (learnt from the chunk's own ids, before the unk runs join)
                    tokens.encode(chunk, ids, |ids| {
                        if let Some(found) = cache.as_deref().and_then(|c| c.get(chunk)) {
                            ids.extend_from_slice(found);
                        } else {
                            self.bpe.segment(chunk, &mut scratch);
                            self.bpe.finish(chunk, &scratch.segment, ids, None);
                            if let Some(c) = cache.as_deref_mut().filter(|_| chunk.len() <= CACHE_MAX_CHUNK) {
                                c.insert(chunk, &ids[from..]);
                            }
                        }
                    });
                }
                runs.after_part(ids, from);
            });
        })
    }

    /// The ids of `data` with each one's span of the normalized text (for piece strings), merged
    /// chunk by chunk as [`Self::encode`] merges (without its cache).
    pub fn encode_spans(&self, data: &[u8]) -> Result<Encoded> {
        self.spans(data, self.chunks.as_ref().map(|(cuts, _)| cuts))
    }

    /// As [`Self::encode_spans`] with one merge over the whole text: the reference the chunked
    /// paths are tested against (no chunking is exact for every model).
    pub fn encode_spans_whole(&self, data: &[u8]) -> Result<Encoded> {
        self.spans(data, None)
    }

    /// The ids of `text` and each id's span of it, in chars, as sentencepiece's
    /// `encode(text, return_type="proto")` gives each piece's `begin` / `end` (there in bytes):
    /// a piece spans the input its normalized bytes came from; of the byte pieces of one char,
    /// all but the last are empty at its start and the last spans the char. (The Python
    /// reference: `SentencePieceBPE.encode_with_offsets_reference`.)
    pub fn encode_offsets(&self, text: &str) -> Result<(Vec<u32>, crate::offsets::Spans)> {
        // origins and spans are 32-bit positions (as `encode_pieces`' spans)
        if text.len() >= u32::MAX as usize {
            return Err(Error::TooLong(text.len()));
        }
        let (normalized, origins) = self.normalizer.normalize_with_origins(text.as_bytes())?;
        if normalized.len() >= u32::MAX as usize {
            return Err(Error::TooLong(normalized.len()));
        }
        let enc = self.spans_of(normalized, self.chunks.as_ref().map(|(cuts, _)| cuts));
        let norm = enc.normalized.as_bytes();
        let mut chars = crate::offsets::Boundaries::new(text.as_bytes());
        let mut at = |p: usize| chars.index(origins[p] as usize);
        let spans = enc
            .spans
            .iter()
            .map(|&(s, e)| {
                let s = s as usize;
                if e != bpe::BYTE_PIECE {
                    return (at(s), at(e as usize));
                }
                // the char of normalized byte `s`: its start and end
                let start = (0..=s).rev().find(|&i| norm[i] & 0xC0 != 0x80).unwrap_or(0);
                let end = (s + 1..norm.len()).find(|&i| norm[i] & 0xC0 != 0x80).unwrap_or(norm.len());
                let begin = at(start);
                (begin, if s + 1 == end { at(end) } else { begin })
            })
            .collect();
        Ok((enc.ids, spans))
    }

    fn spans(&self, data: &[u8], cuts: Option<&Cuts>) -> Result<Encoded> {
        Ok(self.spans_of(self.normalizer.normalize(data)?, cuts))
    }

    /// The ids of normalized text and their spans of it (bytes; `(start, BYTE_PIECE)` for a
    /// byte piece).
    fn spans_of(&self, normalized: String, cuts: Option<&Cuts>) -> Encoded {
        let text = normalized.as_bytes();
        let mut scratch = Scratch::default();
        let (mut ids, mut spans) = (Vec::new(), Vec::new());
        let Some(cuts) = cuts else {
            self.bpe.segment(text, &mut scratch);
            self.bpe.finish(text, &scratch.segment, &mut ids, Some(&mut spans));
            return Encoded { normalized, spans, ids };
        };
        let mut runs = UnkRuns::new(&self.bpe);
        cuts.for_each_part(text, &mut |chunk| {
            let offset = (chunk.as_ptr() as usize - text.as_ptr() as usize) as u32;
            let (from, from_spans) = (ids.len(), spans.len());
            self.bpe.segment(chunk, &mut scratch);
            self.bpe.finish(chunk, &scratch.segment, &mut ids, Some(&mut spans));
            for span in &mut spans[from_spans..] {
                span.0 += offset;
                if span.1 != bpe::BYTE_PIECE {
                    span.1 += offset;
                }
            }
            if runs.after_part(&mut ids, from) {
                let first = spans.remove(from_spans); // the previous run's piece grows over it
                spans[from_spans - 1].1 = first.1;
            }
        });
        Encoded { normalized, spans, ids }
    }
}

/// Chunks longer than this (bytes) are cut further between two characters no piece holds side by
/// side.
const LONG_CHUNK: usize = 64;

/// Where a model's normalized text may be cut into parts that merge alone (every merge makes a
/// piece, so no symbol ever crosses a cut that no piece crosses): at `▁` ([`Chunking`]), and in
/// long chunks between two characters that are adjacent in no piece (random letters, with
/// Llama's vocabulary, fall into parts of about 7 characters; a run of one letter does not).
struct Cuts {
    chunking: Option<Chunking>,
    /// `(first << 32) | second` for every two characters adjacent inside some piece.
    joinable: rustc_hash::FxHashSet<u64>,
}

impl Cuts {
    fn new<'a>(pieces: impl Iterator<Item = &'a [u8]> + Clone) -> Cuts {
        let mut joinable = rustc_hash::FxHashSet::default();
        for piece in pieces.clone() {
            let text = std::str::from_utf8(piece).unwrap_or_default(); // pieces are strs
            for (a, b) in text.chars().zip(text.chars().skip(1)) {
                joinable.insert(pair_of(a, b));
            }
        }
        Cuts { chunking: chunk_mode(pieces), joinable }
    }

    /// Calls `f` on each part of `text`, in order.
    fn for_each_part(&self, text: &[u8], f: &mut dyn FnMut(&[u8])) {
        match self.chunking {
            Some(mode) => for_each_chunk(text, mode, |chunk| self.split_long(chunk, f)),
            None => self.split_long(text, f),
        }
    }

    fn split_long(&self, chunk: &[u8], f: &mut dyn FnMut(&[u8])) {
        let Ok(text) = std::str::from_utf8(chunk) else {
            return f(chunk); // normalized text is UTF-8: not reached
        };
        if chunk.len() <= LONG_CHUNK {
            return f(chunk);
        }
        let mut start = 0;
        let mut prev: Option<char> = None;
        for (i, c) in text.char_indices() {
            if let Some(p) = prev {
                if !self.joinable.contains(&pair_of(p, c)) {
                    f(&chunk[start..i]);
                    start = i;
                }
            }
            prev = Some(c);
        }
        f(&chunk[start..]);
    }
}

#[inline(always)]
fn pair_of(a: char, b: char) -> u64 {
    ((a as u64) << 32) | b as u64
}

/// `Before` when no piece has a `▁` after a character other than `▁` (every piece is `▁*` then
/// no `▁`), `After` when none has a `▁` before such a character (no `▁`, then `▁*`), else `None`.
/// Then no piece, and so no merge, crosses a cut before (after) a `▁` that follows (precedes)
/// another character. Llama's vocabulary is `Before`: its only pieces with an inner `▁` are runs
/// of `▁` (indentation).
fn chunk_mode<'a>(pieces: impl Iterator<Item = &'a [u8]> + Clone) -> Option<Chunking> {
    let space = SPACE_SYMBOL.as_bytes();
    let has_space = |p: &[u8]| memchr::memmem::find(p, space).is_some();
    let leading = |mut p: &'a [u8]| {
        while let Some(rest) = p.strip_prefix(space) {
            p = rest;
        }
        p
    };
    if pieces.clone().all(|p| !has_space(leading(p))) {
        return Some(Chunking::Before);
    }
    let trailing = |mut p: &'a [u8]| {
        while let Some(rest) = p.strip_suffix(space) {
            p = rest;
        }
        p
    };
    if pieces.into_iter().all(|p| !has_space(trailing(p))) {
        return Some(Chunking::After);
    }
    None
}

/// Calls `f` on each chunk of `text`: cut before (`Before`) each `▁` that follows another
/// character, or after (`After`) each `▁` that another character follows.
fn for_each_chunk(text: &[u8], mode: Chunking, mut f: impl FnMut(&[u8])) {
    let space = SPACE_SYMBOL.as_bytes();
    let is_space_at = |at: usize| text.get(at..at + space.len()) == Some(space);
    let mut start = 0;
    for at in memchr::memmem::find_iter(text, space) {
        let cut = match mode {
            Chunking::Before if at > 0 && (at < space.len() || !is_space_at(at - space.len())) => at,
            Chunking::After if at + space.len() < text.len() && !is_space_at(at + space.len()) => at + space.len(),
            _ => continue,
        };
        if cut > start {
            f(&text[start..cut]);
            start = cut;
        }
    }
    if start < text.len() {
        f(&text[start..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(pieces: &[(&str, f32, u8)], byte_fallback: bool, options: Options) -> SentencePiece {
        // id 0 is <unk>; the byte pieces follow the given ones under byte fallback
        let mut list = Vec::new();
        for (i, &(p, score, kind)) in pieces.iter().enumerate() {
            list.push((p.to_string(), i as u32 + 1, rank(score), kind));
        }
        let byte_ids = if byte_fallback { (0..256).map(|b| pieces.len() as u32 + 1 + b).collect() } else { vec![] };
        SentencePiece::new(list, 0, byte_ids, None, options).unwrap()
    }

    fn rank(score: f32) -> i32 {
        let bits = score.to_bits() as i32 as i64;
        (if bits >= 0 { bits } else { i32::MIN as i64 - 1 - bits }) as i32
    }

    const OPTIONS: Options = Options {
        add_dummy_prefix: true,
        remove_extra_whitespaces: true,
        escape_whitespaces: true,
        treat_whitespace_as_suffix: false,
    };

    #[test]
    fn merges_by_score_then_leftmost() {
        let m = model(
            &[("a", 0.0, NORMAL), ("b", 0.0, NORMAL), ("▁", 0.0, NORMAL), ("ab", -1.0, NORMAL), ("ba", -1.0, NORMAL)],
            false,
            OPTIONS,
        );
        // "▁aba": ab and ba tie; the leftmost (ab) wins
        assert_eq!(m.encode(b"aba").unwrap(), vec![3, 4, 1]);
        assert_eq!(m.normalize(b"  a  b ").unwrap(), "▁a▁b");
    }

    /// A chunk that is one piece is answered from `tokens` once its merge gave that piece;
    /// "▁ab" is a piece that no merge reaches (neither "▁a" nor "ab" is one), so never.
    #[test]
    fn chunks_that_are_one_piece() {
        let m = model(&[("a", 0.0, NORMAL), ("b", 0.0, NORMAL), ("▁", 0.0, NORMAL), ("▁b", -1.0, NORMAL), ("▁ab", -2.0, NORMAL)], false, OPTIONS);
        m.set_cache_capacity(0);
        for _ in 0..3 {
            assert_eq!(m.encode(b"ab b ab").unwrap(), vec![3, 1, 2, 4, 3, 1, 2]);
        }
        let tokens = &m.chunks.as_ref().expect("no UNUSED piece: chunks").1;
        assert!(matches!(tokens.find("▁b".as_bytes()), Some(crate::merge::tokens::Whole::Alone(4))));
        assert!(tokens.find("▁ab".as_bytes()).is_none(), "its merge gives other ids");
    }

    /// A model with an UNUSED piece merges its text whole: it builds neither the cut tables
    /// nor the table of one-piece chunks (only chunks read it), and still encodes.
    #[test]
    fn unused_pieces_build_no_chunk_tables() {
        let m = model(&[("a", 0.0, NORMAL), ("b", 0.0, NORMAL), ("▁", 0.0, NORMAL), ("▁b", -1.0, NORMAL), ("ab", -2.0, UNUSED)], false, OPTIONS);
        assert!(m.chunks.is_none());
        assert_eq!(m.encode(b"b b").unwrap(), vec![4, 4]);
    }

    #[test]
    fn unknown_runs_join_or_spell_bytes() {
        let pieces = [("a", 0.0, NORMAL), ("▁", 0.0, NORMAL)];
        let m = model(&pieces, false, OPTIONS);
        assert_eq!(m.encode("a€€ a".as_bytes()).unwrap(), vec![2, 1, 0, 2, 1]);
        // a chunk that is one unknown joins the runs on both sides into one
        let no_space = model(&[("a", 0.0, NORMAL)], false, OPTIONS);
        assert_eq!(no_space.encode("a€ €€ €a".as_bytes()).unwrap(), vec![0, 1, 0, 1]);
        let fb = model(&pieces, true, OPTIONS);
        let euro: Vec<u32> = "€".bytes().map(|b| 3 + b as u32).collect();
        assert_eq!(fb.encode("a€".as_bytes()).unwrap(), [vec![2, 1], euro].concat());
    }

    /// `norm_to_orig` in input bytes: a plain char its own position, the dummy prefix the first
    /// char kept, each kept space its own, the end where the removed trailing spaces begin.
    #[test]
    fn origins_of_the_normalized_bytes() {
        let m = model(&[("a", 0.0, NORMAL)], false, OPTIONS);
        let (out, origins) = m.normalizer.normalize_with_origins(b"  ab  c  ").unwrap();
        assert_eq!(out, "▁ab▁c");
        assert_eq!(origins, [2, 2, 2, 2, 3, 4, 4, 4, 6, 7]);
        assert_eq!(m.normalizer.normalize_with_origins(b"   ").unwrap(), (String::new(), vec![3]));
        assert_eq!(m.normalizer.normalize_with_origins(b"").unwrap(), (String::new(), vec![0]));
        let suffix = Options { treat_whitespace_as_suffix: true, remove_extra_whitespaces: false, ..OPTIONS };
        let m = model(&[("a", 0.0, NORMAL)], false, suffix);
        let (out, origins) = m.normalizer.normalize_with_origins("é ".as_bytes()).unwrap();
        assert_eq!(out, "é▁▁");
        assert_eq!(origins, [0, 0, 2, 2, 2, 3, 3, 3, 3]);
        // the same text as `normalize`, on every string over an alphabet of the edge cases
        let alphabet = [" ", "a", "é", "\u{3000}", "▁", "\u{FFFD}", "😀"];
        for options in [OPTIONS, suffix, Options::default()] {
            let m = model(&[("a", 0.0, NORMAL)], false, options);
            for k in 0..7usize.pow(4) {
                let text: String = (0..4).map(|d| alphabet[k / 7usize.pow(d) % 7]).collect();
                let (out, origins) = m.normalizer.normalize_with_origins(text.as_bytes()).unwrap();
                assert_eq!(out, m.normalize(text.as_bytes()).unwrap(), "{text:?}");
                assert_eq!(origins.len(), out.len() + 1, "{text:?}");
                assert!(origins.windows(2).all(|w| w[0] <= w[1]), "{text:?} {origins:?}");
                assert!(origins.iter().all(|&o| text.is_char_boundary(o as usize)), "{text:?} {origins:?}");
            }
        }
    }

    /// Offsets in chars: a byte piece spans its char only as the char's last byte; an unknown
    /// run is one span.
    #[test]
    fn offsets_of_pieces_bytes_and_unknown_runs() {
        let pieces = [("a", 0.0, NORMAL), ("▁", 0.0, NORMAL), ("▁a", -1.0, NORMAL)];
        let fb = model(&pieces, true, OPTIONS);
        let (ids, spans) = fb.encode_offsets(" a é").unwrap();
        assert_eq!(ids, [3, 2, 4 + 0xC3, 4 + 0xA9]);
        assert_eq!(spans, [(1, 2), (2, 3), (3, 3), (3, 4)]);
        let unk = model(&pieces, false, OPTIONS);
        let (ids, spans) = unk.encode_offsets("a€€ a").unwrap();
        assert_eq!(ids, [3, 0, 3]);
        assert_eq!(spans, [(0, 1), (1, 3), (3, 5)]);
    }

    #[test]
    fn chunk_modes() {
        let p = |v: &[&'static str]| v.iter().map(|s| s.as_bytes()).collect::<Vec<_>>();
        assert_eq!(chunk_mode(p(&["▁a", "b", "▁▁", "▁▁c"]).into_iter()), Some(Chunking::Before));
        assert_eq!(chunk_mode(p(&["a▁", "b", "▁▁", "c▁▁"]).into_iter()), Some(Chunking::After));
        assert_eq!(chunk_mode(p(&["a▁b"]).into_iter()), None);
        assert_eq!(chunk_mode(p(&["▁a▁"]).into_iter()), None);
        let chunks = |text: &str, mode| {
            let mut seen = Vec::new();
            for_each_chunk(text.as_bytes(), mode, |c| seen.push(String::from_utf8(c.to_vec()).unwrap()));
            seen
        };
        assert_eq!(chunks("x▁a▁▁b▁", Chunking::Before), ["x", "▁a", "▁▁b", "▁"]);
        assert_eq!(chunks("▁▁x▁a▁▁b", Chunking::After), ["▁▁", "x▁", "a▁▁", "b"]);
        assert_eq!(chunks("▁", Chunking::Before), ["▁"]);
    }

    #[test]
    fn chunk_caches_are_dropped_with_their_model() {
        let m = model(&[("a", 0.0, NORMAL), ("▁", 0.0, NORMAL)], false, OPTIONS);
        let owner = m.cache.owner();
        m.encode(b"a a").unwrap();
        assert!(cache::cached(owner, b"").0);
        // another thread's cache of it is pruned when that thread next meets a new model
        let m = std::sync::Arc::new(m);
        let other = std::thread::spawn({
            let m = m.clone();
            move || {
                m.encode(b"a a").unwrap();
                cache::cached(owner, b"").0
            }
        });
        assert!(other.join().unwrap());
        drop(std::sync::Arc::into_inner(m));
        assert!(!cache::cached(owner, b"").0);
        assert!(!cache::is_live(owner));
    }

    #[test]
    fn corrupt_charsmap_is_a_format_error() {
        // one unit whose base points far outside the trie
        let blob = [4u8, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0];
        let m = SentencePiece::new(vec![], 0, vec![], Some(&blob), OPTIONS).unwrap();
        assert!(matches!(m.normalize(b"abc"), Err(Error::Format(m)) if m.contains("outside its 1 units")));
        assert!(matches!(CharsMap::new(&[1, 0, 0, 0]), Err(Error::Format(_))));
        // a trie declared past the blob's end (found by the fuzz target: a slice panic), and one
        // with no whole unit present
        let past = SentencePiece::new(vec![], 0, vec![], Some(&[8, 0, 0, 0, 1, 2, 3, 4, 5, 6]), OPTIONS).unwrap();
        assert!(matches!(past.normalize(b"ab"), Err(Error::Format(m)) if m.contains("outside its 1 units")));
        assert!(matches!(CharsMap::new(&[4, 0, 0, 0, 0xff]), Err(Error::Format(m)) if m.contains("outside its 0 units")));
    }
}
