//! `CoreBpe`: pre-tokenize → merge, with special tokens, decoding and the unstable-suffix logic of
//! tiktoken's `encode_with_unstable`. Pure Rust; the binding in `py/` only converts types.

use crate::error::{Error, Result};
use crate::merge::cache::{self, CacheSlot, PieceCache};
use crate::merge::backtrack::lazy::{worth_partial, Built, LazyTables};
use crate::merge::backtrack::{Backtrack, ByteSet};
use crate::merge::{byte_pair_encode_with, small, Ranks, LINEAR_THRESHOLD};
use crate::pretokenize::Pretokenizer;
use crate::special::Specials;
use crate::vocab::{Rank, Vocab};
use rustc_hash::FxHashSet;
use std::sync::{Arc, OnceLock};

/// Pieces of at least this many bytes are not merged whole by [`CoreBpe::truncate`] (a text with
/// no split point is one piece): the cut is searched from their start (`CoreBpe::longest_cut`).
pub const TRUNCATE_LONG_PIECE: usize = if cfg!(any(test, feature = "fuzzing")) { 256 } else { 64 << 10 };

/// Where `CoreBpe::truncate_once` cut: after its ids, or at the start of a piece too long to merge
/// whole (the text before it fits).
enum Cut {
    At(usize),
    LongPiece(usize),
}

/// Marks the first id of each piece in [`CoreBpe::unmerged_into`]'s output (bit 31).
pub const PIECE_START: Rank = 1 << 31;

/// Retries of [`CoreBpe::truncate`] that shrink its budget by one id; later ones double the step.
pub const TRUNCATE_RETRIES: usize = 8;

/// How many ids [`CoreBpe::truncate`]'s retry number `retries` takes off its budget.
pub fn truncate_step(retries: usize) -> usize {
    match retries.checked_sub(TRUNCATE_RETRIES) {
        None => 1,
        Some(past) => 1 << (past + 1).min(40),
    }
}

#[derive(Debug, Clone)]
pub struct CoreBpe {
    pub vocab: Vocab,
    pub specials: Specials,
    pub pretokenizer: Pretokenizer,
    /// All ordinary token bytes, sorted (for completion search in `encode_with_unstable`).
    sorted_token_bytes: OnceLock<Vec<Vec<u8>>>,
    /// Tables of the linear merge, built once long pieces arrive.
    linear: LazyTables,
    /// This encoder's per-thread pre-token caches: their identity and byte budget.
    cache: CacheSlot,
}

impl CoreBpe {
    pub fn new(ranks: Ranks, specials: Vec<(String, Rank)>, pattern: &str) -> Result<Self> {
        let pretokenizer = Pretokenizer::new(pattern)?;
        let vocab = Vocab::new(ranks, &specials)?;
        Self::with_vocab(pretokenizer, vocab, specials)
    }

    /// From a parsed rank file (`rankfile::parse_flat`), which is never hashed into a map.
    pub fn from_flat(flat: crate::rankfile::Flat, specials: Vec<(String, Rank)>, pattern: &str) -> Result<Self> {
        let pretokenizer = Pretokenizer::new(pattern)?;
        let vocab = Vocab::from_flat(flat, &specials)?;
        Self::with_vocab(pretokenizer, vocab, specials)
    }

    fn with_vocab(pretokenizer: Pretokenizer, vocab: Vocab, specials: Vec<(String, Rank)>) -> Result<Self> {
        let specials = Specials::new(specials)?;
        Ok(CoreBpe {
            vocab,
            specials,
            pretokenizer,
            sorted_token_bytes: Default::default(),
            linear: LazyTables::default(),
            cache: CacheSlot::new(cache::DEFAULT_CAPACITY_BYTES),
        })
    }

    /// Sets the per-thread pre-token cache budget in bytes (0 turns the cache off) and empties the
    /// caches of every thread: the encoder takes a new cache identity, this thread drops the old
    /// one's cache at once and other threads (a batch's pool) prune it when they next meet the
    /// new identity.
    pub fn set_cache_capacity(&self, bytes: usize) {
        self.cache.set_capacity(bytes)
    }

    pub fn cache_capacity(&self) -> usize {
        self.cache.capacity()
    }

    /// The linear merge's tables if `piece` should use them (see [`LazyTables::for_piece`]).
    fn linear_for(&self, piece: &[u8]) -> Option<Arc<Backtrack>> {
        self.linear.for_piece(piece, None, |set, partial| {
            let tokens = self.tokens_over(set);
            if partial && !worth_partial(tokens.len(), self.vocab.n_ordinary()) {
                return Built::NotWorth;
            }
            Built::from(Backtrack::from_tokens(&tokens, set))
        })
    }

