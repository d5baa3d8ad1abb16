//! `bpekit._core.EncodingCalls`: `Encoding.encode`, `encode_to_numpy`, `count`, `decode`,
//! `decode_bytes`, `decode_single_token_bytes`, `decode_tokens_bytes`, `decode_with_offsets` and
//! `encode_single_token` with no Python frame, bound on each `Encoding` instance (as
//! `encode_ordinary` is bound to the core's method).
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

use super::calls::{only_set, Policy};
use super::decode;
use super::encoder::CoreBPE;
use super::panic_err;
use pyo3::ffi;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use pyo3::{intern, PyTraverseError};
use std::borrow::Cow;
use std::ffi::{CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

#[pyclass(frozen, module = "bpekit._core")]
pub struct EncodingCalls {
    core: Py<CoreBPE>,
    /// The `Encoding` these calls are bound to (its methods take every other call).
    owner: Owner,
}

/// The object bound calls belong to, whose class methods take every call the fast path does not.
/// It holds the bound calls in its `__dict__`, and they hold this: a cycle, hence the owners'
/// `__traverse__` / `__clear__`. (A mutex, not a mutable class: the fast path then skips PyO3's
/// borrow flag; only the slow path locks.)
pub(super) struct Owner(Mutex<Option<Py<PyAny>>>);

impl Owner {
    pub(super) fn new(owner: Py<PyAny>) -> Owner {
        Owner(Mutex::new(Some(owner)))
    }

    /// The owner (an error once the collector has cleared it).
    pub(super) fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let owner = self.0.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|o| o.clone_ref(py));
        owner
            .map(|o| o.into_bound(py))
            .ok_or_else(|| pyo3::exceptions::PyReferenceError::new_err("the object of these bound calls was collected"))
    }

    /// `type(owner).<name>(owner, *args, **kwargs)`: the Python method, which raises every error.
    pub(super) fn call_method<'py>(&self, py: Python<'py>, name: &str, args: &Args<'_>) -> PyResult<Bound<'py, PyAny>> {
        let owner = self.get(py)?;
        let kwargs = PyDict::new(py);
        for i in 0..args.keywords() {
            kwargs.set_item(args.name(py, i), args.value(py, args.positional + i))?;
        }
        let all: Vec<Bound<'py, PyAny>> = std::iter::once(owner.clone()).chain((0..args.positional).map(|i| args.value(py, i).to_owned())).collect();
        let all = PyTuple::new(py, all)?;
        owner.get_type().getattr(PyString::new(py, name))?.call(all, Some(&kwargs))
    }

    pub(super) fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        // never blocks: the lock is only taken with the GIL held, as the collector holds it now
        match self.0.try_lock() {
            Ok(owner) => visit.call(&*owner),
            Err(_) => Ok(()),
        }
    }

    pub(super) fn clear(&self) {
        let owner = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        drop(owner);
    }
}

/// The arguments of one call as CPython passes them to a `METH_FASTCALL | METH_KEYWORDS` function:
/// the positional ones, then the value of each keyword named in `names` (null when none).
pub(super) struct Args<'a> {
    values: &'a [*mut ffi::PyObject],
    pub(super) positional: usize,
    names: *mut ffi::PyObject,
}

