//! llama.cpp's `viking` list (Viking and Poro 2's `tokenizer.json`) in one pass: runs of text
//! between whitespace and sentence punctuation, then every number char apart.
//!
//! 1. ` ?[^(\s|.,!?…。，、।۔،)]+` (the brackets hold a class: not whitespace, `(`, `|`, `)`
//!    nor the punctuation): the matches, a space taken first where a run follows it, and the
//!    text between (the whitespace and punctuation chars, which start no match).
//! 2. `\p{N}`: every number char of a piece apart from the text around it.
//!
//! llama.cpp's `poro-chat` list is the first stage alone.
//!
//! Performance: the compiled matcher ran the two stages at 68 MB/s on English
//! (`src/PERFORMANCE.md`, "Twenty-second round").

use super::{is_list, number_stage, prefixed_runs};
use crate::pretokenize::compiled::classes::{of_expression, Table};
use std::sync::OnceLock;

/// The stages, as llama.cpp and the models' `tokenizer.json` write them.
pub const VIKING_STAGES: [&str; 2] = [" ?[^(\\s|.,!?\u{2026}\u{3002}\u{ff0c}\u{3001}\u{964}\u{6d4}\u{60c})]+", "\\p{N}"];

/// The first stage's class (from the pattern itself).
const CLASS: u32 = 1;
/// The space its matches may start with.
const SPACE: u32 = 2;

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let stage = VIKING_STAGES[0];
        Table::new(&[of_expression(&stage[2..stage.len() - 1], false).expect("the stage's class parses"), vec![(32, 32)]])
    })
}

/// Whether `patterns` are the list (each after an optional `(?m)`).
pub fn detect(patterns: &[String]) -> bool {
    is_list(patterns, &VIKING_STAGES)
}

/// Calls `f` with the byte range of every piece the stages make of `text`, in order: both
/// stages, or with `numbers` off the first alone (`poro-chat`).
pub fn for_each_piece<E>(numbers: bool, text: &str, mut f: impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
    let b = text.as_bytes();
    // the second stage on every piece of the first (a space is never in the class)
    prefixed_runs(table(), b, 0, b.len(), SPACE, CLASS, |s, e, _| if numbers { number_stage(b, s, e, false, &mut f) } else { f(s, e) })
}
