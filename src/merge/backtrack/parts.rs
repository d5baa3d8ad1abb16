//! Where a long piece can be cut: a boundary that no token of the vocabulary crosses. No merge
//! can join the two sides of such a boundary (every symbol BPE ever forms is a token), so the
//! piece's encoding is the encodings of the parts between cuts, one after the other, each part
//! encoded alone.
//!
//! A token across the boundary before `piece[p]` holds the two bytes there, and if it is longer
//! than two bytes, one of the byte triples `piece[p-2..p+1]`, `piece[p-1..p+2]`. [`Cuts`] keeps
//! a bit for every byte pair inside a token, every two-byte token, and a hashed filter of the
//! triples inside tokens (a false "present" only loses a cut), so the test is a few loads from
//! tables of 16 and 128 kB (the pair bits of both kinds in one table, see [`Cuts::links`]).
//!
//! Performance notes (`src/PERFORMANCE.md`, "Long pieces, fifth round"): random CJK ideographs
//! cut into parts of 1.8 bytes on average with o200k (1.3 with cl100k), most of them one token,
//! which the trie's direct tables answer without a `valid_pair` call. Random letters have no cut
//! (every pair of letters is a token), so the encoder stops looking after [`PROBE`] positions
//! with fewer than 1 in 16 cuts. (Not quite with cl100k: 53 of the 676 letter pairs are no
//! token, enough cuts to keep looking through the whole piece.)
//!
//! Eighth round (`src/PERFORMANCE.md`, "Eighth round: long pieces"): the encoder asks for the
//! cuts of 64 positions at once ([`Cuts::open_mask`]): a pass over the pair bits, then the
//! triple filter only where the pair is joined but not a token, with no branch per position,
//! so a cut costs one jump instead of a mispredicted test. 10 MB of random CJK 0.95x the time
//! (o200k, with the pair tables merged into one), 0.93x more with the two passes (cl100k);
//! one pass with all three loads at every position cost cl100k random letters 5–10%.

/// Positions tested before giving up on a piece with few cuts.
pub(super) const PROBE: usize = 4096;

/// Bits in the triple filter (128 kB). Sized to the tokens' triples instead (32 kB for o200k's
/// 6k tokens over random CJK, 2 MB for the full o200k, where this one is 63% ones) it was
/// slower: 1–9% from more false "present" at 32 kB, 1.3x from cache misses at 2 MB.
const TRIPLE_BITS: u32 = 20;

/// The tables of the cut test for one (sub-)vocabulary.
#[derive(Clone)]
pub(super) struct Cuts {
    /// Two bits per byte pair at `2 * (x << 8 | y)` ([`JOINED`], [`PAIR`]), so the first two
    /// tests are one load (16 kB; two 8 kB tables before: see `open`).
    links: Vec<u64>,
    /// Bit [`triple_bit`]: some token holds this byte triple (or one that hashes alike).
    triples: Vec<u64>,
}

/// In [`Cuts::links`]: the bytes `x, y` occur next to each other in some token.
const JOINED: u64 = 1;
/// In [`Cuts::links`]: the bytes `x, y` are a token.
const PAIR: u64 = 2;

#[inline(always)]
fn bit(set: &[u64], i: usize) -> bool {
    set[i / 64] & (1 << (i % 64)) != 0
}

fn set_bit(set: &mut [u64], i: usize) {
    set[i / 64] |= 1 << (i % 64);
}

#[inline(always)]
fn pair_bit(x: u8, y: u8) -> usize {
    (x as usize) << 8 | y as usize
}

#[inline(always)]
fn triple_bit(x: u8, y: u8, z: u8) -> usize {
    let k = (x as u32) << 16 | (y as u32) << 8 | z as u32;
    (k.wrapping_mul(0x9E37_79B1) >> (32 - TRIPLE_BITS)) as usize
}