impl<'a> Args<'a> {
    /// Argument `i` (positional, then keyword values).
    pub(super) fn value<'py>(&self, py: Python<'py>, i: usize) -> Borrowed<'a, 'py, PyAny> {
        // SAFETY: every entry of `values` is a reference CPython holds for the whole call.
        unsafe { Borrowed::from_ptr(py, self.values[i]) }
    }

    /// The name of keyword `i`.
    pub(super) fn name<'py>(&self, py: Python<'py>, i: usize) -> Borrowed<'a, 'py, PyAny> {
        // SAFETY: `names` is a tuple of `values.len() - positional` strings, alive for the call.
        unsafe { Borrowed::from_ptr(py, ffi::PyTuple_GET_ITEM(self.names, i as ffi::Py_ssize_t)) }
    }

    pub(super) fn keywords(&self) -> usize {
        self.values.len() - self.positional
    }

    /// Whether keyword `i` is `name` (keyword names are interned: identity first, a string
    /// comparison only otherwise).
    pub(super) fn name_is(&self, py: Python<'_>, i: usize, name: &Bound<'_, PyString>) -> PyResult<bool> {
        let k = self.name(py, i);
        Ok(k.is(name) || k.eq(name)?)
    }

    /// The policy of a call the fast path takes: one positional argument (the text) and at most
    /// the keywords `allowed_special` / `disallowed_special`, with a recognised policy; `None`
    /// sends the call to the Python method.
    fn fast_policy(&self, py: Python<'_>, core: &CoreBPE) -> PyResult<Option<Policy>> {
        if self.positional != 1 {
            return Ok(None);
        }
        self.policy(py, core, |_| Ok(false))
    }

    /// The policy of the keywords `allowed_special` / `disallowed_special` (absent: the
    /// defaults), if recognised; any other keyword `i` must be accepted by `other(i)`, else
    /// `None`.
    pub(super) fn policy(&self, py: Python<'_>, core: &CoreBPE, mut other: impl FnMut(usize) -> PyResult<bool>) -> PyResult<Option<Policy>> {
        let (mut allowed, mut disallowed) = (None, None);
        let (a, d) = (intern!(py, "allowed_special"), intern!(py, "disallowed_special"));
        for i in 0..self.keywords() {
            if self.name_is(py, i, a)? {
                allowed = Some(self.value(py, self.positional + i));
            } else if self.name_is(py, i, d)? {
                disallowed = Some(self.value(py, self.positional + i));
            } else if !other(i)? {
                return Ok(None);
            }
        }
        let (allowed, disallowed) = (allowed.as_deref(), disallowed.as_deref());
        Ok(Policy::of(allowed, disallowed).or_else(|| core.only_policy(only_set(allowed, disallowed)?)))
    }
}

/// The `errors` handler of a `decode` call taking the fast path: `errors` as the second
/// positional argument or the only keyword, an exact `str` without NUL; `"replace"` if absent.
pub(super) fn errors_arg(py: Python<'_>, args: &Args<'_>) -> PyResult<Option<Cow<'static, CStr>>> {
    let value = match (args.positional, args.keywords()) {
        (1, 0) => return Ok(Some(Cow::Borrowed(c"replace"))),
        (2, 0) => args.value(py, 1),
        (1, 1) if args.name_is(py, 0, intern!(py, "errors"))? => args.value(py, 1),
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
                let Some(policy) = args.fast_policy(py, core)? else { return Ok(None) };
                let text = args.value(py, 0);
                Ok(Some(match which {
                    Call::Encode => core.list_call(py, &text, &policy)?.into_any(),
                    Call::Numpy => core.numpy_call(py, &text, &policy)?.into_any(),
                    _ => core.count_call(py, &text, &policy)?.into_pyobject(py)?.into_any(),
                }))
            }
            Call::Decode => match errors_arg(py, args)? {
                Some(errors) => decode::decode_one(core.core(), &args.value(py, 0), Some(&errors)),
                None => Ok(None),
            },
            _ if args.positional != 1 || args.keywords() != 0 => Ok(None),
            Call::DecodeBytes => decode::decode_one(core.core(), &args.value(py, 0), None),
            Call::DecodeSingle => Ok(decode::single_token_bytes(core.core(), &args.value(py, 0))),
            Call::DecodeTokens => decode::tokens_bytes(core.core(), &args.value(py, 0)),
            Call::DecodeOffsets => decode::decode_with_offsets(core.core(), &args.value(py, 0)),
            Call::EncodeSingle => Ok(decode::single_token_rank(core.core(), &args.value(py, 0))),
        }
    }

}

