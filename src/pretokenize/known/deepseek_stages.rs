//! DeepSeek LLM's six and DeepSeek Coder's five `Split(Isolated)` stages (their `tokenizer.json`
//! files; llama.cpp's `deepseek-llm` and `deepseek-coder`) in one pass.
//!
//! Run one after the other, each stage cuts every piece the one before made, and later stages
//! look at most words again only to leave them whole: on the compiled matcher the stage lists
//! split English at 27–38 MB/s, a tenth of a one-pattern family's hand-written splitter. Here
//! every stage is a loop over the piece the stage before hands it, nested as the stages are,
//! with the classes read from one table built by regex-syntax (as the regex engine's).
//!
//! What each stage does to the pieces it gets (each piece a text of its own):
//! 1. `[\r\n]`: each `\r` and `\n` is a piece; the later stages leave it whole.
//! 2. `\s?C+` (C: LLM's Latin/Greek/Cyrillic/... letter class, Coder's `\p{L}`): the matches
//!    (one whitespace char taken first when a run of C follows it) and the text between.
//! 3. `\s?P+` (P: LLM's ASCII-and-fullwidth punctuation class, which holds the ASCII letters
//!    and one whitespace char, U+3000; Coder's `\p{P}`), the same way. A Coder match of stage 2 holds no `\p{P}` char (whitespace
//!    and letters are not punctuation), so stage 3 leaves it whole.
//! 4. LLM only, `\s+$`: the whitespace run that ends the piece, if any.
//! 5. `[\u{4e00}-\u{9fa5}\u{800}-\u{4e00}\u{ac00}-\u{d7ff}]+`: runs of U+0800–U+9FA5 and
//!    U+AC00–U+D7FF (three-byte chars only).
//! 6. `\p{N}+` (LLM) or `\p{N}` (Coder, each char). No letter is a number, so Coder's stage-2
//!    matches skip it.

use super::{is_list, number_stage, prefixed_runs};
use crate::pretokenize::compiled::classes::{of_expression, Table};
use crate::utf8::{char_before, decode_multi};
use std::sync::OnceLock;

/// DeepSeek LLM's stages, as its `tokenizer.json` and llama.cpp write them (`\r`, `\n` as the
/// characters themselves in the first).
pub const DEEPSEEK_LLM_STAGES: [&str; 6] = [
    "[\r\n]",
    "\\s?[A-Za-z\u{b5}\u{c0}-\u{d6}\u{d8}-\u{f6}\u{f8}-\u{1ba}\u{1bc}-\u{1bf}\u{1c4}-\u{293}\u{295}-\u{2af}\u{370}-\u{373}\u{376}\u{377}\u{37b}-\u{37d}\u{37f}\u{386}\u{388}-\u{38a}\u{38c}\u{38e}-\u{3a1}\u{3a3}-\u{3f5}\u{3f7}-\u{481}\u{48a}-\u{52f}\u{531}-\u{556}\u{10a0}-\u{10c5}\u{13a0}-\u{13f5}\u{13f8}-\u{13fd}\u{1c90}-\u{1cba}\u{1cbd}-\u{1cbf}\u{1d00}-\u{1d2b}\u{1d6b}-\u{1d77}\u{1d79}-\u{1d9a}\u{1e00}-\u{1f15}\u{1f18}-\u{1f1d}\u{1f20}-\u{1f45}\u{1f48}-\u{1f4d}\u{1f50}-\u{1f57}\u{1f59}\u{1f5b}\u{1f5d}\u{1f5f}-\u{1f7d}\u{1f80}-\u{1fb4}\u{1fb6}-\u{1fbc}\u{1fbe}\u{1fc2}-\u{1fc4}\u{1fc6}-\u{1fcc}\u{1fd0}-\u{1fd3}\u{1fd6}-\u{1fdb}\u{1fe0}-\u{1fec}\u{1ff2}-\u{1ff4}\u{1ff6}-\u{1ffc}\u{2102}\u{2107}\u{210a}-\u{2113}\u{2115}\u{2119}-\u{211d}\u{2124}\u{2126}\u{2128}\u{212a}-\u{212d}\u{212f}-\u{2134}\u{2139}\u{213c}-\u{213f}\u{2145}-\u{2149}\u{214e}\u{2183}\u{2184}\u{2c00}-\u{2c7b}\u{2c7e}-\u{2ce4}\u{2ceb}-\u{2cee}\u{2cf2}\u{2cf3}\u{a640}-\u{a66d}\u{a680}-\u{a69b}\u{a722}-\u{a76f}\u{a771}-\u{a787}\u{a78b}-\u{a78e}\u{ab70}-\u{abbf}\u{fb00}-\u{fb06}\u{fb13}-\u{fb17}\u{ff21}-\u{ff3a}\u{ff41}-\u{ff5a}\u{10400}-\u{1044f}\u{104b0}-\u{104d3}\u{104d8}-\u{104fb}\u{10c80}-\u{10cb2}\u{10cc0}-\u{10cf2}\u{118a0}-\u{118df}\u{1e900}-\u{1e943}]+",
    "\\s?[!-/:-~\u{ff01}-\u{ff0f}\u{ff1a}-\u{ff5e}\u{2018}-\u{201f}\u{3000}-\u{3002}]+",
    "\\s+$",
    "[\u{4e00}-\u{9fa5}\u{800}-\u{4e00}\u{ac00}-\u{d7ff}]+",
    "\\p{N}+",
];

