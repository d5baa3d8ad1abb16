//! The o200k family (o200k_base, o200k_harmony; Mistral's Tekken: `DIGITS` 1 for its `\p{N}`, no
//! contractions; Kimi K2: `KIMI`, a first alternative `[\p{Han}]+`, Han left out of the two letter
//! classes, `[\r\n]*` after punctuation): seven alternatives, tried in order.
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
//! spaces) from bytes alone, and [`general`] decides everything else with each char decoded once.
//!
//! What makes [`general`] one pass (2026-11-26, src/PERFORMANCE.md "Eighth round"): when
//! alternative 1 fails from a position, alternative 2 from the same position ends where the U run
//! ends, so one scan ([`letters`]) answers both; the only prefix chars that are U or W are marks,
//! and for a mark the regex's order reduces to "alternative 1 after it, else the mark alone"; the
//! char after a prefix is decoded once and handed on to the punctuation rule. A W run that starts
//! after a non-ASCII char stays in a multi-byte loop. Split alone (`split_bench --hand-only
//! --only=O200k`, MB/s, three alternated runs): bible non-Latin 413-424 -> 587 (+40%), tatoeba
//! 521-522 -> 581-604, random Unicode 236-242 -> 266-269, bible 524-525 -> 571-587,
//! tinyshakespeare unchanged (661-687 -> 665-703); the two-byte table in `unicode.rs` included.

use super::unicode::{Tables, HAN, L, MULTI, N, S, U, W};
use super::{
    char_at, contraction_ascii, contraction_folded, digit_run, flags_or_end, punctuation, run_any_but, run_any_multi_but, run_bytes,
    run_none, ws_newline_first,
};

/// Kimi's letter classes leave Han out (`[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]`): the
/// flags and length of the char at `i`, a Han char's without U and W.
#[inline(always)]
fn char_k<const KIMI: bool>(t: &Tables, b: &[u8], i: usize) -> (u8, usize) {
    let (f, n) = char_at(t, b, i);
    (if KIMI && f & HAN != 0 { f & !(U | W) } else { f }, n)
}

/// What stops a letter run besides its class: Han chars for Kimi.
const fn but<const KIMI: bool>() -> u8 {
    if KIMI {
        HAN
    } else {
        0
    }
}

/// The bytes that may follow punctuation: o200k's `[\r\n/]*`, Kimi's `[\r\n]*`.
const fn trail<const KIMI: bool>() -> &'static [u8] {
    if KIMI {
        b"\r\n"
    } else {
        b"\r\n/"
    }
}

/// Kimi's first alternative `[\p{Han}]+` from `i` on: the end of the run of Han chars.
#[inline(always)]
fn han_run(t: &Tables, b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        let (f, n) = char_at(t, b, i);
        if f & HAN == 0 {
            break;
        }
        i += n;
    }
    i
}

/// The end of the piece starting at `i`.
#[inline(always)]
pub(super) fn piece_end<const DIGITS: usize, const CONTRACTIONS: u8, const KIMI: bool>(t: &Tables, b: &[u8], i: usize) -> usize {
    let x = b[i];
    let f = t.byte(x);
    if f & MULTI == 0 {
        if let Some(end) = ascii_start::<CONTRACTIONS, KIMI>(t, b, i, x, f) {
            return end;
        }
    } else if KIMI {
        let (g, n) = char_at(t, b, i);
        if g & HAN != 0 {
            return han_run(t, b, i + n);
        }
    }
    general::<DIGITS, CONTRACTIONS, KIMI>(t, b, i)
}

