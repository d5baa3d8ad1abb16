//! Decoding in one call: `Encoding.decode_batch` (the ids read in Rust, decoded in parallel, each
//! text made by CPython's own UTF-8 decoder with the caller's `errors` handler), the bodies of the
//! bound decode calls of `bound.rs` (`decode`, `decode_bytes`, `decode_single_token_bytes`,
//! `decode_tokens_bytes`, `decode_with_offsets`, `encode_single_token`), and the per-id tables of
//! file-loaded tokenizers: [`ByteLevelIds`] (Hugging Face pipelines with a ByteLevel decoder) and
//! [`SentencePieceIds`] (SentencePiece models).
//!
//! Performance note: the Python path copies each sequence (`list(tokens)`), has PyO3 extract the
//! lists, makes a `bytes` object per text and decodes it in a Python loop. Here a list or tuple of
//! lists or tuples of `int` is read with one C call per id, and each text goes straight from the
//! decoded bytes to a `str` (`PyUnicode_DecodeUTF8`: the function `bytes.decode("utf-8", errors)`
//! calls, so every handler, replacement and error is the same). Anything else (other containers,
//! a non-int or out-of-range id, an unknown id, a bad `num_threads`) returns `None` and
//! `bpekit.encoding` takes the general path, which raises its usual errors. Numbers in
//! src/PERFORMANCE.md, "Numpy output and batches, fourth round".

use super::scratch::{self, Spare};
use crate::core::CoreBpe;
use crate::parallel;
use crate::vocab::Rank;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::critical_section::with_critical_section;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyString, PyTuple};
use std::ffi::{CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Sequences of fewer ids than this are decoded with the GIL held (releasing and re-taking it
/// costs more than copying their bytes).
const HOLD_GIL_BELOW_IDS: usize = 1024;

/// One `Encoding.decode_bytes` (`errors` `None`) or `Encoding.decode` call: the bytes, or the text
/// decoded by CPython's UTF-8 decoder with the `errors` handler; `None` where the general path
/// must decide (not an exact list or tuple of `int`s in range, or an unknown id: it raises).
pub fn decode_one<'py>(core: &CoreBpe, seq: &Bound<'py, PyAny>, errors: Option<&CStr>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = seq.py();
    let Some(ids) = ids(seq) else { return Ok(None) };
    let mut bytes = scratch::bytes();
    let out: &mut Vec<u8> = &mut bytes;
    let decoded = if ids.len() < HOLD_GIL_BELOW_IDS {
        catch_unwind(AssertUnwindSafe(|| core.decode_bytes_into(&ids, out)))
    } else {
        py.detach(|| catch_unwind(AssertUnwindSafe(|| core.decode_bytes_into(&ids, out))))
    };
    match decoded {
        Ok(Ok(())) => {}
        Ok(Err(_)) => return Ok(None),
        Err(p) => return Err(super::panic_err(py, p)),
    }
    let Some(errors) = errors else {
        return Ok(Some(PyBytes::new(py, &bytes).into_any()));
    };
    Ok(Some(utf8_text(py, &bytes, errors)?.into_any()))
}

/// `bytes.decode("utf-8", errors)` of `data`, by the function CPython's own decode calls (every
/// handler, replacement and error the same).
fn utf8_text<'py>(py: Python<'py>, data: &[u8], errors: &CStr) -> PyResult<Bound<'py, PyString>> {
    // SAFETY: `data` is a live buffer of `data.len()` bytes and `errors` a NUL-terminated string;
    // the result is a new reference, or null with the decoder's exception set (then raised).
    unsafe {
        let s = ffi::PyUnicode_DecodeUTF8(data.as_ptr().cast(), data.len() as ffi::Py_ssize_t, errors.as_ptr());
        Ok(Bound::from_owned_ptr_or_err(py, s)?.cast_into_unchecked())
    }
}

/// An exact `int` in `0..2**32`, else `None` (no error left set).
fn id_of(obj: &Bound<'_, PyAny>) -> Option<Rank> {
    // SAFETY: `obj` is a live object.
    unsafe { id_at(obj.py(), obj.as_ptr()) }
}

