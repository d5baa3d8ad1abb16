//! Special tokens: find the next allowed special token in a text.
//!
//! Semantics follow tiktoken: scan for the leftmost occurrence of any special string; if that
//! occurrence is not allowed, keep scanning from the next byte (a disallowed special is then
//! encoded as ordinary text). Where several specials start at the same place, the longest allowed
//! one wins (tiktoken leaves that order unspecified; longest-first is the deterministic choice).

use crate::error::{Error, Result};
use crate::vocab::Rank;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

#[derive(Debug, Clone)]
pub struct Specials {
    /// (string, id), in a fixed order; indexes into this list name specials in `Allowed` masks.
    pub tokens: Vec<(String, Rank)>,
    automaton: Option<AhoCorasick>,
    /// For each special index, the indexes of specials that are proper prefixes of it (rare).
    prefixes: Vec<Vec<usize>>,
}

/// A found special token: byte range and id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub start: usize,
    pub end: usize,
    pub id: Rank,
}

impl Specials {
    pub fn new(tokens: Vec<(String, Rank)>) -> Result<Self> {
        if let Some((_, id)) = tokens.iter().find(|t| t.0.is_empty()) {
            return Err(Error::Vocab(format!("special token {id} is the empty string")));
        }
        let automaton = if tokens.is_empty() {
            None
        } else {
            Some(
                AhoCorasickBuilder::new()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(tokens.iter().map(|t| t.0.as_bytes()))
                    .map_err(|e| Error::Vocab(format!("special tokens: {e}")))?,
            )
        };
        let prefixes = tokens
            .iter()
            .map(|(s, _)| {
                let mut p: Vec<usize> = tokens
                    .iter()
                    .enumerate()
                    .filter(|(_, (t, _))| t.len() < s.len() && s.starts_with(t.as_str()))
                    .map(|(i, _)| i)
                    .collect();
                p.sort_by_key(|&i| std::cmp::Reverse(tokens[i].0.len()));
                p
            })
            .collect();
        Ok(Specials { tokens, automaton, prefixes })
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    pub fn index_of(&self, s: &str) -> Option<usize> {
        self.tokens.iter().position(|t| t.0 == s)
    }

    /// The next special token at or after `from` whose index is allowed.
    pub fn find_allowed(&self, text: &[u8], from: usize, allowed: &[bool]) -> Option<Found> {
        let ac = self.automaton.as_ref()?;
        if !allowed.iter().any(|&a| a) {
            return None;
        }
        let mut pos = from;
        while pos < text.len() {
            let m = ac.find(aho_corasick::Input::new(text).range(pos..))?;
            let idx = m.pattern().as_usize();
            if allowed[idx] {
                return Some(Found { start: m.start(), end: m.end(), id: self.tokens[idx].1 });
            }
            // the longest special here is not allowed; a shorter one starting here may be
            for &p in &self.prefixes[idx] {
                if allowed[p] {
                    let (s, id) = &self.tokens[p];
                    return Some(Found { start: m.start(), end: m.start() + s.len(), id: *id });
                }
            }
            pos = m.start() + 1;
        }
        None
    }
}
