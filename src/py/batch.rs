//! Batches with list output: every text encoded on the batch's threads, each finished chunk of
//! texts turned into Python lists by the calling thread between the chunks it encodes itself.
//!
//! Performance note: encoding in parallel and *then* converting every id to a Python int (GIL
//! held, one thread) left the conversion as the serial part of a batch: 44% of the CPU time of an
//! English batch, an Amdahl bound of 1.33x on two threads. The conversion now overlaps the
//! encoding: the calling thread is one of the batch's threads (`chunks.rs`) and fills the slots
//! of the output list of every chunk that has finished (in any order) between its own chunks.
//! Only the last chunk's conversion is left serial. Numbers in src/PERFORMANCE.md, "Per-call
//! overhead and batch overlap" and "Batches, fifth round".

use super::calls::{Fail, HOLD_GIL_BELOW};
use super::chunks::{chunks, one_chunk, run_shared};
use super::ints::{GcPause, IdInts};
use super::panic_err;
use crate::parallel;
use crate::vocab::Rank;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What a batch's encoder does with one text: append its ids to the chunk's buffer.
pub(super) trait EncodeInto: Fn(&str, &mut Vec<Rank>) -> Result<(), Fail> + Sync {}
impl<F: Fn(&str, &mut Vec<Rank>) -> Result<(), Fail> + Sync> EncodeInto for F {}

/// The ids of a run of texts, back to back, and where each text's ids end (from the run's start).
///
/// Performance note: a `Vec` per text, made on a pool thread and freed on the calling thread
/// after its list was made, cost a `malloc` and a cross-thread `free` per text (~24% of a batch
/// of 7,238 empty texts, and glibc's arena lock between the two threads); one buffer per chunk
/// costs a few. Numbers in src/PERFORMANCE.md, "Batches, eighth round".
#[derive(Default)]
pub(super) struct Part {
    pub(super) ids: Vec<Rank>,
    pub(super) ends: Vec<i64>,
    /// The texts that failed (index in the batch) and why; each gets an empty run of ids.
    pub(super) fails: Vec<(usize, Fail)>,
}

/// What a batch's encoder does with the text at an index of the batch.
pub(super) trait EncodeAt: Fn(usize, &mut Vec<Rank>) -> Result<(), Fail> + Sync {}
impl<F: Fn(usize, &mut Vec<Rank>) -> Result<(), Fail> + Sync> EncodeAt for F {}

impl Part {
    /// Encodes the texts `range` of the batch (`bytes` in all) into one part.
    pub(super) fn encode(range: std::ops::Range<usize>, bytes: usize, encode: &impl EncodeAt) -> Part {
        let mut part = Part { ids: Vec::with_capacity(bytes / 4 + 1), ends: Vec::with_capacity(range.len()), fails: Vec::new() };
        for i in range {
            let base = part.ids.len();
            if let Err(f) = encode(i, &mut part.ids) {
                part.ids.truncate(base);
                part.fails.push((i, f));
            }
            part.ends.push(part.ids.len() as i64);
        }
        part
    }

    /// Counts the ids of the texts `range` of the batch: `ends` holds each text's count (not
    /// where its ids end) and `ids` is left empty (one buffer reused: nothing kept per id).
    pub(super) fn count(range: std::ops::Range<usize>, encode: &impl EncodeAt) -> Part {
        let mut part = Part { ids: Vec::new(), ends: Vec::with_capacity(range.len()), fails: Vec::new() };
        for i in range {
            part.ids.clear();
            if let Err(f) = encode(i, &mut part.ids) {
                part.ids.clear();
                part.fails.push((i, f));
            }
            part.ends.push(part.ids.len() as i64);
        }
        part.ids = Vec::new();
        part
    }

    /// `make`'s part of a whole batch of `total` bytes, on the calling thread with the GIL
    /// released unless it is short; a panic is caught as the chunked path catches it.
    pub(super) fn here(py: Python<'_>, total: usize, make: impl FnOnce() -> Part + Send) -> std::thread::Result<Part> {
        let work = || catch_unwind(AssertUnwindSafe(make));
        if total < HOLD_GIL_BELOW {
            work()
        } else {
            py.detach(work)
        }
    }

    /// The ids of each text of the part, in order.
    fn runs(&self) -> impl Iterator<Item = &[Rank]> {
        let mut from = 0;
        self.ends.iter().map(move |&end| {
            let run = &self.ids[from..end as usize];
            from = end as usize;
            run
        })
    }
}

/// The first failure of a batch as the Python side reports it: a disallowed special token in any
/// text wins over a core error (the special-token check runs over the whole batch first), and
/// among each kind the lowest index wins.
#[derive(Default)]
pub(super) struct FirstFail {
    special: Option<(usize, String)>,
    core: Option<(usize, crate::Error)>,
    pub(super) panic: Option<Box<dyn std::any::Any + Send>>,
}

