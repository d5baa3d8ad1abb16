//! Batches with flat numpy output: one `uint32` array of every text's ids and `int64` offsets.
//!
//! Performance note: the first version mapped texts to one `Vec` each on the pool, collected them
//! and concatenated them on one thread, after the Python checks had copied every text into a
//! `String` and scanned each for specials in a Python loop. Here, as for list batches
//! (`batch.rs`), the texts are borrowed (CPython's UTF-8 view, checked in `calls.rs`) and cut into
//! chunks by bytes; each thread (the calling one among them, `chunks.rs`) appends its chunk's ids
//! to one buffer and its ends to another. The calling thread then allocates the two arrays at
//! their final length and copies the chunks in (a memcpy: ~0.1 ms per million ids). One chunk (a
//! small batch, one thread) becomes the array without a copy when it is long. Numbers in
//! src/PERFORMANCE.md, "Numpy output and batches, fourth round" and "Batches, fifth round".

use super::batch::{EncodeAt, EncodeInto, FirstFail, Part};
use super::chunks::{chunks, one_chunk, run_shared};
use super::encoder::ids_array;
use crate::parallel;
use crate::vocab::Rank;
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use std::borrow::Cow;

/// One flat array of ids and the offsets where each text's ids start (`len(texts) + 1`).
pub type FlatBatch<'py> = (Bound<'py, PyArray1<Rank>>, Bound<'py, PyArray1<i64>>);

/// `encode` of every text into one flat array plus offsets, on `threads` threads (`0` = one per
/// core); the first failure (see [`FirstFail`]) is raised instead.
pub fn encode_flat<'py>(py: Python<'py>, texts: &[Cow<'_, str>], threads: usize, encode: impl EncodeInto) -> PyResult<FlatBatch<'py>> {
    let lens: Vec<usize> = texts.iter().map(|t| t.len()).collect();
    encode_flat_at(py, &lens, threads, |i: usize, out: &mut Vec<Rank>| encode(&texts[i], out))
}

/// [`encode_flat`] of a batch given as the texts' lengths in bytes (for chunking) and `encode`,
/// which encodes the text at an index (as [`super::batch::encode_lists_at`]).
pub fn encode_flat_at<'py>(py: Python<'py>, lens: &[usize], threads: usize, encode: impl EncodeAt) -> PyResult<FlatBatch<'py>> {
    let parts = parts_at(py, lens, threads, |range, bytes| Part::encode(range, bytes, &encode))?;
    assemble(py, lens.len(), succeeded(py, parts)?)
}

/// Each text's number of ids (`len(encode(text))`), counted as [`encode_flat_at`] encodes but
/// keeping no ids; the first failure (see [`FirstFail`]) is raised instead.
pub fn count_at(py: Python<'_>, lens: &[usize], threads: usize, encode: impl EncodeAt) -> PyResult<Vec<usize>> {
    let parts = parts_at(py, lens, threads, |range, _| Part::count(range, &encode))?;
    Ok(succeeded(py, parts)?.iter().flat_map(|p| p.ends.iter().map(|&n| n as usize)).collect())
}

/// The batch's texts cut into chunks by bytes and each chunk made into a part by `make(range of
/// texts, bytes)` on `threads` threads (the calling one among them), in text order.
fn parts_at(py: Python<'_>, lens: &[usize], threads: usize, make: impl Fn(std::ops::Range<usize>, usize) -> Part + Sync) -> PyResult<Vec<std::thread::Result<Part>>> {
    let total: usize = lens.iter().sum();
    let threads = parallel::thread_count(threads);
    if one_chunk(lens, total, threads) {
        return Ok(vec![Part::here(py, total, || make(0..lens.len(), total))]);
    }
    let cuts = chunks(lens, total, threads);
    let mut done: Vec<(usize, std::thread::Result<Part>)> = Vec::with_capacity(cuts.len());
    run_shared(py, threads, &cuts, |c| make(c.start..c.end, c.bytes), |c, part| {
        done.push((c.start, part));
        Ok(())
    })?;
    done.sort_unstable_by_key(|&(a, _)| a); // chunks finish in any order: back in text order
    Ok(done.into_iter().map(|(_, part)| part).collect())
}

/// The parts, or the batch's first failure.
fn succeeded(py: Python<'_>, parts: Vec<std::thread::Result<Part>>) -> PyResult<Vec<Part>> {
    let mut fail = FirstFail::default();
    let mut ok = Vec::with_capacity(parts.len());
    for part in parts {
        match part {
            Err(p) => fail.panic = Some(p),
            Ok(mut part) => {
                for (i, f) in part.fails.drain(..) {
                    fail.add(i, f);
                }
                ok.push(part);
            }
        }
    }
    match fail.into_err(py) {
        Some(e) => Err(e),
        None => Ok(ok),
    }
}

/// The arrays of the parts `ok` (in order, `n` texts in all).
fn assemble(py: Python<'_>, n: usize, mut ok: Vec<Part>) -> PyResult<FlatBatch<'_>> {
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0i64);
    let mut base = 0i64;
    for part in &ok {
        offsets.extend(part.ends.iter().map(|e| base + e));
        base += part.ids.len() as i64;
    }
    super::encoder::numpy_ready(py)?;
    let offsets = PyArray1::from_vec(py, offsets);
    if ok.len() == 1 {
        let mut part = ok.pop().expect("one part");
        return Ok((ids_array(py, &mut part.ids)?, offsets));
    }
    let flat = PyArray1::<Rank>::zeros(py, base as usize, false);
    {
        let mut view = flat.try_readwrite().map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
        let out = view.as_slice_mut().map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
        let mut at = 0;
        for part in &ok {
            out[at..at + part.ids.len()].copy_from_slice(&part.ids);
            at += part.ids.len();
        }
    }
    Ok((flat, offsets))
}
