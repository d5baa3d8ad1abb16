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
        self.normalize_keeping(data, &mut ())
    }

    /// The normalized text of `data` and, for each of its bytes and once more at its end, the
    /// byte of `data` it comes from: sentencepiece's `norm_to_orig`, for offsets (the Python
    /// reference is `Normalizer.normalize_with_origins`, in chars). A byte that a rule or a
    /// user-defined piece writes comes from where that prefix starts; the dummy prefix from the
    /// first prefix kept (after the leading spaces removed); the end is the input consumed, or,
    /// when trailing spaces are removed, where the first of them came from.
    pub fn normalize_with_origins(&self, data: &[u8]) -> Result<(String, Vec<u32>)> {
        let mut origins = Vec::with_capacity(data.len() + data.len() / 4 + 8);
        let out = self.normalize_keeping(data, &mut origins)?;
        Ok((out, origins))
    }

    /// [`Normalizer::normalize`], keeping origins in `kept` (`()` keeps none: the same code as
    /// without them).
    fn normalize_keeping<O: Origins>(&self, data: &[u8], kept: &mut O) -> Result<String> {
        if data.is_empty() {
            kept.end(0, 0);
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
        let dummy = j.out.len(); // its origin is the first prefix kept: filled in below
        kept.extend(0, dummy);
        let mut first = 0; // where that prefix starts
        let mut pos = 0;
        let n = data.len();
        while pos < n {
            // runs of ASCII that no rule touches: plain characters and single spaces
            let mut fast = false;
            while pos < n && data[pos] < 0x80 {
                let b = data[pos];
                let kind = &self.ascii[b as usize];
                let before = j.out.len();
                if let Ascii::Space = kind {
                    // `Joiner::push(" ")`
                    if (j.started || !j.remove) && !j.prev_space {
                        j.out.push_str(space);
                        j.prev_space = j.remove;
                    }
                } else if kind.plain_before(data.get(pos + 1).copied()) {
                    j.out.push(b as char);
                    if O::KEEP && !j.started {
                        first = pos;
                    }
                    j.started = true;
                    j.prev_space = false;
                } else {
                    break;
                }
                kept.extend(pos, j.out.len() - before);
                pos += 1;
                fast = true;
            }
            if fast {
                continue;
            }
            let (before, started) = (j.out.len(), j.started);
            let used = self.user_defined.longest(data, pos);
            let used = if used > 0 {
                // a user-defined piece is a str: matched bytes are always UTF-8
                j.push(std::str::from_utf8(&data[pos..pos + used]).unwrap_or("\u{FFFD}"));
                used
            } else {
                match &self.charsmap {
                    Some(map) => match map.longest_match(data, pos)? {
                        (0, _) => 0,
                        (used, value) => {
                            j.push(map.replacement(value)?);
                            used
                        }
                    },
                    None => 0,
                }
            };
            let used = if used > 0 {
                used
            } else {
                let (ch, used) = one_char(data, pos);
                j.push(ch);
                used
            };
            if O::KEEP && j.started && !started {
                first = pos;
            }
            kept.extend(pos, j.out.len() - before);
            pos += used;
        }
        if !j.started {
            kept.end(0, n);
            return Ok(String::new()); // only " " prefixes: no dummy prefix either
        }
        kept.fill(..dummy, first);
        let mut out = j.out;
        let mut end = n;
        if self.options.remove_extra_whitespaces {
            let kept_len = out.trim_end_matches(space).len();
            if kept_len < out.len() {
                end = kept.at(kept_len);
                out.truncate(kept_len);
            }
        }
        if self.options.add_dummy_prefix && self.options.treat_whitespace_as_suffix {
            out.push_str(space); // (from the end, as the end itself)
        }
        kept.end(out.len(), end);
        Ok(out)
    }
}

/// Where [`Normalizer::normalize_keeping`] writes each output byte's origin (an input byte).
trait Origins {
    /// Whether origins are kept at all (`()` keeps none).
    const KEEP: bool;
    /// `bytes` more output bytes come from `origin`.
    fn extend(&mut self, origin: usize, bytes: usize);
    /// The first `range.end` output bytes come from `origin`.
    fn fill(&mut self, range: std::ops::RangeTo<usize>, origin: usize);
    /// The origin of output byte `at`.
    fn at(&self, at: usize) -> usize;
    /// The output ends after `len` bytes: origins past the first `len` kept are dropped, and
    /// the bytes from there to `len`, and the end, come from `origin`.
    fn end(&mut self, len: usize, origin: usize);
}

impl Origins for () {
    const KEEP: bool = false;
    #[inline(always)]
    fn extend(&mut self, _: usize, _: usize) {}
    #[inline(always)]
    fn fill(&mut self, _: std::ops::RangeTo<usize>, _: usize) {}
    #[inline(always)]
    fn at(&self, _: usize) -> usize {
        0
    }
    #[inline(always)]
    fn end(&mut self, _: usize, _: usize) {}
}

impl Origins for Vec<u32> {
    const KEEP: bool = true;
    #[inline]
    fn extend(&mut self, origin: usize, bytes: usize) {
        self.resize(self.len() + bytes, origin as u32);
    }
    fn fill(&mut self, range: std::ops::RangeTo<usize>, origin: usize) {
        self[range].fill(origin as u32);
    }
    fn at(&self, at: usize) -> usize {
        self[at] as usize
    }
    fn end(&mut self, len: usize, origin: usize) {
        self.truncate(len);
        self.resize(len + 1, origin as u32);
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
