//! Pair-rank BPE: Hugging Face's merge rule for `tokenizer.json` / GGUF merge lists, over the
//! byte-level alphabet, with the text split by the core's pre-tokenizer.
//!
//! Merge priority is the *pair's* index in the merge list: the lowest `(rank, position)` adjacent
//! pair is merged first, one merge at a time (a linked list of symbols and a heap of candidates,
//! stale entries skipped exactly as in Hugging Face's `Word::merge_all`). This differs from
//! tiktoken's rank-of-the-merged-bytes rule (formats.md §3.2) in general; where a list provably
//! merges as that rule over its tokens ranked in merge order, long pieces of byte-level models
//! use the tiktoken encoder's linear merge ([`linear`]). The Python reference is
//! `bpekit.pipeline.models.BPE.merge_word`.
//!
//! Performance notes: building the pair table is one `FxHashMap` insert per merge (~10 ms for
//! 200k merges). Pieces repeat, so each thread keeps a bounded piece -> ids cache (cleared when
//! full); the heap merge runs only on cache misses.

mod linear;

use crate::error::{Error, Result};
use crate::merge::LINEAR_THRESHOLD;
use crate::merge::agenda::{Agenda, Candidate, Queue};
use crate::merge::cache::{self, BytesCache, CacheSlot};
use crate::merge::tokens::Tokens;
use crate::merge::{FastRanks, RankLookup};
use crate::pretokenize::{Pretokenizer, RegexSplitter};
use rustc_hash::FxHashMap;

/// Ids and, for each, the first and last byte of the text it stands for.
pub type IdsAndSpans = (Vec<u32>, Vec<(usize, usize)>);

/// One symbol of a merge: its id and its neighbours' positions.
#[derive(Clone, Copy)]
struct Link {
    id: u32,
    prev: u32,
    next: u32,
}

/// Longer pieces are refused ([`Error::TooLong`]): the merge keeps positions in 32 bits.
pub const MAX_PIECE: usize = u32::MAX as usize - 2;

/// Pieces of at least this many symbols merge with the laned agenda.
const LANE_FROM: usize = 256;

/// Pieces of at least this many symbols find a rank's queue in a table indexed by rank (one
/// entry per merge, zeroed per piece) instead of a hash map.
const DIRECT_FROM: usize = 1 << 16;

/// A byte whose character has no id: the symbol is dropped.
pub const DROP: u32 = u32::MAX;

/// The candidate to merge the pair at `pos` into `merged` with merge rank `rank`: the agenda pops
/// the highest score first, so the score is `u32::MAX - rank` (in the signed form
/// [`Candidate::new`] takes), then the leftmost.
#[inline(always)]
fn pair_candidate(rank: u32, pos: usize, merged: u32) -> Candidate {
    Candidate::new(((u32::MAX - rank) ^ 0x8000_0000) as i32, pos as u32, 0, merged)
}

#[inline(always)]
fn key(a: u32, b: u32) -> u64 {
    ((a as u64) << 32) | b as u64
}

/// The merge list as ids: `merges[rank] = (left, right)` token strings -> `(left id, right id,
/// merged id)`, the merged token being `left + right` less `right`'s `prefix_len`-byte subword
/// prefix. Every token must be in `vocab`, and no pair may repeat (the Python reference,
/// `BPE._pair_table`, gives the same errors).
pub fn merge_ids(vocab: &FxHashMap<String, u32>, merges: &[(String, String)], prefix_len: usize) -> Result<Vec<(u32, u32, u32)>> {
    let mut seen: FxHashMap<u64, usize> = FxHashMap::with_capacity_and_hasher(merges.len(), Default::default());
    let mut out = Vec::with_capacity(merges.len());
    let mut merged = String::new();
    for (rank, (a, b)) in merges.iter().enumerate() {
        let id = |t: &String| {
            vocab.get(t).copied().ok_or_else(|| {
                Error::Vocab(format!("merge {rank} ({a:?}, {b:?}): token {t:?} is not in the vocabulary"))
            })
        };
        let (ia, ib) = (id(a)?, id(b)?);
        let rest = std::str::from_utf8(b.as_bytes().get(prefix_len..).unwrap_or(&[]))
            .map_err(|_| Error::Vocab(format!("merge {rank} ({a:?}, {b:?}): cannot strip the subword prefix")))?;
        merged.clear();
        merged.push_str(a);
        merged.push_str(rest);
        let im = vocab.get(&merged).copied().ok_or_else(|| {
            Error::Vocab(format!("merge {rank} ({a:?}, {b:?}): the merged token {merged:?} is not in the vocabulary"))
        })?;
        if let Some(old) = seen.insert(key(ia, ib), rank) {
            return Err(Error::Vocab(format!("merge {rank} ({a:?}, {b:?}) repeats merge {old}")));
        }
        out.push((ia, ib, im));
    }
    Ok(out)
}

/// Whether byte `b` is its own character in GPT-2's byte-level alphabet (`bytes_to_unicode`'s
/// printable ranges); the others are U+0100 on, in byte order.
const fn byte_is_its_char(b: u32) -> bool {
    matches!(b, 33..=126 | 161..=172 | 174..=255)
}

/// The bytes a GPT-2 byte-level token spells (`bytes_to_unicode` inverted), or `None` when a
/// character is outside that alphabet.
pub fn byte_level_bytes(token: &str) -> Option<Vec<u8>> {
    token
        .chars()
        .map(|c| {
            let c = c as u32;
            match c {
                0..=255 if byte_is_its_char(c) => Some(c as u8),
                256..=323 => {
                    // the 68 bytes outside the printable ranges, in byte order
                    let n = (c - 256) as usize;
                    (0u8..=255).filter(|&b| !byte_is_its_char(b as u32)).nth(n)
                }
                _ => None,
            }
        })
        .collect()
}

/// Pieces of fewer symbols than this merge in stack arrays ([`PairBpe::merge_flat`]).
///
/// Performance note: the heap merge allocated four vectors per piece (symbols, links, heap,
/// output); on a megabyte of English seen for the first time (GPT-NeoX's `tokenizer.json`, every
/// call with an empty piece cache), the merges of the pieces not cached yet and their allocations
/// were about half the time (`src/PERFORMANCE.md`, "Fifteenth round").
const FLAT_BELOW: usize = 64;

/// Pieces longer than this (bytes) are merged every time, not cached (a pipeline with no
/// pre-tokenizer hands whole texts to the model).
const CACHE_MAX_PIECE: usize = 256;

/// A piece of at most this many bytes, at any stage of a `Sequence` of splits, looks up the ids
/// of the whole rest of the pipeline (the later stages and the model) in the piece cache, under
/// [`TAIL_KEY`] and the stage's number before its bytes.
///
/// Performance note: DeepSeek's pre-tokenizers are 5–6 regex splits in a row; each later stage
/// ran its regex on every word the earlier ones cut (tiny haystacks, ~60 ns a call), so English
/// took 60 ms a megabyte. Words repeat: with the ids of a word's whole tail cached, most of them
/// cost one lookup (`src/PERFORMANCE.md`, "Fifteenth round"). Longer pieces (lines, sentences)
/// rarely repeat and are split further instead.
const TAIL_CACHE_MAX: usize = 32;

/// `encode_stages` recurses once per stage; a `Sequence` of more splits than this (real
/// pre-tokenizers have at most 6; a hostile file could hold thousands) is cut stage by stage
/// without the tail cache, so that no file can overflow the stack.
const MAX_TAIL_STAGES: usize = 64;
// a tail key holds the stage's number in one byte
const _: () = assert!(MAX_TAIL_STAGES < BYTE_STAGES_KEY as usize);

/// The second byte of the tail key of a piece's ids through [`Split::byte_stages`] and the model
/// (after [`TAIL_KEY`]; a split stage's number is below it).
const BYTE_STAGES_KEY: u8 = u8::MAX;

/// The first byte of a tail key: never the first byte of a raw piece of UTF-8 text, and raw
/// pieces that start with it (`encode_piece` takes any bytes) are not cached.
const TAIL_KEY: u8 = 0xFF;

/// How a piece's characters become the first symbols of a model that is not byte-level (Hugging
/// Face's `BPE` over characters, with `byte_fallback` and `unk_token`, as Llama-2-style
/// `tokenizer.json` files have). The Python reference is `bpekit.pipeline.models.BPE._symbols`.
pub struct CharSymbols {
    /// The id of every token that is one character.
    pub chars: FxHashMap<char, u32>,
    /// `byte_fallback`: the id of each byte token `<0xHH>` ([`DROP`] if missing), else `None`.
    pub bytes: Option<[u32; 256]>,
    /// The unk token's id (`None`: no unk token, an unknown character is dropped).
    pub unk: Option<u32>,
    pub fuse_unk: bool,
    /// A character that no merge joins to the character before it unless that one is the same
    /// (SentencePiece's `▁` in Llama-2-style files, whose tokens hold it only at their start): a
    /// text with no pre-tokenizer is then merged in parts cut before each such character that
    /// follows another character, each part cached as a piece. The caller checks the merges'
    /// strings (`bpekit.pipeline.models.BPE.fast_merge`); `None`: the text is one piece.
    pub marker: Option<char>,
    /// With a subword prefix or an end-of-word suffix (OpenAI GPT's `</w>`): the tokens of each
    /// character inside a piece, at its end, and as a piece of its own (`chars` holds the first
    /// character's). Hugging Face's `merge_word` spells a character so by its place.
    pub affixes: Option<Box<CharAffixes>>,
}

/// A character's token by its place in a piece, for a model with a subword prefix (inside and
/// at the end) or an end-of-word suffix (at the end, and alone).
#[derive(Clone, Debug, Default)]
pub struct CharAffixes {
    pub middle: FxHashMap<char, u32>,
    pub last: FxHashMap<char, u32>,
    pub only: FxHashMap<char, u32>,
}

impl CharSymbols {
    /// The token of `c` where it stands in a piece (`first`: its first character, `last`: its
    /// last one), if there is one.
    #[inline]
    fn token(&self, c: char, first: bool, last: bool) -> Option<u32> {
        let table = match (&self.affixes, first, last) {
            (None, ..) | (Some(_), true, false) => &self.chars,
            (Some(a), true, true) => &a.only,
            (Some(a), false, true) => &a.last,
            (Some(a), false, false) => &a.middle,
        };
        table.get(&c).copied()
    }

