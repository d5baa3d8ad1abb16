//! Unicode as Hugging Face's `tokenizers` sees it, for the stages bpekit runs the same way: the
//! normalization forms of its `NFC`, `NFD`, `NFKC` and `NFKD` normalizers and the marks its
//! `StripAccents` removes, from the crate `tokenizers` itself uses (`unicode-normalization-alignments`
//! 0.1.12, Unicode 9.0 tables); `Lowercase` and the `Digits` pre-tokenizer by Rust's own tables
//! (`char::to_lowercase`, `char::is_numeric`); the `Punctuation` pre-tokenizer by the
//! `unicode_categories` crate it uses; `single_word` added tokens' word characters by the `regex`
//! crate's `\w`. So text normalizes, splits and matches as it does there. Python's `unicodedata`
//! (Unicode 14 on Python 3.11, newer on later versions) differs on marks assigned since 9.0:
//! it reorders `"a\u{1DF6}\u{323}"` (U+1DF6, Unicode 10, combining class 232) and composes
//! `"\u{1EA1}\u{1DF6}"`, where Hugging Face leaves it as it is.
//!
//! Performance note: a text the form's quick check passes (nearly all of it: the multilingual
//! benchmark sample changes in 38 of 750 blocks under NFC) is returned as it is, with no copy;
//! ASCII never changes. Before session 18 the pipelines called Python's `unicodedata` through a
//! Python method per text, holding the GIL, before a batch's threads started: Qwen 2's GGUF
//! (NFC) encoded the multilingual sample at half the speed it has without its normalizer.

use std::borrow::Cow;
use unicode_normalization_alignments::char::is_combining_mark;
use unicode_normalization_alignments::{is_nfc_quick, is_nfd_quick, is_nfkc_quick, is_nfkd_quick, IsNormalized, UnicodeNormalization};

/// A Unicode normalization form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
}

impl Form {
    /// The form named `name` (`"NFC"`, `"NFD"`, `"NFKC"`, `"NFKD"`).
    pub fn parse(name: &str) -> Option<Form> {
        match name {
            "NFC" => Some(Form::Nfc),
            "NFD" => Some(Form::Nfd),
            "NFKC" => Some(Form::Nfkc),
            "NFKD" => Some(Form::Nfkd),
            _ => None,
        }
    }

    /// `text` in this form (borrowed where it is already).
    pub fn normalize(self, text: &str) -> Cow<'_, str> {
        if text.is_ascii() {
            return Cow::Borrowed(text); // no ASCII character decomposes or composes
        }
        let quick = match self {
            Form::Nfc => is_nfc_quick(text.chars()),
            Form::Nfd => is_nfd_quick(text.chars()),
            Form::Nfkc => is_nfkc_quick(text.chars()),
            Form::Nfkd => is_nfkd_quick(text.chars()),
        };
        if quick == IsNormalized::Yes {
            return Cow::Borrowed(text);
        }
        Cow::Owned(self.full(text))
    }

    /// `text` in this form by the full normalization (no quick check).
    fn full(self, text: &str) -> String {
        self.with_changes(text).map(|(c, _)| c).collect()
    }

    /// Each char of `text` in this form with the crate's change beside it, which Hugging Face's
    /// `NormalizedString::transform` turns into offsets: 0 for a char that stands for the next
    /// char of the input, 1 for one inserted after the previous, `-n` for one that also stands
    /// for the `n` input chars after it (`bpekit.pipeline.aligned`).
    pub fn with_changes(self, text: &str) -> Box<dyn Iterator<Item = (char, isize)> + '_> {
        match self {
            Form::Nfc => Box::new(text.nfc()),
            Form::Nfd => Box::new(text.nfd()),
            Form::Nfkc => Box::new(text.nfkc()),
            Form::Nfkd => Box::new(text.nfkd()),
        }
    }
}

/// `text` without its combining marks (General_Category Mark: Mn, Mc and Me, in the same Unicode
/// 9.0 tables), as Hugging Face's `StripAccents` filters it (borrowed where there are none).
pub fn strip_marks(text: &str) -> Cow<'_, str> {
    if text.is_ascii() || !text.chars().any(is_combining_mark) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().filter(|&c| !is_combining_mark(c)).collect())
}

/// A combining mark (Mn, Mc, Me) of those tables: what [`strip_marks`] removes.
pub fn is_mark(c: char) -> bool {
    is_combining_mark(c)
}

