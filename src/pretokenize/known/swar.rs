//! Letter and digit runs eight ASCII bytes at a time (SWAR: SIMD within a register).
//!
//! The splitters' run loops test one byte per iteration against the flag table, and the end of
//! each run is an unpredictable branch (two thirds of the splitters' mispredictions, `mod.rs`).
//! [`ascii_run`] skips whole words of bytes that are certainly in the class with a few integer
//! operations and finds where the run stops with `trailing_zeros`, so a typical English word
//! costs one word test instead of a branch per letter. The byte loops that follow it still decide
//! everything past that point (multi-byte chars, the text's last bytes), so results are unchanged.

use super::unicode::{L, M, N, U, W};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The ASCII bytes whose flags meet `mask`, as (bits OR-ed in first, low, high): the class is
/// the bytes `x < 0x80` with `x | or` in `low..=high`. `None` for masks without such a form.
/// (ASCII letters are exactly `A-Z a-z` in every letter class, digits exactly `0-9`, and no
/// ASCII char is a mark, so `M` adds nothing; the test `ascii_classes_match_the_tables` checks
/// this against the flag tables.)
#[inline(always)]
const fn ascii_class(mask: u8) -> Option<(u8, u8, u8)> {
    if mask & !(L | U | W | N | M) != 0 {
        return None;
    }
    let lower = mask & (L | W) != 0;
    let upper = mask & (L | U) != 0;
    match (lower, upper, mask & N != 0) {
        (false, false, true) => Some((0, b'0', b'9')),
        (true, true, false) => Some((0x20, b'a', b'z')),
        (true, false, false) => Some((0, b'a', b'z')),
        (false, true, false) => Some((0, b'A', b'Z')),
        _ => None,
    }
}

/// The high bit of each byte of `x` that is in the ASCII class `(or, low, high)`.
#[inline(always)]
fn in_class(x: u64, (or, low, high): (u8, u8, u8)) -> u64 {
    let y = x | (ONES * or as u64);
    // For a byte below 0x80, adding 0x80 - low sets its high bit iff it is >= low (no carry
    // leaves the byte); adding 0x7F - high iff it is > high. Bytes >= 0x80 are masked by `!x`.
    let at_least_low = y.wrapping_add(ONES * (0x80 - low) as u64);
    let above_high = y.wrapping_add(ONES * (0x7F - high) as u64);
    at_least_low & !above_high & !x & HIGH
}

/// The first position from `i` that does not start a whole 8-byte word of class bytes already
/// skipped, i.e. `i` advanced over ASCII bytes of the class `mask` selects, a word at a time,
/// stopping at the first byte outside it or where fewer than 8 bytes remain. Returns `i` for a
/// mask without an ASCII form.
#[inline(always)]
pub(super) fn ascii_run(b: &[u8], mut i: usize, mask: u8) -> usize {
    let Some(class) = ascii_class(mask) else {
        return i;
    };
    while let Some(word) = b.get(i..i + 8) {
        let x = u64::from_le_bytes([word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7]]);
        let hits = in_class(x, class);
        if hits != HIGH {
            return i + ((!hits & HIGH).trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i
}

/// The shape of an ASCII letter run at the start of the 8 bytes `w`: how many of them are
/// uppercase letters `A-Z` before the first other byte (`u`, up to 8), and how many lowercase
/// letters `a-z` follow those (`l`, up to `8 - u`): o200k's `U*W+` / `U+W*` over ASCII, decided
/// with one load and no branch per letter (random mixed-case letters mispredicted the byte loop
/// at nearly every piece).
#[inline(always)]
pub(super) fn upper_lower(w: [u8; 8]) -> (usize, usize) {
    let x = u64::from_le_bytes(w);
    let not_upper = !in_class(x, (0, b'A', b'Z')) & HIGH;
    let u = (not_upper.trailing_zeros() / 8) as usize;
    // the bytes from `u` on (none if `u` is 8) that are not lowercase letters
    let not_lower = !in_class(x, (0, b'a', b'z')) & HIGH & u64::MAX.checked_shl(8 * u as u32).unwrap_or(0);
    let end = (not_lower.trailing_zeros() / 8) as usize;
    (u, end.max(u) - u)
}

#[cfg(test)]
mod tests {
    use super::super::unicode::{tables, MULTI, S};
    use super::*;

    #[test]
    fn ascii_classes_match_the_tables() {
        let t = tables();
        for mask in [L, U, W, N, U | W, L | U, L | W, L | U | W, L | M] {
            let class = ascii_class(mask).expect("letter and digit masks have an ASCII form");
            for x in 0..=255u8 {
                let want = t.byte(x) & mask != 0;
                let got = in_class(u64::from(x), class) & 0x80 != 0;
                assert_eq!(got, want, "mask {mask:#x} byte {x:#x}");
            }
        }
        for mask in [S, L | N, N | S, L | N | S, MULTI] {
            assert_eq!(ascii_class(mask), None, "{mask:#x}");
        }
    }

    /// `upper_lower` against counting bytes, on every 8 bytes over an alphabet of the class
    /// boundaries (`@ A Z [ ` a z {`, a byte >= 0x80) and random words.
    #[test]
    fn upper_lower_counts_the_runs() {
        let edges = [b'@', b'A', b'M', b'Z', b'[', b'`', b'a', b'm', b'z', b'{', 0xC3, b' '];
        let mut w = [0u8; 8];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for k in 0..200_000u64 {
            for (n, byte) in w.iter_mut().enumerate() {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                // the first 12^4 words walk every combination of the first four bytes
                let pick = if k < 20_736 && n < 4 { (k / 12u64.pow(n as u32)) % 12 } else { (state >> 33) % 12 };
                *byte = edges[pick as usize];
            }
            let u = w.iter().take_while(|b| b.is_ascii_uppercase()).count();
            let l = w[u..].iter().take_while(|b| b.is_ascii_lowercase()).count();
            assert_eq!(upper_lower(w), (u, l), "{w:?}");
        }
        assert_eq!(upper_lower(*b"ABCDEFGH"), (8, 0));
        assert_eq!(upper_lower(*b"abcdefgh"), (0, 8));
        assert_eq!(upper_lower(*b"ABCdefgh"), (3, 5));
    }

    /// Against the one-byte-at-a-time loop, at every start of mixed text.
    #[test]
    fn agrees_with_the_byte_loop() {
        let t = tables();
        let text = "The quick brown FOX's 12345678901 jumps_over lazyDOGS éàü naïve Straße \
                    abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 end";
        let b = text.as_bytes();
        for mask in [L, U, W, N] {
            for i in 0..b.len() {
                let mut want = i;
                while want < b.len() && t.byte(b[want]) & mask != 0 {
                    want += 1;
                }
                let got = ascii_run(b, i, mask);
                assert!(got <= want && (got == want || b.len() - got < 8), "mask {mask} at {i}");
            }
        }
    }
}
