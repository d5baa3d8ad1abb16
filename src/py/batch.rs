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

pub(super) type Encoded = Result<Vec<Rank>, Fail>;

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

/// `encode` of every text as a list of lists of ints, in order, on `threads` threads (`0` = one
/// per core); the first failure (see [`FirstFail`]) is raised instead.
pub fn encode_lists<'py, F>(py: Python<'py>, ints: &IdInts, texts: &[Cow<'_, str>], threads: usize, encode: F) -> PyResult<Bound<'py, PyList>>
where
    F: Fn(&str) -> Encoded + Sync,
{
    let total: usize = texts.iter().map(|t| t.len()).sum();
    let threads = parallel::thread_count(threads);
    let out = IdInts::empty_list(py, texts.len())?;
    let mut fail = FirstFail::default();
    let mut convert = |start: usize, results: std::thread::Result<Vec<Encoded>>| -> PyResult<()> {
        match results {
            Err(p) => fail.panic = Some(p),
            Ok(results) => {
                let _pause = GcPause::new(py);
                for (i, r) in results.into_iter().enumerate() {
                    match r {
                        Ok(ids) => IdInts::set(&out, start + i, ints.list(py, &ids)?.into_any()),
                        Err(f) => fail.add(start + i, f),
                    }
                }
            }
        }
        Ok(())
    };
    let encode_all = |part: &[Cow<'_, str>]| part.iter().map(|t| encode(t)).collect::<Vec<_>>();
    if one_chunk(texts, total, threads) {
        let results = if total < HOLD_GIL_BELOW {
            catch_unwind(AssertUnwindSafe(|| encode_all(texts)))
        } else {
            py.detach(|| catch_unwind(AssertUnwindSafe(|| encode_all(texts))))
        };
        convert(0, results)?;
    } else {
        let cuts = chunks(texts, total, threads);
        run_shared(py, threads, &cuts, |c| encode_all(&texts[c.start..c.end]), |c, results| convert(c.start, results))?;
    }
    match fail.into_err(py) {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
