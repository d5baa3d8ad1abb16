//! SentencePiece's `Normalizer::Normalize` over UTF-8 bytes (the Python reference is
//! `bpekit.formats.sentencepiece.normalizer.Normalizer`, its byte cutter and `_join`).
//!
//! The text is cut into *prefixes*: the longest user-defined piece at each point, else the
//! longest charsmap rule (its replacement, maybe empty), else one character as is (a malformed
//! byte is U+FFFD of length 1). The prefixes are joined as they are cut: with
//! `remove_extra_whitespaces`, leading `" "` prefixes are dropped, a prefix loses its leading
//! spaces after one that ended with a space, and trailing space symbols go; `' '` is written
//! `'▁'` with `escape_whitespaces`; `add_dummy_prefix` puts one space symbol in front (or at the
//! end with `treat_whitespace_as_suffix`).

use super::charsmap::CharsMap;
use super::Options;
use crate::error::Result;
use rustc_hash::FxHashSet;

pub const SPACE_SYMBOL: &str = "\u{2581}";

/// The user-defined pieces, matched longest first wherever one of their first bytes occurs.
#[derive(Default)]
pub struct UserDefined {
    pieces: FxHashSet<Box<[u8]>>,
    lengths: Vec<usize>, // byte lengths, longest first
    first: Box<[bool]>,  // 256 flags: a piece starts with this byte
}

impl UserDefined {
    pub fn new<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> UserDefined {
        let mut first = vec![false; 256].into_boxed_slice();
        let mut set: FxHashSet<Box<[u8]>> = FxHashSet::default();
        for p in pieces.into_iter().filter(|p| !p.is_empty()) {
            first[p[0] as usize] = true;
            set.insert(Box::from(p));
        }
        let mut lengths: Vec<usize> = set.iter().map(|p| p.len()).collect();
        lengths.sort_unstable_by(|a, b| b.cmp(a));
        lengths.dedup();
        UserDefined { pieces: set, lengths, first }
    }

    /// Whether a piece starts with byte `b`.
    pub fn starts_with(&self, b: u8) -> bool {
        self.first[b as usize]
    }

    /// Byte length of the longest piece at `data[pos..]`, 0 when none is there.
    #[inline]
    pub fn longest(&self, data: &[u8], pos: usize) -> usize {
        if self.pieces.is_empty() || !self.first[data[pos] as usize] {
            return 0;
        }
        let rest = data.len() - pos;
        for &len in &self.lengths {
            if len <= rest && self.pieces.contains(&data[pos..pos + len]) {
                return len;
            }
        }
        0
    }
}

pub struct Normalizer {
    charsmap: Option<CharsMap>,
    user_defined: UserDefined,
    options: Options,
    /// For each ASCII byte: when it is a prefix by itself, copied as is (not a space, no
    /// user-defined piece starts with it, and no rule matches there), given the byte after it.
    ascii: [Ascii; 128],
}

#[derive(Clone, Copy)]
enum Ascii {
    /// No rule or user-defined piece starts with it.
    Plain,
    /// Rules start with it but are longer: plain unless the next byte is in this set.
    PlainUnlessFollowedBy([u64; 4]),
    /// A space that is a prefix by itself.
    Space,
    /// A rule by itself, or a user-defined piece's first byte.
    Special,
}

impl Ascii {
    /// Whether the byte is a plain prefix when `next` (if any) follows it.
    #[inline(always)]
    fn plain_before(&self, next: Option<u8>) -> bool {
        match self {
            Ascii::Plain => true,
            Ascii::PlainUnlessFollowedBy(set) => next.map_or(true, |c| set[c as usize / 64] & (1 << (c % 64)) == 0),
            Ascii::Space | Ascii::Special => false,
        }
    }
}

/// The prefixes joined as they come (`Normalizer._join`).
struct Joiner {
    out: String,
    remove: bool,
    escape: bool,
    prev_space: bool,
    started: bool, // a prefix other than " " was seen (with `remove`)
}

impl Joiner {
    #[inline]
    fn push(&mut self, prefix: &str) {
        if self.remove && !self.started {
            if prefix == " " {
                return;
            }
            self.started = true;
        }
        let piece = if self.prev_space { prefix.trim_start_matches(' ') } else { prefix };
        if !piece.is_empty() {
            if self.escape && piece.contains(' ') {
                for (i, part) in piece.split(' ').enumerate() {
                    if i > 0 {
                        self.out.push_str(SPACE_SYMBOL);
                    }
                    self.out.push_str(part);
                }
            } else {
                self.out.push_str(piece);
            }
            self.prev_space = piece.ends_with(' ');
        }
        if !self.remove {
            self.prev_space = false;
        }
    }
}