/// [`id_of`] of a borrowed pointer (the list and tuple readers touch no reference count).
///
/// # Safety
/// `v` is a live object for the duration of the call.
unsafe fn id_at(py: Python<'_>, v: *mut ffi::PyObject) -> Option<Rank> {
    // SAFETY: `v` is live (the caller's promise).
    if unsafe { ffi::PyLong_CheckExact(v) } == 0 {
        return None;
    }
    // SAFETY: `v` is an exact int; an out-of-range value returns -1 with an error set (cleared).
    let x = unsafe { ffi::PyLong_AsUnsignedLongLong(v) };
    if x == u64::MAX && PyErr::take(py).is_some() {
        return None;
    }
    Rank::try_from(x).ok()
}

/// `Encoding.decode_single_token_bytes(token)`: the bytes of a known id given as an exact `int`,
/// else `None` (the general path raises).
pub fn single_token_bytes<'py>(core: &CoreBpe, token: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    let b = core.vocab.token_bytes(id_of(token)?)?;
    Some(PyBytes::new(token.py(), b).into_any())
}

/// `Encoding.encode_single_token(x)` for an exact `bytes` or `str` (without lone surrogates) that
/// is an ordinary token (the class method looks for the ordinary token first, also for a special
/// token's text); `None` otherwise (the general path finds a special token or raises).
pub fn single_token_rank<'py>(core: &CoreBpe, x: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    let rank = if let Ok(b) = x.cast_exact::<PyBytes>() {
        core.vocab.rank(b.as_bytes())?
    } else {
        core.vocab.rank(x.cast_exact::<PyString>().ok()?.to_str().ok()?.as_bytes())?
    };
    rank.into_pyobject(x.py()).ok().map(|r| r.into_any())
}

/// `Encoding.decode_tokens_bytes(tokens)`: the bytes of each id of an exact list or tuple of
/// exact `int`s, every id known; `None` otherwise (the general path decides).
pub fn tokens_bytes<'py>(core: &CoreBpe, seq: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = seq.py();
    let Some(ids) = ids(seq) else { return Ok(None) };
    let Some(parts) = ids.iter().map(|&t| core.vocab.token_bytes(t)).collect::<Option<Vec<_>>>() else {
        return Ok(None);
    };
    let out = super::ints::IdInts::empty_list(py, parts.len())?;
    for (i, b) in parts.iter().enumerate() {
        super::ints::IdInts::set(&out, i, PyBytes::new(py, b).into_any());
    }
    Ok(Some(out.into_any()))
}

/// `Encoding.decode_with_offsets(tokens)`: the text (strict UTF-8) and the character offset at
/// which each token starts (a token starting with a continuation byte starts one character
/// earlier: the character it completes), as the class method computes them; `None` where the
/// general path must decide (it raises for an unknown id, an empty token or invalid UTF-8).
pub fn decode_with_offsets<'py>(core: &CoreBpe, seq: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = seq.py();
    let Some(ids) = ids(seq) else { return Ok(None) };
    let continuation = |c: u8| (0x80..0xC0).contains(&c);
    let (mut text, mut offsets, mut chars) = (Vec::new(), Vec::with_capacity(ids.len()), 0usize);
    for &t in ids.iter() {
        match core.vocab.token_bytes(t) {
            Some(b) if !b.is_empty() => {
                offsets.push(chars.saturating_sub(continuation(b[0]) as usize));
                chars += b.iter().filter(|&&c| !continuation(c)).count();
                text.extend_from_slice(b);
            }
            _ => return Ok(None),
        }
    }
    let Ok(text) = std::str::from_utf8(&text) else { return Ok(None) };
    Ok(Some((PyString::new(py, text), offsets).into_pyobject(py)?.into_any()))
}

/// The items of an exact list or tuple (`None` for anything else).
fn items<'py>(obj: &Bound<'py, PyAny>) -> Option<Vec<Bound<'py, PyAny>>> {
    if let Ok(l) = obj.cast_exact::<PyList>() {
        return Some(l.iter().collect());
    }
    obj.cast_exact::<PyTuple>().ok().map(|t| t.iter().collect())
}