    /// The bytes at `piece[at..]` that one unk token stands for (no byte fallback): the
    /// character there if it has no token, and with `fuse_unk` every one after it that has none;
    /// 0 if it has one.
    fn unknown_run(&self, piece: &str, at: usize) -> usize {
        let mut n = 0;
        let mut chars = piece.get(at..).unwrap_or_default().chars().peekable();
        while let Some(c) = chars.next() {
            let last = chars.peek().is_none();
            if self.token(c, at + n == 0, last).is_some() || (n > 0 && !self.fuse_unk) {
                break;
            }
            n += c.len_utf8();
        }
        n
    }

    /// Whether `c` gives no symbol at all: not a token, not all of its bytes tokens, no unk token.
    fn drops(&self, c: char) -> bool {
        if self.unk.is_some() || self.chars.contains_key(&c) {
            return false;
        }
        let mut buf = [0u8; 4];
        !self.bytes.is_some_and(|bytes| c.encode_utf8(&mut buf).bytes().all(|b| bytes[b as usize] != DROP))
    }

    /// The symbols of `text`: a character's token, else its byte tokens (all of them must
    /// exist), else the unk token (runs of them fused with `fuse_unk`; a pending unk is written
    /// before the next known character, after byte tokens, as Hugging Face does).
    fn symbols(&self, text: &str, out: &mut Vec<u32>) {
        let mut pending: Option<u32> = None;
        let mut chars = text.chars().peekable();
        let mut first = true;
        while let Some(c) = chars.next() {
            let token = self.token(c, first, chars.peek().is_none());
            first = false;
            if let Some(id) = token {
                if let Some(u) = pending.take() {
                    out.push(u);
                }
                out.push(id);
                continue;
            }
            if let Some(bytes) = &self.bytes {
                let mut buf = [0u8; 4];
                let utf8 = c.encode_utf8(&mut buf).as_bytes();
                if utf8.iter().all(|&b| bytes[b as usize] != DROP) {
                    out.extend(utf8.iter().map(|&b| bytes[b as usize]));
                    continue;
                }
            }
            if let Some(unk) = self.unk {
                if let Some(u) = pending {
                    if !self.fuse_unk {
                        out.push(u);
                    }
                }
                pending = Some(unk);
            }
        }
        if let Some(u) = pending {
            out.push(u);
        }
    }
}

/// The first symbols of a piece: its bytes through the byte-level alphabet (plain, or with a
/// subword prefix or end-of-word suffix), or its characters.
pub enum Symbols {
    Bytes([u32; 256]),
    Affixed(Box<Affixed>),
    Chars(CharSymbols),
}

/// A byte-level model whose symbols take Hugging Face's `continuing_subword_prefix` (every byte
/// after the first) or `end_of_word_suffix` (the last byte), as CLIP's `tokenizer.json` (suffix
/// `</w>`): a byte's first symbol depends on where it stands in the piece. Each table maps a byte
/// to that symbol's id ([`DROP`]: not in the vocabulary, dropped, and the symbol that would have
/// been last keeps its own form, as in `bpekit.pipeline.models.BPE._symbols`).
pub struct Affixed {
    /// The first byte of a piece of two or more: the byte's character alone.
    pub first: [u32; 256],
    /// A byte inside a piece: prefix + character.
    pub middle: [u32; 256],
    /// The last byte of a piece of two or more: prefix + character + suffix.
    pub last: [u32; 256],
    /// A piece of one byte: character + suffix.
    pub only: [u32; 256],
}

impl Affixed {
    /// The table of the byte at `i` of a piece of `n` bytes.
    #[inline(always)]
    fn table(&self, i: usize, n: usize) -> &[u32; 256] {
        if n == 1 {
            &self.only
        } else if i == 0 {
            &self.first
        } else if i + 1 == n {
            &self.last
        } else {
            &self.middle
        }
    }

    /// The first symbols of `piece` appended to `ids` (dropped bytes left out); how many.
    #[inline]
    fn symbols(&self, piece: &[u8], ids: &mut [u32]) -> usize {
        let n = piece.len();
        let mut k = 0;
        for (i, &b) in piece.iter().enumerate() {
            ids[k] = self.table(i, n)[b as usize];
            k += (ids[k] != DROP) as usize;
        }
        k
    }

    fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        [&self.first, &self.middle, &self.last, &self.only].into_iter().flatten().copied().filter(|&i| i != DROP)
    }
}

/// How raw text becomes pieces: the core splitter plus Hugging Face's ByteLevel prefix options.
pub struct Split {
    /// `None` (and no `isolated` stages): no pre-tokenizer, the whole text is one piece.
    pub splitter: Option<Pretokenizer>,
    /// When not empty, these Hugging Face `Split(Isolated)` stages cut the text instead of
    /// `splitter`, one after the other (a `Sequence` of Splits, as DeepSeek's pre-tokenizers).
    pub isolated: Vec<RegexSplitter>,
    /// Prefix the whole text with a space unless it starts with one (`ByteLevel(use_regex)`).
    pub text_prefix: bool,
    /// Prefix every piece with a space unless it starts with one (`Split` then `ByteLevel`).
    pub piece_prefix: bool,
    /// Hugging Face's `Metaspace` pre-tokenizer, standing for `splitter` and `isolated`.
    pub metaspace: Option<Metaspace>,
    /// Stages after `ByteLevel` (Falcon's `Digits` and `Split` of digit groups): they cut each
    /// piece's byte-level string, one char per byte, so `²` (`C2 B2`) is `Â²` to them and its
    /// second byte a digit to `Digits`; each part is encoded.
    pub byte_stages: Vec<RegexSplitter>,
}

/// Marks a split stage that comes after `ByteLevel` in a `Sequence` ([`Split::byte_stages`]).
pub const AFTER_BYTE_LEVEL: &str = "(?#after ByteLevel)";

/// Each byte's character in GPT-2's byte-level alphabet (`bytes_to_unicode`).
pub(crate) const BYTE_CHARS: [char; 256] = {
    let mut table = ['\0'; 256];
    let (mut b, mut n) = (0u32, 0u32);
    while b < 256 {
        let printable = byte_is_its_char(b);
        let c = if printable { b } else { 256 + n };
        n += !printable as u32;
        table[b as usize] = match char::from_u32(c) {
            Some(c) => c,
            None => panic!("a byte-level char is a char"),
        };
        b += 1;
    }
    table
};

/// Hugging Face's `Metaspace`: spaces become `replacement`, which is put before a text that does
/// not start with it (`prepend`: always, or only for the text's first segment, the one at the
/// start of the input: `First`), and which starts a new piece where `split` (each one: `"a▁▁b"`
/// is `"a"`, `"▁"`, `"▁b"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metaspace {
    pub replacement: char,
    pub prepend: Prepend,
    pub split: bool,
}

/// `Metaspace`'s `prepend_scheme`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prepend {
    Always,
    First,
    Never,
}

impl Metaspace {
    /// `text` (not empty) with its spaces replaced and the replacement prepended as the scheme
    /// says; `first`: the segment starts the input (no added token before it).
    fn apply(&self, text: &str, first: bool) -> String {
        let r = self.replacement;
        let mut out = String::with_capacity(text.len() + text.len() / 2 + r.len_utf8());
        let prepend = match self.prepend {
            Prepend::Always => true,
            Prepend::First => first,
            Prepend::Never => false,
        };
        // (a text starting with a space starts with the replacement once it is replaced)
        if prepend && !text.starts_with(r) && !text.starts_with(' ') {
            out.push(r);
        }
        // spaces found by a byte search, the runs between them copied whole (this loop is
        // `normalizer::push_replaced`'s with a `char` pushed: calling that ran ~5% slower here)
        let mut done = 0;
        for at in crate::normalizer::char_positions(text, ' ') {
            out.push_str(&text[done..at]);
            out.push(r);
            done = at + 1;
        }
        out.push_str(&text[done..]);
        out
    }
}

pub struct PairBpe {
    /// This model's per-thread piece caches: their identity and byte budget.
    cache: CacheSlot,
    /// byte -> id of its byte-level character ([`DROP`]: not in the vocabulary, dropped as
    /// Hugging Face does when the model has no unk token); or the character rules
    symbols: Symbols,
    /// (left, right) -> (rank, merged id)
    pairs: FxHashMap<u64, (u32, u32)>,
    /// `ignore_merges`: raw piece -> id of the whole piece (UTF-8 of the token for `Chars`), in
    /// the tiktoken encoder's packed tables (most pieces of text are one token: one lookup each)
    whole: Option<FastRanks>,
    /// The largest id in `whole`.
    whole_max: Option<u32>,
    /// Without `whole`, a byte-level model's pieces that are one token, once their merge is known
    /// to give it ([`tokens`](crate::merge::tokens)).
    tokens: Option<Tokens>,
    split: Split,
    /// The linear merge of long pieces (byte-level models, and character models through
    /// `pseudo`).
    linear: Option<linear::Linear>,
    /// A character model's most common single-character tokens as stand-in bytes, so that a long
    /// piece made only of them takes the linear merge.
    pseudo: Option<Box<PseudoBytes>>,
}

/// Up to 256 single-character tokens of a character model, each given a byte (every ASCII one
/// first, then by id): a piece made only of them is that byte string to the byte-level linear
/// merge (`linear.rs`), whose tables then spell every token over those characters. The merges
/// are the model's; only the symbols' spelling differs, so the merge is the same.
struct PseudoBytes {
    byte_of: FxHashMap<char, u8>,
    /// The token id of each stand-in byte ([`DROP`] past the last).
    byte_ids: [u32; 256],
}

impl PseudoBytes {
    fn new(chars: &FxHashMap<char, u32>) -> Option<PseudoBytes> {
        let mut all: Vec<(char, u32)> = chars.iter().map(|(&c, &id)| (c, id)).collect();
        all.sort_unstable_by_key(|&(c, id)| (!c.is_ascii(), id));
        all.truncate(256);
        if all.is_empty() {
            return None;
        }
        let mut byte_ids = [DROP; 256];
        let mut byte_of = FxHashMap::default();
        for (b, &(c, id)) in all.iter().enumerate() {
            byte_ids[b] = id;
            byte_of.insert(c, b as u8);
        }
        Some(PseudoBytes { byte_of, byte_ids })
    }