impl Normalizer {
    pub fn new(charsmap: Option<CharsMap>, user_defined: UserDefined, options: Options) -> Normalizer {
        let mut ascii = [Ascii::Special; 128];
        for (b, kind) in ascii.iter_mut().enumerate() {
            let b = b as u8;
            if user_defined.starts_with(b) {
                continue;
            }
            let starts = match &charsmap {
                None => Some(None),
                Some(m) => m.after_first(b),
            };
            *kind = match starts {
                None => Ascii::Special, // a corrupt map: the general path reports it
                Some(None) if b == b' ' => Ascii::Space,
                Some(None) => Ascii::Plain,
                Some(Some((true, _))) => Ascii::Special,
                Some(Some((false, _))) if b == b' ' => Ascii::Special,
                Some(Some((false, follow))) => Ascii::PlainUnlessFollowedBy(follow),
            };
        }
        Normalizer { charsmap, user_defined, options, ascii }
    }

    /// The normalized text of `data`, which may be malformed UTF-8.
    pub fn normalize(&self, data: &[u8]) -> Result<String> {
        if data.is_empty() {
            return Ok(String::new());
        }
        let space = if self.options.escape_whitespaces { SPACE_SYMBOL } else { " " };
        let mut j = Joiner {
            out: String::with_capacity(data.len() + data.len() / 4 + 8),
            remove: self.options.remove_extra_whitespaces,
            escape: self.options.escape_whitespaces,
            prev_space: self.options.remove_extra_whitespaces,
            started: !self.options.remove_extra_whitespaces,
        };
        if self.options.add_dummy_prefix && !self.options.treat_whitespace_as_suffix {
            j.out.push_str(space);
        }
        let mut pos = 0;
        let n = data.len();
        while pos < n {
            // runs of ASCII that no rule touches: plain characters and single spaces
            let mut fast = false;
            while pos < n && data[pos] < 0x80 {
                let b = data[pos];
                let kind = &self.ascii[b as usize];
                if let Ascii::Space = kind {
                    // `Joiner::push(" ")`
                    if (j.started || !j.remove) && !j.prev_space {
                        j.out.push_str(space);
                        j.prev_space = j.remove;
                    }
                } else if kind.plain_before(data.get(pos + 1).copied()) {
                    j.out.push(b as char);
                    j.started = true;
                    j.prev_space = false;
                } else {
                    break;
                }
                pos += 1;
                fast = true;
            }
            if fast {
                continue;
            }
            let used = self.user_defined.longest(data, pos);
            if used > 0 {
                // a user-defined piece is a str: matched bytes are always UTF-8
                j.push(std::str::from_utf8(&data[pos..pos + used]).unwrap_or("\u{FFFD}"));
                pos += used;
                continue;
            }
            if let Some(map) = &self.charsmap {
                let (used, value) = map.longest_match(data, pos)?;
                if used > 0 {
                    j.push(map.replacement(value)?);
                    pos += used;
                    continue;
                }
            }
            let (ch, used) = one_char(data, pos);
            j.push(ch);
            pos += used;
        }
        if !j.started {
            return Ok(String::new()); // only " " prefixes: no dummy prefix either
        }
        let mut out = j.out;
        if self.options.remove_extra_whitespaces {
            let kept = out.trim_end_matches(space).len();
            out.truncate(kept);
        }
        if self.options.add_dummy_prefix && self.options.treat_whitespace_as_suffix {
            out.push_str(space);
        }
        Ok(out)
    }
}

/// The character at `data[pos]` and its length; a malformed byte is U+FFFD of length 1.
#[inline]
fn one_char(data: &[u8], pos: usize) -> (&str, usize) {
    let lead = data[pos];
    let len = match lead {
        0x00..=0x7F => 1,
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 0,
    };
    if len > 0 && pos + len <= data.len() {
        if let Ok(s) = std::str::from_utf8(&data[pos..pos + len]) {
            return (s, len);
        }
    }
    ("\u{FFFD}", 1)
}