/// The ids of one sequence: an exact list or tuple of exact `int`s in `0..2**32`, else `None`.
/// On free-threaded CPython a list is read inside its critical section (a no-op with the GIL),
/// so no other thread can drop an item while it is borrowed.
/// They are read into this thread's spare buffer (`scratch.rs`); [`owned_ids`] for a `Vec` of
/// their own (a batch's sequences).
fn ids(seq: &Bound<'_, PyAny>) -> Option<Spare<Rank>> {
    ids_into(seq, scratch::ids())
}

fn owned_ids(seq: &Bound<'_, PyAny>) -> Option<Vec<Rank>> {
    ids_into(seq, Vec::new())
}

/// [`read_ids`] into `out` (an empty buffer), inside the sequence's critical section.
fn ids_into<B: AsMut<Vec<Rank>>>(seq: &Bound<'_, PyAny>, mut out: B) -> Option<B> {
    with_critical_section(seq, || read_ids(seq, out.as_mut()))?;
    Some(out)
}

fn read_ids(seq: &Bound<'_, PyAny>, out: &mut Vec<Rank>) -> Option<()> {
    let p = seq.as_ptr();
    // SAFETY: `p` is a live list or tuple (checked) that no thread can change meanwhile (the GIL
    // or the critical section); its items are borrowed, only read, never stored, so no reference
    // count is touched (each increment would write to an int object spread over the heap: a
    // third of the time of this loop).
    unsafe {
        let (n, item): (ffi::Py_ssize_t, unsafe fn(*mut ffi::PyObject, ffi::Py_ssize_t) -> *mut ffi::PyObject) =
            if ffi::PyList_CheckExact(p) != 0 {
                (ffi::PyList_GET_SIZE(p), list_item)
            } else if ffi::PyTuple_CheckExact(p) != 0 {
                (ffi::PyTuple_GET_SIZE(p), tuple_item)
            } else {
                return None;
            };
        out.reserve(n as usize);
        for i in 0..n {
            out.push(id_at(seq.py(), item(p, i))?);
        }
        Some(())
    }
}

unsafe fn list_item(p: *mut ffi::PyObject, i: ffi::Py_ssize_t) -> *mut ffi::PyObject {
    // SAFETY: the caller passes an exact list and an index below its size.
    unsafe { ffi::PyList_GET_ITEM(p, i) }
}

unsafe fn tuple_item(p: *mut ffi::PyObject, i: ffi::Py_ssize_t) -> *mut ffi::PyObject {
    // SAFETY: the caller passes an exact tuple and an index below its size.
    unsafe { ffi::PyTuple_GET_ITEM(p, i) }
}

/// Batches of fewer ids than this are decoded on the calling thread with the GIL held: handing
/// them to the pool cost more than the copies (4 sequences of 45 ids: 19 µs on 8 pool threads,
/// 0.8 µs inline).
const PARALLEL_FROM_IDS: usize = 1 << 16;

/// The bytes of every sequence (`threads` threads, `0` = one per core), a panic caught.
pub fn decode_all(py: Python<'_>, core: &CoreBpe, seqs: &[Vec<Rank>], threads: usize) -> std::thread::Result<crate::Result<Vec<Vec<u8>>>> {
    let total: usize = seqs.iter().map(Vec::len).sum();
    if total < PARALLEL_FROM_IDS {
        return catch_unwind(AssertUnwindSafe(|| seqs.iter().map(|t| core.decode_bytes(t)).collect()));
    }
    let work = || parallel::map(seqs, threads, |t| core.decode_bytes(t)).into_iter().collect::<crate::Result<Vec<_>>>();
    py.detach(|| catch_unwind(AssertUnwindSafe(work)))
}