    /// The ordinary tokens made only of bytes in `set`, with their ranks, in rank order.
    fn tokens_over(&self, set: &ByteSet) -> Vec<(Rank, &[u8])> {
        (0..self.vocab.n_ids() as Rank)
            .filter_map(|id| self.vocab.ordinary_bytes(id).filter(|b| set.covers(b)).map(|b| (id, b)))
            .collect()
    }

    /// Whether the linear merge's tables are built (`Some(false)`: the vocabulary does not suit
    /// them and the heap merge is used), or `None` if not yet.
    pub fn linear_tables(&self) -> Option<bool> {
        self.linear.full_built()
    }

    /// How many sub-vocabulary tables of the linear merge are built.
    pub fn partial_linear_tables(&self) -> usize {
        self.linear.partial_count()
    }

    /// Merges one piece that is not itself a token, appending its ids.
    #[inline]
    fn merge_into(&self, piece: &[u8], out: &mut Vec<Rank>) -> Result<()> {
        let linear = if piece.len() >= LINEAR_THRESHOLD { self.linear_for(piece) } else { None };
        byte_pair_encode_with(&self.vocab.fast, self.vocab.max_token_len, linear.as_deref(), piece, out)
    }

    /// BPE of arbitrary non-token bytes as one piece.
    fn merge(&self, piece: &[u8]) -> Result<Vec<Rank>> {
        let mut out = Vec::new();
        if !piece.is_empty() {
            self.merge_into(piece, &mut out)?;
        }
        Ok(out)
    }

    /// Encodes one piece, appending ids; returns how many ids it produced.
    #[inline]
    fn encode_piece(&self, piece: &[u8], out: &mut Vec<Rank>, cache: &mut Option<&mut PieceCache>) -> Result<usize> {
        if let Some(t) = self.vocab.rank(piece) {
            out.push(t);
            return Ok(1);
        }
        self.encode_non_token(piece, out, cache)
    }

    /// Encodes a piece that is not a token: two to four bytes directly, else from the pre-token
    /// cache or merged (and cached).
    #[inline]
    fn encode_non_token(&self, piece: &[u8], out: &mut Vec<Rank>, cache: &mut Option<&mut PieceCache>) -> Result<usize> {
        // Two to four bytes take at most two merges and the pair that spans the whole piece is
        // never looked up: cheaper than a cache probe. Two bytes (`" \0"` in cl100k and o200k, a
        // third of the pieces of `"a\0 \0"` repeated; src/PERFORMANCE.md, "Sixth round") are
        // their byte tokens, inline (out of line cost that text 4–7%); three and four bytes (most
        // pieces of mixed-case letters, "Twenty-sixth round") out of line.
        let tiny = match piece.len() {
            2 => small::encode_tiny(&self.vocab.fast, piece, out),
            3..=4 => self.encode_tiny(piece, out),
            _ => None,
        };
        if let Some(n) = tiny {
            return Ok(n);
        }
        let cacheable = piece.len() <= cache::MAX_CACHED_PIECE && cache.as_deref_mut().is_some_and(|c| c.active());
        let hash = if cacheable { cache::hash_of(piece) } else { 0 };
        if let (true, Some(c)) = (cacheable, cache.as_deref_mut()) {
            if let Some(n) = c.get_into(piece, hash, out) {
                return Ok(n);
            }
        }
        let before = out.len();
        self.merge_into(piece, out)?;
        if let (true, Some(c)) = (cacheable, cache.as_deref_mut()) {
            c.insert(piece, hash, &out[before..], self.cache_capacity());
        }
        Ok(out.len() - before)
    }

    /// [`small::encode_tiny`] for three and four bytes, out of line: inlined, it grew the
    /// splitter's loop it sits in (callgrind: +2.2M instructions a pass over the English corpus,
    /// whose 3- and 4-byte pieces that are not a token are few).
    #[inline(never)]
    fn encode_tiny(&self, piece: &[u8], out: &mut Vec<Rank>) -> Option<usize> {
        small::encode_tiny(&self.vocab.fast, piece, out)
    }

    /// Runs `f` with this thread's pre-token cache for this encoder (if enabled and free).
    #[inline]
    fn with_cache<R>(&self, f: impl FnOnce(Option<&mut PieceCache>) -> R) -> R {
        cache::with_cache(&self.cache, f)
    }

