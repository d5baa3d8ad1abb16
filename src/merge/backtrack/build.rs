//! Building the [`Backtrack`] tables from a list of tokens in rank order: the whole vocabulary, or
//! only the tokens over a piece's bytes (a sub-vocabulary).
//!
//! Tokens get *local* ids `0..k` in rank order, so comparing local ids still compares merge
//! priority and every table is dense in the tokens kept: a sub-vocabulary of 26k tokens (o200k's
//! lowercase words) has 0.4 MB of token records instead of 3.2 MB with the rank as index, and the
//! merge's random accesses stay in the L2 cache. Right parts of splits are found with the
//! sub-vocabulary's own trie, so the build touches nothing outside the kept tokens.

use super::tables::{Chain, Narrow, Split, Wide, NO_SPLIT};
use super::{valid_pair, Backtrack, ByteSet, Tokens, MAX_AVOID};
use aho_corasick::AhoCorasick;
use crate::merge::heap;
use super::merges::Merges;
use super::parts::Cuts;
use super::short::ShortPairs;
use crate::merge::trie::{Trie, NONE};
use crate::merge::RankLookup;
use crate::vocab::Rank;

/// Local-id lookup of a sub-vocabulary through its trie (for the reference merge of the build).
struct LocalRanks<'a>(&'a Trie);

impl RankLookup for LocalRanks<'_> {
    fn rank_of(&self, bytes: &[u8]) -> Option<Rank> {
        Some(self.0.exact(bytes)).filter(|&t| t != NONE)
    }
}

/// The tables for `tokens` (rank, bytes), in increasing rank order, for pieces over `set`;
/// `None` if ranks repeat, a token is empty, a byte of `set` has no one-byte token, or more
/// than [`MAX_AVOID`] tokens are avoided.
///
/// Avoided (the tables refuse every piece that contains one, see [`Backtrack::avoids`]): the
/// tokens BPE produces from their own bytes with no split into earlier tokens (merges out of rank
/// order there, see the module notes of [`Backtrack`]), and with `listed` those whose split it
/// refuses. Nothing else needs to change: on a piece that holds none of them, every token that
/// can occur is a substring of the piece, and its split, and every validity test of its pairs,
/// only involve substrings of it; a token that contains an avoided one never matches.
///
/// With `listed` (for a merge list, see [`Backtrack::from_merge_list`]), `tokens` are in
/// merge-priority order with their output ids (in any order), and `listed(t, left, right)`
/// (local ids) says whether a split the build finds is the list's.
pub(super) fn from_tokens(tokens: &[(Rank, &[u8])], set: &ByteSet, listed: Option<&dyn Fn(u32, u32, u32) -> bool>) -> Option<Backtrack> {
    let k = tokens.len();
    if k >= 1 << 31 || (listed.is_none() && tokens.windows(2).any(|w| w[0].0 >= w[1].0)) {
        return None;
    }
    let mut all = Vec::with_capacity(tokens.iter().map(|t| t.1.len()).sum());
    let mut start = Vec::with_capacity(k + 1);
    start.push(0u32);
    for &(_, b) in tokens {
        if b.is_empty() {
            return None;
        }
        all.extend_from_slice(b);
        start.push(u32::try_from(all.len()).ok()?);
    }
    let bytes = |t: u32| &all[start[t as usize] as usize..start[t as usize + 1] as usize];
    let mut trie = Trie::new(&all, &start);
    if (0..=255u8).any(|b| set.has(b) && trie.exact(&[b]) == NONE) {
        return None;
    }
    // During the build `next_prefix` links every token, producible or not.
    let chain: Vec<Chain> = (0..k as u32)
        .zip(trie.prefix_links())
        .map(|(t, next_prefix)| Chain {
            next_prefix,
            len: bytes(t).len() as u32,
        })
        .collect();
    let low = (0..k as u32).rev().find(|&t| bytes(t).len() == 1).map_or(0, |t| t + 1);
    let mut wide = Wide {
        splits: vec![NO_SPLIT; k],
        chain,
        merges: Merges::new(k, low),
    };
    let mut unsplit = Vec::new();
    let mut avoided = Vec::new();
    for t in 0..k as u32 {
        let b = bytes(t);
        if b.len() == 1 {
            wide.splits[t as usize] = Split { left: t, right: t };
            continue;
        }
        // First valid split along the prefix chain; tokens not processed yet (id > t) or left
        // out still have no split.
        let mut found = None;
        let mut l = wide.chain[t as usize].next_prefix;
        while l != NONE && found.is_none() {
            let Chain { next_prefix, len } = wide.chain[l as usize];
            if wide.splits[l as usize].left != NONE {
                let r = trie.exact(&b[len as usize..]);
                if r != NONE && wide.splits[r as usize].left != NONE && valid_pair(&wide, l, r) {
                    found = Some((l, r));
                }
            }
            l = next_prefix;
        }
        let Some((left, right)) = found else {
            unsplit.push(t);
            continue;
        };
        if listed.is_some_and(|accepts| !accepts(t, left, right)) {
            avoided.push(t);
        }
        wide.splits[t as usize] = Split { left, right };
        wide.merges.insert(left, right, t);
    }
    // A token with no split must not be producible; if the reference merge produces it, the
    // vocabulary's merges are not in rank order there: it is avoided. (All checks before the
    // first removal: the reference merge looks tokens up in the trie.)
    let mut scratch = Vec::new();
    for &t in &unsplit {
        scratch.clear();
        heap::encode_into(&LocalRanks(&trie), usize::MAX, bytes(t), &mut scratch).ok()?;
        if scratch == [t] {
            avoided.push(t);
        }
    }
    if avoided.len() > MAX_AVOID {
        return None;
    }
    let avoid = match avoided.is_empty() {
        true => None,
        false => Some(AhoCorasick::new(avoided.iter().map(|&t| bytes(t))).ok()?),
    };
    for &t in &unsplit {
        trie.remove(t);
    }
    for (c, next) in wide.chain.iter_mut().zip(trie.prefix_links()) {
        c.next_prefix = next;
    }
    trie.drop_build_tables();
    let identity = tokens.iter().enumerate().all(|(i, t)| t.0 as usize == i);
    let tables = match Narrow::from_wide(&wide) {
        Some(narrow) => Tokens::Narrow(narrow),
        None => Tokens::Wide(wide),
    };
    let cuts = Cuts::new((0..k as u32).map(bytes));
    let short = ShortPairs::new(k, |t| bytes(t).len(), |t| unsplit.binary_search(&t).is_err());
    Some(Backtrack {
        short,
        cuts,
        trie,
        tokens: tables,
        global: if identity { Vec::new() } else { tokens.iter().map(|t| t.0).collect() },
        excluded: unsplit.len(),
        avoid,
    })
}
