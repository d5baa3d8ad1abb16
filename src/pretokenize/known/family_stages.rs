//! Two-stage lists whose second stage is a known family's pattern on what the first stage
//! leaves, in one pass: MiniCPM 5's (llama.cpp's `minicpm5`) and Laguna's (`laguna`), each with
//! the family's contractions `(?i:'s|'t|...)` (as `tokenizer.json` files write them) or
//! llama.cpp's ASCII spelling `(?:'[sS]|'[tT]|...)`.
//!
//! - MiniCPM 5: `\p{N}{1,3}` (numbers three chars at a time from the left), then Llama 3's
//!   pattern with `\p{N}+` for `\p{N}{1,3}`. A group of one to three numbers is one piece of the
//!   second stage (`\p{N}+`); the text between holds no number, where the two patterns are the
//!   same, so [`Known::Llama3`] cuts it.
//! - Laguna: `[^\n]+|[\n]+` (each line and each run of newlines), then Qwen 2's pattern. A run
//!   of newlines is one piece of the second stage (`\s*[\r\n]+`); a line goes to
//!   [`Known::Qwen2`].
//!
//! The two contraction spellings differ in one place: `(?i:...)` also takes `'ſ` (U+017F folds
//! to `s`), where the ASCII spelling takes the `'` as the prefix of the letter run from `ſ` on.
//! So with the ASCII spelling a `'ſ` piece of the family followed by a piece that starts with a
//! letter (a letter run: that alternative's prefix is not a letter) is one piece.
//!
//! Performance: the two stages on the compiled matcher encoded English at 51–58 MB/s
//! (`src/PERFORMANCE.md`, "Twenty-second round").

use super::unicode::{self, L};
use super::{char_at, is_list, Known, LLAMA3, QWEN2};

const CONTRACTIONS: &str = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";
const ASCII_CONTRACTIONS: &str = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
/// `'ſ` in UTF-8.
pub(super) const QUOTE_LONG_S: &[u8] = "'\u{17f}".as_bytes();

/// Which list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stages {
    MiniCpm5,
    Laguna,
}

impl Stages {
    /// The stages of each list, with the family's contractions or (`ascii`) llama.cpp's.
    pub fn patterns(self, ascii: bool) -> [String; 2] {
        let spelled = |p: String| if ascii { p.replace(CONTRACTIONS, ASCII_CONTRACTIONS) } else { p };
        match self {
            Stages::MiniCpm5 => [r"\p{N}{1,3}".into(), spelled(LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}+"))],
            Stages::Laguna => [r"[^\n]+|[\n]+".into(), spelled(QWEN2.into())],
        }
    }

    /// The list `patterns` spells (each stage after an optional `(?m)`), if either, and whether
    /// with ASCII contractions.
    pub fn detect(patterns: &[String]) -> Option<(Stages, bool)> {
        let spellings = [Stages::MiniCpm5, Stages::Laguna].into_iter().flat_map(|s| [(s, false), (s, true)]);
        spellings.into_iter().find(|&(s, ascii)| is_list(patterns, &s.patterns(ascii)))
    }

    /// Calls `f` with the byte range of every piece the stages make of `text` (with ASCII
    /// contractions: `ascii`), in order.
    pub fn for_each_piece<E>(self, ascii: bool, text: &str, mut f: impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
        let (t, b) = (unicode::tables(), text.as_bytes());
        let mut i = 0;
        while i < b.len() {
            let (first, n) = char_at(t, b, i);
            let mut e = i + n;
            match self {
                Stages::MiniCpm5 if first & unicode::N != 0 => {
                    e = super::digit_run(t, b, e, 3);
                    f(i, e)?;
                }
                Stages::MiniCpm5 => {
                    while e < b.len() {
                        let (m, n) = char_at(t, b, e);
                        if m & unicode::N != 0 {
                            break;
                        }
                        e += n;
                    }
                    family(Known::Llama3, ascii, t, text, i, e, &mut f)?;
                }
                Stages::Laguna if b[i] == b'\n' => {
                    e = i + b[i..].iter().take_while(|&&x| x == b'\n').count();
                    f(i, e)?;
                }
                Stages::Laguna => {
                    e = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |k| i + k);
                    family(Known::Qwen2, ascii, t, text, i, e, &mut f)?;
                }
            }
            i = e;
        }
        Ok(())
    }
}

/// `known`'s pattern on `text[s..e]`, with ASCII contractions if `ascii`.
fn family<E>(
    known: Known,
    ascii: bool,
    t: &unicode::Tables,
    text: &str,
    s: usize,
    e: usize,
    f: &mut impl FnMut(usize, usize) -> Result<(), E>,
) -> Result<(), E> {
    let b = text.as_bytes();
    if !ascii || memchr::memmem::find(&b[s..e], QUOTE_LONG_S).is_none() {
        return known.for_each_piece(&text[s..e], |a, z| f(s + a, s + z));
    }
    join_long_s(t, b, e, |g| known.for_each_piece(&text[s..e], |a, z| g(s + a, s + z)), f)
}

/// The pieces `split` gives (a splitter with the contractions `(?i:'s|'t|...)`, up to byte `e`
/// of `b`) as they are with llama.cpp's ASCII contractions: a `'ſ` piece joined to the letter
/// run after it.
pub(super) fn join_long_s<E>(
    t: &unicode::Tables,
    b: &[u8],
    e: usize,
    split: impl FnOnce(&mut dyn FnMut(usize, usize) -> Result<(), E>) -> Result<(), E>,
    f: &mut impl FnMut(usize, usize) -> Result<(), E>,
) -> Result<(), E> {
    let mut held: Option<usize> = None; // the start of a `'ſ` piece not yet given
    split(&mut |a, z| {
        if let Some(h) = held.take() {
            if char_at(t, b, a).0 & L != 0 {
                return f(h, z);
            }
            f(h, a)?;
        }
        if &b[a..z] == QUOTE_LONG_S {
            held = Some(a);
            return Ok(());
        }
        f(a, z)
    })?;
    match held {
        Some(h) => f(h, e),
        None => Ok(()),
    }
}
