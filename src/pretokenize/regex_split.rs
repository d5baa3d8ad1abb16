//! The general pre-tokenizer: any pattern, compiled with fancy-regex (tiktoken's engine, so the
//! semantics of possessive quantifiers, lookarounds and `$` are the same).

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Performance note: fancy-regex wraps `regex`, whose matcher state lives in a pool guarded by an
/// atomic owner; threads sharing one `Regex` contend on it (rust-lang/regex#934). As tiktoken
/// does, we keep independent clones and give each thread its own slot.
const CLONES: usize = 32;

static NEXT_THREAD: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    static THREAD_SLOT: usize = NEXT_THREAD.fetch_add(1, Ordering::Relaxed) % CLONES;
}

#[derive(Debug, Clone)]
pub struct RegexSplitter {
    clones: Vec<fancy_regex::Regex>,
}

/// fancy-regex's default backtrack limit is 1,000,000 steps; real text never comes near it, and a
/// pattern that does is reported as an error rather than a panic.
const BACKTRACK_LIMIT: usize = 10_000_000;

impl RegexSplitter {
    pub fn new(pattern: &str) -> Result<Self> {
        let re = fancy_regex::RegexBuilder::new(pattern)
            .backtrack_limit(BACKTRACK_LIMIT)
            .build()
            .map_err(|e| Error::Pattern(format!("{pattern:?}: {e}")))?;
        Ok(RegexSplitter { clones: vec![re; CLONES] })
    }

    #[inline]
    fn regex(&self) -> &fancy_regex::Regex {
        &self.clones[THREAD_SLOT.with(|s| *s)]
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
