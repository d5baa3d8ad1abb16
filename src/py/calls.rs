//! The checks of one `Encoding` call, done in Rust so the common call costs no Python bytecode.
//!
//! `bpekit.encoding` states the rules (a `str`, within `bpekit.limits`' `max_input_bytes`, lone
//! surrogates replaced as tiktoken does, tiktoken's special-token policy) and raises their errors.
//! Here the passing case runs with no Python code: a type check, one dictionary lookup for the
//! limit, the UTF-8 view CPython keeps on the string, an Aho-Corasick scan for specials. Whenever a
//! rule might fail, the Python check itself runs, so every error, type and message stays the one
//! `bpekit.encoding` gives.

use super::{run, run_held};
use super::text::utf8;
use crate::error::Error;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyFrozenSet, PyList, PySet, PyString, PyTuple};
use std::borrow::Cow;

/// Inputs shorter than this (UTF-8 bytes) are encoded with the GIL held: releasing and re-taking
/// it costs more than the encoding of a short text (measured: src/PERFORMANCE.md).
pub const HOLD_GIL_BELOW: usize = 2048;

/// The special-token policies that take the fast path (tiktoken's rules, `Encoding.encode`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Policy {
    /// The default (`allowed_special` empty, `disallowed_special="all"`): any special token in
    /// the text is an error, none is matched.
    Refuse,
    /// `allowed_special="all"` (with `disallowed_special` `"all"` or empty): every special matched.
    All,
    /// `allowed_special` empty, `disallowed_special` empty: special-token text is ordinary text.
    Ordinary,
    /// `allowed_special` a set of strings, `disallowed_special="all"`: the specials named in the
    /// set are matched, any other special token in the text is an error (strings of the set that
    /// are not special tokens change nothing, as in tiktoken).
    Only(Box<Only>),
}

/// The masks of [`Policy::Only`], indexed as the encoder's special tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Only {
    pub allowed: Vec<bool>,
    /// `!allowed`: the specials refused (kept, not recomputed per text of a batch).
    pub refused: Vec<bool>,
}

impl Only {
    pub fn new(allowed: Vec<bool>) -> Only {
        let refused = allowed.iter().map(|a| !a).collect();
        Only { allowed, refused }
    }
}

impl Policy {
    /// The policy code the Python side passes (`0`, `1`, `2` as in `bpekit.encoding`).
    pub fn from_code(code: u8) -> PyResult<Self> {
        match code {
            0 => Ok(Policy::Refuse),
            1 => Ok(Policy::All),
            2 => Ok(Policy::Ordinary),
            _ => Err(pyo3::exceptions::PyValueError::new_err(format!("unknown policy code {code}"))),
        }
    }

    /// The policy of `allowed_special` / `disallowed_special` (`None`: not given, the default),
    /// when it is one of the three; `None` sends the call to the general (Python) path. Only exact
    /// builtin types are recognised, so no user `__eq__`, `__len__` or `__iter__` is skipped.
    pub fn of(allowed: Option<&Bound<'_, PyAny>>, disallowed: Option<&Bound<'_, PyAny>>) -> Option<Self> {
        let allowed_empty = allowed.map_or(true, is_empty_set);
        let disallowed_all = disallowed.map_or(true, is_all);
        if allowed_empty {
            if disallowed_all {
                return Some(Policy::Refuse);
            }
            return disallowed.filter(|d| is_empty_collection(d)).map(|_| Policy::Ordinary);
        }
        if allowed.is_some_and(is_all) && (disallowed_all || disallowed.is_some_and(is_empty_collection)) {
            return Some(Policy::All);
        }
        None
    }
}

/// The set of an `allowed_special` argument that [`Policy::Only`] can take: an exact `set` or
/// `frozenset` (with `disallowed_special` absent or `"all"`), else `None`.
pub fn only_set<'a, 'py>(allowed: Option<&'a Bound<'py, PyAny>>, disallowed: Option<&Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    let set = allowed?;
    let is_set = set.is_exact_instance_of::<PySet>() || set.is_exact_instance_of::<PyFrozenSet>();
    (is_set && disallowed.map_or(true, is_all)).then_some(set)
}

/// An exact `str` equal to `"all"`.
fn is_all(obj: &Bound<'_, PyAny>) -> bool {
    obj.cast_exact::<PyString>().is_ok_and(|s| s.to_str().is_ok_and(|s| s == "all"))
}

/// An empty exact `set` or `frozenset` (what `allowed_special`'s fast path takes).
fn is_empty_set(obj: &Bound<'_, PyAny>) -> bool {
    match obj.cast_exact::<PySet>() {
        Ok(s) => s.is_empty(),
        Err(_) => obj.cast_exact::<PyFrozenSet>().is_ok_and(|s| s.is_empty()),
    }
}

/// An empty exact `tuple`, `list`, `set` or `frozenset` (`disallowed_special=()` and the like).
fn is_empty_collection(obj: &Bound<'_, PyAny>) -> bool {
    if let Ok(t) = obj.cast_exact::<PyTuple>() {
        return t.is_empty();
    }
    if let Ok(l) = obj.cast_exact::<PyList>() {
        return l.is_empty();
    }
    is_empty_set(obj)
}

/// Why an encode failed: a disallowed special token (its text) or a core error.
#[derive(Debug)]
pub enum Fail {
    Special(String),
    Core(Error),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        Fail::Core(e)
    }
}

