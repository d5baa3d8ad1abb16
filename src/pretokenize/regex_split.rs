//! The general pre-tokenizer: any pattern, compiled with fancy-regex (tiktoken's engine, so the
//! semantics of possessive quantifiers, lookarounds and `$` are the same). As a Hugging Face
//! `Split(Isolated)` stage, a pattern with a hand-written splitter ([`Isolating`]) uses it.

use super::compiled::{self, Program};
use super::known::Isolating;
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Performance note: fancy-regex wraps `regex`, whose matcher state lives in a pool guarded by an
/// atomic owner; threads sharing one `Regex` contend on it (rust-lang/regex#934). A `clone()` shares
/// that pool (the trainer measured 2 threads slower than 1), so each thread slot compiles its own
/// copy, lazily, the first time a thread of that slot splits text.
const CLONES: usize = 32;

static NEXT_THREAD: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    static THREAD_SLOT: usize = NEXT_THREAD.fetch_add(1, Ordering::Relaxed) % CLONES;
}

/// Put before a stage's pattern, a Hugging Face `Split` with the `Removed` behaviour and
/// `invert`: the stage keeps its matches, each a piece, and drops the text between them (CLIP's
/// `tokenizer.json` drops whitespace so). Without it a stage is `Isolated`.
pub const MATCHES_ONLY: &str = "(?#matches only)";

#[derive(Debug, Clone)]
pub struct RegexSplitter {
    pattern: String,
    /// [`MATCHES_ONLY`]: the text between matches is dropped, not kept as pieces.
    matches_only: bool,
    slots: Vec<std::sync::OnceLock<fancy_regex::Regex>>,
    /// A hand-written splitter that [`RegexSplitter::isolate`] uses instead of the regex.
    hand: Option<Isolating>,
    /// The compiled matcher both calls use instead of the regex (see [`compiled`]).
    compiled: Option<Arc<Program>>,
}

/// fancy-regex's default backtrack limit is 1,000,000 steps; real text never comes near it, and a
/// pattern that does is reported as an error rather than a panic.
const BACKTRACK_LIMIT: usize = 10_000_000;

pub(crate) fn compile(pattern: &str) -> Result<fancy_regex::Regex> {
    fancy_regex::RegexBuilder::new(pattern)
        .backtrack_limit(BACKTRACK_LIMIT)
        .optimize(!has_repeat_triplet(pattern))
        .build()
        .map_err(|e| Error::Pattern(format!("{pattern:?}: {e}")))
}

/// Whether the pattern has a greedy run, an optional run and a run of the same thing in a row
/// (`b+c?b+`, `\S{1,3}[^\s\p{L}\p{N}]?\S{2}`): fancy-regex 0.20's optimizer rewrites those
/// (`optimize_ambiguous_concat_repeats`, to avoid catastrophic backtracking) into an expression
/// that matches differently (`b+c?b+` found `b` in `b`; 0.20.2 still gives `#िtk` where the
/// `regex` crate and the pattern say `#िtkv`). Such a pattern is compiled without the optimizer.
/// The others keep it: its trailing-lookahead rewrite hands `\s+(?!\S)` patterns to the `regex`
/// crate, without which a million spaces exceed the backtracking VM's stack. Found by the
/// compiled matcher's differential tests (`compiled/tests.rs`).
fn has_repeat_triplet(pattern: &str) -> bool {
    use fancy_regex::Expr;
    fn repeat(x: &Expr) -> Option<(&Expr, usize, usize)> {
        match x {
            Expr::Repeat { child, lo, hi, .. } => Some((child, *lo, *hi)),
            _ => None,
        }
    }
    fn walk(e: &Expr) -> bool {
        if let Expr::Concat(items) = e {
            let triplet = items.windows(3).any(|w| match (repeat(&w[0]), repeat(&w[1]), repeat(&w[2])) {
                (Some((a, ..)), Some((_, 0, hi)), Some((c, ..))) => hi != 0 && a == c,
                _ => false,
            });
            if triplet {
                return true;
            }
        }
        e.children_iter().any(walk)
    }
    fancy_regex::Expr::parse_tree(pattern).is_ok_and(|t| walk(&t.expr))
}

