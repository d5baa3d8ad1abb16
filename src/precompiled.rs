//! Hugging Face's `Precompiled` normalizer: a SentencePiece `precompiled_charsmap`
//! ([`CharsMap`]) applied the way `tokenizers` applies it, which is not the way SentencePiece
//! does (SentencePiece takes the longest rule at each position).
//!
//! `tokenizers` walks the text's extended grapheme clusters (the `unicode-segmentation` crate).
//! A cluster of fewer than 6 bytes is looked up whole: the *first* (shortest) key of the trie
//! that prefixes it, if there is one, replaces the *whole* cluster (so `Ａ` + U+0301 becomes
//! `A`: the rule for `Ａ` drops the mark). Otherwise each character of the cluster is looked up
//! alone and replaced by its key's string, or kept. A lookup stops at a NUL byte (no key
//! continues over one). Offsets (tokenizers 0.23.3, found by its offsets on made-up maps: the
//! source of an older release gives other changes): each character gets a change for
//! `NormalizedString::transform` (`bpekit.pipeline.aligned`). The characters of a replacement
//! pair up with the old ones (0); the last new one also removes the old ones left over (`-k`);
//! new ones left over are inserted (1). A replacement by nothing lowers the change of the
//! character before by the number deleted; at the start of the text, where there is none, the
//! deletion is not counted (the next character then takes the span of the first deleted one).
//!
//! Speed: most text has no character where a key starts, and then needs no clusters at all. A
//! scan finds the next position where some key matches (a table for the first byte, the trie for
//! the rest); only around it is the text cut into clusters, from the last cluster boundary before
//! it where an ASCII character starts (the cutting then goes as from the text's start) to the
//! first such boundary after it.
//!
//! The blob is checked whole when it is read ([`Precompiled::new`]), so normalizing cannot fail:
//! `tokenizers` itself only refuses a blob too short for its trie or a pool that is not UTF-8,
//! and panics later on a trie that leads outside itself; here that is an [`Error::Format`] at
//! once.

use crate::error::{Error, Result};
use crate::sentencepiece::charsmap::CharsMap;
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use unicode_segmentation::{GraphemeCursor, UnicodeSegmentation};

/// What a lookup that starts with a given byte does after that byte.
#[derive(Clone, Copy, Debug)]
enum First {
    /// No key starts with it (or it cannot start a lookup: NUL, a UTF-8 continuation byte).
    None,
    /// It is a key by itself: the value (the first match of every lookup that starts with it).
    Key(usize),
    /// Keys go on from this node.
    Node(usize),
}

/// A `Precompiled` normalizer: its blob, read and checked.
pub struct Precompiled {
    blob: Vec<u8>,
    map: CharsMap,
    first: Box<[First; 256]>,
    /// Each key's value -> its replacement and the replacement's length in characters.
    replacements: FxHashMap<usize, (Box<str>, usize)>,
}

impl std::fmt::Debug for Precompiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Precompiled({} bytes)", self.blob.len())
    }
}

impl PartialEq for Precompiled {
    fn eq(&self, other: &Precompiled) -> bool {
        self.blob == other.blob
    }
}

impl Eq for Precompiled {}

impl Precompiled {
    /// Reads a `precompiled_charsmap` blob (the bytes, base64 decoded). [`Error::Format`] where
    /// `tokenizers` refuses it (shorter than its trie, a pool that is not UTF-8), and where a
    /// lookup would leave the trie or find no string (`tokenizers` would panic there), and for
    /// a trie size that is not a whole number of 4-byte units (`tokenizers` would read the pool
    /// from another offset than SentencePiece; no real map has one).
    pub fn new(blob: &[u8]) -> Result<Precompiled> {
        let map = CharsMap::new(blob)?;
        let trie_size = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
        if trie_size % 4 != 0 {
            return Err(Error::Format(format!(
                "precompiled_charsmap is broken: trie size {trie_size} is not a whole number of 4-byte units"
            )));
        }
        if 4 + trie_size > blob.len() {
            return Err(Error::Format(format!(
                "precompiled_charsmap is broken: its {trie_size}-byte trie runs past the end of the {}-byte blob",
                blob.len()
            )));
        }
        if let Err(e) = std::str::from_utf8(&blob[4 + trie_size..]) {
            return Err(Error::Format(format!(
                "precompiled_charsmap is broken: its string pool is not UTF-8 ({e})"
            )));
        }
        let mut replacements = FxHashMap::default();
        map.check_reachable(|value, s| {
            replacements.insert(value, (Box::from(s), s.chars().count()));
        })?;
        let mut first = Box::new([First::None; 256]);
        for b in (1..0x80u8).chain(0xC0..=0xFF) {
            first[b as usize] = match map.step(map.root(), b)? {
                None => First::None,
                Some((_, Some(value))) => First::Key(value),
                Some((next, None)) => First::Node(next),
            };
        }
        Ok(Precompiled { blob: blob.to_vec(), map, first, replacements })
    }