/// `text` lowercased one character at a time by Rust's `char::to_lowercase` (no final-sigma
/// rule), as Hugging Face's `Lowercase` does; borrowed where nothing changes.
pub fn lowercase(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        if !text.bytes().any(|b| b.is_ascii_uppercase()) {
            return Cow::Borrowed(text);
        }
        return Cow::Owned(text.to_ascii_lowercase());
    }
    let mut chars = text.chars();
    if chars.all(|c| {
        let mut lower = c.to_lowercase();
        lower.next() == Some(c) && lower.next().is_none()
    }) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().flat_map(char::to_lowercase).collect())
}

/// Runs `f` on `text` (a step's result so far), keeping it borrowed where `f` changes nothing.
fn then<'a>(text: Cow<'a, str>, f: impl Fn(&str) -> Cow<'_, str>) -> Cow<'a, str> {
    match text {
        Cow::Borrowed(t) => f(t),
        Cow::Owned(t) => match f(&t) {
            Cow::Borrowed(_) => Cow::Owned(t),
            Cow::Owned(changed) => Cow::Owned(changed),
        },
    }
}

/// `text` with the characters `drop` says removed and each other character `c` as `map(c)`
/// (borrowed where nothing changes): Hugging Face's `filter` then `map`, one char for one.
fn filter_map_chars<'a>(text: &'a str, drop: impl Fn(char) -> bool, map: impl Fn(char) -> char) -> Cow<'a, str> {
    if !text.chars().any(|c| drop(c) || map(c) != c) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().filter(|&c| !drop(c)).map(map).collect())
}

/// Hugging Face's `BertNormalizer` (`strip_accents` already resolved: `null` follows `lowercase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bert {
    /// Control characters, NUL and U+FFFD removed; whitespace made a space.
    pub clean_text: bool,
    /// A space on both sides of every CJK ideograph ([`is_chinese_char`]).
    pub chinese: bool,
    /// NFD, then nonspacing marks (Mn) removed.
    pub strip_accents: bool,
    /// [`lowercase`].
    pub lowercase: bool,
}

/// `BertNormalizer`'s whitespace: tab, newline, carriage return and Rust's `char::is_whitespace`.
pub fn bert_is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// `BertNormalizer`'s control characters: `unicode_categories`' "other" (Cc, Cf and Co in its
/// tables) but tab, newline and carriage return.
pub fn bert_is_control(c: char) -> bool {
    use unicode_categories::UnicodeCategories;
    !matches!(c, '\t' | '\n' | '\r') && c.is_other()
}

/// What `BertNormalizer`'s `clean_text` removes: NUL, U+FFFD and [`bert_is_control`].
pub fn bert_is_removed(c: char) -> bool {
    c == '\0' || c == '\u{fffd}' || bert_is_control(c)
}

/// `BertNormalizer`'s "Chinese characters": the CJK Unified Ideographs blocks and extensions A-E,
/// and the two compatibility blocks, as its table lists them.
pub fn is_chinese_char(c: char) -> bool {
    matches!(c as u32, 0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B920..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// A nonspacing mark (Mn) of `unicode_categories`' tables, which `BertNormalizer` strips.
pub fn is_nonspacing_mark(c: char) -> bool {
    use unicode_categories::UnicodeCategories;
    c.is_mark_nonspacing()
}

impl Bert {
    /// `text` normalized as Hugging Face's `BertNormalizer` does, its four steps in its order
    /// (borrowed where nothing changes).
    pub fn normalize<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        if self.clean_text {
            out = then(out, |t| filter_map_chars(t, bert_is_removed, |c| if bert_is_whitespace(c) { ' ' } else { c }));
        }
        if self.chinese {
            out = then(out, |t| {
                if !t.chars().any(is_chinese_char) {
                    return Cow::Borrowed(t);
                }
                let mut s = String::with_capacity(t.len() + 16);
                for c in t.chars() {
                    if is_chinese_char(c) {
                        s.extend([' ', c, ' ']);
                    } else {
                        s.push(c);
                    }
                }
                Cow::Owned(s)
            });
        }
        if self.strip_accents {
            out = then(out, |t| {
                let nfd = Form::Nfd.normalize(t);
                if !nfd.chars().any(is_nonspacing_mark) {
                    return nfd;
                }
                Cow::Owned(nfd.chars().filter(|&c| !is_nonspacing_mark(c)).collect())
            });
        }
        if self.lowercase {
            out = then(out, lowercase);
        }
        out
    }
}

/// Hugging Face's `Nmt` normalizer: ASCII and C1 control characters that SentencePiece's
/// `nmt_nfkc` drops removed, and the code points it counts as whitespace made a space.
pub fn nmt(text: &str) -> Cow<'_, str> {
    filter_map_chars(text, nmt_removes, nmt_char)
}

