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

use super::calls::HOLD_GIL_BELOW;
use super::{run, run_held};
use crate::surrogates::join_surrogates;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;
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

/// `text` in the Unicode normalization form `form` (`"NFC"`, `"NFD"`, `"NFKC"`, `"NFKD"`) as
/// Hugging Face's normalizers compute it (`crate::unicode_forms`): the same object when it is in
/// that form already. A text with lone surrogates raises `UnicodeEncodeError` (the caller splits
/// it at them).
#[pyfunction]
pub fn normalize_unicode<'py>(form: &str, text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyString>> {
    let form = crate::unicode_forms::Form::parse(form)
        .ok_or_else(|| pyo3::exceptions::PyValueError::new_err(format!("unknown Unicode form {form:?} (NFC, NFD, NFKC or NFKD)")))?;
    match form.normalize(text.to_str()?) {
        Cow::Borrowed(_) => Ok(text.clone()),
        Cow::Owned(changed) => Ok(PyString::new(text.py(), &changed)),
    }
}

/// `text` without its combining marks, as Hugging Face's `StripAccents` filters it
/// (`crate::unicode_forms::strip_marks`): the same object when it has none.
#[pyfunction]
pub fn strip_marks<'py>(text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyString>> {
    match crate::unicode_forms::strip_marks(text.to_str()?) {
        Cow::Borrowed(_) => Ok(text.clone()),
        Cow::Owned(changed) => Ok(PyString::new(text.py(), &changed)),
    }
}
