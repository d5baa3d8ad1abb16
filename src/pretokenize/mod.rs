//! Pre-tokenization: split text into the pieces that BPE merges independently.
//!
//! A [`Pretokenizer`] wraps a regex pattern with tiktoken's semantics (fancy-regex: possessive
//! quantifiers, lookahead, `$` = end of text). Pieces are the non-overlapping leftmost matches;
//! text between matches is dropped, exactly as `find_iter` does (every OpenAI pattern matches
//! every character, so nothing is dropped there).
//!
//! Patterns that [`Known::detect`] recognises (GPT-2, cl100k, Llama 3, Qwen2, Qwen 3.5, Seed-Coder,
//! o200k, Tekken, Kimi K2) are split by hand-written state machines in [`known`] with the same result,
//! and so are some Hugging Face `Split(Isolated)` stages ([`Isolating`]); everything else goes
//! through [`RegexSplitter`].

pub mod compiled;
pub mod known;
pub(crate) mod regex_split;

pub use known::{Isolating, Known};
pub use regex_split::RegexSplitter;

use crate::error::Result;

/// Splits text into pieces.
#[derive(Debug, Clone)]
pub struct Pretokenizer {
    pattern: String,
    splitter: Splitter,
}

/// How a [`Pretokenizer`] finds its pieces.
#[derive(Debug, Clone)]
enum Splitter {
    Known(Known),
    Regex(RegexSplitter),
    /// A sequence of Hugging Face `Split(Isolated)` stages by hand: every piece of the text,
    /// matches and the text between them.
    Isolating(Isolating),
}

impl Pretokenizer {
    /// A pre-tokenizer for `pattern`: hand-written if the pattern is a known one, else compiled.
    pub fn new(pattern: &str) -> Result<Self> {
        let splitter = match Known::detect(pattern) {
            Some(known) => Splitter::Known(known),
            None => Splitter::Regex(RegexSplitter::new(pattern)?),
        };
        Ok(Pretokenizer { pattern: pattern.to_string(), splitter })
    }

    /// The pre-tokenizer that stands for a sequence of Hugging Face `Split(Isolated)` stages (each
    /// stage cuts every piece of the stage before; the text between matches is kept), if a
    /// hand-written splitter does ([`Isolating::detect_stages`]).
    pub fn isolated_stages(patterns: &[String]) -> Option<Self> {
        if patterns.iter().any(|p| p.starts_with(regex_split::MATCHES_ONLY)) {
            return None; // (a stage that drops text is no `Isolated` one)
        }
        let hand = Isolating::detect_stages(patterns)?;
        Some(Pretokenizer { pattern: patterns.join("\n"), splitter: Splitter::Isolating(hand) })
    }

    /// A pre-tokenizer that always uses the regex engine (to compare against, or to benchmark).
    pub fn with_regex(pattern: &str) -> Result<Self> {
        let splitter = Splitter::Regex(RegexSplitter::regex_only(pattern)?);
        Ok(Pretokenizer { pattern: pattern.to_string(), splitter })
    }

    /// The hand-written family in use, if any.
    pub fn known(&self) -> Option<Known> {
        match self.splitter {
            Splitter::Known(k) => Some(k),
            Splitter::Regex(_) | Splitter::Isolating(_) => None,
        }
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
        match &self.splitter {
            Splitter::Known(known) => known.for_each_piece(text, f),
            Splitter::Regex(regex) => regex.for_each_match(text, &mut f),
            Splitter::Isolating(hand) => hand.for_each_piece(text, f),
        }
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