    /// `text` as stand-in bytes, or `None` if a character has none.
    fn bytes(&self, text: &str) -> Option<Vec<u8>> {
        text.chars().map(|c| self.byte_of.get(&c).copied()).collect()
    }
}

impl PairBpe {
    /// `merges[rank] = (left, right, merged)`; `whole` is the raw-bytes vocabulary when the model
    /// has `ignore_merges`.
    pub fn new(
        symbols: Symbols,
        merges: &[(u32, u32, u32)],
        whole: Option<Vec<(Vec<u8>, u32)>>,
        split: Split,
    ) -> Result<PairBpe> {
        let mut pairs = FxHashMap::with_capacity_and_hasher(merges.len(), Default::default());
        for (rank, &(a, b, m)) in merges.iter().enumerate() {
            if let Some((old, _)) = pairs.insert(key(a, b), (rank as u32, m)) {
                return Err(Error::Vocab(format!("merge {rank} ({a}, {b}) repeats merge {old}")));
            }
        }
        let whole_max = whole.iter().flatten().map(|&(_, id)| id).max();
        let whole = match whole {
            Some(w) => match FastRanks::from_pairs(w.iter().map(|(t, id)| (t.as_slice(), *id))) {
                (_, true) => return Err(Error::Vocab("a token of the whole-word vocabulary repeats".into())),
                (fast, false) => Some(fast),
            },
            None => None,
        };
        let pseudo = match &symbols {
            Symbols::Chars(c) if c.affixes.is_none() => PseudoBytes::new(&c.chars).map(Box::new),
            Symbols::Chars(_) => None, // (a character's token depends on its place: no stand-in bytes)
            Symbols::Bytes(_) | Symbols::Affixed(_) => None,
        };
        let linear = (matches!(symbols, Symbols::Bytes(_)) || pseudo.is_some()).then(linear::Linear::default);
        let tokens = match (&symbols, &whole) {
            (Symbols::Bytes(byte_ids), None) => Some(Tokens::from_merges(byte_ids, DROP, merges)),
            _ => None,
        };
        Ok(PairBpe { cache: CacheSlot::new(cache::BYTES_BUDGET), symbols, pairs, whole, whole_max, tokens, split, linear, pseudo })
    }

    /// The largest id an encoding can hold (`None` for a model with no ids at all).
    pub fn max_id(&self) -> Option<u32> {
        let merged = self.pairs.values().map(|&(_, m)| m).max();
        let symbols = match &self.symbols {
            Symbols::Bytes(ids) => ids.iter().copied().filter(|&i| i != DROP).max(),
            Symbols::Affixed(a) => a.ids().max(),
            Symbols::Chars(c) => {
                let affixed = c.affixes.iter().flat_map(|a| a.middle.values().chain(a.last.values()).chain(a.only.values()));
                c.chars.values().chain(affixed).copied().chain(c.bytes.iter().flatten().copied().filter(|&i| i != DROP)).chain(c.unk).max()
            }
        };
        merged.max(symbols).max(self.whole_max)
    }

    /// Sets the per-thread piece cache budget in bytes (0 turns the cache off) and empties every
    /// thread's cache of this model ([`CacheSlot::set_capacity`]).
    pub fn set_cache_capacity(&self, bytes: usize) {
        self.cache.set_capacity(bytes)
    }

    pub fn cache_capacity(&self) -> usize {
        self.cache.capacity()
    }

    /// The ids of one raw piece (bytes before the byte-level mapping).
    pub fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<()> {
        cache::with_bytes(&self.cache, |mut cache| self.encode_piece_with(piece, out, &mut cache))
    }

    /// [`Self::encode_piece`] with this thread's piece cache (if any).
    #[inline]
    fn encode_piece_with(&self, piece: &[u8], out: &mut Vec<u32>, cache: &mut Option<&mut BytesCache>) -> Result<()> {
        if piece.is_empty() {
            return Ok(());
        }
        if piece.len() > MAX_PIECE {
            return Err(Error::TooLong(piece.len()));
        }
        if let (&[b], Symbols::Bytes(byte_ids)) = (piece, &self.symbols) {
            // one symbol, nothing to merge (a digit of Qwen 2's pattern, which splits them one by
            // one); the whole-word vocabulary has the same token for it
            if byte_ids[b as usize] != DROP {
                out.push(byte_ids[b as usize]);
            }
            return Ok(());
        }
        if let Some(id) = self.whole.as_ref().and_then(|w| w.rank_of(piece)) {
            out.push(id);
            return Ok(());
        }
        let cacheable = piece.len() <= CACHE_MAX_PIECE && piece[0] != TAIL_KEY;
        let mut cached_or_merged = |out: &mut Vec<u32>| match cache.as_deref().filter(|_| cacheable).and_then(|c| c.get(piece)) {
            Some(ids) => out.extend_from_slice(ids),
            None => {
                let base = out.len();
                self.merge_into(piece, out);
                if let Some(c) = cache.as_deref_mut().filter(|_| cacheable) {
                    c.insert(piece, &out[base..]);
                }
            }
        };
        match &self.tokens {
            Some(t) => t.encode(piece, out, cached_or_merged),
            None => cached_or_merged(out),
        }
        Ok(())
    }

    /// Hugging Face's `Word::merge_all` on the first symbols of `piece` (UTF-8 for `Chars`),
    /// appended to `out`; `encode_piece` has checked that it is at most [`MAX_PIECE`] bytes.
    fn merge_into(&self, piece: &[u8], out: &mut Vec<u32>) {
        match &self.symbols {
            Symbols::Bytes(byte_ids) => {
                if piece.len() < FLAT_BELOW {
                    let mut ids = [0u32; FLAT_BELOW];
                    let mut n = 0;
                    for &b in piece {
                        ids[n] = byte_ids[b as usize];
                        n += (ids[n] != DROP) as usize;
                    }
                    return self.merge_flat(&mut ids[..n], out);
                }
                if let (Some(linear), true) = (&self.linear, piece.len() >= LINEAR_THRESHOLD) {
                    if linear.encode(byte_ids, &self.pairs, piece, out) {
                        return;
                    }
                }
                let ids = piece.iter().map(|&b| byte_ids[b as usize]).filter(|&i| i != DROP).collect();
                out.extend(self.merge_all(ids));
            }
            // no linear merge: its tables spell tokens by their bytes, and here the same bytes
            // make different tokens at the end of a piece than inside it
            Symbols::Affixed(affixed) => {
                if piece.len() < FLAT_BELOW {
                    let mut ids = [0u32; FLAT_BELOW];
                    let n = affixed.symbols(piece, &mut ids);
                    return self.merge_flat(&mut ids[..n], out);
                }
                let mut ids = vec![0u32; piece.len()];
                let n = affixed.symbols(piece, &mut ids);
                ids.truncate(n);
                out.extend(self.merge_all(ids));
            }
            Symbols::Chars(chars) => {
                let text = String::from_utf8_lossy(piece);
                if let (Some(linear), Some(p), true) = (&self.linear, &self.pseudo, piece.len() >= LINEAR_THRESHOLD) {
                    if let Some(bytes) = p.bytes(&text) {
                        if linear.encode(&p.byte_ids, &self.pairs, &bytes, out) {
                            return;
                        }
                    }
                }
                let mut ids = Vec::with_capacity(piece.len());
                chars.symbols(&text, &mut ids);
                if ids.len() < FLAT_BELOW {
                    self.merge_flat(&mut ids, out);
                } else {
                    out.extend(self.merge_all(ids));
                }
            }
        }
    }

    /// [`Self::merge_into`] as a vector (for tests).
    #[cfg(test)]
    fn merge(&self, piece: &[u8]) -> Vec<u32> {
        let mut out = Vec::new();
        self.merge_into(piece, &mut out);
        out
    }

    /// [`Self::merge_all`]'s order (the lowest rank, then the leftmost) by rescanning a flat
    /// array of the pairs' ranks, for fewer than [`FLAT_BELOW`] symbols: stack arrays, no heap
    /// and no allocation (the tiktoken encoder's `merge::small` for a merge list).
    fn merge_flat(&self, ids: &mut [u32], out: &mut Vec<u32>) {
        let mut n = ids.len();
        debug_assert!(n < FLAT_BELOW);
        // `ranks[i]`, `merged[i]`: the pair (ids[i], ids[i + 1]); `u32::MAX` from `n - 1` on
        let mut ranks = [u32::MAX; FLAT_BELOW];
        let mut merged = [0u32; FLAT_BELOW];
        let pair = |a: u32, b: u32| self.pairs.get(&key(a, b)).copied().unwrap_or((u32::MAX, 0));
        for i in 0..n.saturating_sub(1) {
            (ranks[i], merged[i]) = pair(ids[i], ids[i + 1]);
        }
        loop {
            let (mut best, mut at) = (u32::MAX, 0);
            for (i, &r) in ranks[..n.saturating_sub(1)].iter().enumerate() {
                if r < best {
                    (best, at) = (r, i);
                }
            }
            if best == u32::MAX {
                break;
            }
            ids[at] = merged[at];
            ids.copy_within(at + 2..n, at + 1);
            ranks.copy_within(at + 2..n, at + 1);
            merged.copy_within(at + 2..n, at + 1);
            n -= 1;
            ranks[n - 1] = u32::MAX;
            if at > 0 {
                (ranks[at - 1], merged[at - 1]) = pair(ids[at - 1], ids[at]);
            }
            if at + 1 < n {
                (ranks[at], merged[at]) = pair(ids[at], ids[at + 1]);
            }
        }
        out.extend_from_slice(&ids[..n]);
    }

