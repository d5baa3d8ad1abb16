//! `bpekit._core.EncodingCalls`: `Encoding.encode`, `encode_to_numpy` and `count` with no Python
//! frame, bound on each `Encoding` instance (as `encode_ordinary` is bound to the core's method).
//!
//! Performance notes: the Python method around the core call (a frame, the keyword defaults, the
//! policy comparisons, an attribute load) cost ~0.4 µs of a ~0.9 µs call on an empty string, and
//! a call with `disallowed_special=()` (tiktoken's idiom for "no special-token handling") took the
//! general Python path: +3 µs. Here the arguments are read in Rust; a recognised policy
//! (`calls::Policy`) goes straight to the core, anything else (another policy, a missing or extra
//! argument, an unknown keyword) calls the class's Python method with the same arguments, so every
//! result and every error is the Python method's. Numbers in src/PERFORMANCE.md, "Numpy output and
//! batches, fourth round".
//!
//! Tenth round: each bound call is a builtin function in CPython's vectorcall convention
//! (`METH_FASTCALL | METH_KEYWORDS`, made by `PyCMethod_New` with the `EncodingCalls` as its
//! `self`) that reads the arguments where the interpreter left them. As PyO3 methods taking
//! `(*args, **kwargs)`, every call built a tuple and every keyword call a dict (a fifth of the
//! time of `encode_to_numpy(t, disallowed_special=())` went to making and freeing the dict); now
//! only the calls that go to the Python method build them. Numbers in src/PERFORMANCE.md, "Tenth
//! round".

use super::calls::Policy;
use super::encoder::CoreBPE;
use super::panic_err;
use pyo3::ffi;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use std::borrow::Cow;
use std::ffi::{CStr, CString};
use pyo3::{intern, PyTraverseError};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

#[pyclass(frozen, module = "bpekit._core")]
pub struct EncodingCalls {
    core: Py<CoreBPE>,
    /// The `Encoding` these calls are bound to (its methods take every other call). It holds
    /// the bound calls in its `__dict__`, and they hold this object: a cycle, hence
    /// `__traverse__` / `__clear__`. (A mutex, not a mutable class: the fast path then skips
    /// PyO3's borrow flag; only the slow path locks.)
    owner: Mutex<Option<Py<PyAny>>>,
}

/// The calls [`EncodingCalls::method`] binds, in the order of [`METHODS`].
#[derive(Clone, Copy)]
enum Call {
    Encode,
    Numpy,
    Count,
    Decode,
    DecodeBytes,
}

impl Call {
    const ALL: [(&'static str, Call); 5] = [
        ("encode", Call::Encode),
        ("encode_to_numpy", Call::Numpy),
        ("count", Call::Count),
        ("decode", Call::Decode),
        ("decode_bytes", Call::DecodeBytes),
    ];

    fn name(self) -> &'static str {
        Call::ALL[self as usize].0
    }
}

/// The arguments of one call as CPython passes them to a `METH_FASTCALL | METH_KEYWORDS` function:
/// the positional ones, then the value of each keyword named in `names` (null when none).
struct Args<'a> {
    values: &'a [*mut ffi::PyObject],
    positional: usize,
    names: *mut ffi::PyObject,
}

