//! `bpekit._core.LiteralMatcher`: the added tokens of a pipeline found in a text
//! (`bpekit.pipeline.added_tokens`), leftmost-longest, as the Python alternation of the literals
//! sorted longest first finds them.
//!
//! Performance note: DeepSeek's GGUF vocabularies add 2,400 tokens (many a single accented
//! letter); the `regex` alternation scanned a 110-character paragraph in ~30 µs, three quarters of
//! the whole encode. Aho-Corasick takes well under a microsecond.

use super::run_held;
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use pyo3::prelude::*;

#[pyclass(frozen, module = "bpekit._core")]
pub struct LiteralMatcher {
    ac: AhoCorasick,
    /// Per literal: its token's id and `lstrip` / `rstrip` (given for [`Self::segments`]).
    tokens: Option<Vec<(u32, bool, bool)>>,
}

/// The whitespace that `lstrip` / `rstrip` absorb: `bpekit.pipeline.normalizers.WHITESPACE`
/// (`str.isspace` of Python; a test checks they are equal).
pub const WHITESPACE: &str = "\t\n\x0b\x0c\r \u{85}\u{a0}\u{1680}\u{2000}\u{2001}\u{2002}\u{2003}\u{2004}\u{2005}\u{2006}\u{2007}\u{2008}\u{2009}\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}";

fn is_space(c: char) -> bool {
    WHITESPACE.contains(c)
}

/// A piece of a text cut at its added tokens: `(byte start, byte end, the token's id)`, `None`
/// for the text between them.
pub type Segment = (usize, usize, Option<u32>);

#[pymethods]
impl LiteralMatcher {
    /// `tokens`: for each literal, `(id, lstrip, rstrip)` of its added token, for
    /// `PairBPE.encode_added`.
    #[new]
    #[pyo3(signature = (literals, tokens = None))]
    fn new(py: Python<'_>, literals: Vec<String>, tokens: Option<Vec<(u32, bool, bool)>>) -> PyResult<Self> {
        run_held(py, || {
            if tokens.as_ref().is_some_and(|t| t.len() != literals.len()) {
                return Err(crate::Error::Vocab("added tokens: one (id, lstrip, rstrip) per literal".into()));
            }
            // An NFA, not the DFA the builder picks for a few literals: filling a DFA's
            // transitions walks failure links, quadratic in a long literal (one added token of
            // 70,000 spaces took minutes to load; tests/formats/test_offsets.py).
            let ac = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .kind(Some(AhoCorasickKind::ContiguousNFA))
                .build(&literals)
                .map_err(|e| crate::Error::Vocab(format!("added tokens: {e}")))?;
            Ok(LiteralMatcher { ac, tokens })
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

impl LiteralMatcher {
    /// `text` cut at the added tokens as `AddedVocabulary._find` cuts it (for tokens without
    /// `single_word`): each match, widened over the whitespace before it (`lstrip`, not into
    /// the previous token) and after it (`rstrip`), and the text between. An error without
    /// `tokens`.
    pub fn segments(&self, text: &str) -> crate::Result<Vec<Segment>> {
        let tokens = self.tokens.as_ref().ok_or_else(|| crate::Error::Vocab("added tokens: a matcher without its tokens".into()))?;
        let mut out = Vec::new();
        let mut done = 0;
        for m in self.ac.find_iter(text) {
            let (mut start, mut stop) = (m.start(), m.end());
            let (id, lstrip, rstrip) = tokens[m.pattern().as_usize()];
            if lstrip {
                let before = text[..start].trim_end_matches(is_space).len();
                start = before.max(done);
            }
            if rstrip {
                stop = text.len() - text[stop..].trim_start_matches(is_space).len();
            }
            if done < start {
                out.push((done, start, None));
            }
            out.push((start, stop, Some(id)));
            done = stop;
        }
        if done < text.len() {
            out.push((done, text.len(), None));
        }
        Ok(out)
    }
}