    /// Encodes text with no special-token handling; appends to `out` and returns the number of
    /// ids of the last piece (on an error, `out` may hold the ids of the pieces before it).
    pub fn encode_ordinary_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<usize> {
        let bytes = text.as_bytes();
        let mut last = 0;
        self.with_cache(|mut cache| {
            self.pretokenizer.for_each_piece(text, |s, e| {
                last = self.encode_piece(&bytes[s..e], out, &mut cache)?;
                Ok(())
            })
        })?;
        Ok(last)
    }

    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<Rank>> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.encode_ordinary_into(text, &mut out)?;
        Ok(out)
    }

    /// What a merge run elsewhere starts from (`bpekit.torch`): each piece of `text` as its one id
    /// when it is a token (the piece [`Self::encode_ordinary`] takes whole), else as the ids of its
    /// bytes, with [`PIECE_START`] set on the piece's first id; appended to `out`. A byte without
    /// a token is [`Error::NoToken`]. Ids are below 2^31 (the vocabulary refuses larger ones), so
    /// the mark hides none.
    pub fn unmerged_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<()> {
        let bytes = text.as_bytes();
        self.pretokenizer.for_each_piece(text, |s, e| {
            let piece = &bytes[s..e];
            let at = out.len();
            match self.vocab.rank(piece) {
                Some(t) => out.push(t),
                None => {
                    for &b in piece {
                        out.push(self.vocab.rank(&[b]).ok_or_else(|| Error::NoToken(vec![b]))?);
                    }
                }
            }
            debug_assert!(out[at..].iter().all(|&t| t < PIECE_START));
            if let Some(first) = out.get_mut(at) {
                *first |= PIECE_START;
            }
            Ok(())
        })
    }

    /// Counts tokens without keeping them.
    pub fn count_ordinary(&self, text: &str) -> Result<usize> {
        let bytes = text.as_bytes();
        let mut n = 0;
        let mut scratch = Vec::with_capacity(64);
        self.with_cache(|mut cache| {
            self.pretokenizer.for_each_piece(text, |s, e| {
                scratch.clear();
                n += self.encode_piece(&bytes[s..e], &mut scratch, &mut cache)?;
                Ok(())
            })
        })?;
        Ok(n)
    }

    /// Encodes with special tokens; `allowed[i]` says whether special `i` may be matched.
    /// Returns the ids and the number of ids of the last ordinary piece (0 after a special).
    pub fn encode(&self, text: &str, allowed: &[bool]) -> Result<(Vec<Rank>, usize)> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        let last = self.encode_into(text, allowed, &mut out)?;
        Ok((out, last))
    }

    /// [`CoreBpe::encode`], appending to `out` (on an error, `out` may hold the ids before it).
    pub fn encode_into(&self, text: &str, allowed: &[bool], out: &mut Vec<Rank>) -> Result<usize> {
        let bytes = text.as_bytes();
        let mut start = 0;
        let mut last = 0;
        loop {
            let next = self.specials.find_allowed(bytes, start, allowed);
            let end = next.map_or(text.len(), |f| f.start);
            if end > start {
                last = self.encode_ordinary_into(&text[start..end], out)?;
            }
            match next {
                Some(f) => {
                    out.push(f.id);
                    start = f.end;
                    last = 0;
                }
                None => break,
            }
        }
        Ok(last)
    }

    pub fn count(&self, text: &str, allowed: &[bool]) -> Result<usize> {
        if !allowed.iter().any(|&a| a) {
            return self.count_ordinary(text);
        }
        let bytes = text.as_bytes();
        let mut start = 0;
        let mut n = 0;
        loop {
            let next = self.specials.find_allowed(bytes, start, allowed);
            let end = next.map_or(text.len(), |f| f.start);
            if end > start {
                n += self.count_ordinary(&text[start..end])?;
            }
            match next {
                Some(f) => {
                    n += 1;
                    start = f.end;
                }
                None => return Ok(n),
            }
        }
    }

    /// The length in bytes of the text of the first `k` ids of `encode(text, allowed)`, `k` the
    /// largest up to `max` whose text ends on a character boundary and encodes to at most `max`
    /// ids: the text that fits a budget of `max` tokens. Only that prefix is split and merged
    /// (twice: a second pass counts it), and the piece that crosses the budget: truncating a long
    /// document costs what its first `max` tokens cost. A piece of [`TRUNCATE_LONG_PIECE`] bytes
    /// or more (a text with no split point) is not merged whole: the cut is searched from its
    /// start ([`CoreBpe::longest_cut`]), so the work stays set by the budget.
    ///
    /// Encoding the prefix alone nearly always gives those ids again: the ids kept of the piece
    /// cut last are BPE of their bytes alone (no merge crossed their end, so none inside them
    /// changes; hence whole tokens: cut inside a token, the bytes left merge otherwise, into
    /// more tokens, as the `round_trip` fuzz target found). But the splitter may cut the end of
    /// the shorter text otherwise: `\s+(?!\S)` takes a whole run of spaces at the end of a text
    /// where the full text left its last space to the next word (fewer ids), and o200k's
    /// contraction suffix takes `" I'T"` whole where `" I'"` alone splits in two (more ids; the
    /// fuzz target again). So the prefix is counted, and while it takes more than `max` ids the
    /// budget shrinks: by one id at a time (the excess can jump over budgets that fit: where every
    /// `"xy'T"` is `["xy'", "T"]` and `"xy'"` alone three ids, shrinking by the excess of 2 from an
    /// odd budget only meets odd ones, down to the empty text), and past [`TRUNCATE_RETRIES`]
    /// tries by steps that double, so a text built to make cut after cut split into more ids
    /// costs a few dozen passes over the prefix at most (and may keep less than would fit).
    pub fn truncate(&self, text: &str, allowed: &[bool], max: usize) -> Result<usize> {
        let (mut budget, mut retries) = (max, 0);
        loop {
            // (a search assumes the text before the long piece fits: counted with the rest)
            let end = match self.truncate_once(text, allowed, budget)? {
                Cut::At(end) => end,
                Cut::LongPiece(start) => self.longest_cut(text, allowed, budget, start)?,
            };
            if self.count(&text[..end], allowed)? <= max {
                return Ok(end); // (at the latest with a budget of 0: the empty text)
            }
            budget = budget.saturating_sub(truncate_step(retries));
            retries += 1;
        }
    }

    /// The longest `text[..end]`, `end` a character boundary past `from`, that encodes to at most
    /// `max` ids (with `text[..from]` fitting): a window past `from` that doubles until it takes
    /// more, then a binary search for an end that fits where one character more does not. For a
    /// piece too long to merge whole ([`TRUNCATE_LONG_PIECE`]): each count cuts the piece at the
    /// window, so the work depends on the budget (`bpekit.encoding.longest_cut` is the same
    /// search over characters, for the cuts that cannot walk pieces).
    fn longest_cut(&self, text: &str, allowed: &[bool], max: usize, from: usize) -> Result<usize> {
        let fits = |end: usize| -> Result<bool> { Ok(self.count(&text[..end], allowed)? <= max) };
        let char_end = |mut at: usize| {
            while !text.is_char_boundary(at) {
                at += 1; // (at most 3 bytes)
            }
            at
        };
        let (mut lo, mut width) = (from, 8 * max + 64);
        let mut hi = char_end((from + width).min(text.len()));
        while fits(hi)? {
            if hi == text.len() {
                return Ok(hi);
            }
            (lo, width) = (hi, 2 * width);
            hi = char_end((from + width).min(text.len()));
        }
        // fits(lo), not fits(hi): halve over the character boundaries strictly between them
        loop {
            // the midpoint rounded up to a character boundary, or (where that is `lo` or `hi`: a
            // character spans the middle) the boundary right after `lo`
            let mid = match char_end(lo + (hi - lo) / 2) {
                mid if mid == lo || mid >= hi => char_end(lo + 1),
                mid => mid,
            };
            if mid >= hi {
                return Ok(lo);
            }
            if fits(mid)? {
                lo = mid;
            } else {
                hi = mid;
            }
        }
    }

    /// Where [`CoreBpe::truncate_once`] cut, or the start of a piece too long to merge whole.
    fn truncate_once(&self, text: &str, allowed: &[bool], max: usize) -> Result<Cut> {
        let bytes = text.as_bytes();
        let (mut start, mut n, mut end) = (0, 0, 0);
        let mut ids = Vec::with_capacity(64);
        let mut long = None;
        while n < max {
            let next = self.specials.find_allowed(bytes, start, allowed);
            let stop = next.map_or(text.len(), |f| f.start);
            if stop > start {
                let walk = self.with_cache(|mut cache| {
                    self.pretokenizer.for_each_piece(&text[start..stop], |s, e| {
                        if e - s >= TRUNCATE_LONG_PIECE {
                            long = Some(start + s); // not merged whole: searched (`longest_cut`)
                            return Err(Error::Stopped);
                        }
                        ids.clear();
                        let k = self.encode_piece(&bytes[start + s..start + e], &mut ids, &mut cache)?;
                        if n + k <= max {
                            (n, end) = (n + k, start + e);
                            return if n < max { Ok(()) } else { Err(Error::Stopped) };
                        }
                        // the kept ids of this piece, up to the last that ends on a character boundary
                        let mut at = start + s;
                        end = at;
                        for &t in &ids[..max - n] {
                            at += self.vocab.token_bytes(t).map_or(0, <[u8]>::len);
                            if text.is_char_boundary(at) {
                                end = at;
                            }
                        }
                        n = max;
                        Err(Error::Stopped)
                    })
                });
                match walk {
                    Ok(()) | Err(Error::Stopped) => {}
                    Err(e) => return Err(e),
                }
                if let Some(at) = long {
                    return Ok(Cut::LongPiece(at));
                }
            }
            match next {
                Some(f) if n < max => (n, end, start) = (n + 1, f.end, f.end),
                _ => break,
            }
        }
        debug_assert!(text.is_char_boundary(end));
        Ok(Cut::At(end))
    }

    /// BPE of arbitrary bytes as one piece (no regex).
    pub fn encode_single_piece(&self, piece: &[u8]) -> Result<Vec<Rank>> {
        if let Some(t) = self.vocab.rank(piece) {
            return Ok(vec![t]);
        }
        self.merge(piece)
    }

    pub fn decode_bytes(&self, tokens: &[Rank]) -> Result<Vec<u8>> {
        self.vocab.decode(tokens)
    }

    /// [`CoreBpe::decode_bytes`], appending to `out`.
    pub fn decode_bytes_into(&self, tokens: &[Rank], out: &mut Vec<u8>) -> Result<()> {
        self.vocab.decode_into(tokens, out)
    }

    /// tiktoken's "quick and dirty fix" for splits that can disappear when text is appended
    /// (`\s*[\r\n]+` in cl100k): extend the last piece backwards over whitespace-only tokens.
    fn increase_last_piece_token_len(&self, tokens: &[Rank], mut last: usize) -> usize {
        let all_space = |t: Rank| {
            self.vocab
                .ordinary_bytes(t)
                .is_some_and(|b| b.iter().all(|c| matches!(c, b' ' | b'\n' | b'\t')))
        };
        if last > 0 && all_space(tokens[tokens.len() - last]) {
            while last < tokens.len() && all_space(tokens[tokens.len() - last - 1]) {
                last += 1;
            }
        }
        last
    }

    /// Encodes bytes that may not be valid UTF-8 (tiktoken's `_encode_bytes`): the valid prefix is
    /// encoded as text, the rest BPE-merged together with the last (unstable) piece.
    pub fn encode_bytes(&self, bytes: &[u8]) -> Result<Vec<Rank>> {
        match std::str::from_utf8(bytes) {
            Ok(text) => self.encode_ordinary(text),
            Err(e) => {
                let valid = e.valid_up_to();
                // SAFETY-free: re-validate the prefix, which from_utf8 just proved valid.
                let text = std::str::from_utf8(&bytes[..valid]).map_err(|e| Error::Format(e.to_string()))?;
                let none = vec![false; self.specials.tokens.len()];
                let (mut tokens, last) = self.encode(text, &none)?;
                let last = self.increase_last_piece_token_len(&tokens, last);
                let mut unstable;
                if !tokens.is_empty() && last > 0 {
                    unstable = self.decode_bytes(&tokens[tokens.len() - last..])?;
                    unstable.extend_from_slice(&bytes[valid..]);
                    tokens.truncate(tokens.len() - last);
                } else {
                    unstable = bytes[valid..].to_vec();
                }
                if !unstable.is_empty() {
                    tokens.extend(self.encode_single_piece(&unstable)?);
                }
                Ok(tokens)
            }
        }
    }

    fn sorted_token_bytes(&self) -> &[Vec<u8>] {
        self.sorted_token_bytes.get_or_init(|| {
            let v = &self.vocab;
            let mut v: Vec<Vec<u8>> = (0..v.n_ids() as Rank).filter_map(|id| v.ordinary_bytes(id).map(<[u8]>::to_vec)).collect();
            v.sort_unstable();
            v
        })
    }

    /// All ordinary tokens, sorted by bytes (`token_byte_values`).
    pub fn token_byte_values(&self) -> Vec<Vec<u8>> {
        self.sorted_token_bytes().to_vec()
    }

    /// tiktoken's `encode_with_unstable`: the stable tokens, and every token sequence that could
    /// complete the unstable suffix.
    pub fn encode_with_unstable(
        &self,
        text: &str,
        allowed: &[bool],
    ) -> Result<(Vec<Rank>, FxHashSet<Vec<Rank>>)> {
        let (mut tokens, last) = self.encode(text, allowed)?;
        let mut completions = FxHashSet::default();
        if last == 0 {
            return Ok((tokens, completions));
        }
        let last = self.increase_last_piece_token_len(&tokens, last);
        let unstable = self.decode_bytes(&tokens[tokens.len() - last..])?;
        tokens.truncate(tokens.len() - last);
        if unstable.is_empty() {
            return Ok((tokens, completions));
        }
        let sorted = self.sorted_token_bytes();
        // single tokens that start with the unstable bytes
        let mut point = sorted.partition_point(|x| x.as_slice() < unstable.as_slice());
        while point < sorted.len() && sorted[point].starts_with(&unstable) {
            completions.insert(vec![self.vocab.rank(&sorted[point]).ok_or_else(|| Error::NoToken(sorted[point].clone()))?]);
            point += 1;
        }
        // a token straddling each other split position: re-encode prefix + token
        for i in 1..unstable.len() {
            let (prefix, suffix) = unstable.split_at(i);
            let mut point = sorted.partition_point(|x| x.as_slice() < suffix);
            while point < sorted.len() && sorted[point].starts_with(suffix) {
                let possibility = [prefix, sorted[point].as_slice()].concat();
                let encoded = match std::str::from_utf8(&possibility) {
                    Ok(s) => self.encode_ordinary(s)?,
                    Err(_) => self.merge(&possibility)?,
                };
                let mut seq = Vec::new();
                let mut seq_len = 0;
                for t in encoded {
                    seq.push(t);
                    seq_len += self.vocab.token_bytes(t).map_or(0, |b| b.len());
                    if seq_len >= unstable.len() {
                        break;
                    }
                }
                completions.insert(seq);
                point += 1;
            }
        }
        // `\s+(?!\S)` can make a split appear inside trailing whitespace
        if unstable.len() > 1 {
            if let Some((c, clen)) = last_char(&unstable) {
                if unstable.len() > clen && c.is_whitespace() {
                    let cut = unstable.len() - clen;
                    let mut re = self.merge(&unstable[..cut])?;
                    re.extend(self.merge(&unstable[cut..])?);
                    completions.insert(re);
                }
            }
        }
        Ok((tokens, completions))
    }
}

