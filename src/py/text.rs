//! Text with lone surrogates made encodable, as tiktoken does it (`bpekit._core.fix_surrogates`,
//! and the encoders' own argument checks in `calls.rs`).
//!
//! A Python `str` may hold surrogate code points, which UTF-8 cannot carry. tiktoken replaces them
//! with `text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")`: a high surrogate
//! followed by a low one becomes the character the pair encodes, every other surrogate becomes
//! U+FFFD. That decode calls a Python error handler once per lone surrogate (3.8x the time of
//! benign text at 10 MB of them). Here the string's code points are copied out once
//! (`PyUnicode_AsUCS4`) and one Rust pass writes the same string as UTF-8
//! (`crate::surrogates`).
//!
//! Also Hugging Face's text rules for the Python stages (`normalize_unicode`, `strip_marks`,
//! `lowercase`, ...) and `Normalizer`, the program of normalizer steps the Rust pipelines run
//! (`crate::normalizer`).

use super::calls::HOLD_GIL_BELOW;
use super::{run, run_held};
use crate::hf_unicode::Form;
use crate::normalizer::{Program, ReplaceRegex, Step};
use crate::surrogates::join_surrogates;
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use std::borrow::Cow;

/// The UTF-8 of `s` with its lone surrogates fixed as tiktoken does (any `str`; one without
/// surrogates comes back unchanged).
pub fn fixed(s: &Bound<'_, PyString>) -> PyResult<String> {
    let py = s.py();
    let n = s.len()?;
    let mut units = vec![0u32; n];
    // SAFETY: `units` has room for the string's `n` code points; `copy_null` 0 writes no
    // terminator. Returns null with a Python error set on failure.
    let copied = unsafe { ffi::PyUnicode_AsUCS4(s.as_ptr(), units.as_mut_ptr(), n as ffi::Py_ssize_t, 0) };
    if copied.is_null() {
        return Err(PyErr::fetch(py));
    }
    if n < HOLD_GIL_BELOW {
        return run_held(py, || Ok(join_surrogates(&units)));
    }
    run(py, || Ok(join_surrogates(&units)))
}

/// The UTF-8 of `s`, borrowed from CPython's cache, or with its lone surrogates fixed (see
/// [`fixed`]) when it has any.
pub fn utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, str>> {
    match s.to_str() {
        Ok(t) => Ok(Cow::Borrowed(t)),
        Err(_) => Ok(Cow::Owned(fixed(s)?)),
    }
}

/// `text` with lone surrogates fixed as tiktoken does (see the module doc).
#[pyfunction]
pub fn fix_surrogates(text: &Bound<'_, PyString>) -> PyResult<String> {
    fixed(text)
}

/// The Unicode form named `name` (`"NFC"`, `"NFD"`, `"NFKC"`, `"NFKD"`), or a `ValueError`.
pub(super) fn form_arg(name: &str) -> PyResult<Form> {
    Form::parse(name).ok_or_else(|| PyValueError::new_err(format!("unknown Unicode form {name:?} (NFC, NFD, NFKC or NFKD)")))
}

/// `text` itself where `changed` borrows it (nothing changed), else a new string.
fn same_or_new<'py>(text: &Bound<'py, PyString>, changed: Cow<'_, str>) -> Bound<'py, PyString> {
    match changed {
        Cow::Borrowed(_) => text.clone(),
        Cow::Owned(changed) => PyString::new(text.py(), &changed),
    }
}

/// `text` in the Unicode normalization form `form` as Hugging Face's normalizers compute it
/// (`crate::hf_unicode`): the same object when it is in that form already. A text with lone
/// surrogates raises `UnicodeEncodeError` (the caller splits it at them).
#[pyfunction]
pub fn normalize_unicode<'py>(form: &str, text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyString>> {
    Ok(same_or_new(text, form_arg(form)?.normalize(text.to_str()?)))
}

/// `text` in the Unicode normalization form `form` with Hugging Face's change of each char
/// (`crate::hf_unicode::Form::with_changes`): the normalized text and one change per char of it
/// (`bpekit.pipeline.aligned`, which maps offsets through the normalizer).
#[pyfunction]
pub fn normalize_unicode_changes(form: &str, text: &str) -> PyResult<(String, Vec<isize>)> {
    let form = form_arg(form)?;
    let (mut out, mut changes) = (String::with_capacity(text.len()), Vec::with_capacity(text.len()));
    for (c, change) in form.with_changes(text) {
        out.push(c);
        changes.push(change);
    }
    Ok((out, changes))
}

