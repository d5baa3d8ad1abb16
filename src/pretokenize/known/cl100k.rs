//! The cl100k family: tiktoken's cl100k_base and its two non-possessive relatives.
//!
//! - cl100k_base: `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|
//!   ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
//! - Llama 3: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//!   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
//! - Qwen2: Llama 3 with `\p{N}` instead of `\p{N}{1,3}`.
//!
//! The possessive quantifiers change nothing here (nothing after them can fail), and
//! `\s*[\r\n]` ends where `\s*[\r\n]+` does (at the last newline of the whitespace run). The one
//! real difference is cl100k's `\s++$`: a whitespace run that reaches the end of the text is one
//! piece even when it contains a newline (`"a\n  "` is `a`, `\n  ` in cl100k but `a`, `\n`, `  `
//! in Llama 3).

use super::unicode::{Tables, L, N, S};
use super::{
    char_at, contraction_folded, digit_run, flags_or_end, run_any, run_bytes, run_none, ws_newline_first,
    ws_run,
};

/// The end of the piece starting at `i`. `MAX_DIGITS` is 3 (cl100k, Llama 3) or 1 (Qwen2);
/// `END_FIRST` selects cl100k's `\s++$` rule.
#[inline(always)]
pub(super) fn piece_end<const MAX_DIGITS: usize, const END_FIRST: bool>(
    t: &Tables,
    b: &[u8],
    i: usize,
) -> usize {
    let x = b[i];
    if x == b'\'' {
        if let Some(end) = contraction_folded(t, b, i) {
            return end;
        }
    }
    let (f, n) = char_at(t, b, i);
    if f & L != 0 {
        return run_any(t, b, i, L);
    }
    if f & N != 0 {
        return digit_run(t, b, i + n, MAX_DIGITS);
    }
    // `[^\r\n\p{L}\p{N}]?\p{L}+`: any other char, whitespace included, prefixes a letter run.
    if x != b'\r' && x != b'\n' && flags_or_end(t, b, i + n) & L != 0 {
        return run_any(t, b, i + n, L);
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
    if f & S == 0 {
        return run_bytes(b, run_none(t, b, i, L | N | S), b"\r\n");
    }
    if x == b' ' && i + 1 < b.len() && flags_or_end(t, b, i + 1) & (L | N | S) == 0 {
        return run_bytes(b, run_none(t, b, i + 1, L | N | S), b"\r\n");
    }
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