impl BoundCalls for EncodingCalls {
    type Which = Call;

    /// One call: the core's when [`EncodingCalls::fast`] takes it, else the `Encoding`'s Python
    /// method.
    fn call<'py>(&self, py: Python<'py>, which: Call, args: &Args<'_>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(out) = self.fast(py, which, args)? {
            return Ok(out);
        }
        self.owner.call_method(py, which.name(), args)
    }
}

/// A class whose bound builtins [`vectorcall`] runs.
pub(super) trait BoundCalls: pyo3::PyClass<Frozen = pyo3::pyclass::boolean_struct::True> + Sync {
    /// Which of its calls a builtin is.
    type Which: Copy;

    fn call<'py>(&self, py: Python<'py>, which: Self::Which, args: &Args<'_>) -> PyResult<Bound<'py, PyAny>>;
}

/// A builtin function whose `__self__` is `slf`, running `def` (static, never written).
pub(super) fn builtin<'py>(slf: &Bound<'py, PyAny>, def: &'static ffi::PyMethodDef) -> PyResult<Bound<'py, PyAny>> {
    let def = def as *const ffi::PyMethodDef as *mut ffi::PyMethodDef;
    // SAFETY: `def` is static and never written (CPython only reads it); `slf` is a live object
    // the new function holds a reference to. A null result has set the error.
    unsafe { Bound::from_owned_ptr_or_err(slf.py(), ffi::PyCMethod_New(def, slf.as_ptr(), std::ptr::null_mut(), std::ptr::null_mut())) }
}

/// The body of the bound builtins: the arguments as CPython passes a `METH_FASTCALL |
/// METH_KEYWORDS` function (`nargs` positional ones, then one per name in `kwnames`, a tuple or
/// null), an error or a panic turned into a raised exception.
///
/// # Safety
/// Called by CPython with the GIL held, `slf` the function's `self` (a `T`, as [`builtin`] made
/// it) and `args` / `nargs` / `kwnames` as the convention gives them.
pub(super) unsafe fn vectorcall<T: BoundCalls>(which: T::Which, slf: *mut ffi::PyObject, args: *const *mut ffi::PyObject, nargs: ffi::Py_ssize_t, kwnames: *mut ffi::PyObject) -> *mut ffi::PyObject {
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
        let calls = calls.cast::<T>()?;
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

/// The calls [`EncodingCalls::method`] binds: for each, its `Call`, its name, the builtin CPython
/// calls and its docstring (which starts with the signature `inspect.signature` reads). The
/// builtins and their method table (CPython keeps a pointer to each entry and only reads it) are
/// generated from this list.
macro_rules! bound_calls {
    ($($call:ident $name:literal $cname:literal $func:ident $doc:literal;)*) => {
        #[derive(Clone, Copy)]
        pub(super) enum Call {
            $($call,)*
        }

        impl Call {
            const ALL: &[(&str, Call)] = &[$(($name, Call::$call),)*];

            fn name(self) -> &'static str {
                Call::ALL[self as usize].0
            }
        }

        $(
            unsafe extern "C" fn $func(slf: *mut ffi::PyObject, args: *const *mut ffi::PyObject, nargs: ffi::Py_ssize_t, kwnames: *mut ffi::PyObject) -> *mut ffi::PyObject {
                // SAFETY: called by CPython as a `METH_FASTCALL | METH_KEYWORDS` function.
                unsafe { vectorcall::<EncodingCalls>(Call::$call, slf, args, nargs, kwnames) }
            }
        )*

        static METHODS: Methods = Methods(&[$(
            ffi::PyMethodDef {
                ml_name: $cname.as_ptr(),
                ml_meth: ffi::PyMethodDefPointer { PyCFunctionFastWithKeywords: $func },
                ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
                ml_doc: $doc.as_ptr(),
            },
        )*]);
    };
}