/// `[core.decode_bytes(ids).decode("utf-8", errors) for ids in batch]` on `threads` threads, or
/// `None` where the general path must decide (see the module doc).
pub fn decode_batch<'py>(core: &CoreBpe, batch: &Bound<'py, PyAny>, errors: &Bound<'py, PyAny>, threads: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyList>>> {
    let py = batch.py();
    let threads = match threads.cast_exact::<PyInt>().ok().and_then(|n| n.extract::<usize>().ok()) {
        Some(n) => n,
        None => return Ok(None),
    };
    let Some(errors) = errors.cast_exact::<PyString>().ok().and_then(|e| CString::new(e.to_str().ok()?).ok()) else {
        return Ok(None);
    };
    let Some(seqs) = items(batch) else { return Ok(None) };
    let Some(seqs) = seqs.iter().map(owned_ids).collect::<Option<Vec<_>>>() else { return Ok(None) };
    let decoded = match decode_all(py, core, &seqs, threads) {
        Ok(Ok(decoded)) => decoded,
        Ok(Err(_)) => return Ok(None), // an unknown id: the general path raises its error
        Err(p) => return Err(super::panic_err(py, p)),
    };
    let out = super::ints::IdInts::empty_list(py, decoded.len())?;
    for (i, b) in decoded.iter().enumerate() {
        let s = utf8_text(py, b, &errors)?;
        super::ints::IdInts::set(&out, i, s.into_any());
    }
    Ok(Some(out))
}

/// The bytes of every id of a Hugging Face pipeline whose decoder is `ByteLevel` (GPT-2's byte
/// alphabet), for `Tokenizer.decode` in one call: each token's characters mapped back to their
/// bytes when every one of them is in the alphabet, else the token's UTF-8 (the decoder's rule,
/// token by token), the text decoded lossily.
///
/// Performance note: the Python path maps each id to its token string, each string to bytes and
/// joins them: 16 µs for 25 ids of GPT-NeoX's vocabulary, where Hugging Face's `decode` takes
/// 2.6 µs (src/PERFORMANCE.md, "Tenth round").
#[pyclass(frozen, module = "bpekit._core")]
pub struct ByteLevelIds {
    bytes: Vec<u8>,
    /// Start and end in `bytes` of each id (`start > end`: no such id).
    spans: Vec<(u32, u32)>,
    /// Ids that `skip_special_tokens` drops.
    special: Vec<bool>,
}

const NO_ID: (u32, u32) = (1, 0);

#[pymethods]
impl ByteLevelIds {
    /// Ids `0..n`: the token strings of `vocab` (id -> string), then of `added` (id -> string,
    /// replacing the vocabulary's); `special`: the ids `skip_special_tokens` drops; `alphabet[b]`:
    /// the character that stands for byte `b`.
    ///
    /// Performance note: built at a tokenizer's first call. Lists of `n` strings and flags made in
    /// Python, each string copied into a `String` and its characters looked up in a hashed map
    /// took 28 ms for Qwen 2's 151,936 ids (the first `encode` of a GGUF file paid it, since it
    /// binds `decode` too); the dictionaries read here and a direct table of the alphabet: ~5 ms.
    #[new]
    fn new(n: usize, vocab: &Bound<'_, PyDict>, added: &Bound<'_, PyDict>, special: Vec<u32>, alphabet: Vec<char>) -> PyResult<Self> {
        let bad = |what: &str| pyo3::exceptions::PyValueError::new_err(format!("ByteLevelIds: {what}"));
        if alphabet.len() != 256 || n >= u32::MAX as usize {
            return Err(bad("256 characters and fewer than 2**32 ids expected"));
        }
        let top = alphabet.iter().map(|&c| c as usize).max().unwrap_or(0);
        let mut byte_of = vec![u16::MAX; top + 1];
        for (b, &c) in alphabet.iter().enumerate() {
            byte_of[c as usize] = b as u16;
        }
        let (mut bytes, mut spans) = (Vec::with_capacity(n * 6), vec![NO_ID; n]);
        for (id, token) in vocab.iter().chain(added.iter()) {
            let id: usize = id.extract()?;
            let token = token.cast::<PyString>()?.to_str()?;
            let span = spans.get_mut(id).ok_or_else(|| bad("an id past n"))?;
            let start = bytes.len();
            for c in token.chars() {
                match byte_of.get(c as usize) {
                    Some(&b) if b != u16::MAX => bytes.push(b as u8),
                    _ => {
                        bytes.truncate(start); // a character outside the alphabet: the token's UTF-8
                        bytes.extend_from_slice(token.as_bytes());
                        break;
                    }
                }
            }
            *span = span_of(start, bytes.len()).ok_or_else(|| bad("tokens longer than 4 GiB in all"))?;
        }
        let mut flags = vec![false; n];
        for id in special {
            *flags.get_mut(id as usize).ok_or_else(|| bad("a special id past n"))? = true;
        }
        Ok(ByteLevelIds { bytes, spans, special: flags })
    }

