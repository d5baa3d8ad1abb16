//! `bpekit._core.SentencePieceCore`: a SentencePiece BPE model's encoder (`crate::sentencepiece`)
//! as seen from Python (`bpekit.formats.sentencepiece.fast` builds it from a model). Every call
//! checks `bpekit.limits`' `max_input_bytes` first.

use super::batch;
use super::calls::{call_python, check_limit, Fail, HOLD_GIL_BELOW};
use super::ints::IdInts;
use super::scratch;
use super::{run, run_held};
use crate::sentencepiece::{bpe::BYTE_PIECE, MergeablePiece, Options, SentencePiece};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

#[pyclass(frozen, module = "bpekit._core")]
pub struct SentencePieceCore {
    model: SentencePiece,
    ints: IdInts,
}

impl SentencePieceCore {
    /// The ids of `data` (checked for size already), for `encode` and the bound
    /// `Tokenizer.encode` (`tokenizer_calls.rs`).
    pub(super) fn encode_bytes<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let mut ids = scratch::ids();
        ids.reserve(data.len() / 3 + 1); // (as `SentencePiece::encode` sizes its `Vec`)
        let out: &mut Vec<u32> = &mut ids;
        call(py, data.len(), || self.model.encode_into(data, out))?;
        self.ints.list(py, &ids)
    }
}

/// The UTF-8 bytes of a `str` (a `UnicodeEncodeError` for lone surrogates) or a `bytes`.
fn text_bytes<'a>(text: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    if let Ok(s) = text.cast::<PyString>() {
        return Ok(s.to_str()?.as_bytes());
    }
    if let Ok(b) = text.cast::<PyBytes>() {
        return Ok(b.as_bytes());
    }
    Err(PyTypeError::new_err(format!("text must be str or bytes, not {}", text.get_type().name()?)))
}

/// `bpekit.limits`' `max_input_bytes` for one text (`EncodeError`).
fn check_size<'py>(py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<()> {
    if let Ok(s) = text.cast::<PyString>() {
        check_limit(py, s.len()?, || Ok(PyTuple::new(py, [s])?.into_any()))
    } else if let Ok(b) = text.cast::<PyBytes>() {
        call_python(py, "bpekit.limits", "check_bytes", (b.as_bytes().len(),)).map(drop)
    } else {
        Ok(()) // not a text: `text_bytes` refuses it
    }
}

/// As [`check_size`] for all the texts of a batch together.
fn check_sizes<'py>(py: Python<'py>, texts: &[Bound<'py, PyAny>]) -> PyResult<()> {
    if texts.iter().all(|t| t.is_instance_of::<PyString>()) {
        let chars = texts.iter().map(|t| t.len()).sum::<PyResult<usize>>()?;
        return check_limit(py, chars, || Ok(PyTuple::new(py, texts)?.into_any()));
    }
    // bytes among them: their UTF-8 sizes added up exactly (a str with lone surrogates is
    // refused later, so it counts its code points here)
    let mut size = 0usize;
    for t in texts {
        size = size.saturating_add(match (t.cast::<PyString>(), t.cast::<PyBytes>()) {
            (Ok(s), _) => s.to_str().map(|x| x.len()).or_else(|_| s.len())?,
            (_, Ok(b)) => b.as_bytes().len(),
            _ => 0,
        });
    }
    call_python(py, "bpekit.limits", "check_bytes", (size,)).map(drop)
}

/// Runs `f`, with the GIL released for long texts.
fn call<T: Send>(py: Python<'_>, len: usize, f: impl FnOnce() -> crate::Result<T> + Send) -> PyResult<T> {
    if len < HOLD_GIL_BELOW {
        run_held(py, f)
    } else {
        run(py, f)
    }
}