/// A method table of bound builtins (for `EncodingCalls`, in the order of `Call`).
pub(super) struct Methods(pub(super) &'static [ffi::PyMethodDef]);

// SAFETY: the table is never written; its pointers are to static strings and functions.
unsafe impl Sync for Methods {}

bound_calls! {
    Encode "encode" c"encode" encode_call
        c"encode($self, text, *, allowed_special=(), disallowed_special='all')\n--\n\nEncodes text; special tokens are refused unless allowed (tiktoken's policy).\n\n(`Encoding.encode` bound in Rust; any call this path does not take goes to the class method.)";
    Numpy "encode_to_numpy" c"encode_to_numpy" numpy_call
        c"encode_to_numpy($self, text, *, allowed_special=(), disallowed_special='all')\n--\n\nAs `encode`, as a ``uint32`` numpy array (no intermediate list).\n\n(`Encoding.encode_to_numpy` bound in Rust; any call this path does not take goes to the class method.)";
    Count "count" c"count" count_call
        c"count($self, text, *, allowed_special=(), disallowed_special='all')\n--\n\n``len(encode(text, ...))`` without building the list.\n\n(`Encoding.count` bound in Rust; any call this path does not take goes to the class method.)";
    Decode "decode" c"decode" decode_call
        c"decode($self, tokens, errors='replace')\n--\n\nDecodes to text; invalid UTF-8 is handled by ``errors`` (lossy by default, as tiktoken).\n\n(`Encoding.decode` bound in Rust; any call this path does not take goes to the class method.)";
    DecodeBytes "decode_bytes" c"decode_bytes" decode_bytes_call
        c"decode_bytes($self, tokens)\n--\n\nThe bytes of a token sequence; an unknown id raises ``KeyError``.\n\n(`Encoding.decode_bytes` bound in Rust; any call this path does not take goes to the class method.)";
    DecodeSingle "decode_single_token_bytes" c"decode_single_token_bytes" decode_single_call
        c"decode_single_token_bytes($self, token)\n--\n\nThe bytes of one token (ordinary or special).\n\n(`Encoding.decode_single_token_bytes` bound in Rust; any call this path does not take goes to the class method.)";
    DecodeTokens "decode_tokens_bytes" c"decode_tokens_bytes" decode_tokens_call
        c"decode_tokens_bytes($self, tokens)\n--\n\nThe bytes of each token.\n\n(`Encoding.decode_tokens_bytes` bound in Rust; any call this path does not take goes to the class method.)";
    DecodeOffsets "decode_with_offsets" c"decode_with_offsets" decode_offsets_call
        c"decode_with_offsets($self, tokens)\n--\n\nThe text and the character offset at which each token starts (strict UTF-8).\n\n(`Encoding.decode_with_offsets` bound in Rust; any call this path does not take goes to the class method.)";
    EncodeSingle "encode_single_token" c"encode_single_token" encode_single_call
        c"encode_single_token($self, text_or_bytes)\n--\n\nThe id of one whole token (ordinary bytes or a special token's text); ``KeyError`` if none.\n\n(`Encoding.encode_single_token` bound in Rust; any call this path does not take goes to the class method.)";
}

#[pymethods]
impl EncodingCalls {
    #[new]
    fn new(core: Py<CoreBPE>, owner: Py<PyAny>) -> Self {
        EncodingCalls { core, owner: Owner::new(owner) }
    }

    /// The bound call `name` (one of `Call::ALL`): a builtin function whose `__self__` is this
    /// object.
    fn method<'py>(slf: &Bound<'py, Self>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let Some(&(_, which)) = Call::ALL.iter().find(|(n, _)| *n == name) else {
            return Err(pyo3::exceptions::PyValueError::new_err(format!("no bound call {name:?}")));
        };
        builtin(slf.as_any(), &METHODS.0[which as usize])
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.core)?;
        self.owner.traverse(&visit)
    }

    fn __clear__(&self) {
        self.owner.clear();
    }
}