impl Fail {
    pub fn into_py(self, py: Python<'_>) -> PyErr {
        match self {
            Fail::Special(token) => match call_python(py, "bpekit.encoding", "raise_disallowed_special_token", (token,)) {
                Err(e) => e,
                Ok(_) => pyo3::exceptions::PyRuntimeError::new_err("raise_disallowed_special_token did not raise"),
            },
            Fail::Core(e) => super::to_py_err(py, e),
        }
    }
}

/// Calls `module.name(*args)` (the Python side of a check: only on the slow path).
pub(crate) fn call_python<'py>(py: Python<'py>, module: &str, name: &str, args: impl pyo3::call::PyCallArgs<'py>) -> PyResult<Bound<'py, PyAny>> {
    py.import(module)?.getattr(name)?.call1(args)
}

/// The error the Python check raises for `obj`, or a `TypeError` if it (unexpectedly) passes.
fn python_refusal(py: Python<'_>, check: &str, obj: &Bound<'_, PyAny>) -> PyErr {
    match call_python(py, "bpekit.encoding", check, (obj,)) {
        Err(e) => e,
        Ok(_) => pyo3::exceptions::PyTypeError::new_err(format!("{check} accepted what the fast path refused")),
    }
}

/// Whether `chars` code points are surely within `max_input_bytes`; otherwise `limits.check_texts`
/// decides (it reads the environment on first use, counts UTF-8 bytes near the limit, raises).
pub(crate) fn check_limit<'py>(py: Python<'py>, chars: usize, texts: impl FnOnce() -> PyResult<Bound<'py, PyAny>>) -> PyResult<()> {
    static LIMITS: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
    let d = LIMITS.get_or_try_init(py, || Ok::<_, PyErr>(py.import("bpekit.limits")?.dict().unbind()))?;
    // The value as a C call, not PyO3's generic extraction (a third of this check's cost), and
    // `PyLong_AsLongAndOverflow`, which reads the default 1 << 30 (two 30-bit digits) in a short
    // loop where `PyLong_AsUnsignedLongLong` goes through `_PyLong_AsByteArray`.
    let value = d.bind(py).get_item(intern!(py, "_max_input_bytes"))?;
    if let Some(v) = value.filter(|v| v.is_exact_instance_of::<pyo3::types::PyInt>()) {
        let mut overflow: std::os::raw::c_int = 0;
        // SAFETY: `v` is an exact int, so no `__index__` runs and no error is set; a value that
        // does not fit a C long sets `overflow` instead.
        let limit = unsafe { pyo3::ffi::PyLong_AsLongAndOverflow(v.as_ptr(), &mut overflow) };
        if overflow == 0 && limit >= 0 && (limit == 0 || (chars as u64).saturating_mul(4) <= limit as u64) {
            return Ok(());
        }
        // negative or huge: let the Python check decide
    }
    call_python(py, "bpekit.limits", "check_texts", (texts()?,)).map(drop)
}

/// The text argument of one call, checked as `bpekit.encoding._check_text` checks it.
pub fn text_arg<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, str>> {
    let py = obj.py();
    let Ok(s) = obj.cast::<PyString>() else {
        return Err(python_refusal(py, "_check_text", obj));
    };
    check_limit(py, s.len()?, || Ok(PyTuple::new(py, [s])?.into_any()))?;
    utf8(s)
}

/// The strings of a batch argument, checked as `bpekit.encoding._check_batch` checks them (a list
/// or tuple of `str` takes the fast path; any other sequence goes through `_check_batch`).
pub fn batch_items<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyString>>> {
    let py = obj.py();
    let fast = obj.is_exact_instance_of::<PyList>() || obj.is_exact_instance_of::<PyTuple>();
    let seq = if fast { obj.clone() } else { call_python(py, "bpekit.encoding", "_check_batch", (obj,))? };
    let mut items = Vec::with_capacity(seq.len()?);
    let mut chars = 0usize;
    for item in seq.try_iter()? {
        match item?.cast_into::<PyString>() {
            Ok(s) => {
                chars = chars.saturating_add(s.len()?);
                items.push(s);
            }
            Err(_) => return Err(python_refusal(py, "_check_batch", obj)),
        }
    }
    check_limit(py, chars, || Ok(seq.clone()))?;
    Ok(items)
}

/// The UTF-8 of each batch item (lone surrogates fixed).
pub fn batch_texts<'a>(items: &'a [Bound<'_, PyString>]) -> PyResult<Vec<Cow<'a, str>>> {
    items.iter().map(utf8).collect()
}

/// Runs `f` on a text of `len` bytes: GIL held below [`HOLD_GIL_BELOW`], released above; a
/// failure becomes its Python exception.
pub fn encode_call<T: Send>(py: Python<'_>, len: usize, f: impl FnOnce() -> Result<T, Fail> + Send) -> PyResult<T> {
    let mut fail = None;
    let g = || match f() {
        Ok(v) => Ok(Some(v)),
        Err(Fail::Core(e)) => Err(e),
        Err(special) => {
            fail = Some(special);
            Ok(None)
        }
    };
    let out = if len < HOLD_GIL_BELOW { run_held(py, g)? } else { run(py, g)? };
    match (out, fail) {
        (Some(v), _) => Ok(v),
        (None, Some(f)) => Err(f.into_py(py)),
        (None, None) => Err(pyo3::exceptions::PyRuntimeError::new_err("no result and no error")),
    }
}

/// A `num_threads` argument: an `int` >= 0, else `bpekit.encoding._check_threads`'s error.
pub fn threads_arg(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    if obj.is_exact_instance_of::<pyo3::types::PyInt>() {
        if let Ok(n) = obj.extract::<usize>() {
            return Ok(n);
        }
    }
    call_python(obj.py(), "bpekit.encoding", "_check_threads", (obj,))?.extract()
}
