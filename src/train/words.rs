//! `WordCounts`: distinct pre-tokens and how often each occurs, the result of the counting phase.
//!
//! Counts are `u64` (a 32-bit count overflows on large corpora, HF tokenizers #437, #2058) and
//! add with saturation. The binary body (see [`WordCounts::to_bytes`]) lists words in byte order,
//! so the same counts always serialize to the same bytes.

use super::packed;
use crate::error::{Error, Result};
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::Hasher;

/// The table is split into this many shards by word hash (see `count.rs`).
pub const SHARDS: usize = 64;

/// The shard of `word`: that of its packed form if it has one (see [`packed`]), else the top bits
/// of its Fx hash.
#[inline]
pub fn shard_of(word: &[u8]) -> usize {
    if let Some(key) = packed::pack(word) {
        return packed::shard_of_key(key);
    }
    let mut h = FxHasher::default();
    h.write(word);
    (h.finish() >> 58) as usize
}

pub type Shard = FxHashMap<Vec<u8>, u64>;

/// Adds `count` to `word` in `shard` (saturating), storing a copy of the word if it is new.
#[inline]
pub fn add_to_shard(shard: &mut Shard, word: &[u8], count: u64) {
    match shard.get_mut(word) {
        Some(c) => *c = c.saturating_add(count),
        None => {
            shard.insert(word.to_vec(), count);
        }
    }
}

/// Distinct words and their counts, in [`SHARDS`] hash maps (so that counting threads can fill
/// them in parallel and nothing has to be rehashed into one big table afterwards).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordCounts {
    shards: Vec<Shard>,
}

impl Default for WordCounts {
    fn default() -> Self {
        WordCounts { shards: (0..SHARDS).map(|_| Shard::default()).collect() }
    }
}

impl WordCounts {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.shards.iter().all(|s| s.is_empty())
    }

    /// Total number of pre-tokens counted (the sum of all counts).
    pub fn total(&self) -> u64 {
        self.iter().fold(0u64, |a, (_, c)| a.saturating_add(c))
    }

    pub fn get(&self, word: &[u8]) -> Option<u64> {
        self.shards[shard_of(word)].get(word).copied()
    }

    pub fn add_word(&mut self, word: &[u8], count: u64) {
        add_to_shard(&mut self.shards[shard_of(word)], word, count);
    }

    /// Adds every count of `other` into `self`.
    pub fn merge_from(&mut self, other: &WordCounts) {
        for (mine, theirs) in self.shards.iter_mut().zip(&other.shards) {
            mine.reserve(theirs.len());
            for (w, &c) in theirs {
                add_to_shard(mine, w, c);
            }
        }
    }

    /// Every word and its count, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        self.shards.iter().flat_map(|s| s.iter().map(|(w, &c)| (w.as_slice(), c)))
    }

    /// Every word and its count, consuming the table shard by shard (memory is freed as it goes).
    pub fn into_words(self) -> impl Iterator<Item = (Vec<u8>, u64)> {
        self.shards.into_iter().flat_map(|s| s.into_iter())
    }

    pub(crate) fn shards(&self) -> &[Shard] {
        &self.shards
    }

    pub(crate) fn shards_mut(&mut self) -> &mut [Shard] {
        &mut self.shards
    }

    /// Words and counts sorted by word bytes.
    pub fn sorted(&self) -> Vec<(&[u8], u64)> {
        let mut v: Vec<(&[u8], u64)> = self.iter().collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        v
    }

    /// Serializes as a sequence of `varint(len) bytes varint(count)` records in word order.
    pub fn to_bytes(&self) -> Vec<u8> {
        let sorted = self.sorted();
        let size: usize = sorted.iter().map(|(w, _)| w.len() + 12).sum();
        let mut out = Vec::with_capacity(size);
        for (w, c) in sorted {
            put_varint(&mut out, w.len() as u64);
            out.extend_from_slice(w);
            put_varint(&mut out, c);
        }
        out
    }

    /// Parses [`to_bytes`](Self::to_bytes) output; a repeated word has its counts added.
    pub fn from_bytes(data: &[u8]) -> Result<Self> {
        let mut wc = WordCounts::new();
        // the shards are sized beforehand from a count of the records (a quick scan): growing
        // them by rehashing took ~4% of training from saved counts (`perf`, benchmark mix)
        let records = count_records(data);
        for shard in &mut wc.shards {
            shard.reserve(records / SHARDS + records / (SHARDS * 8) + 16);
        }
        let mut pos = 0;
        while pos < data.len() {
            let len = get_varint(data, &mut pos)? as usize;
            if len == 0 || len > data.len() - pos {
                return Err(Error::Format(format!(
                    "word counts: bad word length {len} at byte {pos} (file truncated or corrupt)"
                )));
            }
            let word = &data[pos..pos + len];
            pos += len;
            let count = get_varint(data, &mut pos)?;
            wc.add_word(word, count);
        }
        Ok(wc)
    }
}

/// How many records `data` holds (an estimate, for sizing: stops at the first bad length).
fn count_records(data: &[u8]) -> usize {
    let (mut pos, mut n) = (0, 0);
    while pos < data.len() {
        let Ok(len) = get_varint(data, &mut pos) else { break };
        pos = pos.saturating_add(len as usize);
        if pos > data.len() || get_varint(data, &mut pos).is_err() {
            break;
        }
        n += 1;
    }
    n
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(data: &[u8], pos: &mut usize) -> Result<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(&b) = data.get(*pos) else {
            return Err(Error::Format(format!("word counts: truncated number at byte {}", *pos)));
        };
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Ok(v);
        }
    }
    Err(Error::Format(format!("word counts: number too long at byte {}", *pos)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_add() {
        let mut a = WordCounts::new();
        a.add_word(b"hello", 3);
        a.add_word(b" world", u64::MAX - 1);
        a.add_word(&[0xff, 0x00], 1);
        let b = WordCounts::from_bytes(&a.to_bytes()).unwrap();
        assert_eq!(a, b);
        let mut c = a.clone();
        c.merge_from(&b);
        assert_eq!(c.get(b"hello"), Some(6));
        assert_eq!(c.get(b" world"), Some(u64::MAX)); // saturates
        assert_eq!(a.to_bytes(), b.to_bytes()); // canonical order
        assert_eq!(count_records(&a.to_bytes()), 3);
        assert_eq!(count_records(&a.to_bytes()[..4]), 0); // cut inside the first record
    }

    #[test]
    fn corrupt_input_is_an_error() {
        let a = {
            let mut a = WordCounts::new();
            a.add_word(b"abc", 300);
            a.to_bytes()
        };
        assert!(WordCounts::from_bytes(&a[..a.len() - 1]).is_err());
        assert!(WordCounts::from_bytes(&[5, b'a']).is_err());
        assert!(WordCounts::from_bytes(&[0]).is_err());
    }
}
