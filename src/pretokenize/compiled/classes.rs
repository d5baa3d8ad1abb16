//! The character classes of one compiled pattern: for every code point, a bit per class.
//!
//! The classes come from `regex-syntax`, the crate (and the version `Cargo.lock` shares with
//! fancy-regex) that the regex engine asks for the same class expressions, so the two cannot
//! disagree on a single character. Layout as in the hand-written splitters' tables
//! (`known/unicode.rs`): a direct table for ASCII and a two-level table for every code point
//! (4,352 blocks of 256 code points, each distinct block stored once).

use crate::utf8::decode_multi;
use regex_syntax::hir::{Class, HirKind};
use rustc_hash::FxHashMap;

/// A class as sorted, disjoint, inclusive code point ranges.
pub type Ranges = Vec<(u32, u32)>;

const BLOCK: usize = 256;
const CODE_POINTS: usize = 0x11_0000;

/// The class of one char the regex engine matches: a `[...]`, `\p{..}`, `\s`, `\d` or escaped
/// char (fancy-regex's `Delegate`), with case folding when `casei`. `None` for anything that is
/// not exactly one char.
pub fn of_expression(source: &str, casei: bool) -> Option<Ranges> {
    let hir = regex_syntax::ParserBuilder::new().case_insensitive(casei).build().parse(source).ok()?;
    match hir.into_kind() {
        HirKind::Class(Class::Unicode(class)) => Some(class.ranges().iter().map(|r| (r.start() as u32, r.end() as u32)).collect()),
        HirKind::Literal(lit) => {
            let s = std::str::from_utf8(&lit.0).ok()?;
            let mut chars = s.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Some(vec![(c as u32, c as u32)]),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The class of the literal char `c` (with its simple case folds when `casei`, as regex-syntax
/// folds a case-insensitive literal).
pub fn of_char(c: char, casei: bool) -> Option<Ranges> {
    if !casei {
        return Some(vec![(c as u32, c as u32)]);
    }
    of_expression(&regex_syntax::escape(c.encode_utf8(&mut [0; 4])), true)
}

/// Every char but `\n` (and `\r` with `crlf`): `.` without the `s` flag; every char with it.
pub fn any(newline: bool, crlf: bool) -> Ranges {
    match (newline, crlf) {
        (true, _) => vec![(0, 0xD7FF), (0xE000, 0x10_FFFF)],
        (false, false) => vec![(0, 9), (11, 0xD7FF), (0xE000, 0x10_FFFF)],
        (false, true) => vec![(0, 9), (11, 12), (14, 0xD7FF), (0xE000, 0x10_FFFF)],
    }
}

/// Whether two classes share a char.
pub fn intersect(a: &Ranges, b: &Ranges) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let ((a0, a1), (b0, b1)) = (a[i], b[j]);
        if a0 <= b1 && b0 <= a1 {
            return true;
        }
        if a1 < b1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    false
}

/// Every char not in the class.
pub fn complement(a: &Ranges) -> Ranges {
    let mut out = Vec::with_capacity(a.len() + 1);
    let mut next = 0u32;
    for &(s, e) in a {
        if s > next {
            out.push((next, s - 1));
        }
        next = e + 1;
    }
    if next <= 0x10_FFFF {
        out.push((next, 0x10_FFFF));
    }
    out
}

/// The chars in both classes.
pub fn intersection(a: &Ranges, b: &Ranges) -> Ranges {
    complement(&union(&[&complement(a), &complement(b)]))
}

/// The union of classes.
pub fn union(sets: &[&Ranges]) -> Ranges {
    let mut all: Ranges = sets.iter().flat_map(|s| s.iter().copied()).collect();
    all.sort_unstable();
    let mut out: Ranges = Vec::with_capacity(all.len());
    for (s, e) in all {
        match out.last_mut() {
            Some(last) if s <= last.1.saturating_add(1) => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// For every code point, the bits of the classes it is in (class `k` is bit `k`; at most 32).
#[derive(Debug, Clone)]
pub struct Table {
    ascii: [u32; 128],
    /// Block of each run of 256 code points.
    index: Vec<u16>,
    /// Distinct blocks, 256 masks each.
    blocks: Vec<u32>,
}

impl Table {
    pub fn new(classes: &[Ranges]) -> Table {
        assert!(classes.len() <= 32, "at most 32 classes");
        let mut index = Vec::with_capacity(CODE_POINTS / BLOCK);
        let mut blocks: Vec<u32> = Vec::new();
        // most blocks are one mask throughout (a script's letters, unassigned planes)
        let mut uniform: FxHashMap<u32, u16> = FxHashMap::default();
        let mut mixed: FxHashMap<Vec<u32>, u16> = FxHashMap::default();
        let mut next = vec![0usize; classes.len()]; // per class, the first range not yet passed
        let mut block = vec![0u32; BLOCK];
        for b in 0..(CODE_POINTS / BLOCK) as u32 {
            let (lo, hi) = (b * BLOCK as u32, b * BLOCK as u32 + BLOCK as u32 - 1);
            let (mut whole, mut partial) = (0u32, false);
            block.fill(0);
            for (k, class) in classes.iter().enumerate() {
                while next[k] < class.len() && class[next[k]].1 < lo {
                    next[k] += 1;
                }
                for &(s, e) in class[next[k]..].iter().take_while(|r| r.0 <= hi) {
                    if s <= lo && e >= hi {
                        whole |= 1 << k;
                    } else {
                        partial = true;
                        for m in &mut block[(s.max(lo) - lo) as usize..=(e.min(hi) - lo) as usize] {
                            *m |= 1 << k;
                        }
                    }
                }
            }
            let mut add = |content: &[u32]| {
                blocks.extend_from_slice(content);
                (blocks.len() / BLOCK - 1) as u16 // at most 4,352 blocks
            };
            let id = if partial {
                block.iter_mut().for_each(|m| *m |= whole);
                match mixed.get(&block) {
                    Some(&id) => id,
                    None => {
                        let id = add(&block);
                        mixed.insert(block.clone(), id);
                        id
                    }
                }
            } else {
                *uniform.entry(whole).or_insert_with(|| add(&[whole; BLOCK]))
            };
            index.push(id);
        }
        let mut ascii = [0u32; 128];
        ascii.copy_from_slice(&blocks[index[0] as usize * BLOCK..][..128]);
        Table { ascii, index, blocks }
    }

    /// The class bits of the ASCII char `x`.
    #[inline(always)]
    pub fn ascii(&self, x: u8) -> u32 {
        self.ascii[x as usize & 0x7F]
    }

    /// The class bits of the char starting at byte `i` of `b` (valid UTF-8), and its length.
    #[inline(always)]
    pub fn at(&self, b: &[u8], i: usize) -> (u32, usize) {
        let x = b[i];
        if x < 0x80 {
            return (self.ascii[x as usize], 1);
        }
        let (cp, n) = decode_multi(b, i);
        let block = self.index[(cp >> 8) as usize] as usize;
        (self.blocks[block * BLOCK + (cp & 0xFF) as usize], n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_answers_every_code_point_as_the_ranges_do() {
        let classes: Vec<Ranges> = [r"\p{L}", r"\s", r"[^\r\n\p{L}\p{N}]", "[\u{4E00}-\u{9FA5}]", r"\d"]
            .iter()
            .map(|s| of_expression(s, false).unwrap())
            .collect();
        let table = Table::new(&classes);
        for cp in (0..0x11_0000u32).step_by(7).chain(0..0x3000) {
            let Some(c) = char::from_u32(cp) else { continue };
            let mut buf = [0u8; 4];
            let s = c.encode_utf8(&mut buf);
            let (mask, n) = table.at(s.as_bytes(), 0);
            assert_eq!(n, s.len());
            for (k, class) in classes.iter().enumerate() {
                let inside = class.iter().any(|&(a, z)| (a..=z).contains(&cp));
                assert_eq!(mask >> k & 1 == 1, inside, "U+{cp:04X} class {k}");
            }
        }
    }

    #[test]
    fn set_operations() {
        let a = vec![(10, 20), (30, 40)];
        assert!(intersect(&a, &vec![(20, 25)]));
        assert!(!intersect(&a, &vec![(21, 29), (41, 50)]));
        assert_eq!(complement(&a), vec![(0, 9), (21, 29), (41, 0x10_FFFF)]);
        assert_eq!(union(&[&a, &vec![(21, 30), (50, 60)]]), vec![(10, 40), (50, 60)]);
        assert_eq!(intersection(&a, &vec![(0, 12), (15, 35), (40, 0x10_FFFF)]), vec![(10, 12), (15, 20), (30, 35), (40, 40)]);
        assert_eq!(intersection(&a, &vec![(21, 29)]), vec![]);
        assert_eq!(of_char('k', true).unwrap(), vec![(75, 75), (107, 107), (0x212A, 0x212A)]);
        assert_eq!(of_expression(r"\.", false).unwrap(), vec![(46, 46)]);
        assert!(of_expression("ab", false).is_none());
    }
}
