//! The PyO3 binding: type conversion, GIL release, and error mapping. No algorithm lives here.

mod added;
mod batch;
mod bound;
mod calls;
mod chunks;
mod decode;
mod encoder;
mod flat;
mod ints;
mod offsets;
mod pairbpe;
mod precompiled;
mod scratch;
mod sentencepiece;
mod text;
mod tokenizer_calls;
mod train;

use crate::error::Error;
use pyo3::prelude::*;
use pyo3::types::PyType;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Maps a core error to the matching `bpekit.errors` exception class.
pub(crate) fn to_py_err(py: Python<'_>, e: Error) -> PyErr {
    let name = match &e {
        Error::Pattern(_) => "PatternError",
        Error::Regex(_) | Error::NoToken(_) | Error::TooLong(_) => "EncodeError",
        Error::Vocab(_) => "VocabError",
        Error::InvalidToken(_) => "InvalidTokenError",
        Error::Format(_) => "FormatError",
        Error::Stopped => "InternalError", // (never leaves the core)
    };
    let msg = e.to_string();
    match py.import("bpekit.errors").and_then(|m| m.getattr(name)) {
        Ok(cls) => match cls.cast_into::<PyType>() {
            Ok(cls) => PyErr::from_type(cls, msg),
            Err(_) => pyo3::exceptions::PyValueError::new_err(msg),
        },
        Err(_) => pyo3::exceptions::PyValueError::new_err(msg),
    }
}

/// Runs `f` with the GIL released; a core error or a panic becomes a typed Python exception, so
/// no Rust panic ever crosses into Python.
pub(crate) fn run<T: Send>(py: Python<'_>, f: impl FnOnce() -> crate::Result<T> + Send) -> PyResult<T> {
    let r = py.detach(|| catch_unwind(AssertUnwindSafe(f)));
    outcome(py, r)
}

/// As [`run`], with the GIL held (for work shorter than releasing and re-taking it).
pub(crate) fn run_held<T>(py: Python<'_>, f: impl FnOnce() -> crate::Result<T>) -> PyResult<T> {
    outcome(py, catch_unwind(AssertUnwindSafe(f)))
}

type Caught<T> = std::thread::Result<crate::Result<T>>;

fn outcome<T>(py: Python<'_>, r: Caught<T>) -> PyResult<T> {
    match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(to_py_err(py, e)),
        Err(p) => Err(panic_err(py, p)),
    }
}

/// The `InternalError` for a caught Rust panic.
pub(crate) fn panic_err(py: Python<'_>, p: Box<dyn std::any::Any + Send>) -> PyErr {
    let what = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown".into());
    let err = py
        .import("bpekit.errors")
        .and_then(|m| m.getattr("InternalError"))
        .and_then(|c| Ok(c.cast_into::<PyType>()?));
    let msg = format!("internal error in the bpekit core (please report it): {what}");
    match err {
        Ok(cls) => PyErr::from_type(cls, msg),
        Err(_) => pyo3::exceptions::PyRuntimeError::new_err(msg),
    }
}

/// `gil_used = false` (PyO3 0.30's default, stated here on purpose): on free-threaded CPython the
/// module runs without the GIL. Every class is `frozen` or borrow-checked by PyO3, state shared
/// between calls is in `OnceLock`/`PyOnceLock` (the cached ints of `ints.rs` are created under a
/// `PyOnceLock`, which detaches while it waits), and the unsafe list fills write only lists no
/// other thread has seen. PyO3 0.30 supports free-threaded CPython 3.14 and later only
/// (docs/reliability.md §4 says what was and was not run).
#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<encoder::CoreBPE>()?;
    m.add_class::<offsets::ByteLengths>()?;
    m.add_class::<bound::EncodingCalls>()?;
    m.add_class::<tokenizer_calls::TokenizerCalls>()?;
    m.add_class::<decode::ByteLevelIds>()?;
    m.add_class::<decode::SentencePieceIds>()?;
    m.add_class::<decode::FusedIds>()?;
    m.add_function(wrap_pyfunction!(encoder::parse_tiktoken_ranks, m)?)?;
    m.add_class::<pairbpe::PairBPE>()?;
    m.add_class::<text::Normalizer>()?;
    m.add_class::<pairbpe::IsolatedSplit>()?;
    m.add_class::<added::LiteralMatcher>()?;
    m.add_class::<sentencepiece::SentencePieceCore>()?;
    m.add_class::<precompiled::Precompiled>()?;
    m.add("PAIR_DROP", crate::pairbpe::DROP)?;
    m.add("ADDED_WHITESPACE", added::WHITESPACE)?;
    m.add("DEFAULT_PRETOKEN_CACHE_BYTES", crate::merge::cache::DEFAULT_CAPACITY_BYTES)?;
    m.add_function(wrap_pyfunction!(pairbpe::pair_merge_ids, m)?)?;
    m.add_function(wrap_pyfunction!(text::fix_surrogates, m)?)?;
    m.add_function(wrap_pyfunction!(text::normalize_unicode, m)?)?;
    m.add_function(wrap_pyfunction!(text::normalize_unicode_changes, m)?)?;
    m.add_function(wrap_pyfunction!(offsets::lead_spans, m)?)?;
    m.add_function(wrap_pyfunction!(offsets::replaced_spans, m)?)?;
    m.add_function(wrap_pyfunction!(text::strip_marks, m)?)?;
    m.add_function(wrap_pyfunction!(text::lowercase, m)?)?;
    m.add_function(wrap_pyfunction!(text::class_runs, m)?)?;
    m.add_function(wrap_pyfunction!(text::is_word_char, m)?)?;
    m.add_function(wrap_pyfunction!(text::hand_written_family, m)?)?;
    m.add_function(wrap_pyfunction!(text::pattern_engine, m)?)?;
    m.add_class::<train::WordCounter>()?;
    m.add_class::<train::PyWordCounts>()?;
    m.add_function(wrap_pyfunction!(train::learn_merges, m)?)?;
    m.add_function(wrap_pyfunction!(train::learn_merges_first_seen, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
