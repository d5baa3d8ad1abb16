//! The precompiled character map of a SentencePiece `NormalizerSpec`: a Darts-clone double array
//! over UTF-8 bytes, then a pool of NUL-terminated replacement strings (formats.md 4.3).
//!
//! Every unit index and pool offset is bounds-checked, so a hostile blob gives
//! [`Error::Format`] instead of a read outside the arrays (sentencepiece trusts the blob). The
//! Python reference is `bpekit.formats.sentencepiece.charsmap.CharsMap`.

use crate::error::{Error, Result};

const LEAF_BIT: u32 = 1 << 8;

#[inline(always)]
fn offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & 0x200) >> 6)) as usize
}

pub struct CharsMap {
    units: Vec<u32>,
    pool: Vec<u8>,
    root: usize,
}

impl CharsMap {
    /// Reads a `precompiled_charsmap` blob: little-endian `trie_size`, the units, the pool.
    pub fn new(blob: &[u8]) -> Result<CharsMap> {
        if blob.len() <= 4 {
            return Err(Error::Format(format!(
                "precompiled_charsmap is broken: {} bytes, need more than 4",
                blob.len()
            )));
        }
        let trie_size = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
        if trie_size >= blob.len() {
            return Err(Error::Format(format!(
                "precompiled_charsmap is broken: trie size {trie_size} exceeds the blob size {}",
                blob.len()
            )));
        }
        let n_units = trie_size / 4; // sentencepiece ignores a trailing partial unit
        if n_units == 0 {
            return Err(Error::Format("precompiled_charsmap is broken: its trie has no units".into()));
        }
        // the declared trie may run past the blob's end (sentencepiece would read beyond it):
        // the units are the whole ones present, the pool what follows the declared trie, if any
        let trie = &blob[4..(4 + 4 * n_units).min(blob.len())];
        let units: Vec<u32> = trie.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let pool = blob.get(4 + trie_size..).unwrap_or_default().to_vec();
        let mut map = CharsMap { units, pool, root: 0 };
        map.root = offset(map.unit(0)?);
        Ok(map)
    }

    fn unit(&self, index: usize) -> Result<u32> {
        self.units.get(index).copied().ok_or_else(|| {
            Error::Format(format!(
                "precompiled_charsmap is corrupt: trie unit {index} is outside its {} units",
                self.units.len()
            ))
        })
    }

    /// `(length, value)` of the longest key that prefixes `data[start..]` (Darts
    /// `commonPrefixSearch`, the longest result); length 0 when none does.
    #[inline]
    pub fn longest_match(&self, data: &[u8], start: usize) -> Result<(usize, usize)> {
        let mut node = self.root;
        let mut best = (0, 0);
        for (i, &c) in data[start..].iter().enumerate() {
            node ^= c as usize;
            let unit = self.unit(node)?;
            if unit & 0x8000_00FF != c as u32 {
                break;
            }
            node ^= offset(unit);
            if unit & LEAF_BIT != 0 {
                best = (i + 1, (self.unit(node)? & 0x7FFF_FFFF) as usize);
            }
        }
        Ok(best)
    }

    /// What a match that starts with byte `b` can do: `Some(None)` when no key starts with it;
    /// `Some(Some((true, _)))` when `b` alone is a key; else `Some(Some((false, follow)))` with a
    /// bit for each byte that can come next in a key (256 bits). `None` when a step from the
    /// root or from `b`'s node leaves the trie (a corrupt map: [`Self::longest_match`] reports it).
    pub fn after_first(&self, b: u8) -> Option<Option<(bool, [u64; 4])>> {
        let node = self.root ^ b as usize;
        let unit = *self.units.get(node)?;
        if unit & 0x8000_00FF != b as u32 {
            return Some(None);
        }
        if unit & LEAF_BIT != 0 {
            return Some(Some((true, [0; 4])));
        }
        let base = node ^ offset(unit);
        let mut follow = [0u64; 4];
        for c in 0..=255u8 {
            if self.units.get(base ^ c as usize)? & 0x8000_00FF == c as u32 {
                follow[c as usize / 64] |= 1 << (c % 64);
            }
        }
        Some(Some((false, follow)))
    }

    /// The node every lookup starts from.
    pub fn root(&self) -> usize {
        self.root
    }

    /// One byte of a lookup: from `node` by byte `c`, `Some((next node, the value of the key
    /// that ends there, if one does))`, or `None` when no key continues with `c`.
    #[inline]
    pub fn step(&self, node: usize, c: u8) -> Result<Option<(usize, Option<usize>)>> {
        let at = node ^ c as usize;
        let unit = self.unit(at)?;
        if unit & 0x8000_00FF != c as u32 {
            return Ok(None);
        }
        let next = at ^ offset(unit);
        let value = if unit & LEAF_BIT != 0 { Some((self.unit(next)? & 0x7FFF_FFFF) as usize) } else { None };
        Ok(Some((next, value)))
    }

    /// Checks every node that a lookup by bytes 1..=255 can reach from the root (each node once:
    /// Darts-clone shares subtrees, and a hostile map may loop): every unit such a lookup reads
    /// is inside the trie and every key's value is a replacement ([`Self::replacement`]). After
    /// it, [`Self::step`] and [`Self::replacement`] cannot fail on those lookups. Calls `key`
    /// with the value and replacement of each key (once per node where one ends).
    pub fn check_reachable(&self, mut key: impl FnMut(usize, &str)) -> Result<()> {
        let n = self.units.len();
        let mut seen = vec![false; n];
        let mut todo = vec![self.root];
        while let Some(node) = todo.pop() {
            // the children of a node lie in its block of 256 units (Darts-clone allocates whole
            // blocks): a node whose block leaves the trie is refused, not just its bad bytes
            if node | 0xFF >= n {
                return Err(Error::Format(format!(
                    "precompiled_charsmap is corrupt: trie node {node} has children outside its {n} units"
                )));
            }
            for c in 1..=255u8 {
                if let Some((next, value)) = self.step(node, c)? {
                    if let Some(value) = value {
                        key(value, self.replacement(value)?);
                    }
                    if next >= n {
                        return Err(Error::Format(format!(
                            "precompiled_charsmap is corrupt: trie unit {next} is outside its {n} units"
                        )));
                    }
                    if !std::mem::replace(&mut seen[next], true) {
                        todo.push(next);
                    }
                }
            }
        }
        Ok(())
    }

    /// The replacement at pool offset `value`, which must be NUL-terminated UTF-8.
    pub fn replacement(&self, value: usize) -> Result<&str> {
        let end = self.pool.get(value..).and_then(|rest| memchr::memchr(0, rest)).ok_or_else(|| {
            Error::Format(format!(
                "precompiled_charsmap is corrupt: replacement offset {value} has no NUL-terminated string in its {}-byte pool",
                self.pool.len()
            ))
        })?;
        let raw = &self.pool[value..value + end];
        std::str::from_utf8(raw).map_err(|_| {
            Error::Format(format!(
                "precompiled_charsmap replacement at offset {value} is not valid UTF-8: {:?}",
                String::from_utf8_lossy(raw)
            ))
        })
    }
}