    /// The ids of `piece` by the linear merge, its tables built now for the piece's bytes
    /// (whatever its length and the pieces merged before, unlike [`Self::encode_piece`]); `None`
    /// when the linear merge does not apply: a byte without a token, a character of a character
    /// model without a stand-in byte ([`PseudoBytes`]), or a merge list whose rule differs from
    /// tiktoken's over the same tokens (see [`linear`]). For tests and fuzzing against the pair
    /// merge.
    pub fn encode_piece_linear(&self, piece: &[u8]) -> Option<Vec<u32>> {
        match (&self.linear, &self.symbols, &self.pseudo) {
            (Some(linear), Symbols::Bytes(byte_ids), _) => linear.encode_now(byte_ids, &self.pairs, piece),
            (Some(linear), Symbols::Chars(_), Some(p)) => {
                let bytes = p.bytes(std::str::from_utf8(piece).ok()?)?;
                linear.encode_now(&p.byte_ids, &self.pairs, &bytes)
            }
            _ => None,
        }
    }

    /// Whether the linear merge's full tables are built (`Some(false)`: the merge list does not
    /// suit them), and how many tables over a piece's bytes are.
    pub fn linear_tables(&self) -> (Option<bool>, usize) {
        self.linear.as_ref().map_or((None, 0), linear::Linear::built)
    }

    /// `Word::merge_all`: the lowest (rank, position) pair first, stale entries skipped.
    fn merge_all(&self, ids: Vec<u32>) -> Vec<u32> {
        if ids.len() >= LANE_FROM {
            let mut lanes = RankLanes::default();
            if ids.len() >= DIRECT_FROM {
                lanes.direct = vec![0; self.pairs.len()];
            }
            self.merge_with(ids, &mut lanes)
        } else {
            let n = ids.len();
            self.merge_with(ids, &mut std::collections::BinaryHeap::with_capacity(n))
        }
    }

    /// [`Self::merge_all`] with the candidates in `heap`: Hugging Face's order (lowest merge
    /// rank, then leftmost; one pair per (rank, position), so equal keys are equal entries) as
    /// the SentencePiece agenda's (highest score, then leftmost) with the score `-rank`.
    ///
    /// Performance note (`src/PERFORMANCE.md`, "Twelfth round"): one binary heap of every
    /// candidate was most of a megabyte-long piece's time (a run of one letter, digits, random
    /// letters through GPT-NeoX's `tokenizer.json`: 11–23x English). Pieces of 256 symbols or
    /// more now queue their candidates per rank ([`RankLanes`]: in position order within a rank,
    /// so the heap holds one front per rank); shorter ones keep `std`'s binary heap.
    #[inline(always)]
    fn merge_with(&self, mut ids: Vec<u32>, heap: &mut impl Queue) -> Vec<u32> {
        let n = ids.len();
        if n < 2 {
            return ids;
        }
        // Each symbol's id and neighbours side by side (one cache line per symbol touched: three
        // separate arrays cost three misses per merge on a megabyte-long piece). `prev`/`next`
        // are `NO` at the ends; a symbol merged into its left neighbour has `next == GONE`.
        const NO: u32 = u32::MAX;
        const GONE: u32 = u32::MAX - 1;
        debug_assert!(n <= MAX_PIECE);
        let mut syms: Vec<Link> = (0..n as u32)
            .map(|i| Link { id: ids[i as usize], prev: i.wrapping_sub(1), next: if i as usize + 1 < n { i + 1 } else { NO } })
            .collect();
        for i in 0..n - 1 {
            if let Some(&(rank, m)) = self.pairs.get(&key(ids[i], ids[i + 1])) {
                heap.push(pair_candidate(rank, i, m));
            }
        }
        while let Some(c) = heap.pop() {
            // the next candidate's symbol is a cache miss on a long piece: ask for it now, so it
            // overlaps with this merge (usually still the next one: the pushes below are of later
            // ranks)
            if let Some(next) = heap.peek_left() {
                crate::prefetch::prefetch(&syms[next as usize]);
            }
            if let Some(later) = heap.upcoming() {
                crate::prefetch::prefetch(&syms[later as usize]);
            }
            let (pos, new_id) = (c.left() as usize, c.id);
            let l = syms[pos];
            if l.next >= GONE {
                continue; // merged away, or the last symbol
            }
            let right = l.next as usize;
            let r = syms[right];
            match self.pairs.get(&key(l.id, r.id)) {
                Some(&(_, m)) if m == new_id => {}
                _ => continue,
            }
            syms[pos].id = new_id;
            syms[pos].next = r.next;
            syms[right].next = GONE;
            if r.next != NO {
                syms[r.next as usize].prev = pos as u32;
            }
            if l.prev != NO {
                if let Some(&(rank, m)) = self.pairs.get(&key(syms[l.prev as usize].id, new_id)) {
                    heap.push(pair_candidate(rank, l.prev as usize, m));
                }
            }
            if r.next != NO {
                if let Some(&(rank, m)) = self.pairs.get(&key(new_id, syms[r.next as usize].id)) {
                    heap.push(pair_candidate(rank, pos, m));
                }
            }
        }
        ids.clear();
        ids.extend(syms.iter().filter(|s| s.next != GONE).map(|s| s.id));
        ids
    }