/// `text` without its combining marks, as Hugging Face's `StripAccents` filters it
/// (`crate::hf_unicode::strip_marks`): the same object when it has none.
#[pyfunction]
pub fn strip_marks<'py>(text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyString>> {
    Ok(same_or_new(text, crate::hf_unicode::strip_marks(text.to_str()?)))
}

/// `text` lowercased as Hugging Face's `Lowercase` does (`crate::hf_unicode::lowercase`: Rust's
/// casing tables): the same object when nothing changes.
#[pyfunction]
pub fn lowercase<'py>(text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyString>> {
    Ok(same_or_new(text, crate::hf_unicode::lowercase(text.to_str()?)))
}

/// The runs of `text` by a pre-tokenizer's character class (`"numeric"`, `"punctuation"`;
/// `crate::hf_unicode::class_runs`), in characters.
#[pyfunction]
pub fn class_runs(text: &Bound<'_, PyString>, class: &str) -> PyResult<Vec<(usize, usize, bool)>> {
    let class = crate::hf_unicode::Class::parse(class)
        .ok_or_else(|| pyo3::exceptions::PyValueError::new_err(format!("unknown character class {class:?} (numeric, punctuation, bert_removed, bert_whitespace, nonspacing_mark or bert_chinese)")))?;
    Ok(crate::hf_unicode::class_runs(text.to_str()?, class))
}

/// The hand-written splitter family (`"gpt2"`, `"cl100k"`, `"llama3"`, `"qwen2"`, `"o200k"`,
/// `"qwen35"`, `"seedcoder"`, `"tekken"`, `"kimik2"`) that stands in for the regex `pattern` (an exact string match), or `None`: the
/// pattern then runs on fancy-regex.
#[pyfunction]
pub fn hand_written_family(pattern: &str) -> Option<String> {
    crate::pretokenize::Known::detect(pattern).map(|k| format!("{k:?}").to_lowercase())
}

/// How the Rust core splits text by `pattern` as a tiktoken-style pre-tokenizer: `("hand",
/// family)` (a hand-written splitter, [`hand_written_family`]), `("compiled", "")` (the compiled
/// matcher, `crate::pretokenize::compiled`), or `("regex", why)` (fancy-regex, and why the
/// pattern is not compiled). An invalid pattern raises `PatternError`.
#[pyfunction]
pub fn pattern_engine(py: Python<'_>, pattern: &str) -> PyResult<(String, String)> {
    use crate::pretokenize::{compiled::Program, RegexSplitter};
    if let Some(family) = hand_written_family(pattern) {
        return Ok(("hand".into(), family));
    }
    let splitter = run(py, || RegexSplitter::new(pattern))?;
    if splitter.is_compiled() {
        return Ok(("compiled".into(), String::new()));
    }
    let why = match Program::compile(pattern) {
        Err(refusal) => refusal.to_string(),
        Ok(_) => "the compiled matcher splits the probe text otherwise than the regex engine".to_string(),
    };
    Ok(("regex".into(), why))
}

/// Whether `c` is a `\w` character of the `regex` crate (`crate::hf_unicode::is_word_char`).
#[pyfunction]
pub fn is_word_char(c: char) -> PyResult<bool> {
    crate::hf_unicode::is_word_char(c).ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("the regex crate's Unicode word tables are missing"))
}

/// `bpekit._core.Normalizer(steps)`: a program of Hugging Face normalizers that the Rust
/// pipelines run themselves ([`crate::normalizer`]). `steps` is a list of tuples, as
/// `Normalizer.core_steps()` makes them: `("form", "NFC")` (or NFD, NFKC, NFKD),
/// `("lowercase",)`, `("strip_accents",)`, `("strip", left, right)`, `("replace", literal,
/// content)`, `("replace_regex", regex, content)` (`ValueError` for a regex that may match the
/// empty string or that the `regex` crate does not take), `("prepend", text)`, `("bert", clean_text,
/// handle_chinese_chars, strip_accents, lowercase)`, `("nmt",)`, `("byte_level",)` and
/// `("precompiled", _core.Precompiled(blob))`.
#[pyclass(frozen, module = "bpekit._core")]
pub struct Normalizer {
    pub(super) program: Program,
}

#[pymethods]
impl Normalizer {
    #[new]
    fn new(steps: Vec<Bound<'_, PyTuple>>) -> PyResult<Self> {
        let steps = steps.iter().map(step_arg).collect::<PyResult<Vec<_>>>()?;
        Ok(Normalizer { program: Program { steps } })
    }