/// The last UTF-8 character of `b` and its byte length, if `b` ends in a valid one.
fn last_char(b: &[u8]) -> Option<(char, usize)> {
    for len in 1..=4.min(b.len()) {
        if let Ok(s) = std::str::from_utf8(&b[b.len() - len..]) {
            return s.chars().next_back().map(|c| (c, len));
        }
    }
    None
}

#[cfg(test)]
#[path = "core_piece_tests.rs"]
mod piece_tests;

#[cfg(test)]
#[path = "core_linear_tests.rs"]
mod linear_tests;

#[cfg(test)]
mod cache_reset_tests {
    use super::*;

    /// Bytes of this thread's pre-token cache for `bpe` (0 when it has none).
    fn cached_bytes(bpe: &CoreBpe) -> usize {
        bpe.with_cache(|c| c.map_or(0, |c| c.memory_bytes()))
    }

    #[test]
    fn setting_the_budget_empties_every_threads_cache() {
        let ranks: Ranks = (0..=255u8).map(|b| (vec![b], Rank::from(b))).chain([(b"ab".to_vec(), 256)]).collect();
        let bpe = CoreBpe::new(ranks, vec![], r"\S+|\s+").unwrap();
        let pool = crate::parallel::pool(2);
        // pieces of five and six bytes: shorter ones that are not a token skip the cache
        let text = "ab abcde abcdef ".repeat(50);
        let filled = pool.broadcast(|_| {
            bpe.encode_ordinary(&text).unwrap();
            cached_bytes(&bpe)
        });
        assert!(filled.iter().all(|&b| b > 0), "{filled:?}");
        bpe.set_cache_capacity(cache::DEFAULT_CAPACITY_BYTES);
        assert_eq!(pool.broadcast(|_| cached_bytes(&bpe)), vec![0, 0]);
        assert_eq!(cached_bytes(&bpe), 0);
    }
}
