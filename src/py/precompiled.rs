//! `bpekit._core.Precompiled(blob)`: Hugging Face's `Precompiled` normalizer
//! (`crate::precompiled`) for `bpekit.pipeline.precompiled`. A corrupt blob raises
//! `FormatError`; a text with lone surrogates raises `UnicodeEncodeError` (the caller splits it
//! at them).

use super::calls::HOLD_GIL_BELOW;
use super::{run, run_held};
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::borrow::Cow;
use std::sync::Arc;

#[pyclass(frozen, module = "bpekit._core")]
pub struct Precompiled {
    pub(super) inner: Arc<crate::precompiled::Precompiled>,
}

/// Runs `f` with the GIL held for a short text, released for a long one.
fn call<T: Send>(py: Python<'_>, len: usize, f: impl FnOnce() -> crate::Result<T> + Send) -> PyResult<T> {
    if len < HOLD_GIL_BELOW {
        run_held(py, f)
    } else {
        run(py, f)
    }
}

/// `text` itself where `changed` borrows it, else a new string.
fn same_or_new<'py>(text: &Bound<'py, PyString>, changed: Cow<'_, str>) -> Bound<'py, PyString> {
    match changed {
        Cow::Borrowed(_) => text.clone(),
        Cow::Owned(changed) => PyString::new(text.py(), &changed),
    }
}

#[pymethods]
impl Precompiled {
    /// Reads `blob` (a `precompiled_charsmap`, base64 decoded); `FormatError` if it is corrupt.
    #[new]
    fn new(py: Python<'_>, blob: &[u8]) -> PyResult<Self> {
        let inner = run_held(py, || crate::precompiled::Precompiled::new(blob))?;
        Ok(Precompiled { inner: Arc::new(inner) })
    }

    /// `text` normalized as Hugging Face does (the same object when nothing changes).
    fn normalize<'py>(&self, py: Python<'py>, text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyString>> {
        let s = text.to_str()?;
        let out = call(py, s.len(), || Ok(self.inner.normalize(s)))?;
        Ok(same_or_new(text, out))
    }

    /// `(normalized, changes)`: one change per char of the normalized text, for
    /// `Aligned.map_chars`; when nothing changes, `text` itself and an empty list.
    fn changes<'py>(&self, py: Python<'py>, text: &Bound<'py, PyString>) -> PyResult<(Bound<'py, PyString>, Vec<isize>)> {
        let s = text.to_str()?;
        let (out, changes) = call(py, s.len(), || {
            let mut changes = Vec::new();
            let out = self.inner.normalize_changes(s, &mut changes);
            Ok((out, changes))
        })?;
        Ok((same_or_new(text, out), changes))
    }

    /// Whether every ASCII text is its own normal form.
    #[getter]
    fn ascii_invariant(&self) -> bool {
        self.inner.ascii_invariant()
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.inner)
    }
}
