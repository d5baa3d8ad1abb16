//! Normalized text that remembers the input span of each of its chars: the Rust twin of
//! `bpekit.pipeline.aligned.Aligned`, for the offsets of a pipeline whose normalizer is a Rust
//! [`Program`] (`Tokenizer.encode_with_offsets`). Each [`Step`] changes the text and its spans by
//! Hugging Face's rules (`NormalizedString::transform`, `filter`, `replace`, `prepend`), exactly
//! as the Python stages' `align` methods do (they are the reference the tests hold this to):
//!
//! - a char that stands for the next char of the text takes its span, an inserted one the span
//!   of the char before it, and one that also removes chars after it keeps only its own span;
//! - a removed char leaves no span; a one-for-one replacement keeps every span;
//! - each char of a `Replace`'s content takes the span of the last char it replaces;
//! - a prefix's chars all take the span of the text's first char.
//!
//! Performance note: the Python stages built a list of spans per char in Python for every text a
//! normalizer changed (a `Precompiled` + `Replace` normalizer of a converted SentencePiece model
//! spent 27% of `encode_with_offsets` there); here one pass per step that changes the text, and
//! none for a step that does not (`src/PERFORMANCE.md`, thirty-fifth round).

use crate::hf_unicode::{self, lowercase, Bert, Form};
use crate::normalizer::{char_positions, Program, Step};
use std::borrow::Cow;

/// An input span `(start, end)`, in chars of the input.
pub type Span = (usize, usize);

/// `text` and, for each of its chars, the input span it stands for; `origin`: the empty span at
/// the very start (for a char inserted before every other).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aligned {
    pub text: String,
    pub spans: Vec<Span>,
    pub origin: usize,
}

impl Aligned {
    /// `text` with its spans (one per char).
    pub fn new(text: String, spans: Vec<Span>, origin: usize) -> Aligned {
        Aligned { text, spans, origin }
    }

    /// `text` as it is, each char spanning itself.
    pub fn of(text: &str) -> Aligned {
        Aligned { text: text.to_owned(), spans: (0..text.chars().count()).map(|i| (i, i + 1)).collect(), origin: 0 }
    }

    /// The input span of chars `a..b` of the text (`Aligned.map`): from the start of the first's
    /// span to the end of the last's; for `a == b`, the empty span where char `a` starts (at the
    /// text's end: where the last char ends).
    pub fn input_span(&self, a: usize, b: usize) -> Span {
        match (self.spans.get(a), b.checked_sub(1).and_then(|l| self.spans.get(l))) {
            (Some(first), Some(last)) if a < b => (first.0, last.1),
            (Some(first), _) => (first.0, first.0),
            _ => {
                let at = self.spans.last().map_or(self.origin, |s| s.1);
                (at, at)
            }
        }
    }

    /// The span an inserted char takes when `at` chars of the text have been consumed.
    fn before(&self, at: usize) -> Span {
        match at.checked_sub(1).and_then(|i| self.spans.get(i)) {
            Some(&s) => s,
            None => (self.origin, self.origin),
        }
    }

    /// The whole text replaced by `changes`, Hugging Face's `transform`: each `(c, change)` is
    /// 0 for a char standing for the next char of the text, 1 for an inserted one, `-n` for one
    /// that stands for the next char and removes the `n` after it.
    fn transform(&self, changes: impl Iterator<Item = (char, isize)>) -> Aligned {
        let mut text = String::with_capacity(self.text.len() + 8);
        let mut spans = Vec::with_capacity(self.spans.len() + 8);
        let mut at = 0usize;
        for (c, change) in changes {
            let span = if change > 0 {
                self.before(at)
            } else {
                let span = self.spans.get(at).copied().unwrap_or_else(|| self.before(at));
                at += 1 + change.unsigned_abs();
                span
            };
            text.push(c);
            spans.push(span);
        }
        Aligned { text, spans, origin: self.origin }
    }

