//! The linear-time rank merge for long pieces: the backtracking encoder of the `bpe` crate
//! (Van Antwerpen & Neubeck, github/rust-gems), giving exactly the tokens of the flat and heap
//! merges.
//!
//! Idea. A token sequence is the BPE encoding of its bytes iff every adjacent pair `(a, b)` is
//! *valid*, i.e. BPE of `bytes(a) + bytes(b)` alone gives `[a, b]`; and each prefix of the input
//! has at most one such sequence. So the encoder walks left to right taking the longest token that
//! matches, and when the pair with the previous token is invalid it tries the next shorter prefix
//! token; when none fits it pops the previous token (backtracks) and marks the position dead in a
//! bitfield. Each position is entered at most once, so the work is linear in the piece length
//! (times the token length).
//!
//! Tables (token ids are the ranks, so comparing ids compares merge priority):
//! - `left`/`right` of `t`: the last merge that builds `t`, found in rank order as the first
//!   (longest-left) split `l + r` along the chain of prefix tokens with `l, r < t` and `(l, r)`
//!   valid; one-byte tokens split into themselves. [`Pairs`] maps `(l, r)` back to `t`.
//! - `valid_pair(a, b)` unwinds the two merge trees (the right spine of `a`, the left spine of `b`)
//!   in reverse merge order and fails if a merge across the boundary would come first.
//! - `next_prefix` of `t`: its longest proper prefix token; the matcher is a [`Trie`].
//!
//! A token that BPE cannot produce from its own bytes (no valid split) is left out of the matcher:
//! a token produced inside a longer piece always encodes to itself alone. If such a token *does*
//! encode to itself with the reference merge, its merges are not in rank order, the theory above
//! does not apply, and [`Backtrack::new`] returns `None` (the caller keeps the heap merge). The
//! same happens without all 256 one-byte tokens, or with duplicate or very sparse ranks.
//!
//! Performance notes. Measured on a shared 2-core x86 VM under load, so wall times drift by 2x
//! within minutes: times are the minimum of 5 runs in CPU time, ratios come from interleaved runs
//! in one process, and instruction counts (callgrind) are exact.
//! - One 1 MB piece, merge only (instructions per input byte / CPU ms; heap merge in brackets):
//!   random letters 274 / 80–150 ms (870–1240 ms), English without whitespace 206 / 100–150 ms
//!   (1080–1600 ms), 'a' x 1M 46 / 12–20 ms (370–460 ms), 1M spaces ~7 ms (400–600 ms), random
//!   bytes 149 / 42–60 ms (140–190 ms), one 1 MB run of digits 453 / 90–120 ms (1200–1700 ms).
//!   cl100k and o200k cost the same within 10%.
//! - Where the time goes (random letters): `valid_pair` ~45% (1 call per byte, 2.6 pair probes per
//!   call), the trie walk ~20%, the loop itself the rest. Measured wins: the bit filter in front
//!   of the merge table ([`Pairs`]: 406M -> 281M instructions, 145 -> 80 ms on random letters);
//!   one 16-byte record per token instead of three arrays; a direct table for the first two trie
//!   levels (-30% trie instructions); a per-piece memo of `valid_pair` answers (-4% on random
//!   letters, -16% on natural text); the open-addressing table instead of `FxHashMap` (-3%). An
//!   8-byte sort key and labels taken from it in the trie build (-30% build time).
//!   Tried and dropped: copying deep token bytes contiguously for the trie build, and trie lookups
//!   instead of `ranks.get` to find a split's right part (both slower).
//! - Through the whole Python encoder (`encode_ordinary`, interleaved, x = time / time of 1 MB of
//!   English): cl100k random letters 0.84x, 'a' x 1M 0.13x, spaces 0.09x, emoji 0.21x; o200k
//!   random letters 1.3–1.8x, 'a' x 1M 0.20x, emoji 0.36x (before: 5.4x, 1.8x, 2.5x, 0.8x and
//!   8.1x, 2.9x, 1.7x with the heap). tiktoken 0.14 takes 5–55x longer on each of them.
//! - Building the tables: cl100k 161M instructions, 65–105 ms; o200k 328M, 170–260 ms (memory
//!   bound: a few random accesses per token); r50k 33–40 ms. Tables: 7 MB (cl100k), 14 MB (o200k).
//!   Hence `LINEAR_BUILD_AFTER`: they are built only after 256 kB of long pieces, and the first
//!   call with a 1 MB adversarial piece costs the build plus the merge — unless the piece has
//!   few distinct bytes: [`Backtrack::for_bytes`] builds tables over only the tokens made of
//!   them ('a' x 1M, o200k, fresh encoder: first call 0.23 -> 0.04 s; see `core.rs`).
//! - Versus the heap on natural pieces (several scripts, whitespace removed): 0.6–0.8x its time
//!   from 64 bytes up, 1.0x at 32, 1.1x at 16 (so `LINEAR_THRESHOLD` is 64).

use super::pairs::Pairs;
use super::trie::{Trie, NONE};
use super::{heap, Ranks};
use crate::vocab::Rank;