    /// The blob it was read from.
    pub fn blob(&self) -> &[u8] {
        &self.blob
    }

    /// Whether every ASCII text is its own normal form (no key starts with an ASCII byte).
    pub fn ascii_invariant(&self) -> bool {
        self.first[..0x80].iter().all(|f| matches!(f, First::None))
    }

    /// The value of the first (shortest) key that prefixes `bytes`, as `tokenizers`'
    /// `transform` finds it: a common-prefix search that stops at a NUL byte.
    #[inline]
    fn first_match(&self, bytes: &[u8]) -> Option<usize> {
        let mut node = match self.first[*bytes.first()? as usize] {
            First::None => return None,
            First::Key(value) => return Some(value),
            First::Node(node) => node,
        };
        for &c in &bytes[1..] {
            if c == 0 {
                return None;
            }
            // (every node a lookup reaches was checked in `new`: an error cannot come)
            match self.map.step(node, c).ok()?? {
                (_, Some(value)) => return Some(value),
                (next, None) => node = next,
            }
        }
        None
    }

    /// The first position from `from` where a key starts (so that some lookup there may match);
    /// only character starts can be one (the table has nothing for continuation bytes).
    fn next_key(&self, bytes: &[u8], from: usize) -> Option<usize> {
        (from..bytes.len()).find(|&at| {
            !matches!(self.first[bytes[at] as usize], First::None) && self.first_match(&bytes[at..]).is_some()
        })
    }

    fn replacement(&self, value: usize) -> (&str, usize) {
        // (`new` stored the replacement of every key a lookup can reach)
        self.replacements.get(&value).map_or(("", 0), |(s, n)| (s, *n))
    }

    /// `text` normalized: borrowed when nothing changes.
    pub fn normalize<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.run(text, None)
    }

    /// `text` normalized, with the change of each of its characters pushed on `changes`
    /// (cleared first; left empty when nothing changes, and the text borrowed).
    pub fn normalize_changes<'a>(&self, text: &'a str, changes: &mut Vec<isize>) -> Cow<'a, str> {
        changes.clear();
        self.run(text, Some(changes))
    }

    fn run<'a>(&self, text: &'a str, changes: Option<&mut Vec<isize>>) -> Cow<'a, str> {
        let bytes = text.as_bytes();
        let mut out = Out { text, out: String::new(), copied: 0, started: false, changes };
        let mut pos = 0; // where the scan goes on: 0 or a point no cluster crosses
        while let Some(at) = self.next_key(bytes, pos) {
            let mut start = at;
            while start > pos && !(text.is_char_boundary(start) && restart_point(text, start)) {
                start -= 1;
            }
            let mut end = start;
            for cluster in text[start..].graphemes(true) {
                self.cluster(&mut out, end, cluster);
                end += cluster.len();
                // (a cluster's end before a plain character is a restart point)
                if end > at && text[end..].chars().next().map_or(true, plain) {
                    break;
                }
            }
            pos = end;
        }
        out.finish()
    }

    /// One cluster at byte `at` of the text, as `tokenizers` normalizes it.
    fn cluster(&self, out: &mut Out<'_, '_>, at: usize, cluster: &str) {
        let bytes = cluster.as_bytes();
        if bytes.len() < 6 {
            if let Some(value) = self.first_match(bytes) {
                let old = cluster.chars().count();
                out.replace(at, at + bytes.len(), old, self.replacement(value));
                return;
            }
        }
        for (i, c) in cluster.char_indices() {
            let len = c.len_utf8();
            if let Some(value) = self.first_match(&bytes[i..i + len]) {
                out.replace(at + i, at + i + len, 1, self.replacement(value));
            }
        }
    }
}

/// Whether the text can be cut into clusters from byte `at` (`0 < at < len`, a character
/// boundary) on, as from its start: `at` is a cluster boundary before a [`plain`] character.
/// Between two ASCII characters there is one unless they are CR LF (UAX #29 GB3); elsewhere
/// `unicode-segmentation` says (there is none after a Prepend character, GB9b, nor before a
/// Hangul syllable after a leading jamo, GB6, ...).
#[inline]
fn restart_point(text: &str, at: usize) -> bool {
    let bytes = text.as_bytes();
    let (a, b) = (bytes[at - 1], bytes[at]);
    if a < 0x80 && b < 0x80 {
        return !(a == b'\r' && b == b'\n');
    }
    text[at..].chars().next().is_some_and(plain) && GraphemeCursor::new(at, text.len(), true).is_boundary(text, 0).unwrap_or(false)
}