impl<'a> Args<'a> {
    /// Argument `i` (positional, then keyword values).
    fn value<'py>(&self, py: Python<'py>, i: usize) -> Borrowed<'a, 'py, PyAny> {
        // SAFETY: every entry of `values` is a reference CPython holds for the whole call.
        unsafe { Borrowed::from_ptr(py, self.values[i]) }
    }

    /// The name of keyword `i`.
    fn name<'py>(&self, py: Python<'py>, i: usize) -> Borrowed<'a, 'py, PyAny> {
        // SAFETY: `names` is a tuple of `values.len() - positional` strings, alive for the call.
        unsafe { Borrowed::from_ptr(py, ffi::PyTuple_GET_ITEM(self.names, i as ffi::Py_ssize_t)) }
    }

    fn keywords(&self) -> usize {
        self.values.len() - self.positional
    }

    /// The policy of a call the fast path takes: one positional argument (the text) and at most
    /// the keywords `allowed_special` / `disallowed_special`, with a recognised policy; `None`
    /// sends the call to the Python method.
    fn fast_policy(&self, py: Python<'_>) -> PyResult<Option<Policy>> {
        if self.positional != 1 {
            return Ok(None);
        }
        let (mut allowed, mut disallowed) = (None, None);
        let (a, d) = (intern!(py, "allowed_special"), intern!(py, "disallowed_special"));
        for i in 0..self.keywords() {
            let k = self.name(py, i);
            // keyword names are interned: identity first, a string comparison only otherwise
            if k.is(a) || k.eq(a)? {
                allowed = Some(self.value(py, 1 + i));
            } else if k.is(d) || k.eq(d)? {
                disallowed = Some(self.value(py, 1 + i));
            } else {
                return Ok(None);
            }
        }
        Ok(Policy::of(allowed.as_deref(), disallowed.as_deref()))
    }
}

/// The `errors` handler of a `decode` call taking the fast path: `errors` as the second
/// positional argument or the only keyword, an exact `str` without NUL; `"replace"` if absent.
fn errors_arg(py: Python<'_>, args: &Args<'_>) -> PyResult<Option<Cow<'static, CStr>>> {
    let value = match (args.positional, args.keywords()) {
        (1, 0) => return Ok(Some(Cow::Borrowed(c"replace"))),
        (2, 0) => args.value(py, 1),
        (1, 1) if args.name(py, 0).is(intern!(py, "errors")) || args.name(py, 0).eq(intern!(py, "errors"))? => args.value(py, 1),
        _ => return Ok(None),
    };
    let Ok(s) = value.cast_exact::<PyString>() else { return Ok(None) };
    Ok(match s.to_str() {
        Ok("replace") => Some(Cow::Borrowed(c"replace")),
        Ok("strict") => Some(Cow::Borrowed(c"strict")),
        Ok(other) => CString::new(other).ok().map(Cow::Owned),
        Err(_) => None,
    })
}

impl EncodingCalls {
    /// The core's answer to a call it takes, or `None` (see [`Args::fast_policy`], [`errors_arg`]
    /// and `decode::decode_one`).
    fn fast<'py>(&self, py: Python<'py>, which: Call, args: &Args<'_>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let core = self.core.get();
        match which {
            Call::Encode | Call::Numpy | Call::Count => {
                let Some(policy) = args.fast_policy(py)? else { return Ok(None) };
                let text = args.value(py, 0);
                Ok(Some(match which {
                    Call::Encode => core.list_call(py, &text, policy)?.into_any(),
                    Call::Numpy => core.numpy_call(py, &text, policy)?.into_any(),
                    _ => core.count_call(py, &text, policy)?.into_pyobject(py)?.into_any(),
                }))
            }
            Call::DecodeBytes if args.positional == 1 && args.keywords() == 0 => core.decode_call(&args.value(py, 0), None),
            Call::DecodeBytes => Ok(None),
            Call::Decode => match errors_arg(py, args)? {
                Some(errors) => core.decode_call(&args.value(py, 0), Some(&errors)),
                None => Ok(None),
            },
        }
    }

    /// One call: the core's when [`EncodingCalls::fast`] takes it, else `type(owner).<name>(owner,
    /// *args, **kwargs)`, the Python method (which raises every error).
    fn call<'py>(&self, py: Python<'py>, which: Call, args: &Args<'_>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(out) = self.fast(py, which, args)? {
            return Ok(out);
        }
        let owner = self.owner.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|o| o.clone_ref(py));
        let Some(owner) = owner.map(|o| o.into_bound(py)) else {
            return Err(pyo3::exceptions::PyReferenceError::new_err("the Encoding of these calls was collected"));
        };
        let kwargs = PyDict::new(py);
        for i in 0..args.keywords() {
            kwargs.set_item(args.name(py, i), args.value(py, args.positional + i))?;
        }
        let all: Vec<Bound<'py, PyAny>> = std::iter::once(owner.clone()).chain((0..args.positional).map(|i| args.value(py, i).to_owned())).collect();
        let all = PyTuple::new(py, all)?;
        owner.get_type().getattr(PyString::new(py, which.name()))?.call(all, Some(&kwargs))
    }
}

