//! Lone surrogates made encodable as tiktoken does (Python's `str` may hold them; UTF-8 cannot).
//!
//! tiktoken turns a high surrogate followed by a low one into the character the pair encodes and
//! every other surrogate into U+FFFD (its `encode("utf-16", "surrogatepass").decode("utf-16",
//! "replace")` round trip). bpekit gets `text.encode("utf-8", "surrogatepass")` from Python (each
//! surrogate as the 3-byte sequence ED A0..BF 80..BF) and joins it here in one pass; the binding
//! is `bpekit._core.fix_surrogates` (`src/py/text.rs`).

/// The surrogate code unit at the start of `b`, when `b` starts with its 3-byte encoding.
fn surrogate_at(b: &[u8]) -> Option<u32> {
    match b {
        [0xED, b1 @ 0xA0..=0xBF, b2 @ 0x80..=0xBF, ..] => Some(0xD000 | (u32::from(b1 & 0x3F) << 6) | u32::from(b2 & 0x3F)),
        _ => None,
    }
}

/// UTF-8 with surrogates encoded as 3-byte sequences → a `String`: a high + low pair becomes its
/// character, any other surrogate U+FFFD, and any other invalid sequence (which Python's encoder
/// never writes) one U+FFFD, as `String::from_utf8_lossy` does.
///
/// One validating pass (`utf8_chunks`): the loop before it ran `from_utf8` on the rest after every
/// error and again on the valid prefix, so random Unicode text was validated twice (~10% of its
/// encode time in perf). A surrogate's 3 bytes come out of `utf8_chunks` as one invalid chunk per
/// byte (ED, then a lone continuation byte, twice), never inside a valid chunk, so skipping the
/// bytes a surrogate consumed only ever skips invalid chunks.
pub fn join_surrogates(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut pos = 0; // where the current chunk starts in `bytes`
    let mut done = 0; // bytes before this are in `out`
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        out.push_str(valid);
        pos += valid.len();
        done = done.max(pos);
        let end = pos + chunk.invalid().len();
        if done < end {
            let here = &bytes[done..];
            done = match (surrogate_at(here), here.get(3..).and_then(surrogate_at)) {
                (Some(h @ 0xD800..=0xDBFF), Some(l @ 0xDC00..=0xDFFF)) => {
                    let c = 0x10000 + ((h - 0xD800) << 10) + (l - 0xDC00);
                    out.push(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
                    done + 6
                }
                (Some(_), _) => {
                    out.push(char::REPLACEMENT_CHARACTER);
                    done + 3
                }
                (None, _) => {
                    out.push(char::REPLACEMENT_CHARACTER);
                    end
                }
            };
        }
        pos = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::join_surrogates;

    /// One unit of a Python string: a character, or a lone surrogate code unit.
    #[derive(Clone, Copy)]
    enum Unit {
        Char(char),
        Surrogate(u32),
    }

    /// `units` as `str.encode("utf-8", "surrogatepass")` writes them.
    fn surrogatepass(units: &[Unit]) -> Vec<u8> {
        let mut b = Vec::new();
        for u in units {
            match *u {
                Unit::Char(c) => b.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
                Unit::Surrogate(s) => b.extend_from_slice(&[0xED, 0x80 | ((s >> 6) & 0x3F) as u8, 0x80 | (s & 0x3F) as u8]),
            }
        }
        b
    }

    /// What tiktoken's UTF-16 round trip makes of `units`: adjacent high + low surrogates join,
    /// every other surrogate is U+FFFD.
    fn expected(units: &[Unit]) -> String {
        let mut out = String::new();
        let mut i = 0;
        while i < units.len() {
            match (units[i], units.get(i + 1)) {
                (Unit::Char(c), _) => out.push(c),
                (Unit::Surrogate(h @ 0xD800..=0xDBFF), Some(&Unit::Surrogate(l @ 0xDC00..=0xDFFF))) => {
                    out.push(char::from_u32(0x10000 + ((h - 0xD800) << 10) + (l - 0xDC00)).unwrap());
                    i += 1;
                }
                (Unit::Surrogate(_), _) => out.push(char::REPLACEMENT_CHARACTER),
            }
            i += 1;
        }
        out
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
        for _ in 0..3000 {
            let n = (next() % 12) as usize;
            let units: Vec<Unit> = (0..n)
                .map(|_| match next() % 6 {
                    0 => Unit::Surrogate(0xD800 + (next() % 0x400) as u32),
                    1 => Unit::Surrogate(0xDC00 + (next() % 0x400) as u32),
                    2 => Unit::Char((b'a' + (next() % 26) as u8) as char),
                    3 => Unit::Char(char::from_u32(0x80 + (next() % 0x700) as u32).unwrap()),
                    4 => Unit::Char(char::from_u32(0xE000 + (next() % 0x1000) as u32).unwrap()),
                    _ => Unit::Char(char::from_u32(0x10000 + (next() % 0x1000) as u32).unwrap()),
                })
                .collect();
            assert_eq!(join_surrogates(&surrogatepass(&units)), expected(&units));
        }
    }

    /// Without surrogates, any bytes come out as `from_utf8_lossy` makes them.
    #[test]
    fn other_invalid_bytes_are_replaced_as_lossy_does() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..5000 {
            let n = (seed % 16) as usize;
            let bytes: Vec<u8> = (0..n)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    // Bytes likely to form (broken) sequences, never ED (a surrogate's lead byte).
                    [0x41, 0x80, 0xBF, 0xC3, 0xE2, 0xF0, 0x9F, 0xFF, 0x90][(seed % 9) as usize]
                })
                .collect();
            assert_eq!(join_surrogates(&bytes), String::from_utf8_lossy(&bytes), "{bytes:x?}");
        }
        assert_eq!(join_surrogates(b"a\xED\xA0"), "a\u{FFFD}\u{FFFD}");
        assert_eq!(join_surrogates(b"\xED\xA0\x80\xED\xB0\x80x"), "\u{10000}x");
    }
}
