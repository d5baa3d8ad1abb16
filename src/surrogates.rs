//! Lone surrogates made encodable as tiktoken does (Python's `str` may hold them; UTF-8 cannot).
//!
//! tiktoken turns a high surrogate followed by a low one into the character the pair encodes and
//! every other surrogate into U+FFFD (its `encode("utf-16", "surrogatepass").decode("utf-16",
//! "replace")` round trip). bpekit copies the string's code points out of Python
//! (`PyUnicode_AsUCS4`, a widening copy) and [`join_surrogates`] writes the UTF-8 in one pass; the
//! binding is `src/py/text.rs`.
//!
//! Performance note (`src/PERFORMANCE.md`, "Eighth round"): before, Python wrote
//! `text.encode("utf-8", "surrogatepass")` and a validating pass over those bytes (`utf8_chunks`)
//! copied them into a `String`: two passes that decode UTF-8, where this one reads fixed-width
//! code points. 10 MB of random Unicode (o200k): see the numbers there.

/// The UTF-8 of `units`, the code points of a Python string: a high surrogate followed by a low
/// one becomes the character the pair encodes, every other surrogate U+FFFD.
///
/// Performance note: each char is written as four bytes at once and the output cut back to its
/// length, with no branch on the length; only a surrogate takes a branch of its own. Pushing a
/// `char` at a time branched on the UTF-8 length of every char, which random text mispredicts:
/// 3.3M random code points 17 -> 10 ms, but 4.3M of `"\ud800a\udfff"` repeated 7.4 -> 13.8 ms
/// (src/PERFORMANCE.md, "Ninth round").
pub fn join_surrogates(units: &[u32]) -> String {
    // The exact size but for surrogates (3 bytes each, 2 too many for a joined pair): one pass
    // that vectorizes. Every char's bytes are written as one 4-byte word, so 3 bytes of room.
    let size: usize = units.iter().map(|&u| utf8_len(u)).sum();
    let mut out: Vec<u8> = Vec::with_capacity(size + 3);
    let mut i = 0;
    while i < units.len() {
        let mut u = units[i];
        i += 1;
        if u & !0x7FF == 0xD800 || u > 0x10_FFFF {
            (u, i) = not_scalar(units, u, i);
        }
        let (word, n) = utf8_word(u);
        let at = out.len();
        out.extend_from_slice(&word.to_le_bytes());
        out.truncate(at + n);
    }
    // SAFETY: every word kept is the UTF-8 of a char (`utf8_word` of a code point that is neither
    // a surrogate nor past U+10FFFF: both were replaced above). Checking it again
    // (`String::from_utf8`) cost 19 ms of 10 MB of random Unicode.
    unsafe { String::from_utf8_unchecked(out) }
}

/// The char that the surrogate (or value past U+10FFFF) `u` stands for, and where the units
/// after it start: a high surrogate followed by a low one (at `i`) is the pair's char, anything
/// else U+FFFD.
#[inline(never)]
fn not_scalar(units: &[u32], u: u32, i: usize) -> (u32, usize) {
    match (u, units.get(i)) {
        (0xD800..=0xDBFF, Some(&low @ 0xDC00..=0xDFFF)) => (0x1_0000 + ((u - 0xD800) << 10) + (low - 0xDC00), i + 1),
        _ => (0xFFFD, i),
    }
}

/// The UTF-8 length of code point `u`.
#[inline(always)]
fn utf8_len(u: u32) -> usize {
    1 + usize::from(u >= 0x80) + usize::from(u >= 0x800) + usize::from(u >= 0x1_0000)
}

/// The UTF-8 of code point `u` (not a surrogate, at most U+10FFFF) as a little-endian word, and
/// its length; chosen from the four forms without a branch.
#[inline(always)]
fn utf8_word(u: u32) -> (u32, usize) {
    let n = utf8_len(u);
    let (c0, c1, c2) = (u & 0x3F | 0x80, (u >> 6) & 0x3F | 0x80, (u >> 12) & 0x3F | 0x80);
    let forms = [
        u,
        (u >> 6 | 0xC0) | c0 << 8,
        (u >> 12 | 0xE0) | c1 << 8 | c0 << 16,
        (u >> 18 | 0xF0) | c2 << 8 | c1 << 16 | c0 << 24,
    ];
    (forms[(n - 1) & 3], n)
}

#[cfg(test)]
mod tests {
    use super::join_surrogates;

    /// What tiktoken's UTF-16 round trip makes of `units` (code points, lone surrogates
    /// included): written as UTF-16, then decoded with replacement, as Python does.
    fn expected(units: &[u32]) -> String {
        let mut utf16 = Vec::new();
        for &u in units {
            match char::from_u32(u) {
                Some(c) => utf16.extend_from_slice(c.encode_utf16(&mut [0; 2])),
                None => utf16.push(u as u16), // a surrogate, as surrogatepass writes it
            }
        }
        String::from_utf16_lossy(&utf16)
    }

    #[test]
    fn golden_cases() {
        let cases: [(&[u32], &str); 10] = [
            (&[], ""),
            (&[0x70, 0xE9, 0x20AC, 0x1F600], "p\u{e9}\u{20ac}\u{1f600}"),
            (&[0xD83D, 0xDE00], "\u{1f600}"),
            (&[0xDE00, 0xD83D], "\u{fffd}\u{fffd}"),
            (&[0xD800], "\u{fffd}"),
            (&[0x61, 0xDFFF, 0x62], "a\u{fffd}b"),
            (&[0xD800, 0xD800, 0xDC00], "\u{fffd}\u{10000}"),
            (&[0xDBFF, 0xDFFF, 0xDBFF], "\u{10ffff}\u{fffd}"),
            (&[0xD800, 0x1F600, 0xDC00], "\u{fffd}\u{1f600}\u{fffd}"),
            (&[0x7F, 0x80, 0x7FF, 0x800, 0xFFFF, 0x1_0000, 0x10_FFFF], "\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}"),
        ];
        for (units, want) in cases {
            assert_eq!(join_surrogates(units), want, "{units:x?}");
            assert_eq!(expected(units), want, "{units:x?}");
        }
        // past U+10FFFF (no `str` holds it; the UTF-16 round trip cannot say): U+FFFD
        assert_eq!(join_surrogates(&[0x61, 0x11_0000, u32::MAX, 0x62]), "a\u{fffd}\u{fffd}b");
    }

    #[test]
    fn surrogates_join_or_become_replacement_characters() {
        let mut rng = crate::merge::equivalence_tests::Rng::new(0x9E37_79B9);
        let mut next = move || rng.next();
        for _ in 0..5000 {
            let n = (next() % 12) as usize;
            let units: Vec<u32> = (0..n)
                .map(|_| match next() % 7 {
                    0 => 0xD800 + (next() % 0x400) as u32,
                    1 => 0xDC00 + (next() % 0x400) as u32,
                    2 => u32::from(b'a') + (next() % 26) as u32,
                    3 => 0x80 + (next() % 0x780) as u32,
                    4 => 0xE000 + (next() % 0x1000) as u32,
                    5 => 0x1_0000 + (next() % 0x10_0000) as u32,
                    _ => (next() % 0x80) as u32,
                })
                .collect();
            let got = join_surrogates(&units);
            assert_eq!(got, expected(&units), "{units:x?}");
            assert!(got.capacity() >= got.len());
        }
    }
}
