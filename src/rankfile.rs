//! The `.tiktoken` rank file: one `base64(token) rank` line per token.
//!
//! Performance note: parsing o200k_base's 200k lines here instead of in Python (base64 module +
//! dict) makes `get_encoding` several times faster to load.

use crate::error::{Error, Result};
use crate::merge::Ranks;
use crate::vocab::Rank;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;

/// Parses a rank file. Lines are split as Python's `bytes.splitlines` does; empty lines are
/// skipped; a repeated token keeps its last rank (as tiktoken does).
///
/// Performance note: almost every line is exactly `base64 SP digits`. Those take a fast path
/// (memchr for line ends and the space, base64 decoded into a stack buffer, then one exact-size
/// allocation, digits folded by hand); anything else (CR line ends, tabs, extra fields, a sign,
/// bad base64) goes through the general parser, which also writes the error messages.
///
/// Performance note 2 (twelfth round): `get_encoding` reads the file with [`parse_flat`] instead,
/// the tokens back to back in one buffer and no map: 200k `Vec`s hashed into a map (and freed
/// with it) were most of o200k's load. `examples/load_bench.rs`, o200k, best of 5: parse 16–19 ms
/// -> 6.4–6.7 ms, the encoder's tables 16–19 ms -> 4.0 ms (the decode table is the file's bytes;
/// the lookup tables are filled in file order, not in a map's scattered order).
pub fn parse(data: &[u8], source: &str) -> Result<Ranks> {
    Ok(parse_flat(data, source)?.to_map())
}

/// A rank file's tokens in file order, their bytes back to back: what [`parse`] reads, before
/// any hashing (a repeated token is still there twice).
#[derive(Debug, Default, Clone)]
pub struct Flat {
    pub bytes: Vec<u8>,
    /// `(start, length, rank)` of each line's token in `bytes`.
    pub tokens: Vec<(u32, u32, Rank)>,
}

impl Flat {
    /// Appends one line's token and rank.
    #[inline]
    fn push(&mut self, token: &[u8], rank: Rank) {
        self.tokens.push((self.bytes.len() as u32, token.len() as u32, rank));
        self.bytes.extend_from_slice(token);
    }

    /// Every `(token, rank)`, in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], Rank)> + Clone {
        self.tokens.iter().map(|&(s, n, r)| (&self.bytes[s as usize..(s + n) as usize], r))
    }

    /// As a map; a repeated token keeps its last rank (as tiktoken's dict does).
    pub fn to_map(&self) -> Ranks {
        let mut ranks = Ranks::with_capacity_and_hasher(self.tokens.len(), Default::default());
        for (t, r) in self.iter() {
            ranks.insert(t.to_vec(), r);
        }
        ranks
    }
}

/// Parses a rank file into its tokens in file order (see [`parse`] for the rules), without a
/// hash map or an allocation per token: `Vocab::from_flat` builds its tables from this.
pub fn parse_flat(data: &[u8], source: &str) -> Result<Flat> {
    let n_lines = memchr::memchr_iter(b'\n', data).count() + 1;
    if data.len() > u32::MAX as usize {
        return Err(Error::Format(format!("{source}: a rank file over 4 GiB")));
    }
    // base64 decodes to at most 3/4 of its size
    let mut flat = Flat { bytes: Vec::with_capacity(data.len() / 4 * 3 + 3), tokens: Vec::with_capacity(n_lines) };
    let mut scratch = [0u8; FAST_MAX_TOKEN];
    let mut lineno = 0usize;
    let mut rest = data;
    while !rest.is_empty() {
        let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        let line = &rest[..end];
        rest = rest.get(end + 1..).unwrap_or(&[]);
        lineno += 1;
        if let Some((len, rank)) = fast_line(line, &mut scratch) {
            flat.push(&scratch[..len], rank);
        } else {
            general_line(line, lineno, source, &mut flat)?;
        }
    }
    Ok(flat)
}

/// Longest token (in bytes) the fast path decodes; longer ones take the general path.
const FAST_MAX_TOKEN: usize = 96;