/// Tables of the backtracking merge for one vocabulary (built once, read-only afterwards).
#[derive(Clone)]
pub struct Backtrack {
    trie: Trie,
    /// Per token id (= rank); a hole has `left == NONE` and `len == 0`.
    toks: Vec<Tok>,
    pairs: Pairs,
    /// How many tokens are left out because BPE cannot produce them.
    pub excluded: usize,
}

impl std::fmt::Debug for Backtrack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backtrack")
            .field("ids", &self.toks.len())
            .field("excluded", &self.excluded)
            .finish_non_exhaustive()
    }
}

/// What the encoder needs about one token, in one 16-byte record (one cache miss, not three).
#[derive(Clone, Copy, Debug)]
struct Tok {
    /// The last merge building this token (`left == right == id` for one byte; `NONE` if none).
    left: u32,
    right: u32,
    /// The longest proper prefix token, or `NONE`.
    next_prefix: u32,
    len: u32,
}

const NO_TOK: Tok = Tok {
    left: NONE,
    right: NONE,
    next_prefix: NONE,
    len: 0,
};

/// Whether BPE of `bytes(a) + bytes(b)` is `[a, b]`, given the merge trees in `toks`/`pairs`.
///
/// Undo the merges of `a`'s right spine and `b`'s left spine, latest first (the larger id; on a
/// tie `b`'s, since equal ranks merge leftmost first). `limit` is the rank of the merge just
/// undone: a merge across the boundary with a smaller rank (or equal, left of `b`'s) would have
/// happened before it, so the pair is invalid.
#[inline]
fn valid_pair(pairs: &Pairs, toks: &[Tok], mut a: u32, mut b: u32) -> bool {
    let mut limit = u32::MAX;
    let mut a_right = toks[a as usize].right;
    let mut b_left = toks[b as usize].left;
    loop {
        if let Some(c) = pairs.get(a, b) {
            if c < limit {
                return false;
            }
        }
        if a > b && a_right != a {
            limit = a;
            a = a_right;
            a_right = toks[a as usize].right;
        } else if b_left != b {
            limit = b + 1;
            b = b_left;
            b_left = toks[b as usize].left;
        } else if a_right != a {
            limit = a;
            a = a_right;
            a_right = toks[a as usize].right;
        } else {
            return true;
        }
    }
}

impl Backtrack {
    /// Builds the tables, or `None` if the vocabulary does not meet the algorithm's assumptions.
    pub fn new(ranks: &Ranks) -> Option<Backtrack> {
        Backtrack::for_bytes(ranks, &ByteSet::ALL)
    }

    /// Builds the tables for the tokens made only of bytes in `set`: they encode exactly the
    /// pieces whose bytes are all in `set` (no merge of such a piece can produce another token),
    /// and cost time in proportion to those tokens (`'a' x 1M` needs a handful, not 200k).
    pub fn for_bytes(ranks: &Ranks, set: &ByteSet) -> Option<Backtrack> {
        // Ids are the ranks themselves; a hole is an empty token. Very sparse ranks are refused.
        let n = ranks.values().max().map_or(0, |&m| m as usize + 1);
        if n > 2 * ranks.len() + 1024 || n > 1 << 31 {
            return None;
        }
        let mut slot: Vec<Option<&[u8]>> = vec![None; n];
        let mut kept = 0;
        for (bytes, &r) in ranks {
            if bytes.is_empty() || slot[r as usize].is_some() {
                return None;
            }
            if set.covers(bytes) {
                slot[r as usize] = Some(bytes);
                kept += 1;
            }
        }
        let mut all = Vec::with_capacity(ranks.keys().map(Vec::len).sum());
        let mut start = Vec::with_capacity(n + 1);
        start.push(0u32);
        for b in &slot {
            all.extend_from_slice(b.unwrap_or_default());
            start.push(u32::try_from(all.len()).ok()?);
        }
        let bytes = |t: u32| &all[start[t as usize] as usize..start[t as usize + 1] as usize];
        let mut trie = Trie::new(&all, &start);
        if (0..=255u8).any(|b| set.has(b) && trie.exact(&[b]) == NONE) {
            return None;
        }
        // During the build `next_prefix` links every token, producible or not.
        let mut toks: Vec<Tok> = (0..n as u32)
            .map(|t| Tok {
                len: bytes(t).len() as u32,
                ..NO_TOK
            })
            .collect();
        for (tok, link) in toks.iter_mut().zip(trie.prefix_links()) {
            tok.next_prefix = link;
        }
        let mut pairs = Pairs::new(kept);
        let mut unsplit = Vec::new();
        for t in 0..n as u32 {
            let b = bytes(t);
            match b.len() {
                0 => continue,
                1 => {
                    (toks[t as usize].left, toks[t as usize].right) = (t, t);
                    continue;
                }
                _ => {}
            }
            // First valid split along the prefix chain; tokens not processed yet (id > t) or
            // left out still have no split.
            let mut found = None;
            let mut l = toks[t as usize].next_prefix;
            while l != NONE && found.is_none() {
                let Tok {
                    left,
                    next_prefix,
                    len,
                    ..
                } = toks[l as usize];
                if left != NONE {
                    if let Some(&r) = ranks.get(&b[len as usize..]) {
                        if toks[r as usize].left != NONE && valid_pair(&pairs, &toks, l, r) {
                            found = Some((l, r));
                        }
                    }
                }
                l = next_prefix;
            }
            let Some((l, r)) = found else {
                unsplit.push(t);
                continue;
            };
            (toks[t as usize].left, toks[t as usize].right) = (l, r);
            pairs.insert(l, r, t);
        }
        // A token with no split must not be producible; if the reference merge produces it, the
        // vocabulary's merges are not in rank order.
        let mut scratch = Vec::new();
        for &t in &unsplit {
            scratch.clear();
            heap::encode_into(ranks, usize::MAX, bytes(t), &mut scratch).ok()?;
            if scratch == [t] {
                return None;
            }
            trie.remove(t);
        }
        for (tok, next) in toks.iter_mut().zip(trie.prefix_links()) {
            tok.next_prefix = next;
        }
        trie.drop_build_tables();
        Some(Backtrack {
            trie,
            toks,
            pairs,
            excluded: unsplit.len(),
        })
    }

