//! The vocabulary: token bytes to rank (= id) for ordinary tokens, and the reverse table used to
//! decode both ordinary and special tokens.

use crate::error::{Error, Result};
use crate::merge::FastRanks;
use rustc_hash::FxHashMap;

/// A token id. In tiktoken-style vocabularies the id is also the merge priority.
pub type Rank = u32;

/// Token bytes -> rank, with a flat decode table indexed by id.
#[derive(Debug, Clone)]
pub struct Vocab {
    pub encoder: FxHashMap<Vec<u8>, Rank>,
    /// The same ranks, laid out for the merge loops' lookups.
    pub fast: FastRanks,
    /// `decode_start[id]..decode_start[id + 1]` indexes `decode_bytes`; `u32::MAX` marks a hole.
    decode_offsets: Vec<(u32, u32)>,
    decode_bytes: Vec<u8>,
    /// Ids that are special tokens (sorted, for `is_special`).
    pub special_ids: Vec<Rank>,
    /// Longest ordinary token, in bytes.
    pub max_token_len: usize,
}

const HOLE: (u32, u32) = (u32::MAX, 0);
/// Zero bytes after the last token in `decode_bytes`, so that [`Vocab::decode`] can copy any
/// token of up to this many bytes as one fixed-size block.
const DECODE_PAD: usize = 16;

/// Ids beyond twice the number of tokens that a vocabulary may leave unused.
pub const MAX_ID_HOLES: usize = 1 << 20;

impl Vocab {
    /// Builds the tables. Ranks must be unique, tokens non-empty; a special token may share its id
    /// with another special token (o200k_harmony does) but not with an ordinary token.
    pub fn new(encoder: FxHashMap<Vec<u8>, Rank>, specials: &[(String, Rank)]) -> Result<Self> {
        let max_ordinary = encoder.values().copied().max();
        let max_special = specials.iter().map(|s| s.1).max();
        let max_id = max_ordinary.into_iter().chain(max_special).max();
        let n = max_id.map_or(0, |m| m as usize + 1);
        if n > (1usize << 31) {
            return Err(Error::Vocab(format!("token id {} is too large", n - 1)));
        }
        // The decode table has one slot per id: ids far sparser than the tokens would make a tiny
        // hostile file allocate gigabytes (one rank 2^31 - 2 took 16 GiB and 86 s).
        let count = encoder.len() + specials.len();
        if n > 2 * count + MAX_ID_HOLES {
            return Err(Error::Vocab(format!(
                "token id {} is too large for {count} tokens (ids may leave at most \
                 2 x tokens + {MAX_ID_HOLES} holes)",
                n - 1
            )));
        }
        let mut decode_offsets = vec![HOLE; n];
        let total: usize = encoder.keys().map(|k| k.len()).sum::<usize>()
            + specials.iter().map(|s| s.0.len()).sum::<usize>();
        if total > u32::MAX as usize {
            return Err(Error::Vocab("the vocabulary's tokens exceed 4 GiB".into()));
        }
        let mut decode_bytes = Vec::with_capacity(total);
        let mut max_token_len = 0;
        for (bytes, &rank) in &encoder {
            if bytes.is_empty() {
                return Err(Error::Vocab(format!("token {rank} is empty")));
            }
            let slot = &mut decode_offsets[rank as usize];
            if *slot != HOLE {
                return Err(Error::Vocab(format!(
                    "rank {rank} is given to two different tokens (duplicate token indices)"
                )));
            }
            *slot = (decode_bytes.len() as u32, bytes.len() as u32);
            decode_bytes.extend_from_slice(bytes);
            max_token_len = max_token_len.max(bytes.len());
        }
        let mut special_ids = Vec::with_capacity(specials.len());
        for (s, rank) in specials {
            if s.is_empty() {
                return Err(Error::Vocab(format!("special token {rank} is the empty string")));
            }
            let slot = &mut decode_offsets[*rank as usize];
            if *slot != HOLE {
                if special_ids.contains(rank) {
                    continue; // two special strings share an id: keep the first for decoding
                }
                return Err(Error::Vocab(format!(
                    "special token {s:?} has id {rank}, which is already an ordinary token"
                )));
            }
            *slot = (decode_bytes.len() as u32, s.len() as u32);
            decode_bytes.extend_from_slice(s.as_bytes());
            special_ids.push(*rank);
        }
        special_ids.sort_unstable();
        special_ids.dedup();
        decode_bytes.extend_from_slice(&[0; DECODE_PAD]);
        let fast = FastRanks::new(&encoder);
        Ok(Vocab { encoder, fast, decode_offsets, decode_bytes, special_ids, max_token_len })
    }