/// `base64 SP digits` with a non-empty token: its decoded length (in `out`) and rank.
#[inline]
fn fast_line(line: &[u8], out: &mut [u8; FAST_MAX_TOKEN]) -> Option<(usize, Rank)> {
    let sp = memchr::memchr(b' ', line)?;
    let (tok, digits) = (&line[..sp], &line[sp + 1..]);
    if tok.is_empty() || tok.len() > FAST_MAX_TOKEN / 3 * 4 || digits.is_empty() || digits.len() > 10 {
        return None;
    }
    let mut rank: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        rank = rank * 10 + u64::from(d - b'0');
    }
    let rank = Rank::try_from(rank).ok()?;
    let len = STANDARD.decode_slice(tok, out).ok()?;
    (len > 0).then_some((len, rank))
}

/// One line in full generality: `\r` also breaks lines, fields are split on any ASCII whitespace.
fn general_line(line: &[u8], lineno: usize, source: &str, flat: &mut Flat) -> Result<()> {
    // `\r\n` and lone `\r` are line breaks too
    for line in line.split(|&b| b == b'\r') {
        if line.is_empty() {
            continue;
        }
        let mut fields = line.split(|b| b.is_ascii_whitespace()).filter(|f| !f.is_empty());
        let (tok, rank) = match (fields.next(), fields.next(), fields.next()) {
            (Some(t), Some(r), None) => (t, r),
            (None, None, None) => continue,
            _ => return Err(bad(line, lineno, source, "expected `base64-token rank`")),
        };
        let token = STANDARD
            .decode(tok)
            .map_err(|e| bad(line, lineno, source, &format!("invalid base64 ({e})")))?;
        if token.is_empty() {
            return Err(bad(line, lineno, source, "the token is empty"));
        }
        let rank: Rank = std::str::from_utf8(rank)
            .ok()
            .and_then(|r| r.parse().ok())
            .ok_or_else(|| bad(line, lineno, source, "the rank is not an integer in 0..2^32"))?;
        flat.push(&token, rank);
    }
    Ok(())
}

fn bad(line: &[u8], lineno: usize, source: &str, why: &str) -> Error {
    let shown: String = String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned();
    Error::Format(format!("Error parsing line {lineno} {shown:?} in {source}: {why}"))
}

/// Serializes ranks as a rank file: sorted by rank, LF line ends, final LF.
pub fn dump(ranks: &Ranks) -> Vec<u8> {
    let mut items: Vec<(&Vec<u8>, Rank)> = ranks.iter().map(|(k, &v)| (k, v)).collect();
    items.sort_by_key(|x| x.1);
    let mut out = Vec::with_capacity(items.len() * 16);
    for (tok, rank) in items {
        out.extend_from_slice(STANDARD.encode(tok).as_bytes());
        out.push(b' ');
        out.extend_from_slice(rank.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let data = b"IQ== 0\r\nIg== 1\n\naGVsbG8= 2\n";
        let r = parse(data, "t").unwrap();
        assert_eq!(r[b"hello".as_slice()], 2);
        assert_eq!(dump(&r), b"IQ== 0\nIg== 1\naGVsbG8= 2\n");
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse(b"IQ== 0\nnot-a-line\n", "f.tiktoken").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        assert!(parse(b"IQ== x\n", "f").is_err());
        assert!(parse(b"@@@ 1\n", "f").is_err());
        assert!(parse(b"IQ== 4294967296\n", "f").is_err());
        assert!(parse(b"= 1\n", "f").unwrap_err().to_string().contains("line 1"));
    }

    #[test]
    fn fast_and_general_paths_agree() {
        // fast: plain lines; general: CRLF, tabs, a signed rank, a token longer than the fast
        // path's buffer, trailing spaces; the last rank of a repeated token wins
        let long = vec![b'x'; 200];
        let mut data = b"IQ== 0\r\nIg==\t1\naGVsbG8= +2\nIQ== 3  \n".to_vec();
        data.extend_from_slice(format!("{} 4294967295\nIQ== 5", STANDARD.encode(&long)).as_bytes());
        let r = parse(&data, "t").unwrap();
        assert_eq!(r.len(), 4);
        assert_eq!(r[b"!".as_slice()], 5);
        assert_eq!(r[b"\"".as_slice()], 1);
        assert_eq!(r[b"hello".as_slice()], 2);
        assert_eq!(r[long.as_slice()], u32::MAX);
        let mut fast = [0u8; FAST_MAX_TOKEN];
        assert_eq!(fast_line(b"aGVsbG8= 7", &mut fast), Some((5, 7)));
        assert_eq!(fast_line(b"aGVsbG8= +7", &mut fast), None);
        assert_eq!(fast_line(b"aGVsbG8=\t7", &mut fast), None);
    }
}