/// A piece that starts with an ASCII char (flags `f`), decided without decoding a char when the
/// letter run it may prefix starts, and its uppercase part ends, at ASCII bytes: the common
/// English shapes `word`, ` word`, `Word`, `.Word`, `ABC`, punctuation, spaces, digits. None of
/// alternative 1's backtracking cases can arise, since they need a char that is both U and W and
/// no ASCII char is. `None` (a non-ASCII char where the letter run would start or go on) sends
/// the start to [`general`], which decides it from scratch.
#[inline(always)]
fn ascii_start<const CONTRACTIONS: u8, const KIMI: bool>(t: &Tables, b: &[u8], i: usize, x: u8, f: u8) -> Option<usize> {
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
    // After an uppercase letter, eight bytes at once where the text has them: the uppercase
    // run and the lowercase run after it, which ends the piece where the byte after it is ASCII
    // (a branch per letter mispredicts on mixed case). Most words start lowercase and go
    // straight to the lowercase run below.
    let mut j = p;
    if b.get(p).is_some_and(u8::is_ascii_uppercase) {
        if let Some(w) = b.get(p..p + 8) {
            let (u, l) = super::swar::upper_lower([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            let end = p + u + l;
            if l > 0 && u + l < 8 && b[end] < 0x80 {
                return Some(with_contraction::<CONTRACTIONS>(t, b, end));
            }
            j = p + u;
        }
        while j < b.len() && b[j].is_ascii_uppercase() {
            j += 1;
        }
    }
    match b.get(j) {
        Some(&y) if y.is_ascii_lowercase() => Some(with_contraction::<CONTRACTIONS>(t, b, run_any_but(t, b, j, W, but::<KIMI>()))),
        Some(&y) if y >= 0x80 => None,
        // The uppercase run ends at an ASCII non-letter or the end: `U+W*` with an empty `W*`.
        _ if j > p => Some(with_contraction::<CONTRACTIONS>(t, b, j)),
        // `x` is a prefix char and no letter follows it.
        _ => Some(not_letters::<KIMI>(t, b, i, x, f)),
    }
}

/// Any start, decided with each char decoded once: the alternatives in the regex's order, with
/// those that the first two chars' flags rule out skipped. Kept out of line: it is the rarer path
/// once [`ascii_start`] takes the ASCII shapes, and inlined it made the callers' loops bigger.
#[inline(never)]
fn general<const DIGITS: usize, const CONTRACTIONS: u8, const KIMI: bool>(t: &Tables, b: &[u8], i: usize) -> usize {
    let x = b[i];
    let (f, n) = char_k::<KIMI>(t, b, i);
    // A letter cannot be the prefix, and every letter is U or W: alternative 1 or 2 matches here.
    if f & L != 0 {
        let run = letters::<KIMI>(t, b, i, f, n);
        return with_contraction::<CONTRACTIONS>(t, b, run.lower_end.unwrap_or(run.upper_end));
    }
    // A digit is neither a prefix nor U or W (no char is both N and L or M).
    if f & N != 0 {
        return digit_run(t, b, i + n, DIGITS);
    }
    if x == b'\r' || x == b'\n' {
        return ws_newline_first(t, b, i);
    }
    // The char at `i` is the optional prefix `[^\r\n\p{L}\p{N}]`; the only such chars that are U
    // or W are marks (both U and W).
    let (g, m) = if i + n < b.len() { char_k::<KIMI>(t, b, i + n) } else { (0, 0) };
    if g & (U | W) != 0 {
        let run = letters::<KIMI>(t, b, i + n, g, m);
        if let Some(end) = run.lower_end {
            return with_contraction::<CONTRACTIONS>(t, b, end);
        }
        // Alternative 1 without the prefix, for a mark: `U*` takes the mark and the U run after
        // it, none of which is W, and gives them back down to the mark, which `W+` takes.
        if f & (U | W) != 0 {
            return with_contraction::<CONTRACTIONS>(t, b, i + n);
        }
        // Alternative 2 with the prefix: the run from `i + n` starts with a U char (W would have
        // matched alternative 1).
        return with_contraction::<CONTRACTIONS>(t, b, run.upper_end);
    }
    if f & (U | W) != 0 {
        // A mark before no letter: alternative 1 without the prefix matches the mark alone.
        return with_contraction::<CONTRACTIONS>(t, b, i + n);
    }
    not_letters_next::<KIMI>(t, b, i, x, f, n, (g, m))
}

/// Alternatives 4 to 7 at `i` (flags `f`, first byte `x`, length `n`) when the next char (flags
/// `g`, length `m`, 0 at the end of the text) is already decoded: [`not_letters`] without
/// decoding it again.
#[inline(always)]
fn not_letters_next<const KIMI: bool>(
    t: &Tables,
    b: &[u8],
    i: usize,
    x: u8,
    f: u8,
    n: usize,
    (g, m): (u8, usize),
) -> usize {
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    punctuation(t, b, i, (x, f, n), (g, m), trail::<KIMI>()).unwrap_or_else(|| ws_newline_first(t, b, i))
}

/// Alternatives 4 to 7 at `i` (flags `f`, first byte `x`), once the letter and digit
/// alternatives have failed there.
#[inline(always)]
fn not_letters<const KIMI: bool>(t: &Tables, b: &[u8], i: usize, x: u8, f: u8) -> usize {
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    if f & S == 0 {
        return run_bytes(b, run_none(t, b, i, L | N | S), trail::<KIMI>());
    }
    if x == b' ' && flags_or_end(t, b, i + 1) & (L | N | S) == 0 && i + 1 < b.len() {
        return run_bytes(b, run_none(t, b, i + 1, L | N | S), trail::<KIMI>());
    }
    ws_newline_first(t, b, i)
}

/// Where alternatives 1 and 2 (without prefix and contraction) end when the letter run starts
/// at `p`.
struct Letters {
    /// The end of `U*W+`, if it matches.
    lower_end: Option<usize>,
    /// The end of the `U` run from `p`: `U+W*` matches up to it if it is past `p` and `U*W+`
    /// does not match (the char there is then not W).
    upper_end: usize,
}

/// `U*W+` and `U+W*` from `p`, whose char (flags `g`, byte length `m`) is already decoded, in
/// one pass that decodes each char once. Alternative 1's backtracking: its greedy `U*` gives
/// back chars until a W char follows, so it ends after the W run that follows the U run, or, if
/// none does, right after the last char of the U run that is also W.
#[inline(always)]
fn letters<const KIMI: bool>(t: &Tables, b: &[u8], p: usize, mut g: u8, mut m: usize) -> Letters {
    let mut j = p;
    let mut last_both = None;
    while g & U != 0 {
        j += m;
        if g & W != 0 {
            last_both = Some(j);
        }
        if j == b.len() {
            return Letters { lower_end: last_both, upper_end: j };
        }
        (g, m) = char_k::<KIMI>(t, b, j);
    }
    // The char that ends the U run, decoded once: if it is W, `W+` runs on after it.
    let lower_end = if g & W != 0 { Some(run_any_multi_but(t, b, j + m, W, but::<KIMI>())) } else { last_both };
    Letters { lower_end, upper_end: j }
}

/// No contractions (Tekken).
pub(super) const NONE: u8 = 0;
/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` (o200k, Kimi K2).
pub(super) const FOLDED: u8 = 1;
/// llama.cpp's `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])` (Tiny Aya, Youtu),
/// which differs from [`FOLDED`] only on `'ſ`.
pub(super) const ASCII: u8 = 2;

/// The optional contraction (`CONTRACTIONS`: [`NONE`], [`FOLDED`], [`ASCII`]) after a letter
/// run ending at `end`.
#[inline(always)]
fn with_contraction<const CONTRACTIONS: u8>(t: &Tables, b: &[u8], end: usize) -> usize {
    if CONTRACTIONS == NONE || b.get(end) != Some(&b'\'') {
        return end;
    }
    if CONTRACTIONS == FOLDED {
        return contraction_folded(t, b, end).unwrap_or(end);
    }
    contraction_ascii(b, end).unwrap_or(end)
}