    /// Splits `text` and encodes every piece.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(text.len() / 3);
        self.encode_into(text, &mut out)?;
        Ok(out)
    }

    /// [`Self::encode`], appending to `out` (on an error, `out` may hold the ids before it).
    pub fn encode_into(&self, text: &str, out: &mut Vec<u32>) -> Result<()> {
        self.encode_segment(text, true, out)
    }

    /// [`Self::encode_into`] of one segment of an input cut at added tokens; `first`: the
    /// segment starts the input (`Metaspace`'s `First` scheme prepends only to that one).
    pub fn encode_segment(&self, text: &str, first: bool, out: &mut Vec<u32>) -> Result<()> {
        let prefixed;
        let text = if let Some(m) = &self.split.metaspace {
            if text.is_empty() {
                return Ok(()); // nothing to prepend to, as in Hugging Face
            }
            prefixed = m.apply(text, first);
            prefixed.as_str()
        } else if self.split.text_prefix && !text.starts_with(' ') {
            prefixed = format!(" {text}");
            prefixed.as_str()
        } else {
            text
        };
        let mut buf = Vec::new();
        let bytes = text.as_bytes();
        cache::with_bytes(&self.cache, |mut cache| {
            let stages = &self.split.isolated;
            if !stages.is_empty() && stages.len() <= MAX_TAIL_STAGES {
                let mut scratch = Stages { pieces: Vec::new(), key: Vec::new(), buf };
                return self.encode_stages(text, (0, bytes.len()), 0, true, &mut scratch, out, &mut cache);
            }
            let mut piece = |s: usize, e: usize| self.encode_prefixed(&bytes[s..e], &mut buf, out, &mut cache);
            if !stages.is_empty() {
                // a file with more stages than any real one: stage by stage, no recursion
                for (s, e) in RegexSplitter::isolate_all(stages, text)? {
                    piece(s, e)?;
                }
                return Ok(());
            }
            match (&self.split.splitter, self.split.metaspace.filter(|m| m.split), self.marker()) {
                (Some(splitter), _, _) => splitter.for_each_piece(text, piece),
                (None, _, _) if bytes.is_empty() => Ok(()), // an empty text is no piece to prefix
                (None, Some(m), _) => each_before(text, m.replacement).try_for_each(|(s, e)| piece(s, e)),
                (None, None, Some((marker, symbols))) => marker_parts(text, marker, symbols).try_for_each(|(s, e)| piece(s, e)),
                (None, None, None) => piece(0, bytes.len()),
            }
        })
    }

    /// The pieces of `text` as [`Self::encode_segment`] cuts it, as byte ranges in order, where
    /// its pieces are the text's own bytes: no space put before the whole text and no
    /// `Metaspace`; else `None`.
    fn piece_ranges(&self, text: &str) -> Result<Option<Vec<(usize, usize)>>> {
        if self.split.metaspace.is_some() {
            return Ok(None);
        }
        self.cut_pieces(text)
    }

    /// The pieces of `text` (a `Metaspace` model's: the text with its spaces replaced and its
    /// prefix put before it) as [`Self::encode_segment`] cuts it after those, as byte ranges in
    /// order (no splitter: the whole text, or its parts before each `▁` where the merges allow,
    /// as [`Self::marker`] says); `None` with a space put before the whole text or stages over
    /// byte-level characters.
    fn cut_pieces(&self, text: &str) -> Result<Option<Vec<(usize, usize)>>> {
        if self.split.text_prefix || !self.split.byte_stages.is_empty() {
            return Ok(None);
        }
        if !self.split.isolated.is_empty() {
            return RegexSplitter::isolate_all(&self.split.isolated, text).map(Some);
        }
        let mut pieces = Vec::new();
        match (&self.split.splitter, self.split.metaspace.filter(|m| m.split), self.marker()) {
            (Some(splitter), _, _) => splitter.for_each_piece(text, |s, e| {
                pieces.push((s, e));
                Ok(())
            })?,
            (None, _, _) if text.is_empty() => {}
            (None, Some(m), _) => pieces.extend(each_before(text, m.replacement)),
            (None, None, Some((marker, symbols))) => pieces.extend(marker_parts(text, marker, symbols)),
            (None, None, None) => pieces.push((0, text.len())),
        }
        Ok(Some(pieces))
    }

    /// [`Self::encode_byte_spans`] with each id's span in chars of `text`, `(first char, last
    /// char + 1)`; `first`: the segment starts the input (`Metaspace`'s `First` scheme). A
    /// `Metaspace` model cuts its pieces from the text with its spaces replaced (each
    /// replacement stands for its space) and its replacement prepended, which, as Hugging Face
    /// prepends, spans the text's first char.
    pub fn encode_char_spans(&self, text: &str, first: bool, length: impl Fn(u32) -> Option<usize>) -> Result<Option<IdsAndSpans>> {
        let Some(m) = &self.split.metaspace else {
            let Some((ids, bytes)) = self.encode_byte_spans(text, length)? else { return Ok(None) };
            let mut index = crate::offsets::Boundaries::new(text.as_bytes());
            return Ok(Some((ids, bytes.into_iter().map(|(f, l)| (index.containing(f), index.containing(l) + 1)).collect())));
        };
        if text.is_empty() {
            return Ok(Some((Vec::new(), Vec::new()))); // nothing to prepend to, as in Hugging Face
        }
        let spaced = m.apply(text, first);
        let lead = spaced.chars().count() - text.chars().count();
        let Some(pieces) = self.cut_pieces(&spaced)? else { return Ok(None) };
        let Some((ids, bytes)) = self.spans_of_pieces(&spaced, pieces, length)? else { return Ok(None) };
        let mut index = crate::offsets::Boundaries::new(spaced.as_bytes());
        let spans = bytes.into_iter().map(|(f, l)| {
            let (a, b) = (index.containing(f), index.containing(l) + 1);
            (a.saturating_sub(lead), b.saturating_sub(lead).max(1))
        });
        Ok(Some((ids, spans.collect())))
    }

    /// [`Self::encode_segment`] of `text` (`first`) and, for each id, the first and last byte of
    /// `text` it stands for, `length` giving each id's bytes of its piece (a subword prefix or
    /// end-of-word suffix not counted). Each piece's ids spell its bytes, so text that a split
    /// stage drops ([`crate::pretokenize::regex_split::MATCHES_ONLY`]) is in no span, and the
    /// space `piece_prefix` puts before a piece belongs to the piece's first byte. `None` where
    /// the pieces are not the text's own bytes ([`Self::piece_ranges`]), or an id has no length
    /// or a piece's ids do not add up to it (a dropped byte). A model over characters without
    /// byte fallback gives its unk token (which `length` must not know) the unknown characters
    /// it stands for ([`CharSymbols::unknown_run`]).
    pub fn encode_byte_spans(&self, text: &str, length: impl Fn(u32) -> Option<usize>) -> Result<Option<IdsAndSpans>> {
        let Some(pieces) = self.piece_ranges(text)? else { return Ok(None) };
        self.spans_of_pieces(text, pieces, length)
    }

    /// The ids of `pieces` of `text` and each id's first and last byte ([`Self::encode_byte_spans`]).
    fn spans_of_pieces(&self, text: &str, pieces: Vec<(usize, usize)>, length: impl Fn(u32) -> Option<usize>) -> Result<Option<IdsAndSpans>> {
        let bytes = text.as_bytes();
        // a model over characters with an unk token and no byte fallback: the unk token stands
        // for the unknown character there (or the run of them, fused)
        let unk = match &self.symbols {
            Symbols::Chars(c) if c.bytes.is_none() && !self.split.piece_prefix => c.unk.map(|u| (u, c)),
            _ => None,
        };
        let (mut ids, mut spans, mut buf) = (Vec::with_capacity(text.len() / 3), Vec::with_capacity(text.len() / 3), Vec::new());
        let spelled = cache::with_bytes(&self.cache, |mut cache| -> Result<bool> {
            for (s, e) in pieces {
                let from = ids.len();
                self.encode_prefixed(&bytes[s..e], &mut buf, &mut ids, &mut cache)?;
                let skip = usize::from(self.split.piece_prefix && bytes[s] != b' ');
                let mut at = 0usize; // in the piece as merged (its prefix space first)
                for &id in &ids[from..] {
                    let n = match (length(id).filter(|&n| n > 0), unk) {
                        (Some(n), _) => n,
                        (None, Some((u, chars))) if id == u => chars.unknown_run(text.get(s..e).unwrap_or_default(), at),
                        _ => return Ok(false),
                    };
                    if n == 0 {
                        return Ok(false);
                    }
                    spans.push((s + at.saturating_sub(skip), s + (at + n - 1).saturating_sub(skip)));
                    at += n;
                }
                if at != e - s + skip {
                    return Ok(false);
                }
            }
            Ok(true)
        })?;
        Ok(spelled.then_some((ids, spans)))
    }

    /// The character a text with no pre-tokenizer may be cut before ([`CharSymbols::marker`]);
    /// never with `ignore_merges`, which looks the whole text up first.
    fn marker(&self) -> Option<(char, &CharSymbols)> {
        match &self.symbols {
            Symbols::Chars(c) if self.whole.is_none() && !self.split.piece_prefix && !self.split.text_prefix && c.affixes.is_none() => {
                c.marker.filter(|m| c.chars.contains_key(m)).map(|m| (m, c))
            }
            _ => None,
        }
    }

    /// Encodes `text[s..e]` from split stage `stage` on: cut by that stage, each part from the
    /// next stage on, and after the last stage through the model. Depth first, so the ids come
    /// in the order of `RegexSplitter::isolate_all`'s pieces. The first short piece on the way
    /// down (`tail` still true) has its tail's ids cached ([`TAIL_CACHE_MAX`]).
    #[allow(clippy::too_many_arguments)]
    fn encode_stages(
        &self,
        text: &str,
        (s, e): (usize, usize),
        stage: usize,
        tail: bool,
        scratch: &mut Stages,
        out: &mut Vec<u32>,
        cache: &mut Option<&mut BytesCache>,
    ) -> Result<()> {
        let stages = &self.split.isolated;
        if s == e {
            return Ok(());
        }
        if stage == stages.len() {
            return self.encode_prefixed(&text.as_bytes()[s..e], &mut scratch.buf, out, cache);
        }
        let cached = tail && e - s <= TAIL_CACHE_MAX && cache.is_some();
        if cached {
            scratch.key.clear();
            scratch.key.extend_from_slice(&[TAIL_KEY, stage as u8]);
            scratch.key.extend_from_slice(&text.as_bytes()[s..e]);
            if let Some(ids) = cache.as_deref().and_then(|c| c.get(&scratch.key)) {
                out.extend_from_slice(ids);
                return Ok(());
            }
        }
        let base = out.len();
        let from = scratch.pieces.len();
        stages[stage].isolate(text, s, e, &mut scratch.pieces)?;
        let to = scratch.pieces.len();
        for i in from..to {
            let part = scratch.pieces[i];
            self.encode_stages(text, part, stage + 1, tail && !cached, scratch, out, cache)?;
        }
        scratch.pieces.truncate(from);
        if cached {
            // nothing below a cached piece touches the key
            if let Some(c) = cache.as_deref_mut() {
                c.insert(&scratch.key, &out[base..]);
            }
        }
        Ok(())
    }

    /// `encode_piece`, after the space `piece_prefix` asks for (and the stages after `ByteLevel`).
    #[inline]
    fn encode_prefixed(&self, piece: &[u8], buf: &mut Vec<u8>, out: &mut Vec<u32>, cache: &mut Option<&mut BytesCache>) -> Result<()> {
        let piece = if self.split.piece_prefix && piece.first() != Some(&b' ') {
            buf.clear();
            buf.push(b' ');
            buf.extend_from_slice(piece);
            &buf[..]
        } else {
            piece
        };
        if self.split.byte_stages.is_empty() {
            self.encode_piece_with(piece, out, cache)
        } else {
            self.encode_byte_stages(piece, out, cache)
        }
    }

    /// `piece` cut by [`Split::byte_stages`], each over the parts of the one before as a string of
    /// its own (Hugging Face's `Sequence`), and each part encoded.
    ///
    /// Performance note: every word paid a string and a pass per stage before its piece cache
    /// was asked (Falcon's layout, English: 15.7 MB/s); a piece of at most [`TAIL_CACHE_MAX`]
    /// bytes now looks its ids up first, as the split stages' tails do.
    fn encode_byte_stages(&self, piece: &[u8], out: &mut Vec<u32>, cache: &mut Option<&mut BytesCache>) -> Result<()> {
        let mut key = [0u8; TAIL_CACHE_MAX + 2];
        let key = (piece.len() <= TAIL_CACHE_MAX && cache.is_some() && piece.first() != Some(&TAIL_KEY)).then(|| {
            key[..2].copy_from_slice(&[TAIL_KEY, BYTE_STAGES_KEY]);
            key[2..piece.len() + 2].copy_from_slice(piece);
            &key[..piece.len() + 2]
        });
        if let Some(ids) = key.and_then(|k| cache.as_deref().and_then(|c| c.get(k))) {
            out.extend_from_slice(ids);
            return Ok(());
        }
        let base = out.len();
        self.cut_by_byte_stages(piece, out, cache)?;
        if let (Some(k), Some(c)) = (key, cache.as_deref_mut()) {
            c.insert(k, &out[base..]);
        }
        Ok(())
    }

    /// [`Self::encode_byte_stages`] without the tail cache.
    fn cut_by_byte_stages(&self, piece: &[u8], out: &mut Vec<u32>, cache: &mut Option<&mut BytesCache>) -> Result<()> {
        let chars: String = piece.iter().map(|&b| BYTE_CHARS[b as usize]).collect();
        let mut parts = RegexSplitter::isolate_all(&self.split.byte_stages, &chars)?;
        parts.retain(|&(s, e)| e > s);
        // (a char of the string is a byte of the piece: its offsets count chars)
        let mut index = crate::offsets::Boundaries::new(chars.as_bytes());
        for (s, e) in parts {
            let (a, b) = (index.index(s), index.index(e));
            self.encode_piece_with(&piece[a..b], out, cache)?;
        }
        Ok(())
    }
}

/// `text` (non-empty) cut before each `marker` that follows another character:
/// `"▁a▁▁b▁c"` -> `"▁a"`, `"▁▁b"`, `"▁c"`. Characters that `symbols` drops (unknown, with
/// neither byte tokens nor an unk token) are looked through: in `"▁x▁"` with `x` dropped the two
/// markers are neighbours, which a merge may join, so no cut there (the `pairbpe` fuzz target's
/// smoke run found the cut, session 21).
fn marker_parts<'a>(text: &'a str, marker: char, symbols: &'a CharSymbols) -> impl Iterator<Item = (usize, usize)> + 'a {
    parts_ending_at(text, move |at| text[..at].chars().rev().find(|&c| !symbols.drops(c)) != Some(marker), marker)
}

/// `text` (non-empty) cut before every `c`: `"a▁▁b"` -> `"a"`, `"▁"`, `"▁b"` (`Metaspace`'s
/// split, Hugging Face's `MergedWithNext`).
fn each_before(text: &str, c: char) -> impl Iterator<Item = (usize, usize)> + '_ {
    parts_ending_at(text, |_| true, c)
}