    /// The text of `seq` (an exact list or tuple of exact ints), special ids dropped if `skip`;
    /// `None` for anything else or an unknown id (the Python path decides).
    pub(super) fn decode<'py>(&self, seq: &Bound<'py, PyAny>, skip: bool) -> PyResult<Option<Bound<'py, PyString>>> {
        let Some(ids) = ids(seq) else { return Ok(None) };
        let mut out = scratch::bytes();
        out.reserve(ids.len() * 4);
        for &t in ids.iter() {
            let Some(&(s, e)) = self.spans.get(t as usize).filter(|&&(s, e)| s <= e) else { return Ok(None) };
            if !(skip && self.special[t as usize]) {
                out.extend_from_slice(&self.bytes[s as usize..e as usize]);
            }
        }
        utf8_text(seq.py(), &out, c"replace").map(Some)
    }
}

/// What a SentencePiece piece decodes to ([`SentencePieceIds`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum SpmKind {
    /// Its text (`▁` as a space), the first `▁` of the output dropped as the model says.
    Text,
    /// Its text exactly (the unknown piece: `unk_surface`).
    Unknown,
    /// Nothing (a control piece).
    Control,
    /// One byte of a run decoded as UTF-8 together.
    Byte,
}

/// SentencePiece's `Decode` of ids for a model without a denormalizer, in one call:
/// `bpekit.formats.sentencepiece.decoder.decode_pieces`'s rules (that function's notes) over
/// tables made once per model: each piece's kind, text (or byte) and whether it starts with `▁`.
///
/// Performance note: the Python decoder walks a piece name per id through a dictionary; 26 µs for
/// a 30-id paragraph of a 3,000-piece model, where `sentencepiece` takes 3.2 µs
/// (src/PERFORMANCE.md, "Tenth round").
#[pyclass(frozen, module = "bpekit._core")]
pub struct SentencePieceIds {
    text: Vec<u8>,
    spans: Vec<(u32, u32)>,
    kind: Vec<SpmKind>,
    lead_space: Vec<bool>,
    special: Vec<bool>,
    /// Drop the first `▁` of the output (`add_dummy_prefix` or `remove_extra_whitespaces`).
    strip_first: bool,
    /// Keep dropping leading `▁`s while nothing is written (`remove_extra_whitespaces`).
    strip_all: bool,
}

#[pymethods]
impl SentencePieceIds {
    /// `pieces[id]`: (piece string, kind: 0 text, 1 unknown, 2 control, 3 byte); `special[id]`:
    /// dropped by `skip_special_tokens`.
    #[new]
    fn new(pieces: Vec<(String, u8)>, special: Vec<bool>, unk_surface: String, strip_first: bool, strip_all: bool) -> PyResult<Self> {
        if special.len() != pieces.len() || pieces.len() >= u32::MAX as usize {
            return Err(pyo3::exceptions::PyValueError::new_err("SentencePieceIds: one flag per piece expected"));
        }
        let (mut text, mut spans, mut kind, mut lead_space) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (piece, k) in &pieces {
            let start = text.len();
            let k = match k {
                0 => {
                    text.extend_from_slice(piece.replace('\u{2581}', " ").as_bytes());
                    SpmKind::Text
                }
                1 => {
                    text.extend_from_slice(unk_surface.as_bytes());
                    SpmKind::Unknown
                }
                2 => SpmKind::Control,
                3 => {
                    let hex = piece.strip_prefix("<0x").and_then(|h| h.strip_suffix('>')).filter(|h| h.len() == 2);
                    let byte = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
                    let Some(b) = byte else {
                        return Err(pyo3::exceptions::PyValueError::new_err(format!("SentencePieceIds: byte piece {piece:?}")));
                    };
                    text.push(b);
                    SpmKind::Byte
                }
                _ => return Err(pyo3::exceptions::PyValueError::new_err("SentencePieceIds: kind must be 0 to 3")),
            };
            let span = span_of(start, text.len());
            spans.push(span.ok_or_else(|| pyo3::exceptions::PyValueError::new_err("SentencePieceIds: pieces longer than 4 GiB in all"))?);
            kind.push(k);
            lead_space.push(piece.starts_with('\u{2581}'));
        }
        Ok(SentencePieceIds { text, spans, kind, lead_space, special, strip_first, strip_all })
    }