    /// Encodes `piece` (non-empty) and appends its ids to `out`. Returns `false`, leaving `out`
    /// as it was, if no valid sequence was found (impossible when `new` accepted the vocabulary;
    /// the caller then falls back to the heap merge rather than trusting the tables).
    pub fn encode_into(&self, piece: &[u8], out: &mut Vec<Rank>) -> bool {
        let n = piece.len();
        let base = out.len();
        out.reserve(n / 3 + 1);
        let mut dead = vec![0u64; n / 64 + 1];
        let mut memo = Memo::new(n);
        let mut pos = 0;
        let mut cand = self.trie.longest_prefix(piece);
        loop {
            if cand == NONE {
                out.truncate(base);
                return false;
            }
            let end = pos + self.toks[cand as usize].len as usize;
            let alive = dead[end / 64] & (1 << (end % 64)) == 0;
            if alive && (out.len() == base || memo.valid_pair(self, out[out.len() - 1], cand)) {
                out.push(cand);
                pos = end;
                if pos == n {
                    return true;
                }
                cand = self.trie.longest_prefix(&piece[pos..]);
                continue;
            }
            let shorter = self.toks[cand as usize].next_prefix;
            if shorter != NONE {
                cand = shorter;
                continue;
            }
            // Nothing fits at `pos` after the tokens so far: `pos` is dead, undo the last token.
            dead[pos / 64] |= 1 << (pos % 64);
            if out.len() == base {
                return false;
            }
            cand = out.pop().unwrap_or(NONE);
            pos -= self.toks[cand as usize].len as usize;
        }
    }

    /// Approximate heap memory of the tables.
    pub fn memory_bytes(&self) -> usize {
        self.trie.memory_bytes() + self.toks.len() * 16 + self.pairs.memory_bytes()
    }
}

/// A set of byte values (the bytes a piece is made of).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteSet([u64; 4]);

impl ByteSet {
    pub const ALL: ByteSet = ByteSet([u64::MAX; 4]);

    /// The bytes of `piece`.
    pub fn of(piece: &[u8]) -> ByteSet {
        let mut s = [0u64; 4];
        for &b in piece {
            s[b as usize >> 6] |= 1 << (b & 63);
        }
        ByteSet(s)
    }

    pub fn has(&self, b: u8) -> bool {
        self.0[b as usize >> 6] & (1 << (b & 63)) != 0
    }

    /// Whether every byte of `bytes` is in the set.
    pub fn covers(&self, bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| self.has(b))
    }

    /// Whether `self` holds every byte of `other`.
    pub fn contains(&self, other: &ByteSet) -> bool {
        self.0.iter().zip(&other.0).all(|(a, b)| b & !a == 0)
    }
}

/// A small direct-mapped cache of `valid_pair` answers for one piece.
///
/// Performance note: `valid_pair` is half the merge's instructions and natural text asks about the
/// same pairs often: the memo saves 16% of all instructions on English without spaces (4% on
/// random letters). Entries are `a << 32 | b` with the answer in bit 63 (ids are below 2^31).
struct Memo {
    slots: Vec<u64>,
    shift: u32,
}

impl Memo {
    fn new(piece_len: usize) -> Memo {
        let len = piece_len.next_power_of_two().clamp(256, 1 << 16);
        Memo {
            slots: vec![u64::MAX; len],
            shift: 64 - len.trailing_zeros(),
        }
    }

    #[inline(always)]
    fn valid_pair(&mut self, bt: &Backtrack, a: u32, b: u32) -> bool {
        let key = ((a as u64) << 32) | b as u64;
        let i = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize;
        let e = self.slots[i];
        if e & !(1 << 63) == key {
            return e >> 63 == 1;
        }
        let valid = valid_pair(&bt.pairs, &bt.toks, a, b);
        self.slots[i] = key | (valid as u64) << 63;
        valid
    }
}
