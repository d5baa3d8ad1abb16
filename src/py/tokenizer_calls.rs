//! `bpekit._core.TokenizerCalls`: `Tokenizer.encode` and `Tokenizer.decode` with no Python frame,
//! bound on a `Tokenizer` whose model the core encodes in one call (a pair-merge pipeline from
//! `tokenizer.json` or GGUF, a SentencePiece model, a rank model) and whose decoder has a table of
//! every id (`decode_table`: ByteLevel, SentencePiece), as `bound.rs` binds `Encoding`'s calls.
//!
//! Performance note: through the Python methods, `Tokenizer.encode("hi")` on Llama 3's GGUF took
//! 0.71 µs, of which the Rust model call was 0.14, and `decode` of one id 0.81 µs, of which the
//! table's was 0.07: the rest was Python frames, the type and size checks and the checks that no
//! stage was replaced. Bound, a call reads its arguments where the interpreter left them and goes
//! straight to the model or table. `Tokenizer.__setattr__` drops the bindings whenever a public
//! attribute (a stage) is assigned, and the class methods bind them again, so a replaced stage is
//! never missed. Numbers in src/PERFORMANCE.md, "Sixteenth round".
//!
//! The fast `encode` takes `encode(text)` and `add_special_tokens` given as `True` or `False`
//! (positional or keyword; `True` calls the tokenizer's `post_processor.process`, read at each
//! call, as the method does) and, for a rank model, tiktoken's `allowed_special` /
//! `disallowed_special` policies that `Encoding.encode` takes in Rust; any other call goes to the
//! class's Python method with the same arguments, so every result and every error is the
//! method's. The fast `decode` takes `decode(ids)` with `errors` (which a pipeline's decode
//! ignores) and `skip_special_tokens` given as `True` or `False`, ids an exact list or tuple of
//! ids the table knows, and for a rank model the calls the bound `Encoding.decode` takes (no
//! `skip_special_tokens`); anything else goes to `Tokenizer.decode`.

use super::added::LiteralMatcher;
use super::bound::{builtin, errors_arg, vectorcall, Args, BoundCalls, Methods, Owner};
use super::calls::text_arg;
use super::decode::{decode_one, ByteLevelIds, FusedIds, SentencePieceIds};
use super::encoder::CoreBPE;
use super::pairbpe::PairBPE;
use super::sentencepiece::SentencePieceCore;
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
    /// `SentencePieceCore.encode` (a pipeline of a SentencePiece model alone).
    Pieces(Py<SentencePieceCore>),
}

/// What decodes ids for the bound call: the decoder's table of every id
/// (`Tokenizer._decode_ids`), or a rank model's `Encoding.decode`.
enum Table {
    Bytes(Py<ByteLevelIds>),
    Pieces(Py<SentencePieceIds>),
    Fused(Py<FusedIds>),
    Rank(Py<CoreBPE>),
}

/// `encode_added`'s arguments after the text: the model, the raw and normalized added-token
/// matchers, the normalizer's call and whether it leaves ASCII as it is.
type PairArgs = (Py<PairBPE>, Option<Py<LiteralMatcher>>, Option<Py<LiteralMatcher>>, Option<Py<PyAny>>, bool);

#[pyclass(frozen, module = "bpekit._core")]
pub struct TokenizerCalls {
    /// `None`: `encode` is not bound.
    model: Option<Model>,
    /// `None`: `decode` is not bound.
    table: Option<Table>,
    /// The `Tokenizer` (its methods take every other call).
    owner: Owner,
}

/// Which bound call.
#[derive(Clone, Copy)]
pub(super) enum Which {
    Encode,
    Decode,
}

impl TokenizerCalls {
    /// Argument `i` as a `bool` if it is `True` or `False` (another value: `None`).
    fn flag(py: Python<'_>, args: &Args<'_>, i: usize) -> Option<bool> {
        let v = args.value(py, i).as_ptr();
        // SAFETY: reads the addresses of two static objects.
        let (t, f) = unsafe { (ffi::Py_True(), ffi::Py_False()) };
        (v == t || v == f).then_some(v == t)
    }