/// A character that no cluster rule looks back over, so that cutting may start before it: the
/// rules that look back further than one character (GB9c Indic conjuncts, GB11 emoji ZWJ
/// sequences, GB12 and GB13 regional indicator pairs) go back only over extending characters,
/// joiners, regional indicators, Extended_Pictographic and Indic consonants. These are of none
/// of them (Grapheme_Cluster_Break Other or Control, as `tests::plain_characters_are_plain`
/// checks against the crate): ASCII, Thai consonants, Hiragana and Katakana letters, CJK
/// ideographs, full-width ASCII forms (the scripts that have no spaces between words).
#[inline]
fn plain(c: char) -> bool {
    matches!(c, '\0'..='\u{7f}' | '\u{e01}'..='\u{e2e}' | '\u{3041}'..='\u{3096}' | '\u{30a1}'..='\u{30fa}' | '\u{4e00}'..='\u{9fff}' | '\u{ff01}'..='\u{ff5e}')
}

/// The normalized text, built only once something changes.
struct Out<'t, 'c> {
    text: &'t str,
    out: String,
    copied: usize,
    started: bool,
    changes: Option<&'c mut Vec<isize>>,
}

impl<'t> Out<'t, '_> {
    /// `text[start..end]` (`old` characters) replaced by `new` (`n` characters).
    fn replace(&mut self, start: usize, end: usize, old: usize, (new, n): (&str, usize)) {
        if !self.started {
            self.started = true;
            self.out.reserve(self.text.len() + self.text.len() / 8);
        }
        self.copy_to(start);
        self.out.push_str(new);
        if let Some(changes) = self.changes.as_deref_mut() {
            if n == 0 {
                // a deletion: the character before removes the old ones (none at the start: the
                // next character then takes the span of the first one deleted, as there)
                if let Some(last) = changes.last_mut() {
                    *last -= old as isize;
                }
            } else {
                // the new characters pair up with the old ones; the last takes any old ones left
                // over with it, and any new ones left over are inserted after it
                let surplus = old.saturating_sub(n) as isize;
                changes.extend((0..n).map(|i| match i {
                    i if i >= old => 1,
                    i if i + 1 == n => -surplus,
                    _ => 0,
                }));
            }
        }
        self.copied = end;
    }

    fn copy_to(&mut self, at: usize) {
        let kept = &self.text[self.copied..at];
        self.out.push_str(kept);
        if let Some(changes) = self.changes.as_deref_mut() {
            let chars = kept.bytes().filter(|&b| (b as i8) >= -0x40).count();
            changes.resize(changes.len() + chars, 0);
        }
    }

    fn finish(mut self) -> Cow<'t, str> {
        if !self.started {
            return Cow::Borrowed(self.text);
        }
        self.copy_to(self.text.len());
        Cow::Owned(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A blob in the Darts-clone layout for the given (key, replacement) rules, built by a
    /// plain trie packer (a test helper: one 256-unit block per node).
    fn blob(rules: &[(&str, &str)]) -> Vec<u8> {
        // nodes: children by byte, and the pool offset of the key ending there
        struct Node {
            children: Vec<(u8, usize)>,
            value: Option<u32>,
        }
        let mut pool = Vec::new();
        let mut nodes = vec![Node { children: vec![], value: None }];
        for (key, rep) in rules {
            let mut at = 0;
            for &b in key.as_bytes() {
                at = match nodes[at].children.iter().find(|(c, _)| *c == b) {
                    Some(&(_, n)) => n,
                    None => {
                        nodes.push(Node { children: vec![], value: None });
                        let n = nodes.len() - 1;
                        nodes[at].children.push((b, n));
                        n
                    }
                };
            }
            nodes[at].value = Some(pool.len() as u32);
            pool.extend_from_slice(rep.as_bytes());
            pool.push(0);
        }
        // node k's children live in block k + 1 (its base is 256 * (k + 1)); the leaf value of
        // a node sits at its own base (label 0 is never a key byte here)
        let mut units = vec![0u32; 256 * (nodes.len() + 1)];
        let base = |k: usize| 256 * (k + 1);
        let unit = |offset: usize, label: u32, leaf: bool| ((offset as u32) << 10) | label | if leaf { 1 << 8 } else { 0 };
        units[0] = unit(base(0), 0, false);
        for (k, node) in nodes.iter().enumerate() {
            for &(b, child) in &node.children {
                let at = base(k) ^ b as usize;
                units[at] = unit(at ^ base(child), b as u32, nodes[child].value.is_some());
            }
            if let Some(v) = node.value {
                units[base(k)] = v | 0x8000_0000;
            }
        }
        let mut out = ((units.len() * 4) as u32).to_le_bytes().to_vec();
        for u in units {
            out.extend_from_slice(&u.to_le_bytes());
        }
        out.extend(pool);
        out
    }

    fn norm(p: &Precompiled, text: &str) -> (String, Vec<isize>) {
        let mut changes = vec![];
        let out = p.normalize_changes(text, &mut changes).into_owned();
        assert_eq!(p.normalize(text), out);
        (out, changes)
    }

    #[test]
    fn first_key_replaces_the_whole_cluster() {
        let p = Precompiled::new(&blob(&[("A", "a"), ("Ab", "X"), ("e\u{301}", "\u{e9}"), ("x", "")])).unwrap();
        // "A" + U+0301 (3 bytes) is one cluster: the rule for "A" replaces it whole
        assert_eq!(norm(&p, "A\u{301}"), ("a".into(), vec![-1]));
        // "Ab" are two clusters: "A" alone, then "b"
        assert_eq!(norm(&p, "Ab"), ("ab".into(), vec![0, 0]));
        // 5 bytes: whole; 7 bytes: each char alone ("A" yes, the marks no)
        assert_eq!(norm(&p, "A\u{301}\u{301}").0, "a");
        assert_eq!(norm(&p, "A\u{301}\u{301}\u{301}"), ("a\u{301}\u{301}\u{301}".into(), vec![0, 0, 0, 0]));
        assert_eq!(norm(&p, "e\u{301}"), ("\u{e9}".into(), vec![-1]));
        assert_eq!(norm(&p, "e\u{301}\u{302}"), ("\u{e9}".into(), vec![-2]));
        // a deletion: the character before removes it; at the start nothing does
        assert_eq!(norm(&p, "axb"), ("ab".into(), vec![-1, 0]));
        assert_eq!(norm(&p, "axxb"), ("ab".into(), vec![-2, 0]));
        assert_eq!(norm(&p, "xxab"), ("ab".into(), vec![0, 0]));
        assert!(matches!(p.normalize("plain Bb"), Cow::Borrowed(_)));
        let mut changes = vec![7];
        assert!(matches!(p.normalize_changes("plain", &mut changes), Cow::Borrowed(_)));
        assert!(changes.is_empty());
        assert!(!p.ascii_invariant());
    }

    #[test]
    fn growing_replacements_and_nul() {
        let p = Precompiled::new(&blob(&[("\u{fb01}", "fi"), ("\u{2474}", "(1)"), ("a\u{0}", "Z"), ("z", "XY")])).unwrap();
        assert_eq!(norm(&p, "\u{fb01}x\u{2474}"), ("fix(1)".into(), vec![0, 1, 0, 0, 1, 1]));
        // two new characters for one, two, three old ones
        assert_eq!(norm(&p, "z").1, vec![0, 1]);
        assert_eq!(norm(&p, "z\u{301}").1, vec![0, 0]);
        assert_eq!(norm(&p, "z\u{301}\u{302}").1, vec![0, -1]);
        // no lookup goes over a NUL byte, nor starts at one
        assert_eq!(norm(&p, "a\u{0}").0, "a\u{0}");
        assert!(!p.ascii_invariant() || p.normalize("a\u{0}b") == "a\u{0}b");
        let q = Precompiled::new(&blob(&[("\u{e9}", "e")])).unwrap();
        assert!(q.ascii_invariant());
    }

    #[test]
    fn clusters_across_the_scan_windows() {
        // regional indicators pair up from the start of their run, wherever the key is
        let ri = "\u{1f1e6}";
        let p = Precompiled::new(&blob(&[(ri, "R"), ("\u{1f1e7}", "B")])).unwrap();
        // a pair is 8 bytes: each char alone
        assert_eq!(p.normalize(&format!("x{ri}{ri}{ri}y")), "xRRRy");
        let q = Precompiled::new(&blob(&[("\u{300}", "M")])).unwrap();
        // a mark alone after CR LF, after ASCII, after a long cluster
        for (text, want) in [("\r\n\u{300}", "\r\nM"), ("ab\u{300}c", "abMc"), ("\u{300}", "M")] {
            assert_eq!(q.normalize(text), want, "{text:?}");
        }
    }

    /// At a restart point the clusters of the rest are those of the whole text.
    #[test]
    fn restart_points_cut_as_the_whole_text() {
        let texts = [
            "a\u{600}b \u{600} c\r\nd\u{ac00} e\u{301}f\u{1f1e6}\u{1f1e6}\u{1f1e6}g\u{915}\u{94d}h",
            "\u{1f468}\u{200d}a\u{200d}\u{1f469} \u{1f1e6}a\u{1f1e6} \u{915}\u{94d}\u{200d}x\u{915} \u{110bd}1\u{d4e}2",
            "\r\n\r\r\n\n\u{301}\u{200d}\u{903}a\u{903}\u{1100}\u{1161}b\u{11a8}",
        ];
        let mut restarts = 0;
        for text in texts {
            let whole: Vec<&str> = text.graphemes(true).collect();
            for at in 1..text.len() {
                if text.is_char_boundary(at) && restart_point(text, at) {
                    restarts += 1;
                    let mut cut: Vec<&str> = text[..at].graphemes(true).collect();
                    cut.extend(text[at..].graphemes(true));
                    assert_eq!(cut, whole, "{text:?} at {at}");
                }
            }
        }
        assert!(restarts >= 20, "{restarts}");
        // none after a Prepend character, nor between CR and LF, nor before a mark
        assert!(!restart_point("\u{600}a", 2) && !restart_point("\r\n", 1) && !restart_point("a\u{301}", 1));
        assert!(restart_point("\u{ac00} ", 3) && restart_point("ab", 1) && restart_point("\u{ac00}\u{4e00}", 3));
    }

    /// Every [`plain`] character clusters with each kind of neighbour as `a` does (so it is of
    /// no kind that a rule looks back over), by the crate itself.
    #[test]
    fn plain_characters_are_plain() {
        let neighbours = [
            "\r", "\n", "\u{1}", "\u{301}", "\u{200d}", "\u{903}", "\u{1f1e6}", "\u{600}", "\u{1100}", "\u{1161}", "\u{11a8}",
            "\u{ac00}", "\u{ac01}", "\u{a9}", "\u{a9}\u{200d}", "\u{915}", "\u{915}\u{94d}", "\u{94d}", "\u{e33}", "\u{1f1e6}\u{1f1e6}\u{1f1e6}",
        ];
        let count = |s: &str| s.graphemes(true).count();
        let mut n = 0;
        for c in (0..=0x10FFFF).filter_map(char::from_u32).filter(|&c| plain(c)) {
            n += 1;
            // (a control as the control U+0001; CR and LF, which only GB3 joins, as themselves)
            let like = match c {
                '\r' | '\n' => c,
                c if c.is_ascii_control() => '\u{1}',
                _ => 'a',
            };
            for q in neighbours {
                assert_eq!(count(&format!("{q}{c}")), count(&format!("{q}{like}")), "{q:?} {c:?}");
                assert_eq!(count(&format!("{c}{q}")), count(&format!("{like}{q}")), "{c:?} {q:?}");
            }
        }
        assert_eq!(n, 128 + 46 + 86 + 90 + 20992 + 94);
    }

    #[test]
    fn corrupt_blobs_are_format_errors() {
        let good = blob(&[("a", "b"), ("\u{e9}", "e")]);
        assert!(Precompiled::new(&good).is_ok());
        let mut odd = good.clone();
        odd[0] += 2;
        let trie_size = u32::from_le_bytes([good[0], good[1], good[2], good[3]]) as usize;
        let past = good[..trie_size + 1].to_vec(); // (the reader of sentencepiece's maps takes it)
        assert!(CharsMap::new(&past).is_ok());
        let mut bad_pool = good.clone();
        let last = bad_pool.len() - 2;
        bad_pool[last] = 0xFF;
        let mut no_nul = good.clone();
        no_nul.pop();
        let mut wild = good.clone();
        // the root's unit sends lookups to a block outside the trie
        wild[4..8].copy_from_slice(&(1u32 << 30).to_le_bytes());
        for (what, b) in [("odd", odd), ("past", past), ("pool", bad_pool), ("nul", no_nul), ("wild", wild), ("short", good[..3].to_vec()), ("empty", vec![])] {
            assert!(matches!(Precompiled::new(&b), Err(Error::Format(_))), "{what}");
        }
        for cut in 0..good.len() {
            let _ = Precompiled::new(&good[..cut]);
        }
    }
}