/// `text` cut before each `c` after its start where `keep(position)`, as `(start, end)` spans.
fn parts_ending_at<'a>(text: &'a str, keep: impl Fn(usize) -> bool + 'a, c: char) -> impl Iterator<Item = (usize, usize)> + 'a {
    let ends = crate::normalizer::char_positions(text, c)
        .filter(move |&at| at > 0 && keep(at))
        .chain(std::iter::once(text.len()));
    ends.scan(0, |start, end| {
        let part = (*start, end);
        *start = end;
        Some(part)
    })
}

/// What `PairBpe::encode_stages` reuses: the pieces of every stage on the way down (a stack),
/// the tail key being looked up, and the buffer of `encode_prefixed`.
struct Stages {
    pieces: Vec<(usize, usize)>,
    key: Vec<u8>,
    buf: Vec<u8>,
}

/// The candidates of a long piece, one queue per merge rank: within a rank, candidates pushed in
/// increasing position (every first pair of the piece, and most later ones) are appended to that
/// rank's queue, whose front alone sits in the heap; any other candidate goes to the heap itself.
/// A pop takes the heap's best; when it was a queue's front, the queue's next one takes its
/// place. The heap then holds one entry per rank in play instead of one per pair.
/// `Candidate::end` (unused by pair merges) marks a queue's front: the queue's index + 1.
struct RankLanes {
    heap: Agenda,
    /// Each rank's queue: its candidates and the index of its front.
    lanes: Vec<(Vec<Candidate>, usize)>,
    /// Score bits -> index in `lanes` (pieces under [`DIRECT_FROM`] symbols).
    by_rank: FxHashMap<u32, u32>,
    /// Merge rank -> lane + 1 (0: none), for long pieces (see [`DIRECT_FROM`]); empty otherwise.
    direct: Vec<u32>,
    /// The last two (score bits, lane) looked up in `by_rank` or `direct`, the latest first:
    /// runs push many candidates of one rank in a row, or alternate between two (a run of one
    /// letter: `aa+a`, `aa+aa`).
    last: [(u32, u32); 2],
    /// The candidate [`UPCOMING`] places behind the last one popped from a queue.
    upcoming: Option<u32>,
}

/// No score in [`RankLanes::last`]: a pair candidate's score bits are `u32::MAX - rank`
/// ([`pair_candidate`]), 0 only for a merge rank of `u32::MAX`, past any merge list.
const NO_SCORE: u32 = 0;

impl Default for RankLanes {
    fn default() -> Self {
        RankLanes {
            heap: Agenda::default(),
            lanes: Vec::new(),
            by_rank: FxHashMap::default(),
            direct: Vec::new(),
            last: [(NO_SCORE, 0); 2],
            upcoming: None,
        }
    }
}

/// How far ahead in a rank's queue [`RankLanes::upcoming`] looks.
const UPCOMING: usize = 8;

impl Queue for RankLanes {
    fn clear(&mut self) {
        self.heap.clear();
        self.lanes.clear();
        self.by_rank.clear();
        self.direct.iter_mut().for_each(|l| *l = 0);
        self.last = [(NO_SCORE, 0); 2];
        self.upcoming = None;
    }

    #[inline(always)]
    fn push(&mut self, c: Candidate) {
        let score = c.score_bits();
        let lane = if self.last[0].0 == score {
            self.last[0].1
        } else if self.last[1].0 == score {
            self.last[1].1
        } else {
            let next = self.lanes.len() as u32;
            let lane = if self.direct.is_empty() {
                *self.by_rank.entry(score).or_insert(next)
            } else {
                let slot = &mut self.direct[(u32::MAX - score) as usize];
                if *slot == 0 {
                    *slot = next + 1;
                }
                *slot - 1
            };
            if lane == next {
                self.lanes.push((Vec::new(), 0));
            }
            self.last = [(score, lane), self.last[0]];
            lane
        };
        let (items, head) = &mut self.lanes[lane as usize];
        match items.last() {
            Some(last) if *head < items.len() && last.left() >= c.left() => self.heap.push(c),
            _ => {
                if *head == items.len() {
                    items.clear();
                    *head = 0;
                    let mut front = c;
                    front.end = lane + 1;
                    self.heap.push(front);
                }
                items.push(c);
            }
        }
    }

    #[inline(always)]
    fn peek_left(&self) -> Option<u32> {
        self.heap.peek_left()
    }

