//! UTF-8 of text known to be valid (it comes from a `&str`), read byte by byte in the hot loops.

/// The code point and byte length of the multi-byte char at `i` (lead byte >= 0x80).
///
/// `b` is valid UTF-8 and `i` a char boundary: the splitters get their bytes from a `&str` and
/// step from char boundary to char boundary. (Unchecked indexing here measured no faster, so the
/// bounds checks stay.)
#[inline(always)]
pub fn decode_multi(b: &[u8], i: usize) -> (u32, usize) {
    let x = b[i] as u32;
    let cont = |k: usize| (b[i + k] & 0x3F) as u32;
    if x < 0xE0 {
        (((x & 0x1F) << 6) | cont(1), 2)
    } else if x < 0xF0 {
        (((x & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3)
    } else {
        (((x & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3), 4)
    }
}

/// The byte length of the char whose first byte is `lead` (4 for a byte that leads no char: the
/// SentencePiece encoder, which may see raw bytes, relies on it).
#[inline(always)]
pub fn len_of(lead: u8) -> usize {
    match lead {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// The start of the char that ends at byte `i` (`i > 0`, a char boundary).
#[inline(always)]
pub fn char_before(b: &[u8], mut i: usize) -> usize {
    i -= 1;
    while b[i] & 0xC0 == 0x80 {
        i -= 1;
    }
    i
}
