//! Hugging Face normalizers that the Rust pipelines apply themselves: a [`Program`] of steps, each
//! exactly one `tokenizer.json` normalizer (`NFC` ... `NFKD`, `Lowercase`, `StripAccents`,
//! `Strip`, `Replace` of a literal string or of a regex the `regex` crate reads as Oniguruma
//! does, `Prepend`), run in order as a `Sequence` runs them. The Python stages
//! (`bpekit.pipeline.normalizers`) are the reference and say which of them a program may stand
//! for (`core_steps`); anything else (another regex `Replace`, a subclass) stays a Python call
//! per text.
//!
//! Performance note: Llama-2-style `tokenizer.json` files (`Sequence[Prepend("▁"), Replace(" ",
//! "▁")]`) called Python once per text, holding the GIL, before a batch's threads could start;
//! with a program every text is normalized on the batch's threads (`src/PERFORMANCE.md`,
//! "Nineteenth round").

use crate::hf_unicode::{byte_level, lowercase, nmt, strip_marks, Bert, Form};
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
    /// `Replace` of a regex ([`ReplaceRegex`]: CLIP's `\s+` -> `" "`), `to` taken literally.
    ReplaceRegex { regex: ReplaceRegex, to: String },
    /// `Prepend`: the string before a non-empty text.
    Prepend(String),
    /// `BertNormalizer`: cleaning, spaces around CJK ideographs, accents stripped, lowercase.
    Bert(Bert),
    /// `Nmt`: control characters removed, SentencePiece's other whitespace made a space.
    Nmt,
    /// The `ByteLevel` normalizer: each UTF-8 byte as its byte-level character.
    ByteLevel,
    /// `Precompiled`: a SentencePiece character map as `tokenizers` applies it.
    Precompiled(std::sync::Arc<crate::precompiled::Precompiled>),
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
            Step::Replace { from, to } => replace(text, from, to),
            Step::ReplaceRegex { regex, to } => regex.0.replace_all(text, regex::NoExpand(to)),
            Step::Prepend(p) if !text.is_empty() && !p.is_empty() => Cow::Owned(format!("{p}{text}")),
            Step::Prepend(_) => Cow::Borrowed(text),
            Step::Bert(b) => b.normalize(text),
            Step::Nmt => nmt(text),
            Step::ByteLevel => byte_level(text),
            Step::Precompiled(p) => p.normalize(text),
        }
    }
}

/// The regex of a [`Step::ReplaceRegex`]: one the `regex` crate runs (no lookaround, no
/// backreference: linear time, and a search that cannot fail) and that matches at least one
/// character, so that Hugging Face's handling of empty matches never comes up. Its syntax is the
/// one `bpekit.pipeline.onig.onig_to_regex` writes for the portable patterns (`onig.portable`),
/// which Oniguruma reads alike.
#[derive(Clone, Debug)]
pub struct ReplaceRegex(regex::Regex);

impl ReplaceRegex {
    /// The regex of `pattern`, or why it cannot be one.
    pub fn new(pattern: &str) -> Result<ReplaceRegex, String> {
        let hir = regex_syntax::parse(pattern).map_err(|e| format!("{pattern:?}: {e}"))?;
        if hir.properties().minimum_len().unwrap_or(0) == 0 {
            return Err(format!("{pattern:?} may match the empty string"));
        }
        regex::Regex::new(pattern).map(ReplaceRegex).map_err(|e| format!("{pattern:?}: {e}"))
    }

    /// The byte ranges of `text` this regex replaces, in order.
    pub fn matches<'a>(&'a self, text: &'a str) -> impl Iterator<Item = (usize, usize)> + 'a {
        self.0.find_iter(text).map(|m| (m.start(), m.end()))
    }
}

impl PartialEq for ReplaceRegex {
    fn eq(&self, other: &ReplaceRegex) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

impl Eq for ReplaceRegex {}

/// Where `c` is in `text` (byte offsets, in order): a plain scan for `c`'s first byte, each hit
/// checked for the rest of `c`. For characters as frequent as spaces, `memchr` (what
/// `match_indices` calls) pays its set-up every few bytes: it was 19% of a Llama-2-style batch
/// (`Replace(" ", "▁")`, then the cut before each `▁`).
pub fn char_positions(text: &str, c: char) -> impl Iterator<Item = usize> + '_ {
    let mut utf8 = [0u8; 4];
    let n = c.encode_utf8(&mut utf8).len();
    let (first, bytes) = (utf8[0], text.as_bytes());
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            let i = at;
            at += 1;
            // (the rest compared byte by byte: a slice compare is a `memcmp` call per hit)
            if bytes[i] == first && (1..n).all(|k| bytes.get(i + k) == Some(&utf8[k])) {
                at = i + n;
                return Some(i);
            }
        }
        None
    })
}