    /// The text of `seq` (an exact list or tuple of exact ints), special ids dropped if `skip`;
    /// `None` for anything else or an id out of range (the Python path raises).
    pub(super) fn decode<'py>(&self, seq: &Bound<'py, PyAny>, skip: bool) -> PyResult<Option<Bound<'py, PyString>>> {
        let Some(ids) = ids(seq) else { return Ok(None) };
        let (mut out, mut run) = (scratch::bytes(), Vec::new());
        out.reserve(ids.len() * 4);
        let mut at_start = true; // nothing written yet, and no `▁` dropped yet
        for &t in ids.iter() {
            let Some(&(s, e)) = self.spans.get(t as usize) else { return Ok(None) };
            let t = t as usize;
            if skip && self.special[t] {
                continue;
            }
            let mut piece = &self.text[s as usize..e as usize];
            match self.kind[t] {
                SpmKind::Byte => {
                    run.extend_from_slice(piece);
                    continue;
                }
                _ if !run.is_empty() => {
                    at_start &= !utf8_or_replacement(&run, &mut out);
                    run.clear();
                }
                _ => {}
            }
            match self.kind[t] {
                SpmKind::Control | SpmKind::Byte => continue,
                SpmKind::Text if at_start && self.strip_first && self.lead_space[t] => {
                    piece = &piece[1..]; // the `▁`, written as one space
                    at_start = self.strip_all;
                }
                _ => {}
            }
            out.extend_from_slice(piece);
            at_start &= piece.is_empty();
        }
        if !run.is_empty() {
            utf8_or_replacement(&run, &mut out);
        }
        let text = std::str::from_utf8(&out).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        Ok(Some(PyString::new(seq.py(), text)))
    }
}

/// The ids of a pipeline whose decoder is Hugging Face's `Sequence` of per-token `Replace`s, an
/// optional `ByteFallback`, `Fuse` and an optional `Strip` (the Llama-2 / Mistral decoder:
/// `Replace("▁", " ")`, `ByteFallback`, `Fuse`, `Strip(" ", 1, 0)`), decoded in one call:
/// each id's token string with the replaces done (Python, `decoders.Sequence.decode_table`),
/// runs of byte tokens as UTF-8 (a run that is not valid UTF-8 gives one U+FFFD per byte, as
/// `ByteFallback` does), everything joined, then `Strip` on the joined text.
///
/// Performance note: the Python decoders took 28.8 µs for a 122-character paragraph of the Llama
/// vocabulary and 3.3 µs for one id, `tokenizers` 7.1 and 0.48 (src/PERFORMANCE.md, "Nineteenth
/// round").
#[pyclass(frozen, module = "bpekit._core")]
pub struct FusedIds {
    text: Vec<u8>,
    /// Start and end in `text` of each id's string (`start > end`: no such id).
    spans: Vec<(u32, u32)>,
    /// The byte of a `<0xHH>` token (`ByteFallback`), else -1.
    byte: Vec<i16>,
    special: Vec<bool>,
    /// `Strip`: the character, and how many of it to remove at the start and at the end.
    strip: Option<(char, usize, usize)>,
}