    #[inline(always)]
    fn upcoming(&self) -> Option<u32> {
        self.upcoming
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<Candidate> {
        let mut c = *self.heap.peek()?;
        let next = match c.end {
            0 => None,
            lane => {
                let (items, head) = &mut self.lanes[lane as usize - 1];
                *head += 1;
                self.upcoming = items.get(*head + UPCOMING).map(Candidate::left);
                items.get(*head).map(|&n| {
                    let mut front = n;
                    front.end = lane;
                    front
                })
            }
        };
        match next {
            Some(front) => {
                self.heap.replace_top(front);
            }
            None => {
                self.heap.pop();
            }
        }
        c.end = 0;
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `RankLanes` pops what the plain agenda pops, for any interleaving of pushes (few ranks,
    /// positions mostly rising within a rank, sometimes not) and pops.
    #[test]
    fn rank_lanes_pop_in_the_agendas_order() {
        let mut rng = crate::merge::equivalence_tests::Rng::new(12);
        let mut next = move || rng.next();
        for round in 0..60 {
            let (mut plain, mut lanes) = (Agenda::default(), RankLanes::default());
            lanes.clear();
            let mut pos = 0u32;
            let mut popped = (Vec::new(), Vec::new());
            for _ in 0..(round * 53) % 900 {
                pos = if next() % 6 == 0 { (next() % 1000) as u32 } else { pos + 1 + (next() % 3) as u32 };
                // ranks from 0 (the score next to `u32::MAX`), as the merge makes them
                let c = pair_candidate((next() % (1 + round as u64 % 9)) as u32, pos as usize, (next() % 50) as u32);
                plain.push(c);
                lanes.push(c);
                if next() % 3 == 0 {
                    assert_eq!(plain.peek_left(), lanes.peek_left());
                    popped.0.extend(plain.pop().map(|c| (c.score_bits(), c.left(), c.end)));
                    popped.1.extend(lanes.pop().map(|c| (c.score_bits(), c.left(), c.end)));
                }
            }
            popped.0.extend(std::iter::from_fn(|| plain.pop()).map(|c| (c.score_bits(), c.left(), c.end)));
            popped.1.extend(std::iter::from_fn(|| lanes.pop()).map(|c| (c.score_bits(), c.left(), c.end)));
            assert_eq!(popped.0, popped.1, "round {round}");
        }
    }

    fn model(merges: &[(u32, u32, u32)]) -> PairBpe {
        let mut byte_ids = [0u32; 256];
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            *slot = b as u32;
        }
        let split = Split { splitter: Some(Pretokenizer::new(r"\S+|\s+").unwrap()), isolated: vec![], text_prefix: false, piece_prefix: false, metaspace: None, byte_stages: vec![] };
        PairBpe::new(Symbols::Bytes(byte_ids), merges, None, split).unwrap()
    }

    #[test]
    fn pair_rank_not_merged_rank() {
        // merges: (b,c)->300 rank 0, (a,b)->301 rank 1, (a,300)->302 rank 2.
        // "abc": (b,c) has the lowest pair rank, then (a,bc) -> [302].
        let m = model(&[(98, 99, 300), (97, 98, 301), (97, 300, 302)]);
        assert_eq!(m.merge(b"abc"), vec![302]);
        // leftmost on ties: "aaa" with (a,a)->400 -> [400, a]
        let m = model(&[(97, 97, 400)]);
        assert_eq!(m.merge(b"aaa"), vec![400, 97]);
        assert_eq!(m.encode("aaa aaaa").unwrap(), vec![400, 97, 32, 400, 400]);
        // a dropped byte joins its neighbours: "a\x01a" -> [400]
        let mut m = model(&[(97, 97, 400)]);
        if let Symbols::Bytes(ids) = &mut m.symbols {
            ids[1] = DROP;
        }
        assert_eq!(m.merge(b"a\x01a"), vec![400]);
    }

    /// The flat merge of short pieces gives the heap merge's ids: random merge lists over four
    /// letters (so pieces merge a lot, with ties of one pair at several places), every length
    /// below `FLAT_BELOW`.
    #[test]
    fn flat_merge_equals_the_heap() {
        let mut rng = crate::merge::equivalence_tests::Rng::new(21);
        for round in 0..200 {
            let mut merges = Vec::new();
            let mut ids: Vec<u32> = b"abcd".iter().map(|&b| b as u32).collect();
            let mut seen = std::collections::HashSet::new();
            for _ in 0..1 + rng.below(40) {
                let (a, b) = (ids[rng.below(ids.len())], ids[rng.below(ids.len())]);
                if seen.insert((a, b)) {
                    let m = 300 + merges.len() as u32;
                    merges.push((a, b, m));
                    ids.push(m);
                }
            }
            let m = model(&merges);
            for n in 1..FLAT_BELOW {
                let piece: Vec<u8> = (0..n).map(|_| b"abcd"[rng.below(4)]).collect();
                let symbols: Vec<u32> = piece.iter().map(|&b| b as u32).collect();
                let mut flat = Vec::new();
                m.merge_flat(&mut symbols.clone(), &mut flat);
                assert_eq!(flat, m.merge_all(symbols), "round {round}, piece {:?}", String::from_utf8_lossy(&piece));
            }
        }
    }

    /// The thread's piece cache keeps each model's pieces apart and goes with its model.
    #[test]
    fn piece_caches_per_model() {
        let (merged, plain) = (model(&[(97, 98, 300)]), model(&[]));
        for _ in 0..3 {
            assert_eq!(merged.encode("ab ab").unwrap(), vec![300, 32, 300]);
            assert_eq!(plain.encode("ab ab").unwrap(), vec![97, 98, 32, 97, 98]);
        }
        let owner = merged.cache.owner();
        assert_eq!(cache::cached(owner, b"ab"), (true, Some(vec![300])));
        drop(merged);
        assert!(!cache::cached(owner, b"ab").0);
        assert!(!cache::is_live(owner));
        assert_eq!(plain.encode("ab").unwrap(), vec![97, 98]);
    }

    /// A `Sequence` of splits caches the ids of a short piece's whole tail under its stage: the
    /// same bytes at another stage have another tail. Stage 0 (`a$|b`) cuts "aa" off the end of
    /// a longer piece, which stage 1 (`c`) leaves alone and stage 2 (`d`) too, so it merges to
    /// "aa" (300); the text "aa" alone is cut by stage 0 into "a", "a".
    #[test]
    fn split_sequences_cache_each_stages_tail_apart() {
        let mut byte_ids = [0u32; 256];
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            *slot = b as u32;
        }
        let stages = ["a$|b", "c", "d"].map(String::from);
        let split = Split { splitter: None, isolated: RegexSplitter::all(&stages).unwrap(), text_prefix: false, piece_prefix: false, metaspace: None, byte_stages: vec![] };
        let m = PairBpe::new(Symbols::Bytes(byte_ids), &[(97, 97, 300)], None, split).unwrap();
        let long = format!("{}aab", "c".repeat(40));
        let want_long: Vec<u32> = std::iter::repeat_n(99, 40).chain([300, 98]).collect();
        for _ in 0..3 {
            assert_eq!(m.encode(&long).unwrap(), want_long);
            assert_eq!(m.encode("aa").unwrap(), vec![97, 97]);
            assert_eq!(m.encode("xaab").unwrap(), vec![120, 300, 98]);
        }
        let key = |stage: u8, bytes: &[u8]| [&[TAIL_KEY, stage][..], bytes].concat();
        assert_eq!(cache::cached(m.cache.owner(), &key(2, b"aa")).1, Some(vec![300]));
        assert_eq!(cache::cached(m.cache.owner(), &key(0, b"aa")).1, Some(vec![97, 97]));
        assert_eq!(cache::cached(m.cache.owner(), &key(0, b"xaab")).1, Some(vec![120, 300, 98]));
        // a raw piece that starts with the tail key's byte is encoded, not cached
        let mut out = Vec::new();
        m.encode_piece(&key(0, b"aa"), &mut out).unwrap();
        assert_eq!(out, vec![255, 0, 300]);
        assert_eq!(cache::cached(m.cache.owner(), &key(0, b"aa")).1, Some(vec![97, 97]));
    }

    /// The budget: 0 turns the cache off, and setting it empties every thread's cache. (A piece
    /// that is one token is answered from `tokens` once known, so the pieces here are not.)
    #[test]
    fn piece_cache_budget() {
        let m = model(&[(97, 98, 300)]);
        let first = m.cache.owner();
        assert_eq!(m.encode("abb abb").unwrap(), vec![300, 98, 32, 300, 98]);
        assert_eq!(cache::cached(first, b"abb"), (true, Some(vec![300, 98])));
        m.set_cache_capacity(0);
        assert_eq!(m.cache_capacity(), 0);
        assert!(!cache::cached(first, b"abb").0, "the old cache is dropped");
        assert_eq!(m.encode("abb abb").unwrap(), vec![300, 98, 32, 300, 98]);
        assert!(!cache::cached(m.cache.owner(), b"abb").0, "no cache with a budget of 0");
        m.set_cache_capacity(1 << 10);
        assert_eq!(m.encode("abb abb").unwrap(), vec![300, 98, 32, 300, 98]);
        assert_eq!(cache::cached(m.cache.owner(), b"abb"), (true, Some(vec![300, 98])));
    }

    /// A piece that is one token: its first merge is cached and tells `tokens`, which answers it
    /// from then on, also with the cache off; a token whose bytes merge into other ids never is.
    #[test]
    fn pieces_that_are_one_token() {
        // "ab" = a + b; "abc" = ab + c, but b + c merges first, so "abc" encodes as a + bc
        let m = model(&[(98, 99, 301), (97, 98, 300), (300, 99, 302)]);
        let t = m.tokens.as_ref().unwrap();
        assert!(matches!(t.find(b"ab"), Some(crate::merge::tokens::Whole::Unknown(300))));
        assert!(t.find(b"a").is_none() && t.find(b"xy").is_none());
        assert_eq!(m.encode("ab abc").unwrap(), vec![300, 32, 97, 301]);
        assert!(matches!(t.find(b"ab"), Some(crate::merge::tokens::Whole::Alone(300))));
        assert!(t.find(b"abc").is_none(), "its merge gives other ids");
        assert!(matches!(t.find(b"bc"), Some(crate::merge::tokens::Whole::Unknown(301))), "learnt from pieces only");
        m.set_cache_capacity(0);
        for _ in 0..2 {
            assert_eq!(m.encode("abc ab bc").unwrap(), vec![97, 301, 32, 300, 32, 301]);
        }
        assert!(matches!(t.find(b"bc"), Some(crate::merge::tokens::Whole::Alone(301))));
    }

    /// Thousands of split stages (a hostile file) neither overflow the stack nor change the ids:
    /// past `MAX_TAIL_STAGES` they run one after the other.
    #[test]
    fn many_split_stages_run_without_recursion() {
        let mut byte_ids = [0u32; 256];
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            *slot = b as u32;
        }
        for n in [MAX_TAIL_STAGES, MAX_TAIL_STAGES + 1, 5000] {
            let stages: Vec<String> = (0..n).map(|i| if i % 2 == 0 { "b".to_string() } else { "c+".to_string() }).collect();
            let split = Split { splitter: None, isolated: RegexSplitter::all(&stages).unwrap(), text_prefix: false, piece_prefix: false, metaspace: None, byte_stages: vec![] };
            let m = PairBpe::new(Symbols::Bytes(byte_ids), &[(97, 97, 300)], None, split).unwrap();
            let text = "aabaaccaa".repeat(20);
            // cut at every "b" and run of "c": "aa" merges, nothing else does
            let want: Vec<u32> = std::iter::repeat_n([300, 98, 300, 99, 99, 300], 20).flatten().collect();
            for _ in 0..2 {
                assert_eq!(m.encode(&text).unwrap(), want, "{n} stages");
            }
        }
    }

    #[test]
    fn byte_level_alphabet() {
        assert_eq!(byte_level_bytes("\u{120}a\u{10a}"), Some(vec![b' ', b'a', b'\n']));
        assert_eq!(byte_level_bytes("\u{100}\u{143}"), Some(vec![0, 173]));
        assert_eq!(byte_level_bytes("\u{144}"), None);
    }

    #[test]
    fn repeated_merge_is_an_error() {
        let split = Split { splitter: Some(Pretokenizer::new(r"\S+").unwrap()), isolated: vec![], text_prefix: false, piece_prefix: false, metaspace: None, byte_stages: vec![] };
        assert!(PairBpe::new(Symbols::Bytes([0; 256]), &[(1, 2, 3), (1, 2, 4)], None, split).is_err());
    }

    #[test]
    fn marker_parts_cut_before_a_marker_after_another_character() {
        // x is dropped (no token, no byte tokens, no unk): it does not separate two markers
        let symbols = CharSymbols {
            chars: [('a', 0), ('b', 1), ('c', 2), ('\u{2581}', 3)].into_iter().collect(),
            bytes: None,
            unk: None,
            fuse_unk: false,
            marker: Some('\u{2581}'),
            affixes: None,
        };
        let parts = |t: &str| marker_parts(t, '\u{2581}', &symbols).map(|(s, e)| t[s..e].to_string()).collect::<Vec<_>>();
        assert_eq!(parts("\u{2581}a\u{2581}\u{2581}b\u{2581}c"), ["\u{2581}a", "\u{2581}\u{2581}b", "\u{2581}c"]);
        assert_eq!(parts("ab"), ["ab"]);
        assert_eq!(parts("a\u{2581}"), ["a", "\u{2581}"]);
        assert_eq!(parts("\u{2581}\u{2581}"), ["\u{2581}\u{2581}"]);
        assert_eq!(parts("\u{2581}x\u{2581}a\u{2581}"), ["\u{2581}x\u{2581}a", "\u{2581}"]);
        assert_eq!(parts("ax\u{2581}"), ["ax", "\u{2581}"]);
        // with an unk token nothing is dropped
        let with_unk = CharSymbols { unk: Some(9), chars: symbols.chars.clone(), ..symbols };
        let parts = |t: &str| marker_parts(t, '\u{2581}', &with_unk).map(|(s, e)| t[s..e].to_string()).collect::<Vec<_>>();
        assert_eq!(parts("\u{2581}x\u{2581}a"), ["\u{2581}x", "\u{2581}a"]);
        let each = |t: &str| each_before(t, '\u{2581}').map(|(s, e)| t[s..e].to_string()).collect::<Vec<_>>();
        assert_eq!(each("a\u{2581}\u{2581}b\u{2581}"), ["a", "\u{2581}", "\u{2581}b", "\u{2581}"]);
        assert_eq!(each("\u{2581}x"), ["\u{2581}x"]);
    }

    #[test]
    fn metaspace_prepends_as_its_scheme_says() {
        let m = |prepend| Metaspace { replacement: '\u{2581}', prepend, split: true };
        assert_eq!(m(Prepend::Always).apply("a b", false), "\u{2581}a\u{2581}b");
        assert_eq!(m(Prepend::First).apply("a b", false), "a\u{2581}b");
        assert_eq!(m(Prepend::First).apply("a b", true), "\u{2581}a\u{2581}b");
        assert_eq!(m(Prepend::Never).apply(" a", true), "\u{2581}a");
        assert_eq!(m(Prepend::Always).apply(" a", true), "\u{2581}a");
        assert_eq!(m(Prepend::Always).apply("\u{2581}a", true), "\u{2581}a");
    }