/// DeepSeek Coder's stages (as [`DEEPSEEK_LLM_STAGES`]).
pub const DEEPSEEK_CODER_STAGES: [&str; 5] =
    ["[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[\u{4e00}-\u{9fa5}\u{800}-\u{4e00}\u{ac00}-\u{d7ff}]+", "\\p{N}"];

/// The first stage with `\r` and `\n` as regex escapes, as a file may also write it.
pub const LINE_ENDS_ESCAPED: &str = r"[\r\n]";

const WS: u32 = 1;
const LLM_LETTER: u32 = 2;
const LLM_PUNCT: u32 = 4;
const LETTER: u32 = 8;
const PUNCT: u32 = 16;

/// The classes of both lists, one bit each, from the stage patterns themselves.
fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        // `\s?[...]+` -> `[...]`
        let inner = |stage: &str| stage[3..stage.len() - 1].to_string();
        let sources = [r"\s".to_string(), inner(DEEPSEEK_LLM_STAGES[1]), inner(DEEPSEEK_LLM_STAGES[2]), r"\p{L}".into(), r"\p{P}".into()];
        let classes: Vec<_> = sources.iter().map(|s| of_expression(s, false).expect("the stages' classes parse")).collect();
        Table::new(&classes)
    })
}

/// Which of the two lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stages {
    Llm,
    Coder,
}

impl Stages {
    /// The list `patterns` spells (each as its stage, after an optional `(?m)`, which changes
    /// nothing in pieces without line ends), if either.
    pub fn detect(patterns: &[String]) -> Option<Stages> {
        // either spelling of the first stage
        let spells = |list: &[&str]| {
            let mut escaped = list.to_vec();
            escaped[0] = LINE_ENDS_ESCAPED;
            is_list(patterns, list) || is_list(patterns, &escaped)
        };
        if spells(&DEEPSEEK_LLM_STAGES) {
            Some(Stages::Llm)
        } else if spells(&DEEPSEEK_CODER_STAGES) {
            Some(Stages::Coder)
        } else {
            None
        }
    }

    /// Calls `f` with the byte range of every piece the stages make of `text`, in order.
    pub fn for_each_piece<E>(self, text: &str, mut f: impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
        let (t, b) = (table(), text.as_bytes());
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'\r' || b[i] == b'\n' {
                f(i, i + 1)?;
                i += 1;
                continue;
            }
            let e = memchr::memchr2(b'\r', b'\n', &b[i..]).map_or(b.len(), |k| i + k);
            match self {
                Stages::Llm => prefixed_runs(t, b, i, e, WS, LLM_LETTER, |s, e, matched| {
                    // An ASCII match, `\s?[A-Za-z]+`, is one run of stage 3's class (which holds
                    // the ASCII letters), ends on a letter and holds no wide char or number: no
                    // later stage cuts it.
                    if matched && b[s..e].is_ascii() {
                        return f(s, e);
                    }
                    prefixed_runs(t, b, s, e, WS, LLM_PUNCT, |s, e, _| {
                        trailing_ws(t, b, s, e, |s, e| wide_runs(b, s, e, |s, e| number_stage(b, s, e, true, &mut f)))
                    })
                })?,
                Stages::Coder => prefixed_runs(t, b, i, e, WS, LETTER, |s, e, matched| {
                    if matched {
                        wide_runs(b, s, e, &mut f)
                    } else {
                        prefixed_runs(t, b, s, e, WS, PUNCT, |s, e, _| wide_runs(b, s, e, |s, e| number_stage(b, s, e, false, &mut f)))
                    }
                })?,
            }
            i = e;
        }
        Ok(())
    }
}

/// `\s+$` as an `Isolated` stage on `b[s..e]` (`s < e`): the whitespace run that ends it, and
/// what is before.
#[inline(always)]
fn trailing_ws<E>(t: &Table, b: &[u8], s: usize, e: usize, mut f: impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
    let mut q = e;
    while q > s {
        let c = char_before(b, q);
        if t.at(b, c).0 & WS == 0 {
            break;
        }
        q = c;
    }
    if s < q {
        f(s, q)?;
    }
    if q < e {
        f(q, e)?;
    }
    Ok(())
}

/// Whether the char at `i` is one of `[\u{800}-\u{9fa5}\u{ac00}-\u{d7ff}]`, and its length.
#[inline(always)]
fn wide_at(b: &[u8], i: usize) -> (bool, usize) {
    let x = b[i];
    if !(0xE0..0xF0).contains(&x) {
        return (false, crate::utf8::len_of(x));
    }
    let (cp, n) = decode_multi(b, i);
    ((0x800..=0x9FA5).contains(&cp) || (0xAC00..=0xD7FF).contains(&cp), n)
}

/// The stage of runs of [`wide_at`] chars on `b[s..e]` (`s < e`): the runs and the text between.
#[inline(always)]
fn wide_runs<E>(b: &[u8], s: usize, e: usize, mut f: impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
    // most pieces hold no three-byte char at all
    if !b[s..e].iter().any(|&x| (0xE0..0xF0).contains(&x)) {
        return f(s, e);
    }
    let mut p = s;
    while p < e {
        let (wide, n) = wide_at(b, p);
        let mut q = p + n;
        while q < e {
            let (w, n) = wide_at(b, q);
            if w != wide {
                break;
            }
            q += n;
        }
        f(p, q)?;
        p = q;
    }
    Ok(())
}