/// What [`nmt`] removes: U+0001-0008, U+000B, U+000E-001F, U+007F, U+008F, U+009F.
pub fn nmt_removes(c: char) -> bool {
    matches!(c as u32, 0x01..=0x08 | 0x0B | 0x0E..=0x1F | 0x7F | 0x8F | 0x9F)
}

/// What [`nmt`] makes of a character it keeps.
pub fn nmt_char(c: char) -> char {
    match c as u32 {
        0x09 | 0x0A | 0x0C | 0x0D | 0x1680 | 0x200B..=0x200F | 0x2028 | 0x2029 | 0x2581 | 0xFEFF | 0xFFFD => ' ',
        _ => c,
    }
}

/// Hugging Face's `ByteLevel` normalizer: each UTF-8 byte of `text` as its byte-level character
/// (GPT-2's table; an empty text stays empty). ASCII letters, digits and punctuation are their
/// own characters, so text of only those is borrowed.
pub fn byte_level(text: &str) -> Cow<'_, str> {
    if text.bytes().all(|b| b < 0x80 && crate::pairbpe::BYTE_CHARS[b as usize] as u32 == b as u32) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.bytes().map(|b| crate::pairbpe::BYTE_CHARS[b as usize]).collect())
}

/// A character class of a Hugging Face pre-tokenizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// `Digits`: `char::is_numeric`.
    Numeric,
    /// `Punctuation`: ASCII punctuation, or a `P*` character of `unicode_categories`' tables.
    Punctuation,
    /// What `BertNormalizer`'s `clean_text` removes ([`bert_is_removed`]).
    BertRemoved,
    /// `BertNormalizer`'s whitespace ([`bert_is_whitespace`]).
    BertWhitespace,
    /// A nonspacing mark ([`is_nonspacing_mark`]).
    NonspacingMark,
    /// `BertNormalizer`'s CJK ideographs ([`is_chinese_char`]).
    BertChinese,
}

impl Class {
    pub fn parse(name: &str) -> Option<Class> {
        match name {
            "numeric" => Some(Class::Numeric),
            "punctuation" => Some(Class::Punctuation),
            "bert_removed" => Some(Class::BertRemoved),
            "bert_whitespace" => Some(Class::BertWhitespace),
            "nonspacing_mark" => Some(Class::NonspacingMark),
            "bert_chinese" => Some(Class::BertChinese),
            _ => None,
        }
    }

    pub fn contains(self, c: char) -> bool {
        use unicode_categories::UnicodeCategories;
        match self {
            Class::Numeric => c.is_numeric(),
            Class::Punctuation => c.is_ascii_punctuation() || c.is_punctuation(),
            Class::BertRemoved => bert_is_removed(c),
            Class::BertWhitespace => bert_is_whitespace(c),
            Class::NonspacingMark => is_nonspacing_mark(c),
            Class::BertChinese => is_chinese_char(c),
        }
    }
}

/// `text` cut into runs, in characters: each character of `class` a run of its own
/// (`(i, i + 1, true)`), the characters between them one run (`false`); `[(0, 0, false)]` for
/// an empty text (what `bpekit.pipeline.pre_tokenizers` splits by).
pub fn class_runs(text: &str, class: Class) -> Vec<(usize, usize, bool)> {
    if text.is_empty() {
        return vec![(0, 0, false)];
    }
    let mut runs = Vec::new();
    let (mut gap, mut n) = (0, 0);
    for (i, c) in text.chars().enumerate() {
        if class.contains(c) {
            if gap < i {
                runs.push((gap, i, false));
            }
            runs.push((i, i + 1, true));
            gap = i + 1;
        }
        n = i + 1;
    }
    if gap < n {
        runs.push((gap, n, false));
    }
    runs
}