    /// The bytes of token `id` (ordinary or special), if it exists.
    #[inline]
    pub fn token_bytes(&self, id: Rank) -> Option<&[u8]> {
        let (start, len) = self.span(id)?;
        Some(&self.decode_bytes[start..start + len])
    }

    /// Where token `id`'s bytes are in `decode_bytes` (start, length), if it exists.
    #[inline]
    fn span(&self, id: Rank) -> Option<(usize, usize)> {
        let &(start, len) = self.decode_offsets.get(id as usize)?;
        (start != u32::MAX).then_some((start as usize, len as usize))
    }

    #[inline]
    pub fn is_special(&self, id: Rank) -> bool {
        self.special_ids.binary_search(&id).is_ok()
    }

    /// The bytes of an ordinary (non-special) token.
    #[inline]
    pub fn ordinary_bytes(&self, id: Rank) -> Option<&[u8]> {
        if self.is_special(id) {
            None
        } else {
            self.token_bytes(id)
        }
    }

    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> Option<Rank> {
        use crate::merge::RankLookup;
        self.fast.rank_of(bytes)
    }

    /// Concatenates the bytes of `tokens`; the first unknown id is an error.
    pub fn decode(&self, tokens: &[Rank]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(tokens.len() * 4 + DECODE_PAD);
        for &t in tokens {
            let (start, len) = self.span(t).ok_or(Error::InvalidToken(t))?;
            if len <= DECODE_PAD {
                // A fixed-size copy (one vector move) and a truncate instead of a `memcpy` call
                // per token, which was 40% of `decode_batch`'s time (`src/PERFORMANCE.md`).
                let at = out.len();
                out.extend_from_slice(&self.decode_bytes[start..start + DECODE_PAD]);
                out.truncate(at + len);
            } else {
                out.extend_from_slice(&self.decode_bytes[start..start + len]);
            }
        }
        Ok(out)
    }

    pub fn n_ids(&self) -> usize {
        self.decode_offsets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `decode` (block copies) equals the concatenation of `token_bytes`, for tokens shorter and
    /// longer than the block, the last token of the table, specials and unknown ids.
    #[test]
    fn decode_is_the_concatenation_of_token_bytes() {
        let mut ranks = FxHashMap::default();
        let tokens: [&[u8]; 6] = [b"a", b"bc", b"0123456789abcdef", b"0123456789abcdefg", b"", b"xyz"];
        for (i, t) in tokens.iter().enumerate().filter(|(_, t)| !t.is_empty()) {
            ranks.insert(t.to_vec(), i as Rank);
        }
        let v = Vocab::new(ranks, &[("<|end|>".into(), 9)]).unwrap();
        let ids: Vec<Rank> = vec![5, 0, 3, 1, 2, 9, 5, 3, 0];
        let want: Vec<u8> = ids.iter().flat_map(|&i| v.token_bytes(i).unwrap().to_vec()).collect();
        assert_eq!(v.decode(&ids).unwrap(), want);
        assert_eq!(v.decode(&[]).unwrap(), Vec::<u8>::new());
        for bad in [4, 6, 10, 1 << 20] {
            assert!(matches!(v.decode(&[0, bad]), Err(Error::InvalidToken(t)) if t == bad), "{bad}");
        }
    }
}
