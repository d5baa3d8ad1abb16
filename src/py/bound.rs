//! `bpekit._core.EncodingCalls`: `Encoding.encode`, `encode_to_numpy` and `count` with no Python
//! frame, bound on each `Encoding` instance (as `encode_ordinary` is bound to the core's method).
//!
//! Performance note: the Python method around the core call (a frame, the keyword defaults, the
//! policy comparisons, an attribute load) cost ~0.4 µs of a ~0.9 µs call on an empty string, and
//! a call with `disallowed_special=()` (tiktoken's idiom for "no special-token handling") took the
//! general Python path: +3 µs. Here the arguments are read in Rust; a recognised policy
//! (`calls::Policy`) goes straight to the core, anything else (another policy, a missing or extra
//! argument, an unknown keyword) calls the class's Python method with the same arguments, so every
//! result and every error is the Python method's. Numbers in src/PERFORMANCE.md, "Numpy output and
//! batches, fourth round".

use super::calls::Policy;
use super::encoder::CoreBPE;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use pyo3::{intern, PyTraverseError};
use std::sync::Mutex;

#[pyclass(frozen, module = "bpekit._core")]
pub struct EncodingCalls {
    core: Py<CoreBPE>,
    /// The `Encoding` these calls are bound to (its methods take every other call). It holds
    /// these calls in its `__dict__`: a cycle, hence `__traverse__` / `__clear__`. (A mutex, not
    /// a mutable class: the fast path then skips PyO3's borrow flag; only the slow path locks.)
    owner: Mutex<Option<Py<PyAny>>>,
}

/// The text and policy of a call the fast path takes: one positional argument and at most the
/// keywords `allowed_special` / `disallowed_special`, with a recognised policy.
fn fast_args<'py>(args: &Bound<'py, PyTuple>, kwargs: Option<&Bound<'py, PyDict>>) -> PyResult<Option<(Bound<'py, PyAny>, Policy)>> {
    if args.len() != 1 {
        return Ok(None);
    }
    let (mut allowed, mut disallowed) = (None, None);
    if let Some(kw) = kwargs {
        let py = args.py();
        for (k, v) in kw.iter() {
            let Ok(k) = k.cast::<PyString>() else { return Ok(None) };
            let (a, d) = (intern!(py, "allowed_special"), intern!(py, "disallowed_special"));
            // keyword names are interned: identity first, a string comparison only otherwise
            if k.is(a) || k.as_any().eq(a)? {
                allowed = Some(v);
            } else if k.is(d) || k.as_any().eq(d)? {
                disallowed = Some(v);
            } else {
                return Ok(None);
            }
        }
    }
    Ok(Policy::of(allowed.as_ref(), disallowed.as_ref()).map(|p| (args.get_item(0).expect("one argument"), p)))
}

impl EncodingCalls {
    /// `type(owner).<name>(owner, *args, **kwargs)`: the Python method, for every other call.
    fn general<'py>(&self, py: Python<'py>, name: &Bound<'py, PyString>, args: &Bound<'py, PyTuple>, kwargs: Option<&Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyAny>> {
        let owner = self.owner.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|o| o.clone_ref(py));
        let Some(owner) = owner.map(|o| o.into_bound(py)) else {
            return Err(pyo3::exceptions::PyReferenceError::new_err("the Encoding of these calls was collected"));
        };
        let method = owner.get_type().getattr(name)?;
        let all = PyTuple::new(py, std::iter::once(owner.clone()).chain(args.iter()).collect::<Vec<_>>())?;
        method.call(all, kwargs)
    }
}

#[pymethods]
impl EncodingCalls {
    #[new]
    fn new(core: Py<CoreBPE>, owner: Py<PyAny>) -> Self {
        EncodingCalls { core, owner: Mutex::new(Some(owner)) }
    }

    /// Encodes text; special tokens are refused unless allowed (tiktoken's policy).
    ///
    /// (`Encoding.encode` bound in Rust; any call this path does not take goes to the class method.)
    #[pyo3(signature = (*args, **kwargs), text_signature = "($self, text, *, allowed_special=(), disallowed_special='all')")]
    fn encode<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>, kwargs: Option<&Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyAny>> {
        match fast_args(args, kwargs)? {
            Some((text, policy)) => Ok(self.core.get().list_call(py, &text, policy)?.into_any()),
            None => self.general(py, intern!(py, "encode"), args, kwargs),
        }
    }

    /// As `encode`, as a ``uint32`` numpy array (no intermediate list).
    ///
    /// (`Encoding.encode_to_numpy` bound in Rust; any call this path does not take goes to the class method.)
    #[pyo3(signature = (*args, **kwargs), text_signature = "($self, text, *, allowed_special=(), disallowed_special='all')")]
    fn encode_to_numpy<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>, kwargs: Option<&Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyAny>> {
        match fast_args(args, kwargs)? {
            Some((text, policy)) => Ok(self.core.get().numpy_call(py, &text, policy)?.into_any()),
            None => self.general(py, intern!(py, "encode_to_numpy"), args, kwargs),
        }
    }

    /// ``len(encode(text, ...))`` without building the list.
    ///
    /// (`Encoding.count` bound in Rust; any call this path does not take goes to the class method.)
    #[pyo3(signature = (*args, **kwargs), text_signature = "($self, text, *, allowed_special=(), disallowed_special='all')")]
    fn count<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>, kwargs: Option<&Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyAny>> {
        match fast_args(args, kwargs)? {
            Some((text, policy)) => Ok(self.core.get().count_call(py, &text, policy)?.into_pyobject(py)?.into_any()),
            None => self.general(py, intern!(py, "count"), args, kwargs),
        }
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.core)?;
        // never blocks: the lock is only taken with the GIL held, as the collector holds it now
        match self.owner.try_lock() {
            Ok(owner) => visit.call(&*owner),
            Err(_) => Ok(()),
        }
    }

    fn __clear__(&self) {
        let owner = self.owner.lock().unwrap_or_else(|e| e.into_inner()).take();
        drop(owner);
    }
}