impl RegexSplitter {
    pub fn new(pattern: &str) -> Result<Self> {
        let mut splitter = RegexSplitter::regex_only(pattern)?;
        // (a hand-written splitter gives the gaps as pieces too, and no way to tell them apart)
        splitter.hand = if splitter.matches_only { None } else { Isolating::detect(pattern) };
        splitter.compiled = compiled::for_pattern(&splitter.pattern, splitter.regex());
        Ok(splitter)
    }

    /// A splitter that always runs the regex engine, even for a pattern with a hand-written
    /// `Isolated` splitter (to compare against).
    pub fn regex_only(pattern: &str) -> Result<Self> {
        let (pattern, matches_only) = match pattern.strip_prefix(MATCHES_ONLY) {
            Some(rest) => (rest, true),
            None => (pattern, false),
        };
        let re = compile(pattern)?;
        let slots: Vec<std::sync::OnceLock<fancy_regex::Regex>> = (0..CLONES).map(|_| Default::default()).collect();
        let _ = slots[0].set(re);
        Ok(RegexSplitter { pattern: pattern.to_string(), matches_only, slots, hand: None, compiled: None })
    }


    /// The hand-written splitter `isolate` uses, if any.
    pub fn hand(&self) -> Option<Isolating> {
        self.hand
    }

    /// Whether the compiled matcher stands in for the regex engine.
    pub fn is_compiled(&self) -> bool {
        self.compiled.is_some()
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
    /// them, in order, the empty ones left out, as ranges of `text` appended to `out`. A
    /// [`MATCHES_ONLY`] stage appends only the matches (`Removed` with `invert`).
    pub fn isolate(&self, text: &str, start: usize, end: usize, out: &mut Vec<(usize, usize)>) -> Result<()> {
        if self.matches_only {
            if self.compiled.as_ref().is_some_and(|p| !p.can_match_in(&text.as_bytes()[start..end])) {
                return Ok(());
            }
            return self.matches(&text[start..end], false, &mut |s, e| {
                out.push((start + s, start + e));
                Ok(())
            });
        }
        if let Some(hand) = self.hand {
            return hand.for_each_piece(&text[start..end], |s, e| {
                out.push((start + s, start + e));
                Ok(())
            });
        }
        if self.compiled.as_ref().is_some_and(|p| !p.can_match_in(&text.as_bytes()[start..end])) {
            if end > start {
                out.push((start, end));
            }
            return Ok(());
        }
        let mut prev = start;
        self.matches(&text[start..end], true, &mut |s, e| {
            let (s, e) = (start + s, start + e);
            if s > prev {
                out.push((prev, s));
            }
            if e > s {
                out.push((s, e));
            }
            prev = e;
            Ok(())
        })?;
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
        self.matches(text, false, f)
    }

    /// The matches of `text` (the empty ones only with `keep_empty`): the compiled matcher's,
    /// and the regex engine's from where it stopped if it spent its budget, or the regex
    /// engine's alone.
    #[inline]
    fn matches(&self, text: &str, keep_empty: bool, f: &mut impl FnMut(usize, usize) -> Result<()>) -> Result<()> {
        let Some(program) = &self.compiled else {
            for m in self.regex().find_iter(text) {
                let m = m.map_err(|e| Error::Regex(e.to_string()))?;
                if keep_empty || m.end() > m.start() {
                    f(m.start(), m.end())?;
                }
            }
            return Ok(());
        };
        let mut from = match program.for_each_match(text, &mut *f)? {
            Ok(()) => return Ok(()),
            Err(at) => at,
        };
        // a compiled pattern never matches the empty string
        let re = self.regex();
        while let Some(m) = re.find_from_pos(text, from).map_err(|e| Error::Regex(e.to_string()))? {
            f(m.start(), m.end())?;
            from = m.end();
        }
        Ok(())
    }
}
