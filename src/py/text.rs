//! `bpekit._core.fix_surrogates`: text with lone surrogates made encodable, as tiktoken does it.
//!
//! A Python `str` may hold surrogate code points, which UTF-8 cannot carry. tiktoken replaces them
//! with `text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")`: a high surrogate
//! followed by a low one becomes the character the pair encodes, every other surrogate becomes
//! U+FFFD. That decode calls a Python error handler once per lone surrogate (3.8x the time of
//! benign text at 10 MB of them). Here Python hands over `text.encode("utf-8", "surrogatepass")`
//! (one C pass; each surrogate is the 3-byte sequence ED A0..BF 80..BF) and one Rust pass gives
//! the same string.

use super::run;
use crate::surrogates::join_surrogates;
use pyo3::prelude::*;

/// `text.encode("utf-8", "surrogatepass")` → the text tiktoken would encode (see the module doc).
#[pyfunction]
pub fn fix_surrogates(py: Python<'_>, data: &[u8]) -> PyResult<String> {
    run(py, || Ok(join_surrogates(data)))
}