#[pymethods]
impl FusedIds {
    /// `tokens[id]`: the token string after the replaces (`None`: no such id); `byte[id]`: its
    /// byte if `ByteFallback` reads it as one, else -1; `special[id]`: dropped by
    /// `skip_special_tokens`; `strip`: `Strip`'s `(content, start, stop)`, if any.
    #[new]
    fn new(tokens: Vec<Option<String>>, byte: Vec<i16>, special: Vec<bool>, strip: Option<(char, usize, usize)>) -> PyResult<Self> {
        let bad = |what: &str| pyo3::exceptions::PyValueError::new_err(format!("FusedIds: {what}"));
        if byte.len() != tokens.len() || special.len() != tokens.len() || tokens.len() >= u32::MAX as usize {
            return Err(bad("one byte and one flag per token, fewer than 2**32 ids"));
        }
        let (mut text, mut spans) = (Vec::new(), Vec::with_capacity(tokens.len()));
        for t in &tokens {
            let start = text.len();
            match t {
                Some(t) => text.extend_from_slice(t.as_bytes()),
                None => {
                    spans.push(NO_ID);
                    continue;
                }
            }
            spans.push(span_of(start, text.len()).ok_or_else(|| bad("tokens longer than 4 GiB in all"))?);
        }
        if byte.iter().any(|&b| !(-1..=255).contains(&b)) {
            return Err(bad("a byte must be -1 or 0 to 255"));
        }
        Ok(FusedIds { text, spans, byte, special, strip })
    }

    /// The text of `seq` (an exact list or tuple of exact ints), special ids dropped if `skip`;
    /// `None` for anything else or an unknown id (the Python path decides).
    pub(super) fn decode<'py>(&self, seq: &Bound<'py, PyAny>, skip: bool) -> PyResult<Option<Bound<'py, PyString>>> {
        let Some(ids) = ids(seq) else { return Ok(None) };
        let (mut out, mut run) = (scratch::bytes(), Vec::new());
        out.reserve(ids.len() * 4);
        for &t in ids.iter() {
            let Some(&(s, e)) = self.spans.get(t as usize).filter(|&&(s, e)| s <= e) else { return Ok(None) };
            let t = t as usize;
            if skip && self.special[t] {
                continue;
            }
            if let Ok(b) = u8::try_from(self.byte[t]) {
                run.push(b);
                continue;
            }
            whole_run(&mut run, &mut out);
            out.extend_from_slice(&self.text[s as usize..e as usize]);
        }
        whole_run(&mut run, &mut out);
        let text = std::str::from_utf8(&out).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        let text = match self.strip {
            Some((c, start, stop)) => strip_chars(text, c, start, stop),
            None => text,
        };
        Ok(Some(PyString::new(seq.py(), text)))
    }
}

/// `start..end` of a decode table's text as 32-bit offsets, `None` past 4 GiB.
fn span_of(start: usize, end: usize) -> Option<(u32, u32)> {
    Some((u32::try_from(start).ok()?, u32::try_from(end).ok()?))
}

/// Appends a run of `ByteFallback` bytes and empties it: its text if it is valid UTF-8, else one
/// U+FFFD per byte.
fn whole_run(run: &mut Vec<u8>, out: &mut Vec<u8>) {
    if run.is_empty() {
        return;
    }
    match std::str::from_utf8(run) {
        Ok(s) => out.extend_from_slice(s.as_bytes()),
        Err(_) => (0..run.len()).for_each(|_| out.extend_from_slice("\u{FFFD}".as_bytes())),
    }
    run.clear();
}

/// `text` without up to `start` leading and `stop` trailing `c`s (`Strip` on one token).
fn strip_chars(text: &str, c: char, start: usize, stop: usize) -> &str {
    let mut t = text;
    for _ in 0..start {
        match t.strip_prefix(c) {
            Some(rest) => t = rest,
            None => break,
        }
    }
    for _ in 0..stop {
        match t.strip_suffix(c) {
            Some(rest) => t = rest,
            None => break,
        }
    }
    t
}

/// Appends `data` as UTF-8 with one U+FFFD for each byte that is not part of a valid character
/// (SentencePiece's rule for a run of byte pieces); whether anything was written.
fn utf8_or_replacement(mut data: &[u8], out: &mut Vec<u8>) -> bool {
    let before = out.len();
    while !data.is_empty() {
        match std::str::from_utf8(data) {
            Ok(s) => {
                out.extend_from_slice(s.as_bytes());
                break;
            }
            Err(e) => {
                let valid = e.valid_up_to();
                out.extend_from_slice(&data[..valid]);
                let bad = e.error_len().unwrap_or(data.len() - valid);
                for _ in 0..bad {
                    out.extend_from_slice("\u{FFFD}".as_bytes());
                }
                data = &data[valid + bad..];
            }
        }
    }
    out.len() > before
}
