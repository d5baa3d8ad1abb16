//! The o200k family (o200k_base, o200k_harmony): seven alternatives, tried in order.
//!
//! 1. `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
//! 2. `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
//! 3. `\p{N}{1,3}`
//! 4. ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
//! 5. `\s*[\r\n]+`, 6. `\s+(?!\S)`, 7. `\s+`
//!
//! Call the two letter classes "upper" (U) and "lower" (W); Lm, Lo and marks are in both. The
//! backtracking that alternative 1 does is the subtle part: its greedy `U*` gives back chars until
//! a W char follows, so the match ends after the W run that starts right after the U run, or, if
//! there is none, right after the *last* char of the U run that is also W. Only if neither exists
//! does the regex give up the optional prefix char (which can matter only when that char is a
//! mark, itself in U and W) and then fall through to alternative 2.
//!
//! Two paths: [`ascii_start`] decides the common ASCII shapes (` word`, `Word`, `ABC`, `,`,
//! spaces) from bytes alone, and [`general`] tries the alternatives in order for everything else.

use super::unicode::{Tables, L, MULTI, N, S, U, W};
use super::{
    char_at, contraction_folded, digit_run, flags_or_end, run_any, run_bytes, run_none, ws_newline_first,
};

/// The end of the piece starting at `i`.
#[inline(always)]
pub(super) fn piece_end(t: &Tables, b: &[u8], i: usize) -> usize {
    let x = b[i];
    let f = t.byte(x);
    if f & MULTI == 0 {
        if let Some(end) = ascii_start(t, b, i, x, f) {
            return end;
        }
    }
    general(t, b, i)
}

/// A piece that starts with an ASCII char (flags `f`), decided without decoding a char when the
/// letter run it may prefix starts, and its uppercase part ends, at ASCII bytes: the common
/// English shapes `word`, ` word`, `Word`, `.Word`, `ABC`, punctuation, spaces, digits. None of
/// alternative 1's backtracking cases can arise, since they need a char that is both U and W and
/// no ASCII char is. `None` (a non-ASCII char where the letter run would start or go on) sends
/// the start to [`general`], which decides it from scratch.
#[inline(always)]
fn ascii_start(t: &Tables, b: &[u8], i: usize, x: u8, f: u8) -> Option<usize> {
    // The letter run starts at `i` (an ASCII letter) or after the ASCII prefix char `x`; digits
    // and newlines, which cannot prefix one, go to `general`.
    let p = if f & L != 0 {
        i
    } else if f & N == 0 && x != b'\r' && x != b'\n' {
        i + 1
    } else {
        return None;
    };
    // ASCII uppercase letters are U and not W, so `U*` takes all of them and gives none back.
    let mut j = p;
    while j < b.len() && b[j].is_ascii_uppercase() {
        j += 1;
    }
    match b.get(j) {
        Some(&y) if y.is_ascii_lowercase() => Some(with_contraction(t, b, run_any(t, b, j, W))),
        Some(&y) if y >= 0x80 => None,
        // The uppercase run ends at an ASCII non-letter or the end: `U+W*` with an empty `W*`.
        _ if j > p => Some(with_contraction(t, b, j)),
        // `x` is a prefix char and no letter follows it.
        _ => Some(not_letters(t, b, i, x, f)),
    }
}

/// Any start: the alternatives in the regex's order. Kept out of line: it is the rarer path
/// once [`ascii_start`] takes the ASCII shapes, and inlined it made the callers' loops bigger.
#[inline(never)]
fn general(t: &Tables, b: &[u8], i: usize) -> usize {
    let x = b[i];
    let (f, n) = char_at(t, b, i);
    // `[^\r\n\p{L}\p{N}]?`: may this char be the optional prefix of alternatives 1 and 2?
    let prefix = x != b'\r' && x != b'\n' && f & (L | N) == 0;
    // The four ways a letter piece can match, in the regex's order. Plain `if`s rather than an
    // `Option::or_else` chain: the closures were not inlined and cost a call with spilled
    // captures per piece (the o200k splitter took 3.5x the cl100k one's time on code).
    if prefix {
        if let Some(end) = upper_then_lower(t, b, i + n) {
            return with_contraction(t, b, end);
        }
    }
    if f & (U | W) != 0 {
        if let Some(end) = upper_then_lower(t, b, i) {
            return with_contraction(t, b, end);
        }
    }
    if prefix {
        if let Some(end) = upper_run(t, b, i + n) {
            return with_contraction(t, b, end);
        }
    }
    if f & U != 0 {
        if let Some(end) = upper_run(t, b, i) {
            return with_contraction(t, b, end);
        }
    }
    if f & N != 0 {
        return digit_run(t, b, i + n, 3);
    }
    not_letters(t, b, i, x, f)
}

/// Alternatives 4 to 7 at `i` (flags `f`, first byte `x`), once the letter and digit
/// alternatives have failed there.
#[inline(always)]
fn not_letters(t: &Tables, b: &[u8], i: usize, x: u8, f: u8) -> usize {
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    if f & S == 0 {
        return run_bytes(b, run_none(t, b, i, L | N | S), b"\r\n/");
    }
    if x == b' ' && flags_or_end(t, b, i + 1) & (L | N | S) == 0 && i + 1 < b.len() {
        return run_bytes(b, run_none(t, b, i + 1, L | N | S), b"\r\n/");
    }
    ws_newline_first(t, b, i)
}

/// `U*W+` from `p` (alternative 1 without prefix and contraction): the end, if it matches.
#[inline(always)]
fn upper_then_lower(t: &Tables, b: &[u8], p: usize) -> Option<usize> {
    let mut j = p;
    // End of the last char of the U run that is also W (where `W+` can end after backtracking).
    let mut last_both = None;
    // The flags and length of the char that ends the U run (0 at the end of the text).
    let (mut g, mut m) = (0, 0);
    while j < b.len() {
        (g, m) = char_at(t, b, j);
        if g & U == 0 {
            break;
        }
        j += m;
        if g & W != 0 {
            last_both = Some(j);
        }
        g = 0;
    }
    // That char decoded once: if it is W, `W+` runs on after it.
    if g & W != 0 {
        Some(run_any(t, b, j + m, W))
    } else {
        last_both
    }
}

/// `U+W*` from `p` (alternative 2 without prefix and contraction): the end, if it matches.
#[inline(always)]
fn upper_run(t: &Tables, b: &[u8], p: usize) -> Option<usize> {
    let j = run_any(t, b, p, U);
    (j > p).then(|| run_any(t, b, j, W))
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` after a letter run ending at `end`.
#[inline(always)]
fn with_contraction(t: &Tables, b: &[u8], end: usize) -> usize {
    if b.get(end) == Some(&b'\'') {
        contraction_folded(t, b, end).unwrap_or(end)
    } else {
        end
    }
}
