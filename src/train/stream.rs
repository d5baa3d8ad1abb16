//! Where a long text may be cut into chunks that are pre-tokenized separately, with exactly the
//! pieces the whole text would give.
//!
//! A *safe cut* is just after a line break `\n` whose previous character is not whitespace and
//! whose next character is a letter or digit (`a\nB`). For every built-in pattern (gpt2, cl100k,
//! o200k, llama3, qwen2) no piece contains such a `\n` followed by more text, and the `\n` is a
//! piece by itself or ends the piece before it, whether the text ends there or continues; none of
//! the patterns looks behind. Weaker rules fail: after `" \n"` GPT-2's `\s+(?!\S)` backtracks
//! differently at the end of a chunk than in the middle of the text, and o200k's
//! ` ?[^\s\p{L}\p{N}]+[\r\n/]*` runs on into a `/` after the line break. A custom pattern whose
//! pieces span such a line break would see them split; `tests/train` checks the built-in ones.
//!
//! A cut must also not fall inside a special token, which is checked against the special strings.

/// The first character of `b` if it is complete and valid UTF-8.
fn first_char(b: &[u8]) -> Option<char> {
    let n = match *b.first()? {
        x if x < 0x80 => 1,
        x if x >= 0xf0 => 4,
        x if x >= 0xe0 => 3,
        x if x >= 0xc0 => 2,
        _ => return None,
    };
    std::str::from_utf8(b.get(..n)?).ok()?.chars().next()
}

/// The last character of `b` if it is complete and valid UTF-8.
fn last_char(b: &[u8]) -> Option<char> {
    let start = b.len().saturating_sub(4);
    let tail = &b[start..];
    // the last char starts at the last non-continuation byte
    let i = tail.iter().rposition(|&x| x & 0xc0 != 0x80)?;
    let s = std::str::from_utf8(&tail[i..]).ok()?;
    let mut it = s.chars();
    let c = it.next()?;
    it.next().is_none().then_some(c)
}

/// Whether cutting `buf` at `cut` (just after a `\n` at `cut - 1`) is safe.
fn is_safe(buf: &[u8], cut: usize, specials: &[Vec<u8>]) -> bool {
    if cut < 2 || buf[cut - 1] != b'\n' {
        return false;
    }
    let before = last_char(&buf[..cut - 1]).is_some_and(|c| !c.is_whitespace());
    let after = first_char(&buf[cut..]).is_some_and(|c| c.is_alphanumeric());
    before && after && !inside_special(buf, cut, specials)
}

/// Whether some occurrence of a special string covers both `buf[cut - 1]` and `buf[cut]`.
fn inside_special(buf: &[u8], cut: usize, specials: &[Vec<u8>]) -> bool {
    specials
        .iter()
        .any(|s| (1..s.len()).any(|k| cut >= k && buf.get(cut - k..cut - k + s.len()) == Some(s.as_slice())))
}

/// The last safe cut in `buf`, if any.
pub fn last_safe_cut(buf: &[u8], specials: &[Vec<u8>]) -> Option<usize> {
    let mut end = buf.len();
    while let Some(i) = memchr::memrchr(b'\n', &buf[..end]) {
        if is_safe(buf, i + 1, specials) {
            return Some(i + 1);
        }
        end = i;
    }
    None
}

/// The first safe cut at or after `from`, if any.
pub fn next_safe_cut(buf: &[u8], from: usize, specials: &[Vec<u8>]) -> Option<usize> {
    let mut start = from.saturating_sub(1);
    while let Some(i) = memchr::memchr(b'\n', &buf[start..]) {
        let cut = start + i + 1;
        if is_safe(buf, cut, specials) {
            return Some(cut);
        }
        start = cut;
    }
    None
}

/// A cut for a text with no safe cut that has grown too long: after the last line break, or
/// else at the last character boundary. Pieces across it may differ from the uncut text.
pub fn forced_cut(buf: &[u8]) -> usize {
    if let Some(i) = memchr::memrchr(b'\n', buf) {
        if i > 0 {
            return i + 1;
        }
    }
    let mut i = buf.len();
    while i > 1 && buf[i - 1] & 0xc0 == 0x80 {
        i -= 1;
    }
    // `i - 1` starts the last character; cut before it unless that leaves nothing
    if i > 1 {
        i - 1
    } else {
        buf.len()
    }
}

/// Splits `buf` (which ends at a safe cut or at the end of a stream) into parts of about
/// `target` bytes at safe cuts.
pub fn split_at_safe_cuts<'a>(buf: &'a [u8], target: usize, specials: &[Vec<u8>]) -> Vec<&'a [u8]> {
    let mut parts = Vec::new();
    let mut start = 0;
    while buf.len() - start > target {
        match next_safe_cut(buf, start + target, specials) {
            Some(cut) if cut < buf.len() => {
                parts.push(&buf[start..cut]);
                start = cut;
            }
            _ => break,
        }
    }
    parts.push(&buf[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_cuts() {
        let none: Vec<Vec<u8>> = vec![];
        assert_eq!(last_safe_cut(b"ab\ncd", &none), Some(3));
        assert_eq!(last_safe_cut(b"ab \ncd", &none), None); // whitespace before
        assert_eq!(last_safe_cut(b"ab\n/cd", &none), None); // not alphanumeric after
        assert_eq!(last_safe_cut(b"ab\r\ncd", &none), None);
        assert_eq!(last_safe_cut("a.\n\u{e9}t\u{e9}\nx\n".as_bytes(), &none), Some(9));
        assert_eq!(last_safe_cut("\u{4e2d}\n\u{6587}".as_bytes(), &none), Some(4));
        assert_eq!(last_safe_cut(b"ab\n", &none), None); // next char unknown
        let sp = vec![b"<x\ny>".to_vec()];
        assert_eq!(last_safe_cut(b"a<x\ny>", &sp), None);
        assert_eq!(last_safe_cut(b"a<x\nyz", &sp), Some(4));
    }

    #[test]
    fn split_keeps_everything() {
        let none: Vec<Vec<u8>> = vec![];
        let text = "one line\ntwo lines\nthree\n  four\nfive".as_bytes();
        let parts = split_at_safe_cuts(text, 4, &none);
        assert_eq!(parts.concat(), text);
        assert_eq!(parts, vec![&b"one line\n"[..], b"two lines\n", b"three\n  four\n", b"five"]);
        assert_eq!(forced_cut(b"abc\ndef"), 4);
        assert_eq!(forced_cut("ab\u{e9}".as_bytes()), 2);
    }
}
