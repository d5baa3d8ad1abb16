//! llama.cpp's `default` and `falcon` lists of `Split(Isolated)` stages in one pass: runs of
//! punctuation, then GPT-2's pattern on the text between, then numbers.
//!
//! The stages, and what each does to the pieces the one before made (each a text of its own):
//! 1. `[\p{P}\$\+<=>\^~\|]+` (`falcon` adds `` ` ``): runs of the class, and the text between.
//!    A run holds no whitespace, letter or number, so the next stage's
//!    ` ?[^\s\p{L}\p{N}]+` takes it whole, and no later stage finds a digit in it.
//! 2. GPT-2's pattern without its final `\s+`. As an `Isolated` stage that changes no piece:
//!    the only char no alternative takes is a whitespace char other than a space before a
//!    non-space (`\t` in `\tx`), a gap of one char, which `\s+` would have taken alone. So the
//!    text between two runs is cut by GPT-2's hand-written splitter ([`Known::Gpt2`]).
//! 3. `default` only, `\p{N}+`: the runs of numbers in a piece (` 12` -> ` `, `12`).
//! 4. `[0-9][0-9][0-9]`: three ASCII digits at a time from the left, the rest a gap
//!    (`12345` -> `123`, `45`; ` 1234` -> ` `, `123`, `4` in `falcon`).
//!
//! Performance: the compiled matcher ran these stages one after the other at 47–54 MB/s on
//! English (`src/PERFORMANCE.md`, "Twenty-second round").

use super::{is_list, number_stage, Known};
use crate::pretokenize::compiled::classes::{of_expression, Table};
use std::sync::OnceLock;

/// `default`'s stages, as llama.cpp writes them.
pub const DEFAULT_STAGES: [&str; 4] = [
    r"[\p{P}\$\+<=>\^~\|]+",
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)",
    r"\p{N}+",
    "[0-9][0-9][0-9]",
];

/// `falcon`'s stages.
pub const FALCON_STAGES: [&str; 3] =
    [r"[\p{P}\$\+<=>\^~\|`]+", r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)", "[0-9][0-9][0-9]"];

const DEFAULT_PUNCT: u32 = 1;
const FALCON_PUNCT: u32 = 2;

/// The two lists' punctuation classes, from the stage patterns themselves.
fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let class = |stage: &str| of_expression(&stage[..stage.len() - 1], false).expect("the stages' classes parse");
        Table::new(&[class(DEFAULT_STAGES[0]), class(FALCON_STAGES[0])])
    })
}

/// Which of the two lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stages {
    Default,
    Falcon,
}

impl Stages {
    /// The list `patterns` spells (each stage after an optional `(?m)`, which changes nothing in
    /// patterns without `^` or `$`), if either.
    pub fn detect(patterns: &[String]) -> Option<Stages> {
        if is_list(patterns, &DEFAULT_STAGES) {
            Some(Stages::Default)
        } else if is_list(patterns, &FALCON_STAGES) {
            Some(Stages::Falcon)
        } else {
            None
        }
    }

    /// Calls `f` with the byte range of every piece the stages make of `text`, in order.
    pub fn for_each_piece<E>(self, text: &str, mut f: impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
        let (t, b) = (table(), text.as_bytes());
        let punct = match self {
            Stages::Default => DEFAULT_PUNCT,
            Stages::Falcon => FALCON_PUNCT,
        };
        let (mut p, mut gap) = (0, 0);
        while p < b.len() {
            let (m, n) = t.at(b, p);
            if m & punct == 0 {
                p += n;
                continue;
            }
            let mut q = p + n;
            while q < b.len() {
                let (m, n) = t.at(b, q);
                if m & punct == 0 {
                    break;
                }
                q += n;
            }
            self.between(text, gap, p, &mut f)?;
            f(p, q)?;
            (p, gap) = (q, q);
        }
        self.between(text, gap, b.len(), &mut f)
    }

    /// Stages 2 to 4 on `text[s..e]`, text between two runs of punctuation.
    #[inline(always)]
    fn between<E>(self, text: &str, s: usize, e: usize, f: &mut impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
        if s == e {
            return Ok(());
        }
        let b = text.as_bytes();
        Known::Gpt2.for_each_piece(&text[s..e], |a, z| {
            let (a, z) = (s + a, s + z);
            let piece = &b[a..z];
            // most pieces hold no number: no later stage cuts them (the same test as
            // `number_stage`'s, here for `threes` too)
            if piece.is_ascii() && !piece.iter().any(u8::is_ascii_digit) {
                return f(a, z);
            }
            match self {
                Stages::Default => number_stage(b, a, z, true, |a, z| threes(b, a, z, &mut *f)),
                Stages::Falcon => threes(b, a, z, &mut *f),
            }
        })
    }
}

/// `[0-9][0-9][0-9]` as a stage on `b[s..e]` (`s < e`): every three ASCII digits found from the
/// left, and the text between.
#[inline(always)]
fn threes<E>(b: &[u8], s: usize, e: usize, mut f: impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
    let (mut p, mut gap) = (s, s);
    while p + 3 <= e {
        if b[p..p + 3].iter().all(u8::is_ascii_digit) {
            if gap < p {
                f(gap, p)?;
            }
            f(p, p + 3)?;
            p += 3;
            gap = p;
        } else {
            p += 1;
        }
    }
    if gap < e {
        f(gap, e)?;
    }
    Ok(())
}
