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
//!   valid; one-byte tokens split into themselves. [`Merges`](merges) maps `(l, r)` back to `t`.
//! - `valid_pair(a, b)` unwinds the two merge trees (the right spine of `a`, the left spine of `b`)
//!   in reverse merge order and fails if a merge across the boundary would come first.
//! - `next_prefix` of `t`: its longest proper prefix token; the matcher is a [`Trie`].
//!
//! A token that BPE cannot produce from its own bytes (no valid split) is left out of the matcher:
//! a token produced inside a longer piece always encodes to itself alone. If such a token *does*
//! encode to itself with the reference merge, its merges are not in rank order (a part ranked
//! after it: 81 of Llama 3's tokens, "maktan" from "makt" + "an") and the theory above does not
//! apply to it: the tables avoid it, `encode_into` refusing the pieces that contain one (the
//! caller keeps the heap merge for them; see [`Backtrack::avoids`] and `build::from_tokens`,
//! which says why nothing else changes). [`Backtrack::new`] returns `None` without a one-byte
//! token for every byte the tables must cover, with duplicate ranks, or past 4,096 avoided
//! tokens. Inside, ids are local (0.. in rank order, see [`build`]); `encode_into` returns
//! ranks.
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
//!   of the merge table ([`Pairs`](super::pairs::Pairs): 406M -> 281M instructions, 145 -> 80 ms on random letters);
//!   one record per token instead of three arrays; a direct table for the first two trie
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
//! - Third round (`src/PERFORMANCE.md`, "Long pieces, third round"): tables over a piece's own
//!   bytes with dense local ids (o200k random letters, fresh encoder, 1 MB: first call 416 -> 108
//!   ms, second 181 -> 102 ms), a 4K-entry memo that turns itself off, the token length from the
//!   trie walk, `splits` apart from `chain`, and a dense table for merges of two one-byte tokens
//!   ([`merges`]).
//! - Fourth round (`src/PERFORMANCE.md`, "Long pieces, fourth round"): a direct third trie level,
//!   16-bit tables below 65,535 tokens ([`tables`]), the output reserved for a token per 2 bytes:
//!   random letters 0.88x the time (o200k and cl100k, 1 MB, first and second call).
//! - Fifth round (`src/PERFORMANCE.md`, "Long pieces, fifth round"): a long piece is cut where no
//!   token can cross ([`parts`]) and each part encoded alone, most of them one token found by the
//!   trie walk alone: random CJK ideographs 0.7–0.8x the time; random letters have no cut and
//!   stop looking after 4,096 positions.
//! - Eighth round (`src/PERFORMANCE.md`, "Eighth round: long pieces"): the cut test 64 positions
//!   at a time into a bit mask ([`parts`]), parts of one or two bytes pushed from the trie's
//!   direct tables ([`Trie::short_token`]), and the piece's byte set without a store-to-load
//!   chain ([`ByteSet::of`]): 10 MB of random CJK 0.80x the time (o200k) and 0.74x (cl100k);
//!   random letters unchanged (the backtracking loop itself was not made faster).

mod build;
pub mod lazy;
mod byteset;
mod merges;
mod parts;
mod short;
mod tables;

pub use byteset::ByteSet;

use super::trie::{Trie, NONE};
use aho_corasick::AhoCorasick;
use super::Ranks;
use crate::vocab::Rank;
use parts::Cuts;
use tables::{Narrow, Tables, Wide};

/// Tables of the backtracking merge for one vocabulary or sub-vocabulary (built once, read-only
/// afterwards). Token ids inside are local (see [`build`]); `encode_into` returns ranks.
#[derive(Clone)]
pub struct Backtrack {
    trie: Trie,
    tokens: Tokens,
    /// The rank of each local id (empty when local ids are the ranks).
    global: Vec<Rank>,
    /// How many tokens are left out because BPE cannot produce them.
    pub excluded: usize,
    /// Where pieces can be cut (see [`parts`]).
    cuts: Cuts,
    /// Tokens built out of rank order (and, for a merge list, split otherwise than the list
    /// does): the tables refuse the pieces that contain one (see `build::from_tokens`).
    avoid: Option<AhoCorasick>,
    /// `valid_pair` answers for pairs of short tokens, learnt as the loop asks (see [`short`]).
    short: short::ShortPairs,
}