    /// The chars `keep` keeps, each with its span (`filter`); `None` where it keeps them all.
    fn keep(&self, keep: impl Fn(char) -> bool) -> Option<Aligned> {
        if self.text.chars().all(&keep) {
            return None;
        }
        let (mut text, mut spans) = (String::with_capacity(self.text.len()), Vec::with_capacity(self.spans.len()));
        for (c, &span) in self.text.chars().zip(&self.spans) {
            if keep(c) {
                text.push(c);
                spans.push(span);
            }
        }
        Some(Aligned { text, spans, origin: self.origin })
    }

    /// Each char `c` replaced by `map(c)`, every span kept; `None` where nothing changes.
    fn map_one(&self, map: impl Fn(char) -> char) -> Option<Aligned> {
        if self.text.chars().all(|c| map(c) == c) {
            return None;
        }
        Some(Aligned { text: self.text.chars().map(map).collect(), spans: self.spans.clone(), origin: self.origin })
    }

    /// Each of `matches` (byte ranges, in order, not overlapping, not empty) replaced by `to`,
    /// whose chars take the span of the last char the match removes; `None` for no match.
    fn replace(&self, matches: impl Iterator<Item = (usize, usize)>, to: &str) -> Option<Aligned> {
        let n = to.chars().count();
        let mut index = crate::offsets::Boundaries::new(self.text.as_bytes());
        let (mut text, mut spans) = (String::new(), Vec::new());
        let (mut done, mut done_char, mut any) = (0, 0, false);
        for (s, e) in matches {
            if !any {
                text.reserve(self.text.len());
                spans.reserve(self.spans.len());
                any = true;
            }
            let (sc, ec) = (index.index(s), index.index(e));
            text.push_str(&self.text[done..s]);
            spans.extend_from_slice(&self.spans[done_char..sc]);
            text.push_str(to);
            let last = self.before(ec);
            spans.extend(std::iter::repeat(last).take(n));
            (done, done_char) = (e, ec);
        }
        if !any {
            return None;
        }
        text.push_str(&self.text[done..]);
        spans.extend_from_slice(&self.spans[done_char..]);
        Some(Aligned { text, spans, origin: self.origin })
    }

    /// `prefix` before a non-empty text, its chars (and the first char) all spanning the first
    /// char's span; `None` for an empty text or prefix.
    fn prepend(&self, prefix: &str) -> Option<Aligned> {
        let first = *self.spans.first()?;
        if prefix.is_empty() {
            return None;
        }
        let mut text = String::with_capacity(prefix.len() + self.text.len());
        text.push_str(prefix);
        text.push_str(&self.text);
        let mut spans = Vec::with_capacity(self.spans.len() + prefix.len());
        spans.extend(std::iter::repeat(first).take(prefix.chars().count()));
        spans.extend_from_slice(&self.spans);
        Some(Aligned { text, spans, origin: self.origin })
    }

    /// The chars from byte `s` to byte `e` (char boundaries), as `Aligned.__getitem__` cuts.
    fn cut(&self, s: usize, e: usize) -> Aligned {
        let start = self.text[..s].chars().count();
        let len = self.text[s..e].chars().count();
        let origin = self.spans.get(start).filter(|_| len > 0).map_or(self.origin, |span| span.0);
        Aligned { text: self.text[s..e].to_owned(), spans: self.spans[start..start + len].to_vec(), origin }
    }

    /// The text in form `form`, each char from the crate's changes; `None` where it is already.
    fn form(&self, form: Form) -> Option<Aligned> {
        match form.normalize(&self.text) {
            Cow::Borrowed(_) => None,
            Cow::Owned(_) => Some(self.transform(form.with_changes(&self.text))),
        }
    }

    /// `Lowercase`: a char that lowers to several chars stands for itself with the first, the
    /// others inserted after it.
    fn lowercase(&self) -> Option<Aligned> {
        if let Cow::Borrowed(_) = lowercase(&self.text) {
            return None;
        }
        Some(self.transform(self.text.chars().flat_map(|c| c.to_lowercase().enumerate().map(|(k, l)| (l, isize::from(k > 0))))))
    }

