//! Tiny Aya's first stage (llama.cpp's `tiny_aya` and `cohere2moe`), `\d{1,3}(?=(?:\d{3})*\b)`,
//! as Hugging Face's Oniguruma runs it: the decimal digits of a number that a word boundary
//! ends, in threes from the right (`1234567` -> `1`, `234`, `567`), and the text between.
//!
//! The lookahead holds only where the run of digits (`\d`, `\p{Nd}`, the same chars in both
//! engines) ends at the end of the text or before a char outside the word class: a digit is a
//! word char, so `\b` after one is a boundary only there. A run that a word char follows
//! (`123abc`, `6¾`) has no match and stays in the text between. Oniguruma's word class is not
//! fancy-regex's `\w`: it has the Latin-1 numbers `²³¹¼½¾` and not the joiners U+200C, U+200D
//! (every code point checked against `tokenizers`), so the stage is spelled for fancy-regex with
//! the class written out ([`DIGIT_GROUPS`], which `bpekit.pipeline.fast` sends for it).
//!
//! Performance: the stage kept the whole list on Python's `regex` module, 2 MB/s of English
//! through `Tokenizer.encode` (`src/PERFORMANCE.md`, "Twenty-third round").

use super::{class_run, cuts_in_threes};
use crate::pretokenize::compiled::classes::{of_expression, Table};
use std::sync::OnceLock;

/// The stage as fancy-regex reads Oniguruma's `\d{1,3}(?=(?:\d{3})*\b)`.
pub const DIGIT_GROUPS: &str = r"\d{1,3}(?=(?:\d{3})*(?![\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\u00B2\u00B3\u00B9\u00BC-\u00BE]))";

/// `\d`.
const DIGIT: u32 = 1;
/// Oniguruma's word class.
const WORD: u32 = 2;

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let word = &DIGIT_GROUPS[DIGIT_GROUPS.find('[').expect("a class")..DIGIT_GROUPS.len() - 2];
        Table::new(&[of_expression(r"\d", false).expect("parses"), of_expression(word, false).expect("the word class parses")])
    })
}

/// Calls `f` with the byte range of every match of the stage in `text` and of the text between,
/// and whether it is a match.
pub fn for_each_piece<E>(text: &str, mut f: impl FnMut(usize, usize, bool) -> Result<(), E>) -> Result<(), E> {
    let (t, b) = (table(), text.as_bytes());
    let (mut p, mut gap) = (0, 0);
    while p < b.len() {
        if b[p] < 0x80 {
            if !b[p].is_ascii_digit() {
                p += 1;
                continue;
            }
        } else {
            let (m, n) = t.at(b, p);
            if m & DIGIT == 0 {
                p += n;
                continue;
            }
        }
        let (start, (end, digits)) = (p, class_run(t, b, p, DIGIT));
        p = end;
        if end < b.len() && t.at(b, end).0 & WORD != 0 {
            continue; // no boundary after the run: no match in it
        }
        if gap < start {
            f(gap, start, false)?;
        }
        let mut from = start;
        cuts_in_threes(t, b, start, end, digits, |q| {
            if q > from {
                f(from, q, true)?;
                from = q;
            }
            Ok(())
        })?;
        f(from, end, true)?;
        gap = end;
    }
    if gap < b.len() {
        f(gap, b.len(), false)?;
    }
    Ok(())
}
