//! llama.cpp's `chameleon` list (Meta's Chameleon) in one pass. Its six stages, and what each
//! leaves to the next:
//!
//! 1. `<sentinel:[0-9]+>`: changes no final piece. Stage 5 isolates its `<`, `:` and `>`
//!    anyway (and stage 4 its digits), and no later stage's match crosses one of them.
//! 2. `(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z`: `IMGIMG`, one to four of `A`-`I`, then `Z` (more
//!    than four cannot end in `Z`: the greedy count gives back only letters of `A`-`I`). A
//!    match holds only letters, so no later stage cuts it.
//! 3. `([\t\n]|    |  )`: each tab and newline, and runs of spaces four, else two, at a time.
//!    No later stage cuts a match (GPT-2's `\s+(?!\S)` takes a piece of spaces whole).
//! 4. `\p{N}` and 5. `[\p{P}!-/:-@\[-`{-~]`: each number char and each char of the class
//!    apart (one char each, so their order does not matter).
//! 6. GPT-2's pattern without its final `\s+`, which as an `Isolated` stage gives GPT-2's pieces
//!    ([`super::punct_stages`] says why): [`Known::Gpt2`] on what the stages before leave.
//!
//! Performance: the compiled matcher ran the six stages one after the other at 34 MB/s of
//! English (`src/PERFORMANCE.md`, "Twenty-third round").

use super::{is_list, Known};
use crate::pretokenize::compiled::classes::{of_expression, union, Table};
use std::sync::OnceLock;

/// The stages, as llama.cpp writes them.
pub const CHAMELEON_STAGES: [&str; 6] = [
    "<sentinel:[0-9]+>",
    "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z",
    r"([\t\n]|    |  )",
    r"\p{N}",
    r"[\p{P}!-/:-@\[-`{-~]",
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)",
];

/// A char stages 4 and 5 isolate: a number, or the fifth stage's class.
const APART: u32 = 1;

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let class = |c: &str| of_expression(c, false).expect("the class parses");
        Table::new(&[union(&[&class(CHAMELEON_STAGES[3]), &class(CHAMELEON_STAGES[4])])])
    })
}

/// Whether `patterns` are the list (each after an optional `(?m)`).
pub fn detect(patterns: &[String]) -> bool {
    is_list(patterns, &CHAMELEON_STAGES)
}

/// Calls `f` with the byte range of every piece the stages make of `text`, in order.
pub fn for_each_piece<E>(text: &str, mut f: impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
    let b = text.as_bytes();
    let mut gap = 0;
    let mut from = 0;
    while let Some(k) = memchr::memmem::find(&b[from..], b"IMGIMG") {
        let at = from + k;
        let letters = b[at + 6..].iter().take(5).take_while(|x| (b'A'..=b'I').contains(x)).count();
        let end = at + 6 + letters;
        if (1..=4).contains(&letters) && b.get(end) == Some(&b'Z') {
            spaces(text, gap, at, &mut f)?;
            f(at, end + 1)?;
            gap = end + 1;
            from = end + 1;
        } else {
            from = at + 1;
        }
    }
    spaces(text, gap, b.len(), &mut f)
}

/// Stage 3 on `text[s..e]`, and the stages after it on the text between its matches.
fn spaces<E>(text: &str, s: usize, e: usize, f: &mut impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
    let b = text.as_bytes();
    let (mut i, mut gap) = (s, s);
    while i < e {
        let end = match b[i] {
            b'\t' | b'\n' => i + 1,
            b' ' if e - i >= 4 && b[i..i + 4] == *b"    " => i + 4,
            b' ' if e - i >= 2 && b[i + 1] == b' ' => i + 2,
            _ => {
                i += 1;
                continue;
            }
        };
        apart(text, gap, i, f)?;
        f(i, end)?;
        i = end;
        gap = end;
    }
    apart(text, gap, e, f)
}

/// Stages 4 and 5 on `text[s..e]`, and GPT-2's pattern on the text between the chars they take.
fn apart<E>(text: &str, s: usize, e: usize, f: &mut impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
    let (t, b) = (table(), text.as_bytes());
    let (mut i, mut gap) = (s, s);
    while i < e {
        let (m, n) = t.at(b, i);
        if m & APART != 0 {
            if gap < i {
                Known::Gpt2.for_each_piece(&text[gap..i], |x, y| f(gap + x, gap + y))?;
            }
            f(i, i + n)?;
            gap = i + n;
        }
        i += n;
    }
    if gap < e {
        Known::Gpt2.for_each_piece(&text[gap..e], |x, y| f(gap + x, gap + y))?;
    }
    Ok(())
}