    /// `BertNormalizer`'s four steps in its order (`bpekit.pipeline.normalizers.BertNormalizer.align`).
    fn bert(&self, b: &Bert) -> Option<Aligned> {
        let mut out: Option<Aligned> = None;
        let step = |out: &mut Option<Aligned>, f: &dyn Fn(&Aligned) -> Option<Aligned>| {
            if let Some(next) = f(out.as_ref().unwrap_or(self)) {
                *out = Some(next);
            }
        };
        if b.clean_text {
            step(&mut out, &|t| t.keep(|c| !hf_unicode::bert_is_removed(c)));
            step(&mut out, &|t| t.map_one(|c| if hf_unicode::bert_is_whitespace(c) { ' ' } else { c }));
        }
        if b.chinese {
            step(&mut out, &|t| {
                if !t.text.chars().any(hf_unicode::is_chinese_char) {
                    return None;
                }
                // (Hugging Face's changes: the first space stands for the ideograph, which is inserted)
                let changes = t.text.chars().flat_map(|c| {
                    let cjk = hf_unicode::is_chinese_char(c);
                    let (a, b, n) = if cjk { ((' ', 0), (c, 1), 3) } else { ((c, 0), (c, 0), 1) };
                    [a, b, (' ', 1)].into_iter().take(n)
                });
                Some(t.transform(changes))
            });
        }
        if b.strip_accents {
            step(&mut out, &|t| t.form(Form::Nfd));
            step(&mut out, &|t| t.keep(|c| !hf_unicode::is_nonspacing_mark(c)));
        }
        if b.lowercase {
            step(&mut out, &Aligned::lowercase);
        }
        out
    }
}

impl Step {
    /// `text` after this step with its spans, as the Python stage's `align` gives them; `None`
    /// where the step leaves it as it is.
    pub fn align(&self, text: &Aligned) -> Option<Aligned> {
        match self {
            Step::Form(f) => text.form(*f),
            Step::Lowercase => text.lowercase(),
            Step::StripMarks => text.keep(|c| !hf_unicode::is_mark(c)),
            Step::Strip { left, right } => {
                let mut t = text.text.as_str();
                if *left {
                    t = t.trim_start_matches(char::is_whitespace);
                }
                if *right {
                    t = t.trim_end_matches(char::is_whitespace);
                }
                if t.len() == text.text.len() {
                    return None;
                }
                let s = t.as_ptr() as usize - text.text.as_ptr() as usize;
                Some(text.cut(s, s + t.len()))
            }
            Step::Replace { from, to } => {
                let mut chars = from.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => text.replace(char_positions(&text.text, c).map(|at| (at, at + c.len_utf8())), to),
                    (Some(_), Some(_)) => text.replace(text.text.match_indices(from.as_str()).map(|(at, m)| (at, at + m.len())), to),
                    (None, _) => None, // (an empty pattern replaces nothing: no program holds one)
                }
            }
            Step::ReplaceRegex { regex, to } => text.replace(regex.matches(&text.text), to),
            Step::Prepend(p) => text.prepend(p),
            Step::Bert(b) => text.bert(b),
            Step::Nmt => match text.keep(|c| !hf_unicode::nmt_removes(c)) {
                Some(kept) => Some(kept.map_one(hf_unicode::nmt_char).unwrap_or(kept)),
                None => text.map_one(hf_unicode::nmt_char),
            },
            Step::ByteLevel => {
                if let Cow::Borrowed(_) = hf_unicode::byte_level(&text.text) {
                    return None;
                }
                let mut utf8 = [0u8; 4];
                let changes = text.text.chars().flat_map(move |c| {
                    let n = c.encode_utf8(&mut utf8).len();
                    let bytes = utf8;
                    (0..n).map(move |k| (crate::pairbpe::BYTE_CHARS[bytes[k] as usize], isize::from(k > 0)))
                });
                Some(text.transform(changes))
            }
            Step::Precompiled(p) => {
                let mut changes = Vec::new();
                match p.normalize_changes(&text.text, &mut changes) {
                    Cow::Borrowed(_) => None,
                    Cow::Owned(done) => Some(text.transform(done.chars().zip(changes.iter().copied()))),
                }
            }
        }
    }
}

