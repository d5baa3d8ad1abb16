//! llama.cpp's `jais-2` pattern (Inception's Jais 2): Llama 3's alternatives, with whitespace
//! that no newline ends taken in powers of two:
//!
//! `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|`
//! `\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|...|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}`
//!
//! Where a run of two or more whitespace chars starts, only the whitespace alternatives can
//! match: the letter and punctuation ones need a non-space char after the first. If the run holds
//! a newline, `\s*[\r\n]+` takes it up to its last newline. The `r` chars left of a run without
//! newline: `\s{k}(?!\S)` matches if `r > k`, or `r == k` at the end of the text, so the piece is
//! the greatest `k` of 1, 2, 4, ..., 512 at most `r - 1` (at most `r` at the end); `\s{1}` takes
//! the last char, which the main loop splits as Llama 3 does (before a letter, ` ?` and
//! punctuation take it: Llama 3's `\s+(?!\S)|\s+` and these alternatives agree on one char).
//!
//! A splitter that looked at one position at a time would scan the rest of a run for each piece
//! (a megabyte of spaces: 2,048 pieces, each a scan of what is left); this one scans a run once.
//!
//! Performance: on the compiled matcher the pattern split 1 MB of English at 135 MB/s and
//! encoded it at 64; by hand 471 and 118 (`src/PERFORMANCE.md`, "Twenty-fourth round").

use super::family_stages::{join_long_s, QUOTE_LONG_S};
use super::unicode::{self, Tables, S};
use super::{char_at, cl100k, flags_or_end, ws_run};

/// The pattern after its contractions.
macro_rules! after_contractions {
    () => {
        concat!(
            r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+",
            r"|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)",
            r"|\s{1,2}(?!\S)|\s{1}",
        )
    };
}

/// The pattern with `(?i:...)` contractions, as `bpekit.formats.llamacpp.upstream_regexes` and
/// `tokenizer.json` files write it.
pub const JAIS2: &str = concat!("(?i:'s|'t|'re|'ve|'m|'ll|'d)", after_contractions!());
/// The pattern as llama.cpp writes it, with ASCII contractions.
pub const JAIS2_ASCII: &str = concat!("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])", after_contractions!());

/// The spelling of the pattern: `(?i:...)` contractions (`false`) or llama.cpp's ASCII ones.
pub fn detect(pattern: &str) -> Option<bool> {
    match pattern {
        JAIS2 => Some(false),
        JAIS2_ASCII => Some(true),
        _ => None,
    }
}

/// Calls `f` with the byte range of every piece of `text`, in order (with llama.cpp's ASCII
/// contractions: `ascii`).
pub fn for_each_piece<E>(ascii: bool, text: &str, mut f: impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
    let (t, b) = (unicode::tables(), text.as_bytes());
    if ascii && memchr::memmem::find(b, QUOTE_LONG_S).is_some() {
        return join_long_s(t, b, b.len(), |g| pieces(t, b, g), &mut f);
    }
    pieces(t, b, &mut f)
}

fn pieces<E>(t: &Tables, b: &[u8], f: &mut (impl FnMut(usize, usize) -> Result<(), E> + ?Sized)) -> Result<(), E> {
    let mut i = 0;
    while i < b.len() {
        let (g, n) = char_at(t, b, i);
        if g & S != 0 && flags_or_end(t, b, i + n) & S != 0 {
            i = whitespace(t, b, i, f)?;
            continue;
        }
        let end = cl100k::piece_end::<3, false, false, true, true>(t, b, i);
        f(i, end)?;
        i = end;
    }
    Ok(())
}

/// The pieces of the run of two or more whitespace chars at `i` but its last char before a
/// non-space char; where the main loop goes on.
fn whitespace<E>(t: &Tables, b: &[u8], i: usize, f: &mut (impl FnMut(usize, usize) -> Result<(), E> + ?Sized)) -> Result<usize, E> {
    let run = ws_run(t, b, i);
    let mut s = i;
    if let Some(nl) = run.last_newline {
        f(i, nl + 1)?;
        s = nl + 1;
    }
    let at_end = run.end == b.len();
    let mut left = b[s..run.end].iter().filter(|&&x| x & 0xC0 != 0x80).count();
    let ascii = left == run.end - s;
    while left >= 2 || left == 1 && at_end {
        let most = if at_end { left } else { left - 1 }.min(512);
        let k = 1 << (usize::BITS - 1 - most.leading_zeros());
        let e = if ascii { s + k } else { (0..k).fold(s, |p, _| p + char_at(t, b, p).1) };
        f(s, e)?;
        s = e;
        left -= k;
    }
    Ok(s)
}