/// `text` with every match of `from` (left to right, not overlapping) replaced by `to`, in one
/// pass; a one-character `from` (Llama 2's `" "`) is found by [`char_positions`], not by
/// `str::replace`'s two-way string search (14% of a Llama-2-style batch).
fn replace<'a>(text: &'a str, from: &str, to: &str) -> Cow<'a, str> {
    let mut out = String::new();
    if push_replaced(text, from, to, &mut out, true) {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

/// Appends `text` with every match of `from` replaced by `to` to `out`; with `lazy`, appends
/// nothing where nothing matches. Whether anything matched.
fn push_replaced(text: &str, from: &str, to: &str, out: &mut String, lazy: bool) -> bool {
    fn push(text: &str, matches: impl Iterator<Item = (usize, usize)>, to: &str, out: &mut String, lazy: bool) -> bool {
        let (mut done, mut any) = (0, false);
        for (at, len) in matches {
            if !any {
                out.reserve(text.len() + if to.len() > len { text.len() / 2 } else { 0 });
                any = true;
            }
            out.push_str(&text[done..at]);
            out.push_str(to);
            done = at + len;
        }
        if any || !lazy {
            out.push_str(&text[done..]);
        }
        any
    }
    let mut chars = from.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => push(text, char_positions(text, c).map(|at| (at, c.len_utf8())), to, out, lazy),
        _ => push(text, text.match_indices(from).map(|(at, m)| (at, m.len())), to, out, lazy),
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
        let mut steps = self.steps.iter().peekable();
        while let Some(step) = steps.next() {
            // `Prepend` then `Replace` of one character (Llama 2's normalizer): one pass into one
            // new string (no match can span the prepended text and the text)
            if let (Step::Prepend(p), Some(Step::Replace { from, to })) = (step, steps.peek()) {
                if !out.is_empty() && !p.is_empty() && from.chars().count() == 1 {
                    let mut joined = String::with_capacity(p.len() + out.len());
                    push_replaced(p, from, to, &mut joined, false);
                    push_replaced(&out, from, to, &mut joined, false);
                    out = Cow::Owned(joined);
                    steps.next();
                    continue;
                }
            }
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
        // the fused pass, and the same steps apart
        let apart = |p: &Program, t: &str| p.steps.iter().fold(t.to_string(), |t, s| s.apply(&t).into_owned());
        let odd = Program { steps: vec![Step::Prepend(" x ".into()), Step::Replace { from: " ".into(), to: "".into() }, Step::Lowercase] };
        for t in ["a b", " ", "", "\u{e9} \u{2581}"] {
            assert_eq!(llama2().apply(t), apart(&llama2(), t));
            assert_eq!(odd.apply(t), apart(&odd, t));
        }
        let r = |from: &str, to: &str, text: &str| Step::Replace { from: from.into(), to: to.into() }.apply(text).into_owned();
        assert_eq!(r("aa", "b", "aaaaa"), "bba");
        assert_eq!(r("\u{e9}", "", "\u{e9}t\u{e9}"), "t");
        assert_eq!(r(" ", "\u{2581}", "a  b "), "a\u{2581}\u{2581}b\u{2581}");
        assert_eq!(r("xy", "z", "abc"), "abc");
    }

    #[test]
    fn char_positions_as_match_indices() {
        for text in ["", "a b  c ", "\u{2581}a\u{2581}\u{2581}", "\u{e2}\u{2580}\u{2581}x\u{2581}", "\u{1f600} \u{1f600}"] {
            for c in [' ', '\u{2581}', '\u{1f600}', 'x'] {
                let want: Vec<usize> = text.match_indices(c).map(|(at, _)| at).collect();
                assert_eq!(char_positions(text, c).collect::<Vec<_>>(), want, "{text:?} {c:?}");
            }
        }
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

    /// A regex `Replace`: every match replaced by the content taken literally (`$1` is text),
    /// the text borrowed where nothing matches; a regex that may match nothing is refused.
    #[test]
    fn regex_replace() {
        let step = |p: &str, to: &str| Step::ReplaceRegex { regex: ReplaceRegex::new(p).unwrap(), to: to.into() };
        assert_eq!(step(r"\s+", " ").apply("a \n\t b\u{3000}c\n").into_owned(), "a b c ");
        assert_eq!(step(r" {2,}", "$1").apply("a  b c").into_owned(), "a$1b c");
        assert!(matches!(step(r"\s+", " ").apply("abc"), Cow::Borrowed("abc")));
        let matches: Vec<_> = ReplaceRegex::new(r"\s+").unwrap().matches("é \n x y").collect();
        assert_eq!(matches, vec![(2, 5), (6, 7)]);
        for bad in [r"\s*", r"a|", r"\b", "(", r"(?=a)"] {
            assert!(ReplaceRegex::new(bad).is_err(), "{bad}");
        }
        assert_eq!(ReplaceRegex::new(r"\s+").unwrap(), ReplaceRegex::new(r"\s+").unwrap());
    }
}