impl Program {
    /// `text` after every step with its spans; `None` where no step changes it.
    pub fn align(&self, text: &Aligned) -> Option<Aligned> {
        let mut out: Option<Aligned> = None;
        for step in &self.steps {
            if let Some(next) = step.align(out.as_ref().unwrap_or(text)) {
                out = Some(next);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalizer::ReplaceRegex;

    fn plain(text: &str) -> Aligned {
        let n = text.chars().count();
        Aligned::new(text.to_owned(), (0..n).map(|i| (i, i + 1)).collect(), 0)
    }

    fn aligned(step: Step, text: &str) -> (String, Vec<Span>) {
        let a = step.align(&plain(text)).unwrap_or_else(|| plain(text));
        assert_eq!(a.text, step.apply(text), "{step:?} {text:?}");
        assert_eq!(a.text.chars().count(), a.spans.len());
        (a.text, a.spans)
    }

    #[test]
    fn steps_keep_hugging_face_spans() {
        // NFD: the decomposed marks are inserted after their base
        assert_eq!(aligned(Step::Form(Form::Nfd), "\u{e9}x"), ("e\u{301}x".into(), vec![(0, 1), (0, 1), (1, 2)]));
        // NFC: the composed char stands for the base and removes the mark
        assert_eq!(aligned(Step::Form(Form::Nfc), "e\u{301}x"), ("\u{e9}x".into(), vec![(0, 1), (2, 3)]));
        assert_eq!(aligned(Step::Lowercase, "\u{130}A"), ("i\u{307}a".into(), vec![(0, 1), (0, 1), (1, 2)]));
        assert_eq!(aligned(Step::Strip { left: true, right: true }, " ab\u{3000}"), ("ab".into(), vec![(1, 2), (2, 3)]));
        assert_eq!(aligned(Step::Replace { from: "ab".into(), to: "xyz".into() }, "cabd"), ("cxyzd".into(), vec![(0, 1), (2, 3), (2, 3), (2, 3), (3, 4)]));
        assert_eq!(aligned(Step::Replace { from: "b".into(), to: "".into() }, "abc"), ("ac".into(), vec![(0, 1), (2, 3)]));
        let regex = Step::ReplaceRegex { regex: ReplaceRegex::new(" {2,}").unwrap(), to: "\u{2581}".into() };
        assert_eq!(aligned(regex, "a   b"), ("a\u{2581}b".into(), vec![(0, 1), (3, 4), (4, 5)]));
        assert_eq!(aligned(Step::Prepend("\u{2581}".into()), "ab"), ("\u{2581}ab".into(), vec![(0, 1), (0, 1), (1, 2)]));
        assert_eq!(aligned(Step::Prepend("\u{2581}".into()), ""), ("".into(), vec![]));
        let bert = Bert { clean_text: true, chinese: true, strip_accents: true, lowercase: true };
        assert_eq!(aligned(Step::Bert(bert), "\u{c9}\x01\t\u{4e2d}"), ("e \u{20}\u{4e2d} ".into(), vec![(0, 1), (2, 3), (3, 4), (3, 4), (3, 4)]));
        assert_eq!(aligned(Step::Nmt, "a\x01\tb"), ("a b".into(), vec![(0, 1), (2, 3), (3, 4)]));
        assert_eq!(aligned(Step::ByteLevel, "\u{e9} "), ("\u{c3}\u{a9}\u{120}".into(), vec![(0, 1), (0, 1), (1, 2)]));
        assert_eq!(aligned(Step::StripMarks, "e\u{301}"), ("e".into(), vec![(0, 1)]));
    }

    #[test]
    fn a_program_runs_its_steps_in_order() {
        let p = Program { steps: vec![Step::Strip { left: false, right: true }, Step::Prepend("\u{2581}".into()), Step::Replace { from: " ".into(), to: "\u{2581}".into() }] };
        let a = p.align(&plain("a b ")).unwrap();
        assert_eq!(a.text, p.apply("a b "));
        assert_eq!(a.spans, vec![(0, 1), (0, 1), (1, 2), (2, 3)]);
        assert!(p.align(&plain("")).is_none());
        assert!(Program { steps: vec![Step::Form(Form::Nfc), Step::Lowercase] }.align(&plain("abc")).is_none());
    }
}
