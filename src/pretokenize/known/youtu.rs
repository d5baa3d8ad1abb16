//! llama.cpp's `youtu` list (Tencent's Youtu-LLM) in one pass:
//!
//! 1. `[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+`: runs of Hangul,
//!    of CJK punctuation, of Bopomofo, of ideographs and kana (the four classes share no char),
//!    and the text between;
//! 2. o200k's pattern with llama.cpp's ASCII contractions and `\p{N}` ([`Known::Youtu`]) on each
//!    piece of the first.
//!
//! Performance: with the first stage on the compiled matcher the list split 1 MB of English at
//! 251 MB/s and encoded it at 94; in one pass 382 and 117 (`src/PERFORMANCE.md`, "Twenty-fourth
//! round").

use super::{is_list, Known, YOUTU_WORDS};
use crate::pretokenize::compiled::classes::{of_expression, Table};
use std::sync::OnceLock;

/// The first stage, as llama.cpp writes it.
pub const YOUTU_1: &str = "[\u{ac00}-\u{d7a3}\u{3131}-\u{318e}]+|[\u{ff01}\u{2026}\u{201c}\u{201d}\u{2018}\u{2019}\u{2014}\u{ff1a}\u{ff1b}\u{ff0c}\u{3001}-\u{303f}\u{fe30}-\u{fe4f}]+|[\u{3105}-\u{312f}]+|[\u{4e00}-\u{9fa5}\u{3040}-\u{309f}\u{30a0}-\u{30ff}]+";

/// The two stages.
pub const YOUTU_STAGES: [&str; 2] = [YOUTU_1, YOUTU_WORDS];

/// The first stage's four classes, bits 0 to 3 (taken from the pattern: no class holds a `|`).
fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let classes: Vec<_> = YOUTU_1
            .split('|')
            .map(|run| of_expression(run.strip_suffix('+').expect("each alternative is a class run"), false).expect("the class parses"))
            .collect();
        Table::new(&classes)
    })
}

/// Whether `patterns` are the list (each after an optional `(?m)`).
pub fn detect(patterns: &[String]) -> bool {
    is_list(patterns, &YOUTU_STAGES)
}

/// Calls `f` with the byte range of every piece the stages make of `text`, in order.
pub fn for_each_piece<E>(text: &str, mut f: impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
    let (t, b) = (table(), text.as_bytes());
    let mut i = 0;
    while i < b.len() {
        let (class, n) = t.at(b, i);
        let mut e = i + n;
        // a run of one class (a match), or the text up to the next char of any class (no ASCII
        // char is in one)
        while e < b.len() {
            if class == 0 && b[e] < 0x80 {
                e += 1;
                continue;
            }
            let (next, n) = t.at(b, e);
            if next != class {
                break;
            }
            e += n;
        }
        Known::Youtu.for_each_piece(&text[i..e], |a, z| f(i + a, i + z))?;
        i = e;
    }
    Ok(())
}
