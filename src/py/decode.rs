//! `Encoding.decode_batch` in one call: the ids read in Rust, decoded in parallel, each text made by
//! CPython's own UTF-8 decoder with the caller's `errors` handler.
//!
//! Performance note: the Python path copies each sequence (`list(tokens)`), has PyO3 extract the
//! lists, makes a `bytes` object per text and decodes it in a Python loop. Here a list or tuple of
//! lists or tuples of `int` is read with one C call per id, and each text goes straight from the
//! decoded bytes to a `str` (`PyUnicode_DecodeUTF8`: the function `bytes.decode("utf-8", errors)`
//! calls, so every handler, replacement and error is the same). Anything else (other containers,
//! a non-int or out-of-range id, an unknown id, a bad `num_threads`) returns `None` and
//! `bpekit.encoding` takes the general path, which raises its usual errors. Numbers in
//! src/PERFORMANCE.md, "Numpy output and batches, fourth round".

use crate::core::CoreBpe;
use crate::parallel;
use crate::vocab::Rank;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::critical_section::with_critical_section;
use pyo3::types::{PyInt, PyList, PyString, PyTuple};
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
    let decoded = if ids.len() < HOLD_GIL_BELOW_IDS {
        catch_unwind(AssertUnwindSafe(|| core.decode_bytes(&ids)))
    } else {
        py.detach(|| catch_unwind(AssertUnwindSafe(|| core.decode_bytes(&ids))))
    };
    let bytes = match decoded {
        Ok(Ok(b)) => b,
        Ok(Err(_)) => return Ok(None),
        Err(p) => return Err(super::panic_err(py, p)),
    };
    let Some(errors) = errors else {
        return Ok(Some(pyo3::types::PyBytes::new(py, &bytes).into_any()));
    };
    // SAFETY: `bytes` is a live buffer of `bytes.len()` bytes and `errors` a NUL-terminated
    // string; the result is a new reference or null with the decoder's exception set.
    let s = unsafe { ffi::PyUnicode_DecodeUTF8(bytes.as_ptr().cast(), bytes.len() as ffi::Py_ssize_t, errors.as_ptr()) };
    // SAFETY: as above; a null becomes the pending exception.
    Ok(Some(unsafe { Bound::from_owned_ptr_or_err(py, s)? }))
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
fn ids(seq: &Bound<'_, PyAny>) -> Option<Vec<Rank>> {
    with_critical_section(seq, || read_ids(seq))
}

fn read_ids(seq: &Bound<'_, PyAny>) -> Option<Vec<Rank>> {
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
        let mut out = Vec::with_capacity(n as usize);
        for i in 0..n {
            let v = item(p, i);
            if ffi::PyLong_CheckExact(v) == 0 {
                return None;
            }
            // an out-of-range value returns -1 with an error set (cleared)
            let x = ffi::PyLong_AsUnsignedLongLong(v);
            if x == u64::MAX && PyErr::take(seq.py()).is_some() {
                return None;
            }
            out.push(Rank::try_from(x).ok()?);
        }
        Some(out)
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
    let Some(seqs) = seqs.iter().map(ids).collect::<Option<Vec<_>>>() else { return Ok(None) };
    let work = || parallel::map(&seqs, threads, |t| core.decode_bytes(t)).into_iter().collect::<crate::Result<Vec<_>>>();
    let decoded = match py.detach(|| catch_unwind(AssertUnwindSafe(work))) {
        Ok(Ok(decoded)) => decoded,
        Ok(Err(_)) => return Ok(None), // an unknown id: the general path raises its error
        Err(p) => return Err(super::panic_err(py, p)),
    };
    let out = super::ints::IdInts::empty_list(py, decoded.len())?;
    for (i, b) in decoded.iter().enumerate() {
        // SAFETY: `b` is a live buffer of `b.len()` bytes and `errors` a NUL-terminated string;
        // the result is a new reference or null with the decoder's exception set.
        let s = unsafe { ffi::PyUnicode_DecodeUTF8(b.as_ptr().cast(), b.len() as ffi::Py_ssize_t, errors.as_ptr()) };
        // SAFETY: as above; a null becomes the pending exception.
        let s = unsafe { Bound::from_owned_ptr_or_err(py, s)? };
        super::ints::IdInts::set(&out, i, s);
    }
    Ok(Some(out))
}
