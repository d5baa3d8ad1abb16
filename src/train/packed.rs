//! Short words packed into one integer: the keys of the counting workers' maps.
//!
//! A word of at most [`MAX_PACKED`] (15) bytes becomes a `u128`: its bytes in little-endian
//! order, its length in the top byte (so `"a"` and `"a\0"` stay apart). Probing a map keyed by
//! such an integer is one compare, where a `&[u8]` key costs a pointer chase into the text and a
//! `memcmp` (10% of counting's CPU time on the benchmark mix, and `count_gap` itself 24%). On the
//! benchmark mix 98% of pieces (87% of distinct words) are that short, 81% are at most 7 bytes,
//! so a `u64` key would leave too many out; longer ones keep byte-slice keys.
//!
//! The shard of a word ([`super::words::shard_of`]) is computed from its packed form when it has
//! one, so a worker finds a short word's shard without hashing its bytes a second time.

/// The longest word that has a packed form.
pub const MAX_PACKED: usize = 15;

/// The packed form of `word`, if it is at most [`MAX_PACKED`] bytes long.
#[inline]
pub fn pack(word: &[u8]) -> Option<u128> {
    if word.len() > MAX_PACKED {
        return None;
    }
    let mut b = [0u8; 16];
    b[..word.len()].copy_from_slice(word);
    b[15] = word.len() as u8;
    Some(u128::from_le_bytes(b))
}

/// `pack(&text[start..end])` for a piece of at most [`MAX_PACKED`] bytes, reading the 16 bytes at
/// `start` in one load (and masking) when the text has that many, which saves a variable-length
/// copy per piece. Longer pieces give `None`.
#[inline]
pub fn pack_in(text: &[u8], start: usize, end: usize) -> Option<u128> {
    let len = end - start;
    if len > MAX_PACKED {
        return None;
    }
    match text.get(start..start + 16).and_then(|c| <[u8; 16]>::try_from(c).ok()) {
        Some(chunk) => {
            let mask = (1u128 << (8 * len)) - 1; // len <= 15: the shift is at most 120
            Some((u128::from_le_bytes(chunk) & mask) | (len as u128) << 120)
        }
        None => pack(&text[start..end]),
    }
}

/// The word whose packed form is `key`, written into `buf`.
#[inline]
pub fn unpack(key: u128, buf: &mut [u8; 16]) -> &[u8] {
    *buf = key.to_le_bytes();
    let len = usize::from(buf[15]).min(MAX_PACKED);
    &buf[..len]
}

/// The table shard (of [`super::words::SHARDS`] = 64) of a packed word: the top bits of a
/// multiplicative hash of both halves. Its constant differs from the maps' own hash (Fx), so
/// the words of one shard still spread over all of that shard's buckets and tags.
#[inline]
pub fn shard_of_key(key: u128) -> usize {
    let x = (key as u64) ^ ((key >> 64) as u64).rotate_left(32);
    (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random bytes (xorshift), NULs and high bytes included.
    fn bytes(seed: &mut u64, n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                (*seed >> 24) as u8 & if *seed % 3 == 0 { 0x03 } else { 0xff }
            })
            .collect()
    }

    #[test]
    fn pack_round_trips_and_keeps_lengths_apart() {
        let mut seed = 0x1234_5678_9abc_def1;
        let mut buf = [0u8; 16];
        for len in 0..=40 {
            for _ in 0..50 {
                let w = bytes(&mut seed, len);
                match pack(&w) {
                    Some(k) => {
                        assert!(len <= MAX_PACKED);
                        assert_eq!(unpack(k, &mut buf), &w[..]);
                    }
                    None => assert!(len > MAX_PACKED),
                }
            }
        }
        assert_ne!(pack(b"a"), pack(b"a\0"));
        assert_ne!(pack(b""), pack(b"\0"));
    }

    #[test]
    fn pack_in_equals_pack_at_every_position() {
        let mut seed = 42;
        let text = bytes(&mut seed, 200);
        for start in 0..text.len() {
            for end in start..text.len().min(start + 40) + 1 {
                assert_eq!(pack_in(&text, start, end), pack(&text[start..end]), "{start}..{end}");
            }
        }
    }

    #[test]
    fn shards_spread() {
        let mut seed = 7;
        let mut seen = [0usize; 64];
        for i in 0..64_000 {
            let w = bytes(&mut seed, 1 + i % 15);
            seen[shard_of_key(pack(&w).unwrap())] += 1;
        }
        assert!(seen.iter().all(|&n| (500..1500).contains(&n)), "{seen:?}");
    }
}
