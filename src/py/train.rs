//! `bpekit._core.WordCounter`, `WordCounts`, `learn_merges` and `learn_merges_first_seen`: the
//! trainer as seen from Python (`bpekit.train` and `bpekit.minbpe` wrap them). The GIL is released for all counting and merging; the progress
//! callback re-acquires it briefly, and Ctrl-C is noticed there (`Python::check_signals`).

use super::run;
use crate::train::{learn, learn_ordered, learn_owned, Counter, MergeOptions, Progress, WordCounts};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::PyBytes;

/// Streaming pre-tokenizer and counter.
#[pyclass(module = "bpekit._core")]
pub struct WordCounter {
    inner: Counter,
}

#[pymethods]
impl WordCounter {
    #[new]
    #[pyo3(signature = (pattern, special_tokens, threads = 0))]
    fn new(py: Python<'_>, pattern: &str, special_tokens: Vec<String>, threads: usize) -> PyResult<Self> {
        let inner = run(py, || Counter::new(pattern, special_tokens, threads))?;
        Ok(WordCounter { inner })
    }

    /// Counts independent documents.
    fn add_documents(&mut self, py: Python<'_>, docs: Vec<PyBackedStr>) -> PyResult<()> {
        let inner = &mut self.inner;
        run(py, || {
            let refs: Vec<&str> = docs.iter().map(|d| d.as_str()).collect();
            inner.add_documents(&refs)
        })
    }

    /// Feeds the next block of a UTF-8 byte stream (cut anywhere).
    fn feed(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<()> {
        let inner = &mut self.inner;
        run(py, || inner.feed(data))
    }

    /// Ends the current byte stream.
    fn end_stream(&mut self, py: Python<'_>) -> PyResult<()> {
        let inner = &mut self.inner;
        run(py, || inner.end_stream())
    }

    /// Returns the counts so far and empties the counter.
    fn take_counts(&mut self, py: Python<'_>) -> PyResult<PyWordCounts> {
        let inner = &mut self.inner;
        Ok(PyWordCounts { inner: run(py, || inner.take_counts())? })
    }

    fn distinct(&self) -> usize {
        self.inner.distinct()
    }

    /// `{"bytes", "documents", "pieces", "specials", "forced_cuts"}` so far.
    fn stats(&self) -> Vec<(&'static str, u64)> {
        let s = self.inner.stats;
        vec![
            ("bytes", s.bytes),
            ("documents", s.documents),
            ("pieces", s.pieces),
            ("specials", s.specials),
            ("forced_cuts", s.forced_cuts),
        ]
    }
}

/// Distinct pre-tokens (bytes) with 64-bit counts.
#[pyclass(name = "WordCounts", module = "bpekit._core")]
#[derive(Clone)]
pub struct PyWordCounts {
    inner: WordCounts,
}

#[pymethods]
impl PyWordCounts {
    #[new]
    fn new() -> Self {
        PyWordCounts { inner: WordCounts::new() }
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn total(&self) -> u64 {
        self.inner.total()
    }

    fn get(&self, word: &[u8]) -> u64 {
        self.inner.get(word).unwrap_or(0)
    }

    /// Adds one word's count.
    fn add_word(&mut self, word: &[u8], count: u64) {
        if !word.is_empty() && count > 0 {
            self.inner.add_word(word, count);
        }
    }

    /// Adds all of `other`'s counts into this one.
    fn update(&mut self, py: Python<'_>, other: &PyWordCounts) {
        let (a, b) = (&mut self.inner, &other.inner);
        py.detach(|| a.merge_from(b));
    }

    fn copy(&self) -> PyWordCounts {
        self.clone()
    }

    /// `(word, count)` pairs, most frequent first (ties in byte order); `n` limits the length.
    #[pyo3(signature = (n = None))]
    fn most_common<'py>(&self, py: Python<'py>, n: Option<usize>) -> Vec<(Bound<'py, PyBytes>, u64)> {
        let mut v: Vec<(&[u8], u64)> = self.inner.iter().collect();
        v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        v.truncate(n.unwrap_or(usize::MAX));
        v.into_iter().map(|(w, c)| (PyBytes::new(py, w), c)).collect()
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let inner = &self.inner;
        let data = py.detach(|| inner.to_bytes());
        PyBytes::new(py, &data)
    }

    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<PyWordCounts> {
        Ok(PyWordCounts { inner: run(py, || WordCounts::from_bytes(data))? })
    }

