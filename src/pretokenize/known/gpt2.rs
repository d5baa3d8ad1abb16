//! The GPT-2 family (gpt2, r50k_base, p50k_base):
//! `'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s`.
//!
//! The original `'s|'t|...|\s+(?!\S)|\s+` spelling matches the same pieces: possessive and greedy
//! runs agree when nothing follows them, and `\s++$` only names the case where `\s+(?!\S)` would
//! take the whole run anyway.

use super::unicode::{Tables, L, N, S};
use super::{char_at, run_any, run_none, ws_run};

/// The end of the piece starting at `i`.
#[inline(always)]
pub(super) fn piece_end(t: &Tables, b: &[u8], i: usize) -> usize {
    let x = b[i];
    if x == b'\'' {
        if let Some(end) = contraction(b, i) {
            return end;
        }
    }
    let (f, _) = char_at(t, b, i);
    // ` ?X++`: a literal space joins the run of letters, digits or other chars that follows it.
    let (j, g) = if x == b' ' && i + 1 < b.len() {
        let (g, _) = char_at(t, b, i + 1);
        if g & S == 0 {
            (i + 1, g)
        } else {
            (i, f)
        }
    } else {
        (i, f)
    };
    if g & L != 0 {
        return run_any(t, b, j, L);
    }
    if g & N != 0 {
        return run_any(t, b, j, N);
    }
    if g & S == 0 {
        return run_none(t, b, j, L | N | S);
    }
    // Whitespace: the whole run at the end of the text (`\s++$`); otherwise all but its last char
    // (`\s+(?!\S)` backtracks one char), or the single char (`\s`).
    ws_run(t, b, i).lookahead_end(i, b.len())
}

/// The end of `'(?:[sdmt]|ll|ve|re)` at `i` (case-sensitive, ASCII only), if it matches.
#[inline]
fn contraction(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i + 1)? {
        b's' | b'd' | b'm' | b't' => Some(i + 2),
        b'l' if b.get(i + 2) == Some(&b'l') => Some(i + 3),
        b'v' | b'r' if b.get(i + 2) == Some(&b'e') => Some(i + 3),
        _ => None,
    }
}
