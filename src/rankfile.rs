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
pub fn parse(data: &[u8], source: &str) -> Result<Ranks> {
    let mut ranks = Ranks::with_capacity_and_hasher(data.len() / 12, Default::default());
    let mut lineno = 0usize;
    for line in data.split(|&b| b == b'\n') {
        lineno += 1;
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
            ranks.insert(token, rank);
        }
    }
    Ok(ranks)
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
    }
}