impl FirstFail {
    pub(super) fn add(&mut self, i: usize, f: Fail) {
        match f {
            Fail::Special(s) => {
                if !matches!(self.special, Some((j, _)) if j < i) {
                    self.special = Some((i, s));
                }
            }
            Fail::Core(e) => {
                if !matches!(self.core, Some((j, _)) if j < i) {
                    self.core = Some((i, e));
                }
            }
        }
    }

    pub(super) fn into_err(self, py: Python<'_>) -> Option<PyErr> {
        if let Some(p) = self.panic {
            return Some(panic_err(py, p));
        }
        if let Some((_, s)) = self.special {
            return Some(Fail::Special(s).into_py(py));
        }
        self.core.map(|(_, e)| Fail::Core(e).into_py(py))
    }
}

/// `encode` with `prefix` before and `suffix` after each text's ids (a post-processor's special
/// tokens, such as Llama 3's BOS): the batch adds them as it encodes, with no Python call per text.
pub(super) fn around<'a>(prefix: &'a [Rank], suffix: &'a [Rank], encode: impl EncodeAt + 'a) -> impl EncodeAt + 'a {
    move |i: usize, out: &mut Vec<Rank>| {
        out.extend_from_slice(prefix);
        encode(i, out)?;
        out.extend_from_slice(suffix);
        Ok(())
    }
}

/// What a batch call returns: lists of ids, one flat array and offsets, or each text's number
/// of ids (the code Python passes: 0, 1, 2).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Out {
    Lists,
    Flat,
    Counts,
}

impl<'a, 'py> FromPyObject<'a, 'py> for Out {
    type Error = PyErr;

    fn extract(ob: Borrowed<'a, 'py, PyAny>) -> PyResult<Out> {
        match ob.extract::<u8>()? {
            0 => Ok(Out::Lists),
            1 => Ok(Out::Flat),
            2 => Ok(Out::Counts),
            n => Err(pyo3::exceptions::PyValueError::new_err(format!("batch output code must be 0, 1 or 2, not {n}"))),
        }
    }
}

/// [`encode_lists_at`], [`super::flat::encode_flat_at`] or [`super::flat::count_at`], as `out`
/// says: what a pipeline's batch call returns.
pub(super) fn encode_out<'py>(py: Python<'py>, ints: &IdInts, lens: &[usize], threads: usize, out: Out, encode: impl EncodeAt) -> PyResult<Bound<'py, PyAny>> {
    match out {
        Out::Flat => Ok(super::flat::encode_flat_at(py, lens, threads, encode)?.into_pyobject(py)?.into_any()),
        Out::Lists => Ok(encode_lists_at(py, ints, lens, threads, encode)?.into_any()),
        Out::Counts => Ok(super::flat::count_at(py, lens, threads, encode)?.into_pyobject(py)?.into_any()),
    }
}

/// `encode` of every text as a list of lists of ints, in order, on `threads` threads (`0` = one
/// per core); the first failure (see [`FirstFail`]) is raised instead.
pub fn encode_lists<'py>(py: Python<'py>, ints: &IdInts, texts: &[Cow<'_, str>], threads: usize, encode: impl EncodeInto) -> PyResult<Bound<'py, PyList>> {
    let lens: Vec<usize> = texts.iter().map(|t| t.len()).collect();
    encode_lists_at(py, ints, &lens, threads, |i: usize, out: &mut Vec<Rank>| encode(&texts[i], out))
}

/// [`encode_lists`] of a batch given as the texts' lengths in bytes (for chunking) and `encode`,
/// which encodes the text at an index.
pub fn encode_lists_at<'py>(py: Python<'py>, ints: &IdInts, lens: &[usize], threads: usize, encode: impl EncodeAt) -> PyResult<Bound<'py, PyList>> {
    let total: usize = lens.iter().sum();
    let threads = parallel::thread_count(threads);
    let out = IdInts::empty_list(py, lens.len())?;
    let mut fail = FirstFail::default();
    let mut convert = |start: usize, part: std::thread::Result<Part>| -> PyResult<()> {
        match part {
            Err(p) => fail.panic = Some(p),
            Ok(part) => {
                let _pause = GcPause::new(py);
                for (i, ids) in part.runs().enumerate() {
                    IdInts::set(&out, start + i, ints.list(py, ids)?.into_any());
                }
                for (i, f) in part.fails {
                    fail.add(i, f);
                }
            }
        }
        Ok(())
    };
    if one_chunk(lens, total, threads) {
        convert(0, Part::here(py, total, || Part::encode(0..lens.len(), total, &encode)))?;
    } else {
        let cuts = chunks(lens, total, threads);
        run_shared(py, threads, &cuts, |c| Part::encode(c.start..c.end, c.bytes, &encode), |c, part| convert(c.start, part))?;
    }
    match fail.into_err(py) {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
