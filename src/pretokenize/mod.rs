//! Pre-tokenization: split text into the pieces that BPE merges independently.
//!
//! A [`Pretokenizer`] wraps a regex pattern with tiktoken's semantics (fancy-regex: possessive
//! quantifiers, lookahead, `$` = end of text). Pieces are the non-overlapping leftmost matches;
//! text between matches is dropped, exactly as `find_iter` does (every OpenAI pattern matches
//! every character, so nothing is dropped there).

mod regex_split;

pub use regex_split::RegexSplitter;

use crate::error::Result;

/// Splits text into pieces.
#[derive(Debug, Clone)]
pub struct Pretokenizer {
    pattern: String,
    regex: RegexSplitter,
}

impl Pretokenizer {
    pub fn new(pattern: &str) -> Result<Self> {
        Ok(Pretokenizer { pattern: pattern.to_string(), regex: RegexSplitter::new(pattern)? })
    }

    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Calls `f` with the byte range of every piece of `text`, in order.
    #[inline]
    pub fn for_each_piece(
        &self,
        text: &str,
        mut f: impl FnMut(usize, usize) -> Result<()>,
    ) -> Result<()> {
        self.regex.for_each_match(text, &mut f)
    }

    /// All pieces of `text` as strings (for tests and the Python `split` helper).
    pub fn split<'a>(&self, text: &'a str) -> Result<Vec<&'a str>> {
        let mut out = Vec::new();
        self.for_each_piece(text, |s, e| {
            out.push(&text[s..e]);
            Ok(())
        })?;
        Ok(out)
    }
}
