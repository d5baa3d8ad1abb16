//! llama.cpp's `viking` list (Viking and Poro 2's `tokenizer.json`) in one pass: runs of text
//! between whitespace and sentence punctuation, then every number char apart.
//!
//! 1. ` ?[^(\s|.,!?…。，、।۔،)]+` (the brackets hold a class: not whitespace, `(`, `|`, `)`
//!    nor the punctuation): the matches, a space taken first where a run follows it, and the
//!    text between (the whitespace and punctuation chars, which start no match).
//! 2. `\p{N}`: every number char of a piece apart from the text around it.
//!
//! Performance: the compiled matcher ran the two stages at 68 MB/s on English
//! (`src/PERFORMANCE.md`, "Twenty-second round").

use super::{is_list, number_stage};
use crate::pretokenize::compiled::classes::{of_expression, Table};
use std::sync::OnceLock;

/// The stages, as llama.cpp and the models' `tokenizer.json` write them.
pub const VIKING_STAGES: [&str; 2] = [" ?[^(\\s|.,!?\u{2026}\u{3002}\u{ff0c}\u{3001}\u{964}\u{6d4}\u{60c})]+", "\\p{N}"];

/// The first stage's class, from the pattern itself.
fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let stage = VIKING_STAGES[0];
        Table::new(&[of_expression(&stage[2..stage.len() - 1], false).expect("the stage's class parses")])
    })
}

/// Whether `patterns` are the list (each after an optional `(?m)`).
pub fn detect(patterns: &[String]) -> bool {
    is_list(patterns, &VIKING_STAGES)
}

/// Calls `f` with the byte range of every piece the stages make of `text`, in order.
pub fn for_each_piece<E>(text: &str, mut f: impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
    let (t, b) = (table(), text.as_bytes());
    let mut numbers = |s: usize, e: usize| {
        let piece = &b[s..e];
        // most pieces hold no number: the second stage leaves them whole
        if piece.is_ascii() && !piece.iter().any(u8::is_ascii_digit) {
            f(s, e)
        } else {
            number_stage(b, s, e, false, &mut f)
        }
    };
    let (mut p, mut gap) = (0, 0);
    while p < b.len() {
        // a space is never in the class, so a match starts at the class or at a space before it
        let (m, n) = t.at(b, p);
        let starts = m != 0 || b[p] == b' ' && p + 1 < b.len() && t.at(b, p + 1).0 != 0;
        if !starts {
            p += n;
            continue;
        }
        let mut q = p + n;
        while q < b.len() {
            let (m, n) = t.at(b, q);
            if m == 0 {
                break;
            }
            q += n;
        }
        if gap < p {
            numbers(gap, p)?;
        }
        numbers(p, q)?;
        (p, gap) = (q, q);
    }
    if gap < b.len() {
        numbers(gap, b.len())?;
    }
    Ok(())
}