/// The body of the bound builtins: the arguments as CPython passes a `METH_FASTCALL |
/// METH_KEYWORDS` function (`nargs` positional ones, then one per name in `kwnames`, a tuple or
/// null), an error or a panic turned into a raised exception.
///
/// # Safety
/// Called by CPython with the GIL held, `slf` the function's `self` (an `EncodingCalls`, as
/// [`EncodingCalls::method`] made it) and `args` / `nargs` / `kwnames` as the convention gives them.
unsafe fn vectorcall(which: Call, slf: *mut ffi::PyObject, args: *const *mut ffi::PyObject, nargs: ffi::Py_ssize_t, kwnames: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: CPython holds the GIL while it runs a builtin function.
    let py = unsafe { Python::assume_attached() };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let positional = usize::try_from(nargs).unwrap_or(0);
        // SAFETY: `kwnames` is null or a tuple (of strings).
        let keywords = if kwnames.is_null() { 0 } else { unsafe { ffi::PyTuple_GET_SIZE(kwnames) as usize } };
        let values: &[*mut ffi::PyObject] = match positional + keywords {
            0 => &[],
            // SAFETY: `args` points to the positional arguments followed by the keyword values.
            n => unsafe { std::slice::from_raw_parts(args, n) },
        };
        // SAFETY: `slf` is the function's `self`, alive for the call.
        let calls = unsafe { Borrowed::from_ptr(py, slf) };
        let calls = calls.cast::<EncodingCalls>()?;
        calls.get().call(py, which, &Args { values, positional, names: kwnames })
    }));
    let err = match outcome {
        Ok(Ok(obj)) => return obj.into_ptr(),
        Ok(Err(e)) => e,
        Err(p) => panic_err(py, p),
    };
    err.restore(py);
    std::ptr::null_mut()
}

unsafe extern "C" fn encode_call(slf: *mut ffi::PyObject, args: *const *mut ffi::PyObject, nargs: ffi::Py_ssize_t, kwnames: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: called by CPython as a `METH_FASTCALL | METH_KEYWORDS` function (see `vectorcall`).
    unsafe { vectorcall(Call::Encode, slf, args, nargs, kwnames) }
}

unsafe extern "C" fn numpy_call(slf: *mut ffi::PyObject, args: *const *mut ffi::PyObject, nargs: ffi::Py_ssize_t, kwnames: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: as `encode_call`.
    unsafe { vectorcall(Call::Numpy, slf, args, nargs, kwnames) }
}

unsafe extern "C" fn count_call(slf: *mut ffi::PyObject, args: *const *mut ffi::PyObject, nargs: ffi::Py_ssize_t, kwnames: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: as `encode_call`.
    unsafe { vectorcall(Call::Count, slf, args, nargs, kwnames) }
}

unsafe extern "C" fn decode_call(slf: *mut ffi::PyObject, args: *const *mut ffi::PyObject, nargs: ffi::Py_ssize_t, kwnames: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: as `encode_call`.
    unsafe { vectorcall(Call::Decode, slf, args, nargs, kwnames) }
}

unsafe extern "C" fn decode_bytes_call(slf: *mut ffi::PyObject, args: *const *mut ffi::PyObject, nargs: ffi::Py_ssize_t, kwnames: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: as `encode_call`.
    unsafe { vectorcall(Call::DecodeBytes, slf, args, nargs, kwnames) }
}

