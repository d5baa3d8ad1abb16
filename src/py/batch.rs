//! Batches with list output: the pool encodes chunks while the calling thread, holding the GIL,
//! turns each finished chunk into Python lists.
//!
//! Performance note: encoding in parallel and *then* converting every id to a Python int (GIL
//! held, one thread) left the conversion as the serial part of a batch: 44% of the CPU time of an
//! English batch, an Amdahl bound of 1.33x on two threads. Here the rayon workers send finished
//! chunks (a few per thread, cut by bytes) down a channel; the caller fills their slots of the
//! output list as they arrive, in any order, and waits with the GIL released. Only the last
//! chunk's conversion is left serial. Numbers in src/PERFORMANCE.md, "Per-call overhead and batch
//! overlap".

use super::calls::{Fail, HOLD_GIL_BELOW};
use super::ints::IdInts;
use super::panic_err;
use crate::parallel;
use crate::vocab::Rank;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;

/// Chunks per pool thread (more: finer load balance and a shorter serial tail; fewer: less
/// channel traffic).
pub(super) const CHUNKS_PER_THREAD: usize = 8;
/// No chunk smaller than this many bytes (unless the batch is).
pub(super) const MIN_CHUNK_BYTES: usize = 16 << 10;

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

/// Index ranges of `texts`, each about `target` bytes (at least one text), largest first: the
/// pool takes spawned chunks in order, so a huge text starts first instead of last (a 230 kB
/// module among 1 MB of code left one thread alone with it at the end).
pub(super) fn chunks(texts: &[Cow<'_, str>], target: usize) -> Vec<(usize, usize)> {
    let mut out = ranges(texts, target);
    let size = |&(a, b): &(usize, usize)| texts[a..b].iter().map(|t| t.len()).sum::<usize>();
    out.sort_by_cached_key(|r| std::cmp::Reverse(size(r)));
    out
}

/// Index ranges of `texts`, each about `target` bytes, in order.
fn ranges(texts: &[Cow<'_, str>], target: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, t) in texts.iter().enumerate() {
        bytes += t.len();
        if bytes >= target {
            out.push((start, i + 1));
            start = i + 1;
            bytes = 0;
        }
    }
    if start < texts.len() {
        out.push((start, texts.len()));
    }
    out
}

/// `encode` of every text as a list of lists of ints, in order, on `threads` threads (`0` = one
/// per core); the first failure (see [`FirstFail`]) is raised instead.
pub fn encode_lists<'py, F>(py: Python<'py>, ints: &IdInts, texts: &[Cow<'_, str>], threads: usize, encode: F) -> PyResult<Bound<'py, PyList>>
where
    F: Fn(&str) -> Encoded + Sync,
{
    let total: usize = texts.iter().map(|t| t.len()).sum();
    let threads = parallel::thread_count(threads);
    let target = (total / (threads * CHUNKS_PER_THREAD)).max(MIN_CHUNK_BYTES);
    let out = IdInts::empty_list(py, texts.len())?;
    let mut fail = FirstFail::default();
    let mut convert = |start: usize, results: std::thread::Result<Vec<Encoded>>| -> PyResult<()> {
        match results {
            Err(p) => fail.panic = Some(p),
            Ok(results) => {
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
    if threads == 1 || total < 2 * MIN_CHUNK_BYTES || texts.len() < 2 {
        let results = if total < HOLD_GIL_BELOW {
            catch_unwind(AssertUnwindSafe(|| encode_all(texts)))
        } else {
            py.detach(|| catch_unwind(AssertUnwindSafe(|| encode_all(texts))))
        };
        convert(0, results)?;
    } else {
        let (tx, rx) = mpsc::channel();
        let mut result = Ok(());
        parallel::pool(threads).in_place_scope(|s| {
            for (a, b) in chunks(texts, target) {
                let (tx, encode_all) = (tx.clone(), &encode_all);
                s.spawn(move |_| {
                    let _ = tx.send((a, catch_unwind(AssertUnwindSafe(|| encode_all(&texts[a..b])))));
                });
            }
            drop(tx);
            let mut rx = rx;
            loop {
                let msg = match rx.try_recv() {
                    Ok(m) => Ok(m),
                    Err(mpsc::TryRecvError::Disconnected) => break,
                    Err(mpsc::TryRecvError::Empty) => {
                        let (m, back) = py.detach(move || (rx.recv(), rx));
                        rx = back;
                        m
                    }
                };
                let Ok((start, results)) = msg else { break };
                if result.is_ok() {
                    result = convert(start, results);
                }
            }
        });
        result?;
    }
    match fail.into_err(py) {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
