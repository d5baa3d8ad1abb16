//! The ASCII fast paths against fancy-regex: every common English piece shape (`word`,
//! ` word`, `Word`, `.Word`, `ABC`, `ABCdef`) between every kind of neighbour that can end or
//! continue it differently (non-ASCII letters of each case class, marks, digits, contractions,
//! `\r\n`, the end of the text), so each branch of a fast path meets the char that would send
//! the regex another way.

use super::assert_all_agree;

/// Chars that may come before a letter run: prefixes of each kind, letters, digits, newlines.
const BEFORE: [&str; 14] =
    ["", " ", "  ", ".", "\t", "\n", "\r", "1", "é", "É", "\u{301}", "'", "\u{a0}", "中"];

/// Letter runs of the shapes the fast paths take, short and longer than a SWAR word.
const BODIES: [&str; 12] = [
    "a", "ab", "A", "AB", "Ab", "ABcd", "aB", "abcdefghijk", "ABCDEFGHIJab", "ABCDEFGHIJ",
    "Hello", "x",
];

/// What may follow: non-ASCII upper (É, Ж), lower (é, ж), both (ʰ Lm, 中 Lo), marks, digits,
/// contractions in both cases, a failed contraction, newlines, punctuation, the end.
const AFTER: [&str; 26] = [
    "", " ", "  ", "é", "É", "ʰ", "\u{301}", "中", "Ж", "ж", "1", "123", "'s", "'S", "'ll",
    "'LL", "'ſ", "'x", "'", "\r\n", "\n", "\r", "/", ".", "a", "A",
];

#[test]
fn ascii_shapes_next_to_every_kind_of_char() {
    let mut texts = Vec::new();
    for before in BEFORE {
        for body in BODIES {
            for after in AFTER {
                texts.push(format!("{before}{body}{after}"));
                // The same, not at the start of the text (a piece before it, one after it).
                texts.push(format!("z{before}{body}{after} q"));
            }
        }
    }
    let chars = assert_all_agree(texts.iter().map(String::as_str));
    assert!(chars > 10_000, "{chars} chars compared");
}

/// Chars that may start a piece that `o200k::general` decides: prefixes (ASCII, non-ASCII
/// punctuation and spaces, marks, a char of no class), letters of each case class, digits.
const NON_ASCII_BEFORE: [&str; 16] = [
    "", " ", "\u{a0}", "\u{3000}", "«", "—", "\u{301}", "\u{301}\u{301}", "\u{e000}", "\u{10ffff}",
    "١", "Ⅻ", "ж", "Ж", "ǅ", "\n",
];

/// Letter runs that start with a non-ASCII char: lower (W only), upper (U only), title case (Lt,
/// U only), both (Lm, Lo, marks), and mixes with ASCII letters, 2-, 3- and 4-byte chars.
const NON_ASCII_BODIES: [&str; 22] = [
    "ж", "жж", "Ж", "ЖЖ", "Жж", "ЖЖжж", "жЖ", "ǅ", "ǅǅa", "Ǆǅ", "中", "中文", "中Ж", "Ж中", "ʰ",
    "Ԁʰ", "ЖжaЖ", "Жa", "ЖA", "ΑΒγδ", "ગુજરાતી", "𝐀𝐚",
];

/// More followers for them: non-ASCII spaces, punctuation, a char of no class, digits, title
/// case, two marks.
const NON_ASCII_AFTER: [&str; 7] = ["\u{a0}", "«", "\u{e000}", "١", "Ⅻ", "ǅ", "\u{301}\u{301}"];

#[test]
fn non_ascii_shapes_next_to_every_kind_of_char() {
    let mut texts = Vec::new();
    for before in NON_ASCII_BEFORE {
        for body in NON_ASCII_BODIES.iter().chain(&BODIES) {
            for after in AFTER.iter().chain(&NON_ASCII_AFTER) {
                texts.push(format!("{before}{body}{after}"));
                texts.push(format!("z{before}{body}{after} q"));
                texts.push(format!("{before}{after}{body}"));
            }
        }
    }
    let chars = assert_all_agree(texts.iter().map(String::as_str));
    assert!(chars > 50_000, "{chars} chars compared");
}

/// One char (or a short run) of every kind that the cl100k family's rules tell apart: letters
/// of one to four bytes, ASCII and non-ASCII digits (Nd, Nl), each kind of whitespace, newlines,
/// punctuation of one to three bytes, a mark (no letter in `\p{L}`), a char of no class, and
/// the apostrophe with and without a contraction after it.
const UNITS: [&str; 28] = [
    "a", "ab", "é", "ж", "жж", "中", "𝐚", "\u{301}", "1", "١", "Ⅻ", " ", "  ", "\u{a0}",
    "\u{3000}", "\u{85}", "\t", "\r", "\n", "\r\n", ".", "«", "—", "\u{e000}", "'", "'s", "'ſ",
    "'LL",
];

/// Every sequence of three units, at the start of the text and between other pieces: each
/// first char of a piece next to every kind of second char (a prefix before a letter run of
/// each width, before punctuation, before the end) and every kind of third.
#[test]
fn three_units_of_every_kind() {
    let mut texts = Vec::new();
    for a in UNITS {
        for b in UNITS {
            for c in UNITS {
                texts.push(format!("{a}{b}{c}"));
                texts.push(format!("z{a}{b}{c} q"));
            }
        }
    }
    let chars = assert_all_agree(texts.iter().map(String::as_str));
    assert!(chars > 100_000, "{chars} chars compared");
}
