//! llama.cpp's `superbpe` list (SuperBPE's `tokenizer.json`) in one pass: runs of numbers, their
//! decimal digits cut in threes from the right; the text between numbers whole.
//!
//! 1. `\p{N}+`: the runs of number chars, and the text between (no number char in it).
//! 2. `(?=(\d{3})+(?!\d))`: an empty match where the decimal digits (`\d`, `\p{Nd}`: every one is
//!    a `\p{N}` char) from there to the end of their run are a multiple of three. An empty
//!    match cuts the piece there (`Isolated` keeps no empty piece), so a run of `k` digits is
//!    cut before its digits `k - 3`, `k - 6`, ... (counted in chars): `1234567` -> `1`, `234`,
//!    `567`. A cut at the start of the piece makes no piece; one after another number char
//!    does (`²123` -> `²`, `123`). The text between numbers has no `\d`, so no match.
//!
//! Performance: the second stage kept fancy-regex's backtracking VM (a lookahead of more than
//! one char), 13 MB/s on English against about 1,100 for this pass, and SuperBPE's pieces are whole
//! runs of text between numbers (its tokens cross spaces), so the split was most of the encode
//! (`src/PERFORMANCE.md`, "Twenty-third round").

use super::{class_run, cuts_in_threes, is_list, number_stage};
use crate::pretokenize::compiled::classes::{of_expression, Table};
use std::sync::OnceLock;

/// The stages, as llama.cpp writes them.
pub const SUPERBPE_STAGES: [&str; 2] = [r"\p{N}+", r"(?=(\d{3})+(?!\d))"];

/// `\p{N}`, the first stage's class.
const NUMBER: u32 = 1;
/// `\d`, the second stage's.
const DIGIT: u32 = 2;

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let class = |c: &str| of_expression(c, false).expect("the class parses");
        Table::new(&[class(r"\p{N}"), class(r"\d")])
    })
}

/// Whether `patterns` are the list (each after an optional `(?m)`).
pub fn detect(patterns: &[String]) -> bool {
    is_list(patterns, &SUPERBPE_STAGES)
}

/// Calls `f` with the byte range of every piece the stages make of `text`, in order.
pub fn for_each_piece<E>(text: &str, mut f: impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
    let (t, b) = (table(), text.as_bytes());
    if b.is_empty() {
        return Ok(());
    }
    number_stage(b, 0, b.len(), true, |s, e| {
        if t.at(b, s).0 & NUMBER == 0 {
            return f(s, e); // the text between numbers
        }
        // a run of numbers: each run of digits in it cut in threes from the right
        let (mut p, mut cut) = (s, s);
        while p < e {
            let (m, n) = t.at(b, p);
            if m & DIGIT == 0 {
                p += n;
                continue;
            }
            let (end, digits) = class_run(t, b, p, DIGIT);
            cuts_in_threes(t, b, p, end, digits, |q| {
                if q > cut {
                    f(cut, q)?;
                    cut = q;
                }
                Ok(())
            })?;
            p = end;
        }
        f(cut, e)
    })
}
