//! `bpekit._core.TokenizerCalls`: `Tokenizer.encode` with no Python frame, bound on a `Tokenizer`
//! whose model the core encodes in one call (a pair-merge pipeline from `tokenizer.json` or GGUF,
//! or a rank model), as `bound.rs` binds `Encoding.encode`.
//!
//! Performance note: through the Python method, `Tokenizer.encode("hi")` on Llama 3's GGUF took
//! 0.71 µs, of which the Rust model call was 0.14: the rest was three Python frames, the type and
//! size checks and the check that no stage was replaced. Bound, the call reads its arguments
//! where the interpreter left them and goes straight to the model. `Tokenizer.__setattr__` drops
//! the binding whenever a public attribute (a stage) is assigned, and the class method binds it
//! again, so a replaced stage is never missed. Numbers in src/PERFORMANCE.md, "Sixteenth round".
//!
//! The fast path takes `encode(text)` and `add_special_tokens` given as `True` or `False`
//! (positional or keyword; `True` calls the tokenizer's `post_processor.process`, read at each
//! call, as the method does) and, for a rank model, tiktoken's `allowed_special` /
//! `disallowed_special` policies that `Encoding.encode` takes in Rust; any other call goes to the
//! class's Python method with the same arguments, so every result and every error is the
//! method's.

use super::added::LiteralMatcher;
use super::bound::{builtin, vectorcall, Args, BoundCalls, Methods, Owner};
use super::calls::text_arg;
use super::encoder::CoreBPE;
use super::pairbpe::PairBPE;
use pyo3::ffi;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::{intern, PyTraverseError};

/// What encodes a text for the bound call.
enum Model {
    /// `PairBPE.encode_added(text, raw, norm, normalize, ascii_invariant)`.
    Pair {
        model: Py<PairBPE>,
        raw: Option<Py<LiteralMatcher>>,
        norm: Option<Py<LiteralMatcher>>,
        normalize: Option<Py<PyAny>>,
        ascii_invariant: bool,
    },
    /// The rank model's `Encoding.encode`.
    Rank(Py<CoreBPE>),
}

#[pyclass(frozen, module = "bpekit._core")]
pub struct TokenizerCalls {
    model: Model,
    /// The `Tokenizer` (its `encode` method takes every other call).
    owner: Owner,
}

impl TokenizerCalls {
    /// Argument `i` as a `bool` if it is `True` or `False` (another value: `None`).
    fn flag(py: Python<'_>, args: &Args<'_>, i: usize) -> Option<bool> {
        let v = args.value(py, i).as_ptr();
        // SAFETY: reads the addresses of two static objects.
        let (t, f) = unsafe { (ffi::Py_True(), ffi::Py_False()) };
        (v == t || v == f).then_some(v == t)
    }

    /// The ids of a call the fast path takes, or `None`.
    fn fast<'py>(&self, py: Python<'py>, args: &Args<'_>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let mut add = match args.positional {
            1 => None,
            2 => match Self::flag(py, args, 1) {
                None => return Ok(None),
                add => add,
            },
            _ => return Ok(None),
        };
        let name = intern!(py, "add_special_tokens");
        // `add_special_tokens=True/False` as a keyword (not given twice)
        let mut other = |i: usize| -> PyResult<bool> {
            if add.is_some() || !args.name_is(py, i, name)? {
                return Ok(false);
            }
            add = Self::flag(py, args, args.positional + i);
            Ok(add.is_some())
        };
        let text = args.value(py, 0);
        let ids = match &self.model {
            Model::Rank(core) => {
                let core = core.get();
                let Some(policy) = args.policy(py, core, other)? else { return Ok(None) };
                core.list_call(py, &text, &policy)?
            }
            Model::Pair { model, raw, norm, normalize, ascii_invariant } => {
                for i in 0..args.keywords() {
                    if !other(i)? {
                        return Ok(None);
                    }
                }
                let text = text_arg(&text)?; // type, size limit, lone surrogates
                let (raw, norm) = (raw.as_ref().map(|m| m.get()), norm.as_ref().map(|m| m.get()));
                let normalize = normalize.as_ref().map(|f| f.bind(py));
                model.get().encode_text(py, &text, raw, norm, normalize, *ascii_invariant)?
            }
        };
        if add != Some(true) {
            return Ok(Some(ids.into_any()));
        }
        // as the method: the post-processor read now (it may have been replaced or changed)
        let post = self.owner.get(py)?.getattr(intern!(py, "post_processor"))?;
        if post.is_none() {
            return Ok(Some(ids.into_any()));
        }
        Ok(Some(post.call_method1(intern!(py, "process"), (ids,))?))
    }
}

impl BoundCalls for TokenizerCalls {
    type Which = ();

    fn call<'py>(&self, py: Python<'py>, _: (), args: &Args<'_>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(out) = self.fast(py, args)? {
            return Ok(out);
        }
        self.owner.call_method(py, "encode", args)
    }
}

unsafe extern "C" fn encode_call(slf: *mut ffi::PyObject, args: *const *mut ffi::PyObject, nargs: ffi::Py_ssize_t, kwnames: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: called by CPython as a `METH_FASTCALL | METH_KEYWORDS` function whose `self` is a
    // `TokenizerCalls` (made by `TokenizerCalls.method`).
    unsafe { vectorcall::<TokenizerCalls>((), slf, args, nargs, kwnames) }
}

static METHODS: Methods = Methods(&[ffi::PyMethodDef {
    ml_name: c"encode".as_ptr(),
    ml_meth: ffi::PyMethodDefPointer { PyCFunctionFastWithKeywords: encode_call },
    ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
    ml_doc: c"encode($self, text, add_special_tokens=False, *, allowed_special=frozenset(), disallowed_special='all')\n--\n\nToken ids of ``text``.\n\n(`Tokenizer.encode` bound in Rust; any call this path does not take goes to the class method.)".as_ptr(),
}]);

#[pymethods]
impl TokenizerCalls {
    /// Calls for a pair-merge pipeline: `encode_added`'s arguments, then the `Tokenizer`.
    #[staticmethod]
    #[pyo3(signature = (model, raw, norm, normalize, ascii_invariant, owner))]
    fn pair(
        model: Py<PairBPE>,
        raw: Option<Py<LiteralMatcher>>,
        norm: Option<Py<LiteralMatcher>>,
        normalize: Option<Py<PyAny>>,
        ascii_invariant: bool,
        owner: Py<PyAny>,
    ) -> Self {
        let model = Model::Pair { model, raw, norm, normalize, ascii_invariant };
        TokenizerCalls { model, owner: Owner::new(owner) }
    }

    /// Calls for a rank model: its `Encoding`'s core, then the `Tokenizer`.
    #[staticmethod]
    fn rank(core: Py<CoreBPE>, owner: Py<PyAny>) -> Self {
        TokenizerCalls { model: Model::Rank(core), owner: Owner::new(owner) }
    }

    /// The bound `encode`: a builtin function whose `__self__` is this object.
    fn method<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        builtin(slf.as_any(), &METHODS.0[0])
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        match &self.model {
            Model::Rank(core) => visit.call(core)?,
            Model::Pair { model, raw, norm, normalize, .. } => {
                visit.call(model)?;
                visit.call(raw)?;
                visit.call(norm)?;
                visit.call(normalize)?;
            }
        }
        self.owner.traverse(&visit)
    }

    fn __clear__(&self) {
        self.owner.clear();
    }
}
