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
pub fn join_surrogates(units: &[u32]) -> String {
    // The exact size but for surrogates (3 bytes each, 2 too many for a joined pair): one pass
    // that vectorizes, so the string is allocated once.
    let size: usize = units.iter().map(|&u| 1 + usize::from(u >= 0x80) + usize::from(u >= 0x800) + usize::from(u >= 0x1_0000)).sum();
    let mut out = String::with_capacity(size);
    let mut i = 0;
    while i < units.len() {
        let u = units[i];
        i += 1;
        let c = match u {
            0..=0x7F => {
                out.push(u as u8 as char);
                continue;
            }
            0xD800..=0xDBFF => match units.get(i) {
                Some(&low @ 0xDC00..=0xDFFF) => {
                    i += 1;
                    0x1_0000 + ((u - 0xD800) << 10) + (low - 0xDC00)
                }
                _ => 0xFFFD,
            },
            _ => u,
        };
        // A low surrogate alone (and anything past U+10FFFF, which a `str` cannot hold).
        out.push(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
    }
    out
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
        let cases: [(&[u32], &str); 9] = [
            (&[], ""),
            (&[0x70, 0xE9, 0x20AC, 0x1F600], "p\u{e9}\u{20ac}\u{1f600}"),
            (&[0xD83D, 0xDE00], "\u{1f600}"),
            (&[0xDE00, 0xD83D], "\u{fffd}\u{fffd}"),
            (&[0xD800], "\u{fffd}"),
            (&[0x61, 0xDFFF, 0x62], "a\u{fffd}b"),
            (&[0xD800, 0xD800, 0xDC00], "\u{fffd}\u{10000}"),
            (&[0xDBFF, 0xDFFF, 0xDBFF], "\u{10ffff}\u{fffd}"),
            (&[0xD800, 0x1F600, 0xDC00], "\u{fffd}\u{1f600}\u{fffd}"),
        ];
        for (units, want) in cases {
            assert_eq!(join_surrogates(units), want, "{units:x?}");
            assert_eq!(expected(units), want, "{units:x?}");
        }
    }

    #[test]
    fn surrogates_join_or_become_replacement_characters() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
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
