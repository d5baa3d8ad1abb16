//! The cl100k family: tiktoken's cl100k_base and its two non-possessive relatives.
//!
//! - cl100k_base: `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|
//!   ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
//! - Llama 3: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//!   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
//! - Qwen2: Llama 3 with `\p{N}` instead of `\p{N}{1,3}`.
//! - Seed-Coder (`TRAIL` off): Qwen2 with nothing after punctuation (`[^\s\p{L}\p{N}\r\n]+`,
//!   `\p{N}{1}`).
//! - Qwen 3.5 (`MARKS`): Qwen2 with `[\p{L}\p{M}]+` letter runs and `[^\s\p{L}\p{M}\p{N}]`
//!   punctuation. A mark starts a letter run as a letter does: as the prefix, or without it, the
//!   run ends where the run of letters and marks from the mark ends.
//! - ufakzeka (`CONTRACTIONS` off): Qwen2 without its first alternative, so `'` is the prefix
//!   of the letter run after it (`'sa` is one piece, where Qwen2 cuts `'s`, `a`).
//!
//! The possessive quantifiers change nothing here (nothing after them can fail), and
//! `\s*[\r\n]` ends where `\s*[\r\n]+` does (at the last newline of the whitespace run). The one
//! real difference is cl100k's `\s++$`: a whitespace run that reaches the end of the text is one
//! piece even when it contains a newline (`"a\n  "` is `a`, `\n  ` in cl100k but `a`, `\n`, `  `
//! in Llama 3).
//!
//! Each start is decided with each char decoded once (2026-11-26, src/PERFORMANCE.md "Eighth
//! round: the cl100k splitter on non-ASCII text"): the char after a possible prefix is decoded
//! once and serves both the letter rule and the punctuation rule, and a letter run whose first
//! char is multi-byte stays in `run_any_multi`'s multi-byte loop instead of `run_any`'s SWAR word
//! test per char. Split alone (`split_bench --hand-only --only=Cl100k`, MB/s, three alternated
//! runs): bible non-Latin 372-382 -> 636-664, tatoeba 463 -> 625-626, random Unicode 261-266 ->
//! 305-313, bible 506-524 -> 587-612, tinyshakespeare unchanged (738); Llama 3 and Qwen2 alike.

use super::unicode::{Tables, L, M, N, S};
use super::{char_at, contraction_folded, digit_run, punctuation_but, run_any, run_any_multi, ws_newline_first, ws_run};

/// The end of the piece starting at `i`. `MAX_DIGITS` is 3 (cl100k, Llama 3) or 1 (Qwen2, Qwen
/// 3.5, Seed-Coder, ufakzeka); `END_FIRST` selects cl100k's `\s++$` rule, `MARKS` Qwen 3.5's
/// classes, `TRAIL` the `[\r\n]*` after punctuation (all but Seed-Coder) and `CONTRACTIONS`
/// the first alternative `(?i:'s|'t|...)` (all but ufakzeka).
#[inline(always)]
pub(super) fn piece_end<const MAX_DIGITS: usize, const END_FIRST: bool, const MARKS: bool, const TRAIL: bool, const CONTRACTIONS: bool>(
    t: &Tables,
    b: &[u8],
    i: usize,
) -> usize {
    let x = b[i];
    if CONTRACTIONS && x == b'\'' {
        if let Some(end) = contraction_folded(t, b, i) {
            return end;
        }
    }
    let letters = if MARKS { L | M } else { L };
    let (f, n) = char_at(t, b, i);
    if f & letters != 0 {
        return letter_run(t, b, i + n, n, letters);
    }
    if f & N != 0 {
        return digit_run(t, b, i + n, MAX_DIGITS);
    }
    if x == b'\r' || x == b'\n' {
        return whitespace::<END_FIRST>(t, b, i);
    }
    // The char at `i` may prefix a letter run (`[^\r\n\p{L}\p{N}]?\p{L}+`): the next char is
    // decoded once, for that rule and for the punctuation rule after it.
    let (g, m) = if i + n < b.len() { char_at(t, b, i + n) } else { (0, 0) };
    if g & letters != 0 {
        return letter_run(t, b, i + n + m, m, letters);
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n]*` (Qwen 3.5: `[^\s\p{L}\p{M}\p{N}]`)
    let trail: &[u8] = if TRAIL { b"\r\n" } else { b"" };
    punctuation_but(t, b, i, (x, f, n), (g, m), trail, letters | N | S).unwrap_or_else(|| whitespace::<END_FIRST>(t, b, i))
}

/// The end of a letter run whose first char, `n` bytes long, ends at `i`: a run that starts with
/// a multi-byte char (a word of a non-Latin script) goes on in the multi-byte loop.
#[inline(always)]
fn letter_run(t: &Tables, b: &[u8], i: usize, n: usize, letters: u8) -> usize {
    if n == 1 {
        run_any(t, b, i, letters)
    } else {
        run_any_multi(t, b, i, letters)
    }
}

/// `\s++$|\s*[\r\n]|\s+(?!\S)|\s` (cl100k, `END_FIRST`) or `\s*[\r\n]+|\s+(?!\S)|\s+` at the start
/// of a whitespace run.
#[inline(always)]
fn whitespace<const END_FIRST: bool>(t: &Tables, b: &[u8], i: usize) -> usize {
    if END_FIRST {
        let r = ws_run(t, b, i);
        match r.last_newline {
            _ if r.end == b.len() => r.end,
            Some(nl) => nl + 1,
            None if r.last == i => r.end,
            None => r.last,
        }
    } else {
        ws_newline_first(t, b, i)
    }
}
