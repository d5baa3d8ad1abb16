//! `bpekit._core.LiteralMatcher`: the added tokens of a pipeline found in a text
//! (`bpekit.pipeline.added_tokens`), leftmost-longest, as the Python alternation of the literals
//! sorted longest first finds them.
//!
//! Performance note: DeepSeek's GGUF vocabularies add 2,400 tokens (many a single accented
//! letter); the `regex` alternation scanned a 110-character paragraph in ~30 µs, three quarters of
//! the whole encode. Aho-Corasick takes well under a microsecond.

use super::run_held;
use aho_corasick::{AhoCorasick, MatchKind};
use pyo3::prelude::*;

#[pyclass(frozen, module = "bpekit._core")]
pub struct LiteralMatcher {
    ac: AhoCorasick,
}

#[pymethods]
impl LiteralMatcher {
    #[new]
    fn new(py: Python<'_>, literals: Vec<String>) -> PyResult<Self> {
        run_held(py, || {
            let ac = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&literals)
                .map_err(|e| crate::Error::Vocab(format!("added tokens: {e}")))?;
            Ok(LiteralMatcher { ac })
        })
    }

    /// `(start, end, literal index)` of each match, non-overlapping, left to right; offsets in
    /// characters (`str` indices).
    fn find(&self, py: Python<'_>, text: &str) -> PyResult<Vec<(usize, usize, usize)>> {
        run_held(py, || {
            let mut out = Vec::new();
            let (mut byte, mut chars) = (0, 0);
            for m in self.ac.find_iter(text) {
                chars += text[byte..m.start()].chars().count();
                let len = text[m.start()..m.end()].chars().count();
                out.push((chars, chars + len, m.pattern().as_usize()));
                chars += len;
                byte = m.end();
            }
            Ok(out)
        })
    }
}