    /// The ids of an `encode` call the fast path takes, or `None`.
    fn encode<'py>(&self, py: Python<'py>, model: &Model, args: &Args<'_>) -> PyResult<Option<Bound<'py, PyAny>>> {
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
        if !matches!(model, Model::Rank(_)) {
            // a pipeline takes no other keyword (the method ignores the special-token policies)
            for i in 0..args.keywords() {
                if !other(i)? {
                    return Ok(None);
                }
            }
        }
        let text = args.value(py, 0);
        let ids = match model {
            Model::Rank(core) => {
                let core = core.get();
                let Some(policy) = args.policy(py, core, other)? else { return Ok(None) };
                core.list_call(py, &text, &policy)?.into_any()
            }
            Model::Pair { model, raw, norm, normalize, ascii_invariant } => {
                let text = text_arg(&text)?; // type, size limit, lone surrogates
                let (raw, norm) = (raw.as_ref().map(|m| m.get()), norm.as_ref().map(|m| m.get()));
                let normalize = normalize.as_ref().map(|f| f.bind(py));
                model.get().encode_text(py, &text, raw, norm, normalize, *ascii_invariant, false)?
            }
            Model::Pieces(core) => core.get().encode_bytes(py, text_arg(&text)?.as_bytes())?.into_any(),
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

impl TokenizerCalls {
    /// The text of a `decode` call the fast path takes, or `None`.
    fn decode<'py>(&self, py: Python<'py>, table: &Table, args: &Args<'_>) -> PyResult<Option<Bound<'py, PyAny>>> {
        if args.positional == 0 || args.positional > 2 {
            return Ok(None);
        }
        let seq = args.value(py, 0);
        let text = match table {
            // `Encoding.decode(tokens, errors)`: `skip_special_tokens` goes to the method
            Table::Rank(core) => {
                return match errors_arg(py, args)? {
                    Some(errors) => decode_one(core.get().core(), &seq, Some(&errors)),
                    None => Ok(None),
                };
            }
            Table::Bytes(t) => match Self::skip_arg(py, args)? {
                Some(skip) => t.get().decode(&seq, skip)?,
                None => return Ok(None),
            },
            Table::Pieces(t) => match Self::skip_arg(py, args)? {
                Some(skip) => t.get().decode(&seq, skip)?,
                None => return Ok(None),
            },
            Table::Fused(t) => match Self::skip_arg(py, args)? {
                Some(skip) => t.get().decode(&seq, skip)?,
                None => return Ok(None),
            },
        };
        Ok(text.map(Bound::into_any))
    }

    /// `skip_special_tokens` of a pipeline's `decode` call given as `True`, `False` or not at all,
    /// with `errors` (which the method ignores) or not; `None` for any other keyword.
    fn skip_arg(py: Python<'_>, args: &Args<'_>) -> PyResult<Option<bool>> {
        let (errors, skip_name) = (intern!(py, "errors"), intern!(py, "skip_special_tokens"));
        let mut skip = None;
        for i in 0..args.keywords() {
            if args.name_is(py, i, errors)? && args.positional == 1 {
                continue;
            }
            if skip.is_some() || !args.name_is(py, i, skip_name)? {
                return Ok(None);
            }
            skip = Self::flag(py, args, args.positional + i);
            if skip.is_none() {
                return Ok(None);
            }
        }
        Ok(Some(skip.unwrap_or(false)))
    }
}

impl BoundCalls for TokenizerCalls {
    type Which = Which;

    fn call<'py>(&self, py: Python<'py>, which: Which, args: &Args<'_>) -> PyResult<Bound<'py, PyAny>> {
        let (out, name) = match (which, &self.model, &self.table) {
            (Which::Encode, Some(model), _) => (self.encode(py, model, args)?, "encode"),
            (Which::Decode, _, Some(table)) => (self.decode(py, table, args)?, "decode"),
            (Which::Encode, None, _) => (None, "encode"),
            (Which::Decode, _, None) => (None, "decode"),
        };
        match out {
            Some(out) => Ok(out),
            None => self.owner.call_method(py, name, args),
        }
    }
}

unsafe extern "C" fn encode_call(slf: *mut ffi::PyObject, args: *const *mut ffi::PyObject, nargs: ffi::Py_ssize_t, kwnames: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: called by CPython as a `METH_FASTCALL | METH_KEYWORDS` function whose `self` is a
    // `TokenizerCalls` (made by `TokenizerCalls.method`).
    unsafe { vectorcall::<TokenizerCalls>(Which::Encode, slf, args, nargs, kwnames) }
}

unsafe extern "C" fn decode_call(slf: *mut ffi::PyObject, args: *const *mut ffi::PyObject, nargs: ffi::Py_ssize_t, kwnames: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: as `encode_call`.
    unsafe { vectorcall::<TokenizerCalls>(Which::Decode, slf, args, nargs, kwnames) }
}

/// The bound builtins, in the order of `Which`.
static METHODS: Methods = Methods(&[
    ffi::PyMethodDef {
        ml_name: c"encode".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer { PyCFunctionFastWithKeywords: encode_call },
        ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
        ml_doc: c"encode($self, text, add_special_tokens=False, *, allowed_special=frozenset(), disallowed_special='all')\n--\n\nToken ids of ``text``.\n\n(`Tokenizer.encode` bound in Rust; any call this path does not take goes to the class method.)".as_ptr(),
    },
    ffi::PyMethodDef {
        ml_name: c"decode".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer { PyCFunctionFastWithKeywords: decode_call },
        ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
        ml_doc: c"decode($self, tokens, errors='replace', *, skip_special_tokens=False)\n--\n\nThe text of ``tokens``.\n\n(`Tokenizer.decode` bound in Rust; any call this path does not take goes to the class method.)".as_ptr(),
    },
]);

#[pymethods]
impl TokenizerCalls {
    /// The calls of a `Tokenizer` (`owner`): `encode` through a pair-merge model (`pair`:
    /// `encode_added`'s arguments `(model, raw, norm, normalize, ascii_invariant)`), a rank
    /// model (`rank`: its `Encoding`'s core) or a SentencePiece model alone (`pieces`: its
    /// `SentencePieceCore`), `decode` through a decoder's table (`table`: a `ByteLevelIds`,
    /// `SentencePieceIds` or `FusedIds`) or a rank model's core (`table`: a `CoreBPE`); each absent is not
    /// bound.
    #[new]
    #[pyo3(signature = (owner, *, pair = None, rank = None, pieces = None, table = None))]
    fn new(
        owner: Py<PyAny>,
        pair: Option<PairArgs>,
        rank: Option<Py<CoreBPE>>,
        pieces: Option<Py<SentencePieceCore>>,
        table: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let model = match (pair, rank, pieces) {
            (Some((model, raw, norm, normalize, ascii_invariant)), None, None) => Some(Model::Pair { model, raw, norm, normalize, ascii_invariant }),
            (None, Some(core), None) => Some(Model::Rank(core)),
            (None, None, Some(core)) => Some(Model::Pieces(core)),
            (None, None, None) => None,
            _ => return Err(pyo3::exceptions::PyValueError::new_err("one model: pair, rank or pieces")),
        };
        let table = match table {
            None => None,
            Some(t) if t.is_instance_of::<ByteLevelIds>() => Some(Table::Bytes(t.cast_into::<ByteLevelIds>()?.unbind())),
            Some(t) if t.is_instance_of::<CoreBPE>() => Some(Table::Rank(t.cast_into::<CoreBPE>()?.unbind())),
            Some(t) if t.is_instance_of::<FusedIds>() => Some(Table::Fused(t.cast_into::<FusedIds>()?.unbind())),
            Some(t) => Some(Table::Pieces(t.cast_into::<SentencePieceIds>()?.unbind())),
        };
        Ok(TokenizerCalls { model, table, owner: Owner::new(owner) })
    }

    /// The bound call `name` (`"encode"` or `"decode"`): a builtin function whose `__self__` is
    /// this object.
    fn method<'py>(slf: &Bound<'py, Self>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let which = match name {
            "encode" => Which::Encode,
            "decode" => Which::Decode,
            _ => return Err(pyo3::exceptions::PyValueError::new_err(format!("no bound call {name:?}"))),
        };
        builtin(slf.as_any(), &METHODS.0[which as usize])
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        match &self.model {
            Some(Model::Rank(core)) => visit.call(core)?,
            Some(Model::Pieces(core)) => visit.call(core)?,
            Some(Model::Pair { model, raw, norm, normalize, .. }) => {
                visit.call(model)?;
                visit.call(raw)?;
                visit.call(norm)?;
                visit.call(normalize)?;
            }
            None => {}
        }
        match &self.table {
            Some(Table::Bytes(t)) => visit.call(t)?,
            Some(Table::Pieces(t)) => visit.call(t)?,
            Some(Table::Fused(t)) => visit.call(t)?,
            Some(Table::Rank(t)) => visit.call(t)?,
            None => {}
        }
        self.owner.traverse(&visit)
    }

    fn __clear__(&self) {
        self.owner.clear();
    }
}
