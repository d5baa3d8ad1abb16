//! The vocabulary: token bytes to rank (= id) for ordinary tokens, and the reverse table used to
//! decode both ordinary and special tokens.

use crate::error::{Error, Result};
use crate::merge::FastRanks;
use crate::rankfile::Flat;
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// A token id. In tiktoken-style vocabularies the id is also the merge priority.
pub type Rank = u32;

/// Token bytes -> rank, with a flat decode table indexed by id.
#[derive(Debug, Clone)]
pub struct Vocab {
    /// Token bytes -> rank, made on first use from the decode table (`mergeable_ranks`, dumps,
    /// the sorted tokens of `encode_with_unstable`): encoding never needs it, and a rank file's
    /// 200k hashed `Vec`s were a third of `get_encoding("o200k_base")`.
    encoder: OnceLock<FxHashMap<Vec<u8>, Rank>>,
    /// The same ranks, laid out for the merge loops' lookups.
    pub fast: FastRanks,
    /// How many ordinary tokens, and the largest ordinary id.
    n_ordinary: usize,
    max_ordinary: Option<Rank>,
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
        let mut v = Self::build(encoder.iter().map(|(k, &r)| (k.as_slice(), r)), encoder.len(), None, specials)?
            .ok_or_else(|| Error::Vocab("a map cannot repeat a token".into()))?;
        v.encoder = OnceLock::from(encoder);
        Ok(v)
    }

    /// From a parsed rank file, without hashing it: the decode table takes the file's bytes as
    /// they are. A token that occurs twice (tiktoken keeps its last rank) goes through the map.
    pub fn from_flat(flat: Flat, specials: &[(String, Rank)]) -> Result<Self> {
        let n = flat.tokens.len();
        match Self::build(flat.iter(), n, Some(&flat), specials)? {
            None => Vocab::new(flat.to_map(), specials),
            Some(mut v) => {
                // the decode table points into the file's bytes: keep them, specials after
                let mut bytes = flat.bytes;
                let base = bytes.len() as u32;
                for &id in &v.special_ids {
                    v.decode_offsets[id as usize].0 += base;
                }
                bytes.extend_from_slice(&v.decode_bytes);
                v.decode_bytes = bytes;
                Ok(v)
            }
        }
    }

    /// The tables from `count_ordinary` `(token, rank)` pairs. With `flat`, the ordinary tokens'
    /// decode entries point into `flat.bytes` and `decode_bytes` holds only the specials
    /// ([`Vocab::from_flat`] joins the two), and a repeated token gives `None`.
    fn build<'a>(
        encoder: impl Iterator<Item = (&'a [u8], Rank)> + Clone,
        count_ordinary: usize,
        flat: Option<&Flat>,
        specials: &[(String, Rank)],
    ) -> Result<Option<Self>> {
        let max_ordinary = encoder.clone().map(|(_, r)| r).max();
        let max_special = specials.iter().map(|s| s.1).max();
        let max_id = max_ordinary.into_iter().chain(max_special).max();
        let n = max_id.map_or(0, |m| m as usize + 1);
        if n > (1usize << 31) {
            return Err(Error::Vocab(format!("token id {} is too large", n - 1)));
        }
        // The decode table has one slot per id: ids far sparser than the tokens would make a tiny
        // hostile file allocate gigabytes (one rank 2^31 - 2 took 16 GiB and 86 s).
        let count = count_ordinary + specials.len();
        if n > 2 * count + MAX_ID_HOLES {
            return Err(Error::Vocab(format!(
                "token id {} is too large for {count} tokens (ids may leave at most \
                 2 x tokens + {MAX_ID_HOLES} holes)",
                n - 1
            )));
        }
        let mut decode_offsets = vec![HOLE; n];
        let special_bytes: usize = specials.iter().map(|s| s.0.len()).sum();
        let total = flat.map_or_else(|| encoder.clone().map(|(k, _)| k.len()).sum::<usize>(), |f| f.bytes.len()) + special_bytes;
        if total > u32::MAX as usize {
            return Err(Error::Vocab("the vocabulary's tokens exceed 4 GiB".into()));
        }
        let mut decode_bytes = Vec::with_capacity(if flat.is_some() { special_bytes } else { total } + DECODE_PAD);
        let mut max_token_len = 0;
        for (i, (bytes, rank)) in encoder.clone().enumerate() {
            if bytes.is_empty() {
                return Err(Error::Vocab(format!("token {rank} is empty")));
            }
            let slot = &mut decode_offsets[rank as usize];
            if *slot != HOLE {
                if flat.is_some() {
                    return Ok(None); // a rank twice: maybe a repeated token, which the map resolves
                }
                return Err(Error::Vocab(format!(
                    "rank {rank} is given to two different tokens (duplicate token indices)"
                )));
            }
            *slot = match flat {
                Some(f) => (f.tokens[i].0, bytes.len() as u32),
                None => {
                    decode_bytes.extend_from_slice(bytes);
                    ((decode_bytes.len() - bytes.len()) as u32, bytes.len() as u32)
                }
            };
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
        let (fast, repeated) = FastRanks::from_pairs(encoder);
        if repeated && flat.is_some() {
            return Ok(None);
        }
        Ok(Some(Vocab {
            encoder: OnceLock::new(),
            fast,
            n_ordinary: count_ordinary,
            max_ordinary,
            decode_offsets,
            decode_bytes,
            special_ids,
            max_token_len,
        }))
    }

    /// Token bytes -> rank of every ordinary token (made on first use).
    pub fn encoder(&self) -> &FxHashMap<Vec<u8>, Rank> {
        self.encoder.get_or_init(|| {
            let mut m = FxHashMap::with_capacity_and_hasher(self.n_ordinary, Default::default());
            for id in 0..self.n_ids() as Rank {
                if let Some(b) = self.ordinary_bytes(id) {
                    m.insert(b.to_vec(), id);
                }
            }
            m
        })
    }

    /// How many ordinary tokens there are.
    pub fn n_ordinary(&self) -> usize {
        self.n_ordinary
    }

    /// The largest ordinary token id (`None` for an empty vocabulary).
    pub fn max_ordinary(&self) -> Option<Rank> {
        self.max_ordinary
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
        let mut out = Vec::new();
        self.decode_into(tokens, &mut out)?;
        Ok(out)
    }

    /// [`Vocab::decode`], appending to `out` (on an error, `out` may hold the bytes before it).
    pub fn decode_into(&self, tokens: &[Rank], out: &mut Vec<u8>) -> Result<()> {
        out.reserve(tokens.len() * 4 + DECODE_PAD);
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
        Ok(())
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

#[cfg(test)]
mod flat_tests {
    use super::*;
    use crate::rankfile::{parse, parse_flat};

    /// Every id's bytes, whether each ordinary token's bytes look up its id, the ordinary count,
    /// the largest ordinary id and the longest token.
    type Answers = (Vec<Option<Vec<u8>>>, Vec<bool>, usize, Option<Rank>, usize);

    /// Everything a `Vocab` answers, for comparing two builds.
    fn answers(v: &Vocab) -> Answers {
        let ids = 0..v.n_ids() as Rank + 2;
        let tokens: Vec<Option<Vec<u8>>> = ids.clone().map(|i| v.token_bytes(i).map(<[u8]>::to_vec)).collect();
        let lookups = tokens.iter().enumerate().map(|(i, t)| match t {
            Some(t) if !v.is_special(i as Rank) => v.rank(t) == Some(i as Rank),
            _ => true,
        });
        (tokens.clone(), lookups.collect(), v.n_ordinary(), v.max_ordinary(), v.max_token_len)
    }

    /// A rank file read without a map gives the tables the map gives: the real files, with
    /// specials, and the map made on demand equals the parsed one.
    #[test]
    fn flat_and_map_builds_agree_on_the_real_rank_files() {
        let dir = crate::fuzzing::data_dir();
        for name in ["r50k_base", "cl100k_base", "o200k_base"] {
            let Ok(data) = std::fs::read(dir.join("ranks").join(format!("{name}.tiktoken"))) else {
                eprintln!("SKIPPED: {name} not found; set BPEKIT_TEST_DATA");
                continue;
            };
            let specials = vec![("<|endoftext|>".to_string(), 300_000), ("<|x|>".to_string(), 300_001)];
            let map = parse(&data, name).unwrap();
            let a = Vocab::new(map.clone(), &specials).unwrap();
            let b = Vocab::from_flat(parse_flat(&data, name).unwrap(), &specials).unwrap();
            assert_eq!(answers(&a), answers(&b), "{name}");
            assert_eq!(b.encoder(), &map, "{name}");
            assert_eq!(b.decode(&[300_000, 0, 300_001]).unwrap(), a.decode(&[300_000, 0, 300_001]).unwrap());
        }
    }

    /// A token on two lines keeps its last rank (tiktoken's dict), through the map; two tokens
    /// with one rank are refused as the map path refuses them; specials decode after the file's
    /// bytes.
    #[test]
    fn repeated_tokens_and_ranks_in_a_flat_file() {
        let specials = [("<|end|>".to_string(), 5)];
        for data in [&b"IQ== 0\nIg== 1\nIQ== 2\n"[..], b"YWI= 3\nIQ== 0\nYWI= 1\nIg== 2\n", b"YWJjZGVmZ2hpams= 0\nIQ== 1\nYWJjZGVmZ2hpams= 2\n"] {
            let a = Vocab::new(parse(data, "t").unwrap(), &specials).unwrap();
            let b = Vocab::from_flat(parse_flat(data, "t").unwrap(), &specials).unwrap();
            assert_eq!(answers(&a), answers(&b), "{:?}", String::from_utf8_lossy(data));
        }
        let two = b"IQ== 0\nIg== 0\n";
        let a = Vocab::new(parse(two, "t").unwrap(), &[]).unwrap_err();
        let b = Vocab::from_flat(parse_flat(two, "t").unwrap(), &[]).unwrap_err();
        assert_eq!(a, b);
        let v = Vocab::from_flat(parse_flat(b"IQ== 0\nIg== 1\n", "t").unwrap(), &specials).unwrap();
        assert_eq!(v.decode(&[5, 0, 1, 5]).unwrap(), b"<|end|>!\"<|end|>");
    }
}