    fn __eq__(&self, other: &PyWordCounts) -> bool {
        self.inner == other.inner
    }
}

/// Learns merges from `counts`. Returns `(merges, counts, tokens)`: every merge as a pair of ids,
/// the count of each, and the bytes of every token by id. `callback(tokens, target, merges)` is
/// called about every 0.1 s; an exception from it (or Ctrl-C) stops training and is re-raised.
/// With `consume`, `counts` is emptied as training starts (its memory is reused).
#[pyfunction]
#[pyo3(signature = (counts, n_tokens, min_frequency = 2, max_token_length = None, threads = 0, callback = None, consume = false))]
#[allow(clippy::type_complexity, clippy::too_many_arguments)] // mirrors the Python signature
pub fn learn_merges<'py>(
    py: Python<'py>,
    counts: &Bound<'py, PyWordCounts>,
    n_tokens: usize,
    min_frequency: u64,
    max_token_length: Option<usize>,
    threads: usize,
    callback: Option<Py<PyAny>>,
    consume: bool,
) -> PyResult<(Vec<(u32, u32)>, Vec<u64>, Vec<Bound<'py, PyBytes>>)> {
    let opts = MergeOptions { n_tokens, min_frequency, max_token_length, threads, first_seen: false };
    let owned = if consume { Some(std::mem::take(&mut counts.borrow_mut().inner)) } else { None };
    let guard = counts.borrow();
    let borrowed: &WordCounts = &guard.inner;
    let mut error: Option<PyErr> = None;
    let result = run(py, || {
        let mut report = |p: &Progress| {
            Python::attach(|py| {
                let r = match &callback {
                    Some(cb) => cb.call1(py, (p.tokens, p.target, p.merges)).map(|_| ()),
                    None => Ok(()),
                };
                match r.and_then(|_| py.check_signals()) {
                    Ok(()) => true,
                    Err(e) => {
                        error = Some(e);
                        false
                    }
                }
            })
        };
        Ok(match owned {
            Some(wc) => learn_owned(wc, &opts, &mut report),
            None => learn(borrowed, &opts, &mut report),
        })
    })?;
    drop(guard);
    match result {
        Ok(l) => {
            let tokens = l.tokens.iter().map(|t| PyBytes::new(py, t)).collect();
            Ok((l.merges, l.counts, tokens))
        }
        Err(_) => Err(error.unwrap_or_else(|| PyKeyboardInterrupt::new_err("training stopped"))),
    }
}

/// Merges as id pairs, and the count of each.
type MergesAndCounts = (Vec<(u32, u32)>, Vec<u64>);

/// minbpe's training: `n_merges` merges over `words` (distinct chunks in order of first
/// appearance, or a whole text as one word) occurring `counts` times, ties to the pair seen first,
/// a new id `256 + i` for merge `i`, pairs seen once merged too. Returns `(merges, counts)`; fewer
/// merges than asked when the words run out of pairs. Ctrl-C stops it (`KeyboardInterrupt`).
#[pyfunction]
pub fn learn_merges_first_seen(
    py: Python<'_>,
    words: Vec<PyBackedBytes>,
    counts: Vec<u64>,
    n_merges: usize,
) -> PyResult<MergesAndCounts> {
    if words.len() != counts.len() {
        let msg = format!("{} words but {} counts", words.len(), counts.len());
        return Err(pyo3::exceptions::PyValueError::new_err(msg));
    }
    let opts = MergeOptions {
        n_tokens: 256 + n_merges,
        min_frequency: 1,
        max_token_length: None,
        threads: 1,
        first_seen: true,
    };
    let mut error: Option<PyErr> = None;
    let result = run(py, || {
        let refs: Vec<&[u8]> = words.iter().map(|w| w.as_ref()).collect();
        let mut report = |_: &Progress| match Python::attach(|py| py.check_signals()) {
            Ok(()) => true,
            Err(e) => {
                error = Some(e);
                false
            }
        };
        Ok(learn_ordered(&refs, &counts, &opts, &mut report))
    })?;
    match result {
        Ok(l) => Ok((l.merges, l.counts)),
        Err(_) => Err(error.unwrap_or_else(|| PyKeyboardInterrupt::new_err("training stopped"))),
    }
}