#[pymethods]
impl SentencePieceCore {
    /// `pieces`: `(piece, id, score rank, type)` of every NORMAL, USER_DEFINED and UNUSED piece;
    /// `byte_ids`: the ids of `<0x00>`..`<0xFF>` under byte fallback, else empty.
    #[new]
    #[pyo3(signature = (pieces, unk_id, byte_ids, charsmap, add_dummy_prefix, remove_extra_whitespaces,
                        escape_whitespaces, treat_whitespace_as_suffix, vocab_size))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        pieces: Vec<MergeablePiece>,
        unk_id: u32,
        byte_ids: Vec<u32>,
        charsmap: Option<Vec<u8>>,
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        treat_whitespace_as_suffix: bool,
        vocab_size: u32,
    ) -> PyResult<Self> {
        let options =
            Options { add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces, treat_whitespace_as_suffix };
        let model = run(py, || SentencePiece::new(pieces, unk_id, byte_ids, charsmap.as_deref(), options))?;
        Ok(SentencePieceCore { model, ints: IdInts::new(vocab_size.checked_sub(1)) })
    }

    /// Sets the per-thread piece cache budget in bytes (0 = off) and empties every thread's cache.
    fn set_cache_capacity(&self, bytes: usize) {
        self.model.set_cache_capacity(bytes)
    }

    fn cache_capacity(&self) -> usize {
        self.model.cache_capacity()
    }

    /// The normalized text (`str`, or `bytes` that may be malformed UTF-8).
    fn normalize(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<String> {
        check_size(py, text)?;
        let data = text_bytes(text)?;
        call(py, data.len(), || self.model.normalize(data))
    }

    /// The ids of one text.
    fn encode<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        check_size(py, text)?;
        self.encode_bytes(py, text_bytes(text)?)
    }

    /// The pieces and ids of one text.
    fn encode_pieces(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<(Vec<String>, Vec<u32>)> {
        check_size(py, text)?;
        let data = text_bytes(text)?;
        let enc = call(py, data.len(), || self.model.encode_spans(data))?;
        let text = enc.normalized.as_bytes();
        let pieces = enc
            .spans
            .iter()
            .map(|&(s, e)| {
                if e == BYTE_PIECE {
                    format!("<0x{:02X}>", text[s as usize])
                } else {
                    String::from_utf8_lossy(&text[s as usize..e as usize]).into_owned()
                }
            })
            .collect();
        Ok((pieces, enc.ids))
    }

    /// The ids of one text and each id's span of it in chars, as sentencepiece's piece
    /// `begin` / `end` (`SentencePieceBPE.encode_with_offsets`; a `str` without lone
    /// surrogates, which the caller fixes first).
    fn encode_offsets<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
    ) -> PyResult<(Bound<'py, PyList>, crate::offsets::Spans)> {
        check_size(py, text.as_any())?;
        let s = text.to_str()?;
        let (ids, spans) = call(py, s.len(), || self.model.encode_offsets(s))?;
        Ok((self.ints.list(py, &ids)?, spans))
    }

    /// `encode` of each text (`str` or `bytes`), in parallel (`num_threads` 0 = one per core);
    /// `around`'s ids before and after each text's; lists (made while the pool encodes), one
    /// `uint32` array and `int64` offsets (`len(texts) + 1`), or counts, as `out` says.
    #[pyo3(signature = (texts, num_threads = 0, around = (Vec::new(), Vec::new()), out = batch::Out::Lists))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyAny>>,
        num_threads: usize,
        around: (Vec<u32>, Vec<u32>),
        out: batch::Out,
    ) -> PyResult<Bound<'py, PyAny>> {
        check_sizes(py, &texts)?;
        let data = texts.iter().map(text_bytes).collect::<PyResult<Vec<&[u8]>>>()?;
        let lens: Vec<usize> = data.iter().map(|d| d.len()).collect();
        let encode = |i: usize, out: &mut Vec<u32>| self.model.encode_into(data[i], out).map_err(Fail::Core);
        batch::encode_out(py, &self.ints, &lens, num_threads, out, batch::around(&around.0, &around.1, encode))
    }
}
