//! The Python side of token offsets (`crate::offsets`): `CoreBPE.char_offsets` (in
//! `encoder.rs`) and [`ByteLengths`], a pipeline's table of byte lengths and trimmable spaces.

use crate::offsets::{char_spans, lead_spans as spans_after_lead, trim};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The error for ids that do not spell the text.
pub fn not_spelled() -> PyErr {
    PyValueError::new_err("the ids do not spell the text: no offsets")
}

/// The byte length of each id of a pipeline's model, and the spaces at either end of each id's
/// token string (`bpekit.Tokenizer._byte_offsets`), to give the char spans of its ids over a text
/// and trim them as its post-processor does.
#[pyclass(module = "bpekit._core", frozen)]
pub struct ByteLengths {
    lengths: Vec<u32>,
    ends: Vec<(u32, u32)>,
}

#[pymethods]
impl ByteLengths {
    #[new]
    fn new(lengths: Vec<u32>, ends: Vec<(u32, u32)>) -> Self {
        ByteLengths { lengths, ends }
    }

    /// `spans` (of `ids`) trimmed as [`trim`] does; an id without an entry has no spaces. `at`:
    /// `(index, (leading, trailing))` in increasing index order, the spaces of ids whose string
    /// is not their token's (an added token's match with the whitespace `lstrip` / `rstrip` took).
    #[pyo3(signature = (ids, spans, add_prefix_space, at = Vec::new()))]
    fn trim(
        &self,
        ids: Vec<u32>,
        mut spans: Vec<(usize, usize)>,
        add_prefix_space: bool,
        at: Vec<(usize, (u32, u32))>,
    ) -> Vec<(usize, usize)> {
        let mut at = at.into_iter().peekable();
        let ends = ids.iter().enumerate().map(|(k, &i)| {
            let own = at.next_if(|&(j, _)| j == k).map(|(_, e)| e);
            let (a, b) = own.or_else(|| self.ends.get(i as usize).copied()).unwrap_or((0, 0));
            (a as usize, b as usize)
        });
        trim(&mut spans, ends, add_prefix_space);
        spans
    }

    /// The byte length of id `i`, if it has one.
    pub(super) fn length(&self, i: u32) -> Option<usize> {
        self.lengths.get(i as usize).map(|&n| n as usize)
    }

    /// The char span of each of `ids` over `text` (see [`char_spans`]; `skip` bytes first).
    #[pyo3(signature = (text, ids, skip = 0))]
    fn char_offsets(&self, text: &str, ids: Vec<u32>, skip: usize) -> PyResult<Vec<(usize, usize)>> {
        let lengths = ids.iter().map(|&i| self.lengths.get(i as usize).map(|&n| n as usize));
        char_spans(text, lengths, skip).ok_or_else(not_spelled)
    }
}

/// `Aligned.replace`'s spans (see [`crate::offsets::replaced_spans`]): `spans` `None` for text
/// with no list of spans (`origin`, `lead`). `ValueError` for matches out of order or past `len`.
#[pyfunction]
#[pyo3(signature = (spans, origin, lead, len, matches, content))]
pub fn replaced_spans(
    spans: Option<Vec<(usize, usize)>>,
    origin: usize,
    lead: usize,
    len: usize,
    matches: Vec<(usize, usize)>,
    content: usize,
) -> PyResult<crate::offsets::Spans> {
    let mut done = 0;
    for &(s, e) in &matches {
        if s < done || e < s || e > len {
            return Err(PyValueError::new_err(format!("replaced_spans: match ({s}, {e}) out of order or past {len} chars")));
        }
        done = e;
    }
    if spans.as_ref().is_some_and(|s| s.len() != len) {
        return Err(PyValueError::new_err(format!("replaced_spans: {} spans for {len} chars", spans.map_or(0, |s| s.len()))));
    }
    Ok(crate::offsets::replaced_spans(spans.as_deref(), origin, lead, len, &matches, content))
}

/// `Aligned.map` for text with a prefix of `lead` chars and no list of spans (see
/// [`crate::offsets::lead_spans`]).
#[pyfunction]
pub fn lead_spans(cuts: Vec<(usize, usize)>, origin: usize, lead: usize, len: usize) -> crate::offsets::Spans {
    spans_after_lead(&cuts, origin, lead, len)
}