/// Whether `c` is a word character of the `regex` crate's `\w` (alphabetic, a mark, a decimal
/// digit, connector punctuation or a join control), which a `single_word` added token may not
/// touch in Hugging Face (`^\w` / `\w$` around the match); `None` if the tables are missing.
pub fn is_word_char(c: char) -> Option<bool> {
    regex_syntax::try_is_word_character(c).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick check's shortcut gives what the full normalization gives, on text that passes
    /// it and text that does not, in every form; and marks newer than Unicode 9 stay in place.
    #[test]
    fn forms_with_and_without_the_shortcut() {
        let texts = ["", "plain ascii", "e\u{301}", "\u{1e9b}\u{323}", "한국어 \u{1100}\u{1161}", "ﬁ ① Å", "a\u{1df6}\u{323}", "Ω\u{2126}"];
        for form in [Form::Nfc, Form::Nfd, Form::Nfkc, Form::Nfkd] {
            for t in texts {
                assert_eq!(form.normalize(t), form.full(t), "{form:?} {t:?}");
            }
        }
        assert_eq!(Form::Nfc.normalize("e\u{301}"), "\u{e9}");
        assert_eq!(Form::Nfd.normalize("\u{e9}"), "e\u{301}");
        assert_eq!(Form::Nfkc.normalize("ﬁ"), "fi");
        assert_eq!(Form::Nfc.normalize("a\u{1df6}\u{323}"), "a\u{1df6}\u{323}");
        assert!(matches!(Form::Nfc.normalize("déjà vu"), Cow::Borrowed(_)));
        assert_eq!(Form::parse("NFKC"), Some(Form::Nfkc));
        assert_eq!(Form::parse("nfc"), None);
    }

    #[test]
    fn bert_nmt_and_byte_level() {
        let all = Bert { clean_text: true, chinese: true, strip_accents: true, lowercase: true };
        assert_eq!(all.normalize("H\u{e9}llo\tW\u{f6}rld \u{4e2d}\u{56fd}\u{0}x\u{fffd}\u{200b}"), "hello world  \u{4e2d}  \u{56fd} x");
        // Mn removed after NFD, Mc (U+0903) and Me (U+20DD) kept; U+200B is Cf (removed), U+3000 whitespace
        assert_eq!(all.normalize("a\u{301}\u{903}\u{20dd}\u{200b}\u{3000}b"), "a\u{903}\u{20dd} b");
        let none = Bert { clean_text: false, chinese: false, strip_accents: false, lowercase: false };
        assert!(matches!(none.normalize("\u{0}A\u{4e2d}\u{e9}"), Cow::Borrowed(_)));
        assert!(matches!(all.normalize("plain text"), Cow::Borrowed(_)));
        assert_eq!(nmt("a\u{1}b\tc\u{200d}d\u{2581}e\u{9f}"), "ab c d e");
        assert!(matches!(nmt("plain"), Cow::Borrowed(_)));
        assert_eq!(byte_level("a b\u{e9}"), "a\u{120}b\u{c3}\u{a9}");
        assert_eq!(byte_level(""), "");
        assert!(matches!(byte_level("ab,c"), Cow::Borrowed(_)));
    }

    #[test]
    fn lowercase_per_character() {
        assert_eq!(lowercase("ΣΑΣ İ ABC"), "σασ i\u{307} abc");
        assert!(matches!(lowercase("déjà vu"), Cow::Borrowed(_)));
        assert_eq!(lowercase("ABC"), "abc");
    }

    #[test]
    fn class_runs_in_characters() {
        assert_eq!(class_runs("", Class::Numeric), vec![(0, 0, false)]);
        assert_eq!(class_runs("é1²x", Class::Numeric), vec![(0, 1, false), (1, 2, true), (2, 3, true), (3, 4, false)]);
        assert_eq!(class_runs("a,b", Class::Punctuation), vec![(0, 1, false), (1, 2, true), (2, 3, false)]);
        assert!(Class::Punctuation.contains('$') && !Class::Punctuation.contains(' '));
    }

    #[test]
    fn word_characters_are_the_regex_crates() {
        for (c, want) in [('a', true), ('_', true), ('\u{301}', true), ('\u{203f}', true), ('\u{b2}', false), ('1', true), (' ', false)] {
            assert_eq!(is_word_char(c), Some(want), "{c:?}");
        }
    }

    /// Every kind of mark goes (a spacing vowel sign, Mc; an enclosing circle, Me), marks newer
    /// than the tables stay.
    #[test]
    fn marks_of_every_kind_are_stripped() {
        assert_eq!(strip_marks("e\u{301}\u{915}\u{93e}a\u{20dd}"), "e\u{915}a");
        assert_eq!(strip_marks("x\u{1df6}"), "x\u{1df6}");
        assert!(matches!(strip_marks("naïve"), Cow::Borrowed(_)));
    }
}