    /// `text` after every step (the same object when nothing changes it). A text with lone
    /// surrogates raises `UnicodeEncodeError`.
    fn normalize<'py>(&self, text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyString>> {
        Ok(same_or_new(text, self.program.apply(text.to_str()?)))
    }

    /// `Normalizer.align` of the steps in Rust (`crate::aligned`): `text` after every step, the
    /// input span of each of its chars and the empty span at its start (`Aligned.origin`), or
    /// `None` where no step changes it. The text's own
    /// spans are `spans` (one per char), or with none those of a text whose first `lead` chars
    /// (a prefix) span the input char at `origin` and whose others are the input's chars from
    /// `origin` on (`bpekit.pipeline.aligned.Aligned`). A text with lone surrogates raises
    /// `UnicodeEncodeError`, spans of another length `ValueError`.
    #[pyo3(signature = (text, spans, origin = 0, lead = 0))]
    fn align(&self, py: Python<'_>, text: &str, spans: Option<Vec<(usize, usize)>>, origin: usize, lead: usize) -> PyResult<Option<(String, crate::offsets::Spans, usize)>> {
        let work = || {
            let n = text.chars().count();
            let spans = match spans {
                Some(s) if s.len() != n => return Err(PyValueError::new_err(format!("align: {} spans for {n} chars", s.len()))),
                Some(s) => s,
                None => (0..n).map(|i| crate::offsets::lead_span(i, origin, lead)).collect(),
            };
            let done = self.program.align(&crate::aligned::Aligned::new(text.to_owned(), spans, origin));
            Ok(done.map(|a| (a.text, a.spans, a.origin)))
        };
        if text.len() < HOLD_GIL_BELOW {
            work()
        } else {
            py.detach(work)
        }
    }

    /// The char ranges of `text` that a program of one regex `Replace` replaces, in order (for
    /// `Aligned.replace`); `ValueError` for any other program.
    fn replace_matches(&self, py: Python<'_>, text: &str) -> PyResult<Vec<(usize, usize)>> {
        let [Step::ReplaceRegex { regex, .. }] = self.program.steps.as_slice() else {
            return Err(PyValueError::new_err("replace_matches needs a program of one regex Replace"));
        };
        py.detach(|| {
            let mut chars = crate::offsets::Boundaries::new(text.as_bytes());
            Ok(regex.matches(text).map(|(s, e)| (chars.index(s), chars.index(e))).collect())
        })
    }

    fn __repr__(&self) -> String {
        format!("Normalizer({:?})", self.program.steps)
    }
}

/// One step of a `Normalizer`'s list, or a `ValueError` naming what is wrong with it.
fn step_arg(t: &Bound<'_, PyTuple>) -> PyResult<Step> {
    let bad = || PyValueError::new_err(format!("not a normalizer step: {t}"));
    let name: String = t.get_item(0).map_err(|_| bad())?.extract().map_err(|_| bad())?;
    let text = |i: usize| -> PyResult<String> { t.get_item(i).map_err(|_| bad())?.extract().map_err(|_| bad()) };
    let flag = |i: usize| -> PyResult<bool> { t.get_item(i).map_err(|_| bad())?.extract().map_err(|_| bad()) };
    let step = match (name.as_str(), t.len()) {
        ("form", 2) => Step::Form(form_arg(&text(1)?)?),
        ("lowercase", 1) => Step::Lowercase,
        ("strip_accents", 1) => Step::StripMarks,
        ("strip", 3) => Step::Strip { left: flag(1)?, right: flag(2)? },
        ("replace", 3) => Step::Replace { from: text(1)?, to: text(2)? },
        ("replace_regex", 3) => {
            let regex = ReplaceRegex::new(&text(1)?).map_err(|e| PyValueError::new_err(format!("not a normalizer regex: {e}")))?;
            Step::ReplaceRegex { regex, to: text(2)? }
        }
        ("prepend", 2) => Step::Prepend(text(1)?),
        ("bert", 5) => Step::Bert(crate::hf_unicode::Bert { clean_text: flag(1)?, chinese: flag(2)?, strip_accents: flag(3)?, lowercase: flag(4)? }),
        ("nmt", 1) => Step::Nmt,
        ("byte_level", 1) => Step::ByteLevel,
        ("precompiled", 2) => Step::Precompiled(t.get_item(1).map_err(|_| bad())?.cast::<super::precompiled::Precompiled>().map_err(|_| bad())?.get().inner.clone()),
        _ => return Err(bad()),
    };
    Ok(step)
}
