//! Hugging Face normalizers that the Rust pipelines apply themselves: a [`Program`] of steps, each
//! exactly one `tokenizer.json` normalizer (`NFC` ... `NFKD`, `Lowercase`, `StripAccents`,
//! `Strip`, `Replace` of a literal string, `Prepend`), run in order as a `Sequence` runs them.
//! The Python stages (`bpekit.pipeline.normalizers`) are the reference and say which of them a
//! program may stand for (`core_steps`); anything else (a regex `Replace`, a subclass) stays a
//! Python call per text.
//!
//! Performance note: Llama-2-style `tokenizer.json` files (`Sequence[Prepend("▁"), Replace(" ",
//! "▁")]`) called Python once per text, holding the GIL, before a batch's threads could start;
//! with a program every text is normalized on the batch's threads (`src/PERFORMANCE.md`,
//! "Nineteenth round").

use crate::hf_unicode::{lowercase, strip_marks, Form};
use std::borrow::Cow;

/// One normalizer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A Unicode normalization form (`NFC`, `NFD`, `NFKC`, `NFKD`).
    Form(Form),
    /// `Lowercase`: Rust's `char::to_lowercase`, one character at a time.
    Lowercase,
    /// `StripAccents`: every combining mark removed.
    StripMarks,
    /// `Strip`: Unicode White_Space removed from the left and/or right end.
    Strip { left: bool, right: bool },
    /// `Replace` of a literal, non-empty string (every match, left to right, not overlapping).
    Replace { from: String, to: String },
    /// `Prepend`: the string before a non-empty text.
    Prepend(String),
}

impl Step {
    /// `text` after this step: borrowed only where nothing changes (the callers take a borrowed
    /// result for `text` itself).
    pub fn apply<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self {
            Step::Form(f) => f.normalize(text),
            Step::Lowercase => lowercase(text),
            Step::StripMarks => strip_marks(text),
            Step::Strip { left, right } => {
                let mut t = text;
                if *left {
                    t = t.trim_start_matches(char::is_whitespace);
                }
                if *right {
                    t = t.trim_end_matches(char::is_whitespace);
                }
                if t.len() == text.len() {
                    Cow::Borrowed(text)
                } else {
                    Cow::Owned(t.to_owned())
                }
            }
            Step::Replace { from, to } if text.contains(from.as_str()) => Cow::Owned(text.replace(from.as_str(), to)),
            Step::Replace { .. } => Cow::Borrowed(text),
            Step::Prepend(p) if !text.is_empty() && !p.is_empty() => Cow::Owned(format!("{p}{text}")),
            Step::Prepend(_) => Cow::Borrowed(text),
        }
    }
}

/// Steps run one after the other.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    pub steps: Vec<Step>,
}

impl Program {
    /// `text` after every step (borrowed only where nothing changes it).
    pub fn apply<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for step in &self.steps {
            out = match out {
                Cow::Borrowed(t) => step.apply(t),
                Cow::Owned(s) => match step.apply(&s) {
                    Cow::Borrowed(_) => Cow::Owned(s),
                    Cow::Owned(changed) => Cow::Owned(changed),
                },
            };
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llama2() -> Program {
        Program { steps: vec![Step::Prepend("\u{2581}".into()), Step::Replace { from: " ".into(), to: "\u{2581}".into() }] }
    }

    #[test]
    fn llama2_steps() {
        assert_eq!(llama2().apply("Hello world"), "\u{2581}Hello\u{2581}world");
        assert_eq!(llama2().apply(""), "");
        assert_eq!(llama2().apply(" "), "\u{2581}\u{2581}");
    }

    #[test]
    fn unchanged_text_is_borrowed() {
        let p = Program { steps: vec![Step::Form(Form::Nfc), Step::Lowercase, Step::Replace { from: "x".into(), to: "y".into() }] };
        assert!(matches!(p.apply("abc"), Cow::Borrowed("abc")));
        assert_eq!(p.apply("AxB"), "ayb");
    }

    #[test]
    fn strip_then_more() {
        let p = Program {
            steps: vec![Step::Strip { left: true, right: true }, Step::Prepend("<".into()), Step::Strip { left: false, right: true }],
        };
        assert_eq!(p.apply(" \u{3000}a b\n"), "<a b");
        assert!(matches!(p.apply("   "), Cow::Owned(e) if e.is_empty()));
        let only = Program { steps: vec![Step::Strip { left: true, right: false }] };
        assert!(matches!(only.apply("  ab "), Cow::Owned(e) if e == "ab "));
        assert!(matches!(only.apply("ab "), Cow::Borrowed("ab ")));
    }
}
