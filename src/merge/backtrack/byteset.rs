//! A set of byte values: the bytes a long piece is made of, which select the sub-vocabulary that
//! the [`Backtrack`](super::Backtrack) tables of that piece need.

/// A set of byte values, one bit each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteSet([u64; 4]);

impl ByteSet {
    pub const ALL: ByteSet = ByteSet([u64::MAX; 4]);

    /// The bytes of `piece`.
    ///
    /// A flag per byte value first: the stores are independent, where or-ing each byte's bit
    /// into one of four words made every byte wait for the previous update of that word (a
    /// store-to-load chain of ~5 cycles a byte; 10 MB of random CJK spent ~7% of its encode here).
    pub fn of(piece: &[u8]) -> ByteSet {
        let mut seen = [false; 256];
        for &b in piece {
            seen[b as usize] = true;
        }
        let mut s = [0u64; 4];
        for (b, _) in seen.iter().enumerate().filter(|(_, &f)| f) {
            s[b >> 6] |= 1 << (b & 63);
        }
        ByteSet(s)
    }

    #[inline]
    pub fn has(&self, b: u8) -> bool {
        self.0[b as usize >> 6] & (1 << (b & 63)) != 0
    }

    /// Whether every byte of `bytes` is in the set.
    #[inline]
    pub fn covers(&self, bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| self.has(b))
    }

    /// Whether `self` holds every byte of `other`.
    pub fn contains(&self, other: &ByteSet) -> bool {
        self.0.iter().zip(&other.0).all(|(a, b)| b & !a == 0)
    }

    /// How many byte values the set holds.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn of_has_covers_contains() {
        let s = ByteSet::of(b"abca\xff");
        assert_eq!(s.len(), 4);
        assert!(s.has(b'a') && s.has(0xff) && !s.has(b'd'));
        assert!(s.covers(b"cab") && !s.covers(b"cad"));
        assert!(s.contains(&ByteSet::of(b"ba")) && !s.contains(&ByteSet::of(b"bad")));
        assert!(ByteSet::ALL.contains(&s) && ByteSet::of(b"").is_empty());
    }

    /// `of` (flags first) against a bit set by one byte at a time.
    #[test]
    fn of_matches_bit_by_bit() {
        let mut seed = 99u64;
        for len in [0, 1, 7, 64, 300, 5000] {
            let piece: Vec<u8> = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (seed >> 56) as u8 | (len as u8 & 0x81)
                })
                .collect();
            let mut want = [0u64; 4];
            piece.iter().for_each(|&b| want[b as usize >> 6] |= 1 << (b & 63));
            assert_eq!(ByteSet::of(&piece), ByteSet(want), "len {len}");
        }
        assert_eq!(ByteSet::of(&(0..=255).collect::<Vec<u8>>()), ByteSet::ALL);
    }
}