impl Cuts {
    /// The tables for a vocabulary given as the bytes of all its tokens (producible or not).
    pub(super) fn new<'a>(tokens: impl Iterator<Item = &'a [u8]>) -> Cuts {
        let mut cuts = Cuts {
            links: vec![0; 1 << 11],
            triples: vec![0; (1 << TRIPLE_BITS) / 64],
        };
        for b in tokens {
            for w in b.windows(2) {
                cuts.mark(w[0], w[1], JOINED);
            }
            if let [x, y] = *b {
                cuts.mark(x, y, PAIR);
            }
            for w in b.windows(3) {
                set_bit(&mut cuts.triples, triple_bit(w[0], w[1], w[2]));
            }
        }
        cuts
    }

    /// Sets `flag` among the two link bits of the byte pair `x, y`.
    fn mark(&mut self, x: u8, y: u8, flag: u64) {
        let i = pair_bit(x, y);
        self.links[i / 32] |= flag << (2 * (i % 32));
    }

    /// The two link bits ([`JOINED`], [`PAIR`]) of the byte pair `x, y`.
    #[inline(always)]
    fn links(&self, x: u8, y: u8) -> u64 {
        let i = pair_bit(x, y);
        self.links[i / 32] >> (2 * (i % 32))
    }

    /// Whether no token can cross the boundary before `piece[p]` (`0 < p < piece.len()`): one
    /// position at a time, the reference for [`Cuts::open_mask`] in the tests.
    #[cfg(test)]
    pub(super) fn open(&self, piece: &[u8], p: usize) -> bool {
        let (x, y) = (piece[p - 1], piece[p]);
        let links = self.links(x, y);
        if links & JOINED == 0 {
            return true;
        }
        if links & PAIR != 0 {
            return false;
        }
        let triple = |x, y, z| bit(&self.triples, triple_bit(x, y, z));
        (p < 2 || !triple(piece[p - 2], x, y))
            && (p + 1 >= piece.len() || !triple(x, y, piece[p + 1]))
    }

    /// Bit `i` set iff `open(piece, from + i)`, for `from + i < to` (`0 < from`, `to - from <=
    /// 64`, `to <= piece.len()`). Two passes without a branch per position: the pair bits of
    /// all positions (one load each), then the triple filter only at the positions whose pair
    /// is joined but not a token (most of random CJK, few of random letters, where every pair
    /// of letters is a token and the filter's loads cost more than they saved).
    #[inline(always)]
    pub(super) fn open_mask(&self, piece: &[u8], from: usize, to: usize) -> u64 {
        let (mut open, mut unsure) = (0u64, 0u64);
        for p in from..to {
            let links = self.links(piece[p - 1], piece[p]);
            open |= (links & JOINED ^ JOINED) << (p - from);
            unsure |= ((links & (JOINED | PAIR) == JOINED) as u64) << (p - from);
        }
        while unsure != 0 {
            let i = unsure.trailing_zeros() as usize;
            unsure &= unsure - 1;
            let p = from + i;
            let (x, y) = (piece[p - 1], piece[p]);
            let before = p >= 2 && bit(&self.triples, triple_bit(piece[p - 2], x, y));
            let after = p + 1 < piece.len() && bit(&self.triples, triple_bit(x, y, piece[p + 1]));
            open |= (!(before | after) as u64) << i;
        }
        open
    }

    pub(super) fn memory_bytes(&self) -> usize {
        (self.links.len() + self.triples.len()) * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cut test against its definition: no token equals a slice of the piece across `p`.
    #[test]
    fn open_only_where_no_token_crosses() {
        let tokens: [&[u8]; 9] = [
            b"a", b"b", b"c", b"d", b"ab", b"bcd", b"cda", b"dd", b"abca",
        ];
        let cuts = Cuts::new(tokens.iter().copied());
        let mut seed = 3u64;
        let mut found = 0;
        for _ in 0..3000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = 2 + (seed >> 60) as usize;
            let piece: Vec<u8> = (0..n)
                .map(|i| b"abcd"[(seed >> (4 + 2 * i)) as usize & 3])
                .collect();
            for p in 1..n {
                let crossed = (0..p).any(|i| (p + 1..=n).any(|j| tokens.contains(&&piece[i..j])));
                if cuts.open(&piece, p) {
                    assert!(!crossed, "{:?} cut at {p}", String::from_utf8_lossy(&piece));
                    found += 1;
                }
            }
        }
        assert!(found > 100, "only {found} cuts found");
        for (i, piece) in [&b"abcdabdcbadcdd"[..], b"ab", b"dda", b"cdabcaddbacbdabcaacbd"].iter().enumerate() {
            for from in 1..piece.len() {
                let to = piece.len().min(from + 64 - i);
                let want = (from..to).map(|p| (cuts.open(piece, p) as u64) << (p - from)).sum::<u64>();
                assert_eq!(cuts.open_mask(piece, from, to), want, "{piece:?} {from}..{to}");
            }
        }
        // "ba" is inside no token; "cda" crosses d|a; "dd" is a token
        assert!(cuts.open(b"ba", 1) && !cuts.open(b"cda", 2) && !cuts.open(b"dd", 1));
    }
}
