//! The general pre-tokenizer: any pattern, compiled with fancy-regex (tiktoken's engine, so the
//! semantics of possessive quantifiers, lookarounds and `$` are the same). As a Hugging Face
//! `Split(Isolated)` stage, a pattern with a hand-written splitter ([`Isolating`]) uses it.

use super::known::Isolating;
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Performance note: fancy-regex wraps `regex`, whose matcher state lives in a pool guarded by an
/// atomic owner; threads sharing one `Regex` contend on it (rust-lang/regex#934). A `clone()` shares
/// that pool (the trainer measured 2 threads slower than 1), so each thread slot compiles its own
/// copy, lazily, the first time a thread of that slot splits text.
const CLONES: usize = 32;

static NEXT_THREAD: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    static THREAD_SLOT: usize = NEXT_THREAD.fetch_add(1, Ordering::Relaxed) % CLONES;
}

#[derive(Debug, Clone)]
pub struct RegexSplitter {
    pattern: String,
    slots: Vec<std::sync::OnceLock<fancy_regex::Regex>>,
    /// A hand-written splitter that [`RegexSplitter::isolate`] uses instead of the regex.
    hand: Option<Isolating>,
}

/// fancy-regex's default backtrack limit is 1,000,000 steps; real text never comes near it, and a
/// pattern that does is reported as an error rather than a panic.
const BACKTRACK_LIMIT: usize = 10_000_000;

fn compile(pattern: &str) -> Result<fancy_regex::Regex> {
    fancy_regex::RegexBuilder::new(pattern)
        .backtrack_limit(BACKTRACK_LIMIT)
        .build()
        .map_err(|e| Error::Pattern(format!("{pattern:?}: {e}")))
}

impl RegexSplitter {
    pub fn new(pattern: &str) -> Result<Self> {
        let mut splitter = RegexSplitter::regex_only(pattern)?;
        splitter.hand = Isolating::detect(pattern);
        Ok(splitter)
    }

    /// A splitter that always runs the regex engine, even for a pattern with a hand-written
    /// `Isolated` splitter (to compare against).
    pub fn regex_only(pattern: &str) -> Result<Self> {
        let re = compile(pattern)?;
        let slots: Vec<std::sync::OnceLock<fancy_regex::Regex>> = (0..CLONES).map(|_| Default::default()).collect();
        let _ = slots[0].set(re);
        Ok(RegexSplitter { pattern: pattern.to_string(), slots, hand: None })
    }

    /// The hand-written splitter `isolate` uses, if any.
    pub fn hand(&self) -> Option<Isolating> {
        self.hand
    }

    #[inline]
    fn regex(&self) -> &fancy_regex::Regex {
        let slot = &self.slots[THREAD_SLOT.with(|s| *s)];
        // The pattern compiled once in `new`, so compiling it again cannot fail; fall back to slot
        // 0 (shared, correct, only slower) if it somehow did.
        slot.get_or_init(|| match compile(&self.pattern) {
            Ok(re) => re,
            Err(_) => self.slots[0].get().cloned().expect("slot 0 is filled by `new`"),
        })
    }

    /// One splitter per pattern (a `Sequence` of Hugging Face `Split` stages).
    pub fn all(patterns: &[String]) -> Result<Vec<RegexSplitter>> {
        patterns.iter().map(|p| RegexSplitter::new(p)).collect()
    }

    /// The pieces of `text` after each of `stages` isolated its matches in every piece of the
    /// stage before (a Hugging Face `Sequence` of `Split(Isolated)`), as byte ranges.
    pub fn isolate_all(stages: &[RegexSplitter], text: &str) -> Result<Vec<(usize, usize)>> {
        let (mut pieces, mut next) = (vec![(0, text.len())], Vec::new());
        for stage in stages {
            next.clear();
            for &(s, e) in &pieces {
                stage.isolate(text, s, e, &mut next)?;
            }
            std::mem::swap(&mut pieces, &mut next);
        }
        pieces.retain(|(s, e)| e > s);
        Ok(pieces)
    }

    /// Hugging Face's `Split` with the `Isolated` behaviour on `text[start..end]` (the slice is
    /// its own string: anchors and lookarounds stop at its ends): the matches and the gaps between
    /// them, in order, the empty ones left out, as ranges of `text` appended to `out`.
    pub fn isolate(&self, text: &str, start: usize, end: usize, out: &mut Vec<(usize, usize)>) -> Result<()> {
        if let Some(hand) = self.hand {
            return hand.for_each_piece(&text[start..end], |s, e| {
                out.push((start + s, start + e));
                Ok(())
            });
        }
        let mut prev = start;
        for m in self.regex().find_iter(&text[start..end]) {
            let m = m.map_err(|e| Error::Regex(e.to_string()))?;
            let (s, e) = (start + m.start(), start + m.end());
            if s > prev {
                out.push((prev, s));
            }
            if e > s {
                out.push((s, e));
            }
            prev = e;
        }
        if end > prev {
            out.push((prev, end));
        }
        Ok(())
    }

    pub fn for_each_match(
        &self,
        text: &str,
        f: &mut impl FnMut(usize, usize) -> Result<()>,
    ) -> Result<()> {
        for m in self.regex().find_iter(text) {
            let m = m.map_err(|e| Error::Regex(e.to_string()))?;
            if m.start() == m.end() {
                continue; // an empty match carries no bytes
            }
            f(m.start(), m.end())?;
        }
        Ok(())
    }
}