/// The method table of the bound builtins (CPython keeps a pointer to each entry and only reads
/// it). The docstrings start with the signature `inspect.signature` reads.
struct Methods([ffi::PyMethodDef; 5]);

// SAFETY: the table is never written; its pointers are to static strings and functions.
unsafe impl Sync for Methods {}

const FLAGS: std::os::raw::c_int = ffi::METH_FASTCALL | ffi::METH_KEYWORDS;

static METHODS: Methods = Methods([
    ffi::PyMethodDef {
        ml_name: c"encode".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer { PyCFunctionFastWithKeywords: encode_call },
        ml_flags: FLAGS,
        ml_doc: c"encode($self, text, *, allowed_special=(), disallowed_special='all')\n--\n\nEncodes text; special tokens are refused unless allowed (tiktoken's policy).\n\n(`Encoding.encode` bound in Rust; any call this path does not take goes to the class method.)".as_ptr(),
    },
    ffi::PyMethodDef {
        ml_name: c"encode_to_numpy".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer { PyCFunctionFastWithKeywords: numpy_call },
        ml_flags: FLAGS,
        ml_doc: c"encode_to_numpy($self, text, *, allowed_special=(), disallowed_special='all')\n--\n\nAs `encode`, as a ``uint32`` numpy array (no intermediate list).\n\n(`Encoding.encode_to_numpy` bound in Rust; any call this path does not take goes to the class method.)".as_ptr(),
    },
    ffi::PyMethodDef {
        ml_name: c"count".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer { PyCFunctionFastWithKeywords: count_call },
        ml_flags: FLAGS,
        ml_doc: c"count($self, text, *, allowed_special=(), disallowed_special='all')\n--\n\n``len(encode(text, ...))`` without building the list.\n\n(`Encoding.count` bound in Rust; any call this path does not take goes to the class method.)".as_ptr(),
    },
    ffi::PyMethodDef {
        ml_name: c"decode".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer { PyCFunctionFastWithKeywords: decode_call },
        ml_flags: FLAGS,
        ml_doc: c"decode($self, tokens, errors='replace')\n--\n\nDecodes to text; invalid UTF-8 is handled by ``errors`` (lossy by default, as tiktoken).\n\n(`Encoding.decode` bound in Rust; any call this path does not take goes to the class method.)".as_ptr(),
    },
    ffi::PyMethodDef {
        ml_name: c"decode_bytes".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer { PyCFunctionFastWithKeywords: decode_bytes_call },
        ml_flags: FLAGS,
        ml_doc: c"decode_bytes($self, tokens)\n--\n\nThe bytes of a token sequence; an unknown id raises ``KeyError``.\n\n(`Encoding.decode_bytes` bound in Rust; any call this path does not take goes to the class method.)".as_ptr(),
    },
]);

#[pymethods]
impl EncodingCalls {
    #[new]
    fn new(core: Py<CoreBPE>, owner: Py<PyAny>) -> Self {
        EncodingCalls { core, owner: Mutex::new(Some(owner)) }
    }

    /// The bound call `name` (`"encode"`, `"encode_to_numpy"`, `"count"`, `"decode"` or
    /// `"decode_bytes"`): a builtin function whose `__self__` is this object.
    fn method<'py>(slf: &Bound<'py, Self>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let Some(&(_, which)) = Call::ALL.iter().find(|(n, _)| *n == name) else {
            return Err(pyo3::exceptions::PyValueError::new_err(format!("no bound call {name:?}")));
        };
        let def = &METHODS.0[which as usize] as *const ffi::PyMethodDef as *mut ffi::PyMethodDef;
        // SAFETY: `def` is static and never written (CPython only reads it); `slf` is a live
        // object the new function holds a reference to. A null result has set the error.
        unsafe { Bound::from_owned_ptr_or_err(slf.py(), ffi::PyCMethod_New(def, slf.as_ptr(), std::ptr::null_mut(), std::ptr::null_mut())) }
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
