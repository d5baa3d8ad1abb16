//! EXAONE MoE's pattern (llama.cpp's `exaone-moe`), whose letters take whole phrases:
//!
//! `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}|
//!  ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+`, or with llama.cpp's ASCII contractions.
//!
//! - The letter alternative is a letter, then letters, marks, and single spaces (U+0020) that a
//!   letter follows: `the cat sat` is one piece. Its loops are greedy and nothing follows them,
//!   so the match is the longest such run. It may start with one char that is not a line end, a
//!   letter or a number (a space, a quote, a mark) when a letter follows that char.
//! - Punctuation takes at most one `\r`, `\n` or `/` after its run (a `/` is in the run already).
//! - `\s*[\r\n]` ends where Llama 3's `\s*[\r\n]+` does (after the run's last line end).
//!
//! fancy-regex ran the pattern on its backtracking VM (a repeated group of more than one char,
//! which the compiled matcher does not take): 51 MB/s of English (`src/PERFORMANCE.md`,
//! "Twenty-third round").

use super::unicode::{Tables, L, M, N};
use super::{char_at, contraction_ascii, contraction_folded, punctuation, ws_newline_first};

/// The pattern with `(?i:...)` contractions, as the model's `tokenizer.json` writes it.
pub const EXAONE_MOE: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+";
/// The pattern with llama.cpp's ASCII contractions (which differ only on `'ſ`).
pub const EXAONE_MOE_ASCII: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+";

/// The end of the piece starting at `i`, with ASCII contractions if `ASCII`.
#[inline(always)]
pub(super) fn piece_end<const ASCII: bool>(t: &Tables, b: &[u8], i: usize) -> usize {
    let x = b[i];
    if x == b'\'' {
        let contraction = if ASCII { contraction_ascii(b, i) } else { contraction_folded(t, b, i) };
        if let Some(end) = contraction {
            return end;
        }
    }
    let (f, n) = char_at(t, b, i);
    if f & L != 0 {
        return phrase(t, b, i + n);
    }
    if f & N != 0 {
        return i + n;
    }
    if x == b'\r' || x == b'\n' {
        return ws_newline_first(t, b, i);
    }
    // the char at `i` may prefix a phrase; the next char serves that rule and punctuation's
    let (g, m) = if i + n < b.len() { char_at(t, b, i + n) } else { (0, 0) };
    if g & L != 0 {
        return phrase(t, b, i + n + m);
    }
    match punctuation(t, b, i, (x, f, n), (g, m), b"") {
        Some(end) if end < b.len() && matches!(b[end], b'\r' | b'\n') => end + 1,
        Some(end) => end,
        None => ws_newline_first(t, b, i),
    }
}

/// The end of a phrase whose first letter ends at `i`: letters, marks, and spaces before a letter.
#[inline(always)]
fn phrase(t: &Tables, b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        let x = b[i];
        if x == b' ' {
            if i + 1 < b.len() {
                let (g, m) = char_at(t, b, i + 1);
                if g & L != 0 {
                    i += 1 + m;
                    continue;
                }
            }
            return i;
        }
        let (f, n) = char_at(t, b, i);
        if f & (L | M) == 0 {
            return i;
        }
        i += n;
    }
    i
}