/// At most this many tokens are avoided (Llama 3's 128k tokens have 81 built out of rank order);
/// with more, the tables are not built.
const MAX_AVOID: usize = 4096;

/// The per-token tables at the narrowest width that holds them.
#[derive(Clone)]
enum Tokens {
    Wide(Wide),
    Narrow(Narrow),
}

impl std::fmt::Debug for Backtrack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backtrack")
            .field("ids", &self.len())
            .field("narrow", &matches!(self.tokens, Tokens::Narrow(_)))
            .field("excluded", &self.excluded)
            .field("avoided", &self.avoid.as_ref().map_or(0, |a| a.patterns_len()))
            .finish_non_exhaustive()
    }
}

/// Whether BPE of `bytes(a) + bytes(b)` is `[a, b]`, given the merge trees in `toks`.
///
/// Undo the merges of `a`'s right spine and `b`'s left spine, latest first (the larger id; on a
/// tie `b`'s, since equal ranks merge leftmost first). `limit` is the rank of the merge just
/// undone: a merge across the boundary with a smaller rank (or equal, left of `b`'s) would have
/// happened before it, so the pair is invalid.
#[inline]
fn valid_pair<T: Tables>(toks: &T, mut a: u32, mut b: u32) -> bool {
    let mut limit = u32::MAX;
    let mut a_right = toks.split(a).1;
    let mut b_left = toks.split(b).0;
    loop {
        if let Some(c) = toks.merge(a, b) {
            if c < limit {
                return false;
            }
        }
        if a > b && a_right != a {
            limit = a;
            a = a_right;
            a_right = toks.split(a).1;
        } else if b_left != b {
            limit = b + 1;
            b = b_left;
            b_left = toks.split(b).0;
        } else if a_right != a {
            limit = a;
            a = a_right;
            a_right = toks.split(a).1;
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
        let mut tokens: Vec<(Rank, &[u8])> = ranks
            .iter()
            .filter(|(b, _)| set.covers(b))
            .map(|(b, &r)| (r, b.as_slice()))
            .collect();
        tokens.sort_unstable_by_key(|t| t.0);
        build::from_tokens(&tokens, set, None)
    }

    /// Builds the tables from `tokens` (rank, bytes) in increasing rank order: all the tokens of
    /// the vocabulary made only of bytes in `set` (as [`Backtrack::for_bytes`] selects them);
    /// `None` as for [`Backtrack::new`].
    pub fn from_tokens(tokens: &[(Rank, &[u8])], set: &ByteSet) -> Option<Backtrack> {
        build::from_tokens(tokens, set, None)
    }

    /// Builds the tables for a merge list's tokens (Hugging Face's rule: a listed pair merges,
    /// the earliest listed first, leftmost on ties), computed by tiktoken's rule over the same
    /// tokens ranked in merge order; the tables avoid the tokens where the two rules may differ.
    ///
    /// `tokens` (output id, bytes) are all those over `set`, in merge-priority order (one-byte
    /// tokens first). `listed(t, left, right)` (indices of `tokens`) says whether `left + right`
    /// is a listed merge building `t` whose index comes before the first merge building any later
    /// token. The build asks it of the split tiktoken's rule makes last for each token BPE can
    /// produce from its own bytes (the split BPE of `t`'s bytes reaches just before `t`), and
    /// avoids the tokens refused. On a piece with none of them, the rules agree: in any state
    /// the tiktoken rule reaches, an adjacent pair whose bytes are a token is that token's last
    /// split (the merges inside its span are those of BPE of its bytes alone), and that token is
    /// a substring of the piece, so not avoided; the tiktoken rule's choice is then a listed
    /// merge, and any other listed merge present builds a later token, hence comes later in the
    /// list, or is the same pair further right.
    pub fn from_merge_list(tokens: &[(u32, &[u8])], set: &ByteSet, listed: &dyn Fn(u32, u32, u32) -> bool) -> Option<Backtrack> {
        build::from_tokens(tokens, set, Some(listed))
    }

    /// Whether `piece` contains a token that BPE builds out of rank order, so that the tables
    /// refuse it (`encode_into` gives `false`).
    pub fn avoids(&self, piece: &[u8]) -> bool {
        self.avoid.as_ref().is_some_and(|a| a.is_match(piece))
    }

    /// How many tokens built out of rank order the tables avoid.
    pub fn avoided(&self) -> usize {
        self.avoid.as_ref().map_or(0, |a| a.patterns_len())
    }

    /// How many tokens the tables hold (producible or not).
    pub fn len(&self) -> usize {
        match &self.tokens {
            Tokens::Wide(w) => w.chain.len(),
            Tokens::Narrow(n) => n.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the tables use 16-bit ids (a sub-vocabulary of fewer than 65,535 tokens).
    pub fn is_narrow(&self) -> bool {
        matches!(self.tokens, Tokens::Narrow(_))
    }

    /// Encodes `piece` (non-empty) and appends its ids to `out`. Returns `false`, leaving `out`
    /// as it was, if the piece holds a token the tables avoid ([`Backtrack::avoids`]) or no
    /// valid sequence was found (impossible when `new` accepted the vocabulary); the caller then
    /// falls back to the heap merge.
    pub fn encode_into(&self, piece: &[u8], out: &mut Vec<Rank>) -> bool {
        if self.avoids(piece) {
            return false;
        }
        let base = out.len();
        let found = match &self.tokens {
            Tokens::Wide(w) => self.encode_with(w, piece, out),
            Tokens::Narrow(n) => self.encode_with(n, piece, out),
        };
        if !found {
            out.truncate(base);
        } else if !self.global.is_empty() {
            out[base..].iter_mut().for_each(|t| *t = self.global[*t as usize]);
        }
        found
    }

    /// `encode_into` over tables of one width, leaving local ids in `out`. A long piece is cut
    /// where no token can cross (see [`parts`]) and each part encoded alone: a part that is a
    /// token needs only the trie walk. Pieces with few cuts (random letters) go whole to the
    /// backtracking loop after the first [`parts::PROBE`] positions.
    #[inline]
    fn encode_with<T: Tables>(&self, toks: &T, piece: &[u8], out: &mut Vec<Rank>) -> bool {
        let n = piece.len();
        // random letters give a token per ~1.9 bytes (n / 3 made the output grow: a 1.3 MB
        // copy), random CJK one per ~1.6
        out.reserve(n - n / 3 + 1);
        let mut scratch = Scratch {
            dead: Vec::new(),
            memo: Memo::new(n),
        };
        let (mut start, mut cuts) = (0, 0);
        // 64 positions at a time: a bit mask of the cuts, then a jump per cut only
        let mut from = 1;
        while from < n {
            if from > parts::PROBE && cuts * 16 < parts::PROBE {
                break;
            }
            let to = n.min(from + 64);
            let mut mask = self.cuts.open_mask(piece, from, to);
            while mask != 0 {
                let p = from + mask.trailing_zeros() as usize;
                mask &= mask - 1;
                // most parts of random CJK are one or two bytes (1.3 on average with cl100k)
                let part = &piece[start..p];
                let t = self.trie.short_token(part);
                if t != NONE {
                    out.push(t);
                } else if !self.encode_part(toks, part, out, &mut scratch) {
                    return false;
                }
                (start, cuts) = (p, cuts + 1);
            }
            from = to;
        }
        self.encode_part(toks, &piece[start..], out, &mut scratch)
    }

    /// Encodes one part: a token by itself (every token the trie matches encodes to itself), or
    /// by backtracking.
    #[inline]
    fn encode_part<T: Tables>(&self, toks: &T, part: &[u8], out: &mut Vec<Rank>, scratch: &mut Scratch) -> bool {
        let first = self.trie.longest_prefix_len(part);
        if first.1 == part.len() {
            out.push(first.0);
            return true;
        }
        self.backtrack(toks, part, first, out, scratch)
    }

    /// The backtracking loop over `piece`, starting from its longest prefix token `first`.
    fn backtrack<T: Tables>(&self, toks: &T, piece: &[u8], first: (u32, usize), out: &mut Vec<Rank>, scratch: &mut Scratch) -> bool {
        let n = piece.len();
        let base = out.len();
        let dead = &mut scratch.dead;
        dead.clear();
        dead.resize(n / 64 + 1, 0);
        let memo = &mut scratch.memo;
        let mut pos = 0;
        // `cand_len` is the length of `cand` (from the trie walk or the token's record).
        let (mut cand, mut cand_len) = first;
        loop {
            if cand == NONE {
                return false;
            }
            let end = pos + cand_len;
            let alive = dead[end / 64] & (1 << (end % 64)) == 0;
            if alive && (out.len() == base || self.valid_after(toks, memo, out[out.len() - 1], cand)) {
                out.push(cand);
                pos = end;
                if pos == n {
                    return true;
                }
                (cand, cand_len) = self.trie.longest_prefix_len(&piece[pos..]);
                continue;
            }
            let shorter = toks.next_prefix(cand);
            if shorter != NONE {
                cand = shorter;
                cand_len = toks.len(cand);
                continue;
            }
            // Nothing fits at `pos` after the tokens so far: `pos` is dead, undo the last token.
            dead[pos / 64] |= 1 << (pos % 64);
            if out.len() == base {
                return false;
            }
            cand = out.pop().unwrap_or(NONE);
            cand_len = toks.len(cand);
            pos -= cand_len;
        }
    }

    /// Whether `cand` may follow `prev`: from the short-pair table, else through the memo.
    #[inline(always)]
    fn valid_after<T: Tables>(&self, toks: &T, memo: &mut Memo, prev: u32, cand: u32) -> bool {
        self.short.valid_pair(toks, prev, cand, || memo.valid_pair(toks, prev, cand))
    }

    /// Approximate heap memory of the tables.
    pub fn memory_bytes(&self) -> usize {
        let tokens = match &self.tokens {
            Tokens::Wide(w) => w.chain.len() * 16 + w.merges.memory_bytes(),
            Tokens::Narrow(n) => n.memory_bytes(),
        };
        self.trie.memory_bytes() + tokens + self.global.len() * 4 + self.cuts.memory_bytes() + self.short.memory_bytes()
    }
}

/// What the backtracking loop reuses from part to part.
struct Scratch {
    /// A bit per position of the part: no valid sequence continues from there.
    dead: Vec<u64>,
    memo: Memo,
}

/// A small direct-mapped cache of `valid_pair` answers for one piece.
///
/// Performance notes: `valid_pair` is half the merge's instructions and natural text asks about
/// the same pairs often: the memo saves 16% of all instructions on English without spaces. Random
/// letters almost never repeat a pair, so there the memo was a cache miss per candidate (58% of
/// the merge's samples at 64K entries): it has 4K entries (32 kB), and it turns itself off when
/// fewer than 1 in 8 of the first `PROBE` lookups hit. Entries are `a << 32 | b` with the answer in
/// bit 63 (ids are below 2^31).
struct Memo {
    slots: Vec<u64>,
    shift: u32,
    hits: u32,
    misses: u32,
    on: bool,
}

/// Lookups after which the memo decides whether it pays.
const PROBE: u32 = 4096;

impl Memo {
    fn new(piece_len: usize) -> Memo {
        let len = piece_len.next_power_of_two().clamp(256, 1 << 12);
        Memo {
            slots: vec![u64::MAX; len],
            shift: 64 - len.trailing_zeros(),
            hits: 0,
            misses: 0,
            on: true,
        }
    }

    #[inline(always)]
    fn valid_pair<T: Tables>(&mut self, toks: &T, a: u32, b: u32) -> bool {
        if !self.on {
            return valid_pair(toks, a, b);
        }
        let key = ((a as u64) << 32) | b as u64;
        let i = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize;
        let e = self.slots[i];
        if e & !(1 << 63) == key {
            self.hits += 1;
            return e >> 63 == 1;
        }
        self.misses += 1;
        if self.misses == PROBE {
            self.on = self.hits >= PROBE / 8;
        }
        let valid = valid_pair(toks, a, b);
        self.slots[i] = key | (valid as u64) << 63;
        valid
    }
}