    /// A `Metaspace` model's char spans: each replacement spans its space, the prefix the
    /// text's first char, a byte-fallback token the char its byte is in.
    #[test]
    fn metaspace_char_spans() {
        let mut bytes = [DROP; 256];
        bytes[0xC3] = 4;
        bytes[0xA9] = 5;
        let chars = CharSymbols {
            chars: [('a', 0), ('b', 1), ('\u{2581}', 6)].into_iter().collect(),
            bytes: Some(bytes),
            unk: Some(3),
            fuse_unk: true,
            marker: None,
            affixes: None,
        };
        let metaspace = Some(Metaspace { replacement: '\u{2581}', prepend: Prepend::First, split: true });
        let split = Split { splitter: None, isolated: vec![], text_prefix: false, piece_prefix: false, metaspace, byte_stages: vec![] };
        let m = PairBpe::new(Symbols::Chars(chars), &[(0, 1, 2), (6, 2, 7)], None, split).unwrap();
        let length = |i: u32| [1, 1, 2, 0, 1, 1, 3, 5].get(i as usize).copied().filter(|&n| n > 0);
        let (ids, spans) = m.encode_char_spans("ab \u{e9} ab", true, length).unwrap().unwrap();
        assert_eq!(ids, vec![7, 6, 4, 5, 7]);
        assert_eq!(spans, vec![(0, 2), (2, 3), (3, 4), (3, 4), (4, 7)]);
        // not the first segment: no prefix, so the spans are the text's own
        let (ids, spans) = m.encode_char_spans("ab ab", false, length).unwrap().unwrap();
        assert_eq!((ids, spans), (vec![2, 7], vec![(0, 2), (2, 5)]));
        assert_eq!(m.encode_char_spans("", true, length).unwrap(), Some((vec![], vec![])));
        assert_eq!(m.encode_byte_spans("ab", length).unwrap(), None); // (the bytes of a Metaspace model's pieces are not the text's)
    }

    #[test]
    fn character_symbols_with_byte_fallback_and_unk() {
        // tokens: a=0 b=1 ab=2 <unk>=3, <0xC3>=4 <0xA9>=5 (é), no byte tokens for €
        let mut bytes = [DROP; 256];
        bytes[0xC3] = 4;
        bytes[0xA9] = 5;
        let chars = |fallback: bool, fuse: bool| CharSymbols {
            chars: [('a', 0), ('b', 1)].into_iter().collect(),
            bytes: fallback.then_some(bytes),
            unk: Some(3),
            fuse_unk: fuse,
            marker: None,
            affixes: None,
        };
        let split = || Split { splitter: None, isolated: vec![], text_prefix: false, piece_prefix: false, metaspace: None, byte_stages: vec![] };
        let m = PairBpe::new(Symbols::Chars(chars(true, true)), &[(0, 1, 2)], None, split()).unwrap();
        assert_eq!(m.encode("abé€€a b").unwrap(), vec![2, 4, 5, 3, 0, 3, 1]); // the space is unknown too
        let m = PairBpe::new(Symbols::Chars(chars(false, false)), &[(0, 1, 2)], None, split()).unwrap();
        assert_eq!(m.encode("ab€€é").unwrap(), vec![2, 3, 3, 3]);
        // a pending unk waits for the next known character, after byte tokens
        let m = PairBpe::new(Symbols::Chars(chars(true, true)), &[], None, split()).unwrap();
        assert_eq!(m.encode("€éa").unwrap(), vec![4, 5, 3, 0]);
    }

    /// A byte's first symbol by its place in the piece (CLIP's `</w>`): ids 0-255 a byte alone,
    /// +256 inside (prefix), +512 last (prefix and suffix), +768 a piece of one byte (suffix).
    fn affixed(merges: &[(u32, u32, u32)], split: Split) -> PairBpe {
        let table = |base: u32| std::array::from_fn(|b| base + b as u32);
        let affixed = Affixed { first: table(0), middle: table(256), last: table(512), only: table(768) };
        PairBpe::new(Symbols::Affixed(Box::new(affixed)), merges, None, split).unwrap()
    }

    #[test]
    fn affixed_symbols_take_the_piece_ends_forms() {
        let split = Split { splitter: Some(Pretokenizer::new(r"\S+").unwrap()), isolated: vec![], text_prefix: false, piece_prefix: false, metaspace: None, byte_stages: vec![] };
        // "ab</w>" = a + b</w>; "ab" = a + ##b; "abc</w>" = ab + ##c</w>
        let (a, b, c) = (97, 98, 99);
        let m = affixed(&[(a, 512 + b, 1000), (a, 256 + b, 1001), (1001, 512 + c, 1002)], split);
        assert_eq!(m.encode("ab abc a abd").unwrap(), vec![1000, 1002, 768 + a, 1001, 512 + 100]);
        // a dropped last byte leaves the byte before it in its inside form
        let mut m = affixed(&[(a, 512 + b, 1000)], Split { splitter: None, isolated: vec![], text_prefix: false, piece_prefix: false, metaspace: None, byte_stages: vec![] });
        if let Symbols::Affixed(t) = &mut m.symbols {
            t.last[b'x' as usize] = DROP;
        }
        assert_eq!(m.merge(b"abx"), vec![a, 256 + b]);
        assert_eq!(m.merge(b"ab"), vec![1000]);
        // the same piece long enough for the heap merge: no linear merge, no one-token table
        assert!(m.linear.is_none() && m.tokens.is_none());
        let long: Vec<u8> = b"ab".repeat(FLAT_BELOW);
        let mut want = vec![a];
        want.extend((1..long.len() - 1).map(|i| 256 + long[i] as u32));
        want.push(512 + b);
        assert_eq!(m.merge(&long), want); // (no merge joins two inside forms)
    }

    /// A split stage that keeps only its matches drops the text between them, from spans too.
    #[test]
    fn a_stage_of_matches_only_drops_the_gaps() {
        let stage = format!("{}[a-z]+", crate::pretokenize::regex_split::MATCHES_ONLY);
        let split = Split { splitter: None, isolated: RegexSplitter::all(&[stage]).unwrap(), text_prefix: false, piece_prefix: true, metaspace: None, byte_stages: vec![] };
        let byte_ids: [u32; 256] = std::array::from_fn(|b| b as u32);
        let m = PairBpe::new(Symbols::Bytes(byte_ids), &[(32, 97, 300), (98, 99, 301)], None, split).unwrap();
        // pieces "a", "bc", "x" (each after the prefix space), the rest dropped
        let text = "a, bc  X1 x";
        let want = vec![300, 32, 301, 32, 120];
        assert_eq!(m.encode(text).unwrap(), want);
        let (ids, spans) = m.encode_byte_spans(text, |i| Some(if i == 300 || i == 301 { 2 } else { 1 })).unwrap().unwrap();
        assert_eq!(ids, want);
        // the prefix space belongs to its piece's first byte
        assert_eq!(spans, vec![(0, 0), (3, 3), (3, 4), (10, 10), (10, 10)]);
        // lengths that do not add up to a piece: no spans
        assert_eq!(m.encode_byte_spans(text, |_| Some(1)).unwrap(), None);
    }

    /// A model over characters: its unk token spans the unknown character it stands for, or
    /// with `fuse_unk` the run of them.
    #[test]
    fn an_unk_token_spans_its_unknown_characters() {
        for fuse_unk in [false, true] {
            let stage = format!("{}\\S+", crate::pretokenize::regex_split::MATCHES_ONLY);
            let split = Split { splitter: None, isolated: RegexSplitter::all(&[stage]).unwrap(), text_prefix: false, piece_prefix: false, metaspace: None, byte_stages: vec![] };
            let chars: FxHashMap<char, u32> = [('a', 1), ('b', 2)].into_iter().collect();
            let symbols = Symbols::Chars(CharSymbols { chars, bytes: None, unk: Some(0), fuse_unk, marker: None, affixes: None });
            let m = PairBpe::new(symbols, &[(1, 2, 3)], None, split).unwrap();
            let text = "ab \u{e9}\u{4e2d}a \u{e9}";
            let (ids, spans) = m.encode_byte_spans(text, |i| Some([0, 1, 1, 2][i as usize])).unwrap().unwrap();
            if fuse_unk {
                assert_eq!(ids, vec![3, 0, 1, 0]);
                assert_eq!(spans, vec![(0, 1), (3, 7), (8, 8), (10, 11)]);
            } else {
                assert_eq!(ids, vec![3, 0, 0, 1, 0]);
                assert_eq!(spans, vec![(0, 1), (3, 4), (5, 7), (8, 8), (10, 11)]);
            }
        }
    }

    /// Stages after `ByteLevel` cut each piece's byte-level string: `Digits` there takes 0xB2,
    /// the second byte of `²`, as the char `²` (Falcon's pre-tokenizer), and the bytes of one
    /// char may land in two parts.
    #[test]
    fn byte_stages_cut_the_byte_level_string() {
        let byte_stages = RegexSplitter::all(&[crate::pretokenize::known::DIGITS_CONTIGUOUS.to_string(), "[0-9][0-9][0-9]".into()]).unwrap();
        let split = Split { splitter: Some(Pretokenizer::new(r"\S+|\s+").unwrap()), isolated: vec![], text_prefix: false, piece_prefix: false, metaspace: None, byte_stages };
        let byte_ids: [u32; 256] = std::array::from_fn(|b| b as u32);
        // merges that the cuts must prevent: (0xC2, 0xB2) and ("4", "5")
        let m = PairBpe::new(Symbols::Bytes(byte_ids), &[(0xC2, 0xB2, 300), (b'4' as u32, b'5' as u32, 301)], None, split).unwrap();
        assert_eq!(m.encode("x\u{b2} 12345").unwrap(), vec![b'x' as u32, 0xC2, 0xB2, 32, 49, 50, 51, 301]);
        // with no stage after ByteLevel both merges apply
        let split = Split { splitter: Some(Pretokenizer::new(r"\S+|\s+").unwrap()), isolated: vec![], text_prefix: false, piece_prefix: false, metaspace: None, byte_stages: vec![] };
        let m = PairBpe::new(Symbols::Bytes(byte_ids), &[(0xC2, 0xB2, 300), (b'4' as u32, b'5' as u32, 301)], None, split).unwrap();
        assert_eq!(m.encode("x\u{b2} 12345").unwrap(), vec![b'x' as u32, 300, 32, 49, 50, 51, 301]);
        assert_eq!(BYTE_CHARS[0xB2], '\u{b2}');
        assert_eq!(BYTE_CHARS[b' ' as usize], '\u{120}');
        assert!((0..=255u8).all(|b| byte_level_bytes(&BYTE_CHARS[b as usize].to_string()) == Some(vec![b])));
    }
}
