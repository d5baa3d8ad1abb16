//! Pieces that are one token, for encoders that cannot answer them from the vocabulary.
//!
//! Most pieces of text are one token. The tiktoken encoder and a pair-merge model with
//! `ignore_merges` (Llama 3) answer those from the vocabulary: one lookup in packed tables. A merge
//! list without `ignore_merges` (GPT-2, GPT-NeoX, Qwen 2, DeepSeek) and a SentencePiece model
//! cannot: the merges of a token's bytes need not end in that token. But they always end the same
//! way, so once a piece equal to token `t` has been merged, whether it gave `[t]` is known for
//! good, and kept here in 2 bits per id: the next such piece costs one lookup in the same packed
//! tables instead of a piece cache's hash map (hash, probe, `memcmp` through a box) or a merge.
//!
//! Performance notes (`src/PERFORMANCE.md`, "Seventeenth round"): English paragraphs, each
//! encoded once with the caches emptied: GPT-NeoX's `tokenizer.json` and Qwen 2's GGUF 1.25–1.35x
//! faster, as fast as answering from the vocabulary directly (`ignore_merges`) would be.
//!
//! The states are shared by the threads (relaxed atomics): a state only ever goes from unknown to
//! its one value, by `fetch_or`, so no answer is lost or wrong.

use crate::merge::{FastRanks, RankLookup};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What a merge of a token's bytes gave: not known yet, the token alone, something else.
const UNKNOWN: u64 = 0;
const ALONE: u64 = 1;
const OTHER: u64 = 2;

pub struct Tokens {
    /// bytes -> id of each token the merges build (not the byte symbols: a one-byte piece is its
    /// symbol already)
    ids: FastRanks,
    /// 2 bits per id: [`UNKNOWN`], [`ALONE`] or [`OTHER`].
    states: Vec<AtomicU64>,
}

/// A token a piece equals, and whether its merge is known to give that token alone.
pub enum Whole {
    /// The piece's ids are `[id]`.
    Alone(u32),
    /// Not known yet: merge, then learn ([`Tokens::encode`]).
    Unknown(u32),
}

impl Tokens {
    /// The table of `tokens` (bytes, id; ids below `n`). Two ids with the same bytes: the table
    /// keeps one, whose first merge tells whether it is the piece's token.
    pub fn new<'a>(tokens: impl IntoIterator<Item = (&'a [u8], u32)>, n: usize) -> Tokens {
        let (ids, _) = FastRanks::from_pairs(tokens.into_iter().filter(|&(_, id)| (id as usize) < n));
        Tokens { ids, states: (0..n.div_ceil(32)).map(|_| AtomicU64::new(0)).collect() }
    }

    /// The tokens that `merges` (`(left, right, merged)` in rank order) build from the byte
    /// symbols `byte_ids` (`drop`: a byte with no symbol); a token built from two different byte
    /// strings (a list no trainer writes) is left out.
    pub fn from_merges(byte_ids: &[u32; 256], drop: u32, merges: &[(u32, u32, u32)]) -> Tokens {
        let max = merges.iter().map(|m| m.0.max(m.1).max(m.2)).chain(byte_ids.iter().copied().filter(|&i| i != drop)).max();
        let mut bytes: Vec<Option<Vec<u8>>> = vec![None; max.map_or(0, |m| m as usize + 1)];
        for (b, &id) in byte_ids.iter().enumerate() {
            if id != drop && bytes[id as usize].is_none() {
                bytes[id as usize] = Some(vec![b as u8]);
            }
        }
        let mut built: Vec<u32> = Vec::new();
        let mut clash = vec![false; bytes.len()];
        for &(a, b, m) in merges {
            let (Some(x), Some(y)) = (&bytes[a as usize], &bytes[b as usize]) else { continue };
            let joined: Vec<u8> = [x.as_slice(), y.as_slice()].concat();
            match &bytes[m as usize] {
                None => {
                    bytes[m as usize] = Some(joined);
                    built.push(m);
                }
                Some(old) if *old != joined => clash[m as usize] = true,
                Some(_) => {}
            }
        }
        let tokens = built.iter().filter(|&&m| !clash[m as usize]).filter_map(|&m| Some((bytes[m as usize].as_deref()?, m)));
        Tokens::new(tokens, bytes.len())
    }

    /// The token `piece` equals, if any, and what is known of its merge (`None`: not a token,
    /// or one whose merge gives other ids).
    #[inline]
    pub fn find(&self, piece: &[u8]) -> Option<Whole> {
        let id = self.ids.rank_of(piece)?;
        match (self.states[id as usize / 32].load(Relaxed) >> (2 * (id % 32))) & 3 {
            ALONE => Some(Whole::Alone(id)),
            UNKNOWN => Some(Whole::Unknown(id)),
            _ => None,
        }
    }

    /// Appends the ids of `piece` to `out`: the token it equals when its merge is known to give
    /// that token alone, else what `otherwise` appends (a cache or a merge), learnt from when
    /// `piece` is a token.
    #[inline]
    pub fn encode(&self, piece: &[u8], out: &mut Vec<u32>, otherwise: impl FnOnce(&mut Vec<u32>)) {
        let token = match self.find(piece) {
            Some(Whole::Alone(id)) => return out.push(id),
            Some(Whole::Unknown(id)) => Some(id),
            None => None,
        };
        let base = out.len();
        otherwise(out);
        if let Some(id) = token {
            self.learn(id, &out[base..]);
        }
    }

    /// Records what the merge of token `id`'s bytes gave: `ids`.
    #[inline]
    fn learn(&self, id: u32, ids: &[u32]) {
        let state = if ids == [id] { ALONE } else { OTHER };
        self.states[id as usize / 32].fetch_or(state << (2 * (id % 32)), Relaxed);
    }
}
