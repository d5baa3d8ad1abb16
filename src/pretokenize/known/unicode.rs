//! Character classes for the hand-written splitters, taken from the regex engine itself.
//!
//! fancy-regex hands `\p{L}`, `\s`, `[...]` classes and case-insensitive literals to
//! `regex-syntax`, so we parse the same class expressions with the same crate (the version
//! `Cargo.lock` shares with fancy-regex) and flatten them into one flag byte per code point. A
//! hand-typed table would drift with every Unicode release; this one cannot.
//!
//! Layout: a 256-entry table by byte (ASCII flags, and [`MULTI`] for bytes >= 0x80), a direct
//! 2 KB table for the code points below U+0800 (the two-byte chars of Greek, Cyrillic, Armenian,
//! Hebrew, Arabic...: one load per char instead of two dependent ones; split alone +5-7% on the
//! bible, +3-5% on tatoeba), and a two-level table for all code points (an index of 4,352 blocks
//! of 256 code points; the ~140 distinct blocks are stored once: about 45 KB in all). All are
//! cut from the same flat array, so they cannot disagree. They are built once per process,
//! lazily, in about a millisecond. A direct table for the whole BMP (64 KB, for the three-byte
//! chars too) measured within noise (-4% to +4%) and was not kept.

use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, HirKind};
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// `\p{L}`
pub const L: u8 = 1;
/// `\p{N}`
pub const N: u8 = 2;
/// `\s` (Unicode White_Space)
pub const S: u8 = 4;
/// o200k's "upper" class `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`
pub const U: u8 = 8;
/// o200k's "lower" class `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`
pub const W: u8 = 16;
/// DeepSeek-V3's punctuation and symbols `[\p{P}\p{S}]`
pub const PS: u8 = 32;
/// `\p{M}` (DeepSeek-V3's letter runs `[\p{L}\p{M}]+`)
pub const M: u8 = 64;
/// `\p{Han}` (Kimi's first alternative, and what its letter classes leave out). In the code
/// point tables only: no ASCII char is Han, and in the byte table this bit is [`MULTI`].
pub const HAN: u8 = 128;
/// In the byte table only: a byte >= 0x80, which starts (or continues) a multi-byte char whose
/// flags need decoding. No class mask includes it, so ASCII scanning loops stop at such a byte.
pub const MULTI: u8 = 128;

/// The class expressions behind each flag, exactly as the patterns write them.
pub const CLASS_SOURCES: [(u8, &str); 8] = [
    (L, r"\p{L}"),
    (N, r"\p{N}"),
    (S, r"\s"),
    (U, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
    (W, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
    (PS, r"[\p{P}\p{S}]"),
    (M, r"\p{M}"),
    (HAN, r"\p{Han}"),
];

/// The letters of the contractions `'s 't 're 've 'm 'll 'd`.
pub const CONTRACTION_LETTERS: &[u8; 8] = b"stmdlrve";

const BLOCK_BITS: u32 = 8;
const BLOCK: usize = 1 << BLOCK_BITS;
const CODE_POINTS: usize = 0x11_0000;
const TWO_BYTE: usize = 0x800;

/// Flag bytes for every code point, plus case folding for the contraction letters.
#[derive(Debug)]
pub struct Tables {
    bytes: [u8; 256],
    /// The flags of every code point below U+0800 (the one- and two-byte chars), by code point.
    two_byte: [u8; TWO_BYTE],
    index: Box<[u16]>,
    blocks: Box<[u8]>,
    /// For an ASCII byte: the lowercase contraction letter it case-folds to, or 0.
    fold_ascii: [u8; 128],
    /// Non-ASCII code points that case-fold to a contraction letter (e.g. U+017F -> `s`).
    fold_other: Box<[(u32, u8)]>,
}

impl Tables {
    /// The flags of a code point.
    #[inline(always)]
    pub fn flags(&self, cp: u32) -> u8 {
        if cp < 128 {
            return self.bytes[cp as usize];
        }
        let block = self.index[(cp >> BLOCK_BITS) as usize] as usize;
        self.blocks[(block << BLOCK_BITS) | (cp as usize & (BLOCK - 1))]
    }

    /// The flags of the two-byte char with lead byte `lead` and continuation byte `cont`
    /// (U+0080 to U+07FF: Latin-1, Greek, Cyrillic, Armenian, Hebrew, Arabic, Syriac...), from a
    /// direct table: one load instead of the block index's two.
    #[inline(always)]
    pub fn two_byte(&self, lead: u8, cont: u8) -> u8 {
        self.two_byte[((lead as usize & 0x1F) << 6) | (cont as usize & 0x3F)]
    }

    /// The flags of an ASCII byte, or [`MULTI`] for a byte >= 0x80.
    #[inline(always)]
    pub fn byte(&self, b: u8) -> u8 {
        self.bytes[b as usize]
    }

    /// The lowercase contraction letter that `cp` matches case-insensitively (`(?i:s)` matches
    /// `s`, `S` and `ſ`), or `None`.
    #[inline]
    pub fn fold(&self, cp: u32) -> Option<u8> {
        let letter = if cp < 128 {
            self.fold_ascii[cp as usize]
        } else {
            self.fold_other.iter().find(|&&(c, _)| c == cp).map_or(0, |&(_, l)| l)
        };
        (letter != 0).then_some(letter)
    }
}

/// The process-wide tables, built on first use.
#[inline(always)]
pub fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| build(&CLASS_SOURCES))
}

/// The "upper" and "lower" classes of llama.cpp's `granite-embed-multi-97m` pattern, which spells
/// o200k's letter classes as `((?=[\p{L}\p{M}])([^a-z]))` and `((?=[\p{L}\p{M}])([^A-Z]))`: every
/// letter and mark but the ASCII lowercase (uppercase) ones. Every non-ASCII letter is in both.
pub const GRANITE_CLASSES: [(u8, &str); 2] = [(U, r"[\p{L}\p{M}&&[^a-z]]"), (W, r"[\p{L}\p{M}&&[^A-Z]]")];

/// [`tables`] with [`U`] and [`W`] from [`GRANITE_CLASSES`]: o200k's splitter with these tables
/// splits as granite's pattern does.
pub fn granite_tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut sources = CLASS_SOURCES;
        for (flag, source) in GRANITE_CLASSES {
            sources.iter_mut().filter(|(f, _)| *f == flag).for_each(|s| s.1 = source);
        }
        build(&sources)
    })
}

/// Parses one class expression with regex-syntax (Unicode mode, as fancy-regex uses it).
fn class_of(source: &str) -> ClassUnicode {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(source)
        .unwrap_or_else(|e| panic!("class {source:?} must parse: {e}"));
    match hir.into_kind() {
        HirKind::Class(Class::Unicode(class)) => class,
        other => panic!("{source:?} is not a Unicode class: {other:?}"),
    }
}

fn build(sources: &[(u8, &str)]) -> Tables {
    let mut flat = vec![0u8; CODE_POINTS];
    for &(flag, source) in sources {
        for r in class_of(source).ranges() {
            for f in &mut flat[r.start() as usize..=r.end() as usize] {
                *f |= flag;
            }
        }
    }

    let mut bytes = [MULTI; 256];
    bytes[..128].copy_from_slice(&flat[..128]);
    let mut two_byte = [0u8; TWO_BYTE];
    two_byte.copy_from_slice(&flat[..TWO_BYTE]);

    let mut index = Vec::with_capacity(CODE_POINTS / BLOCK);
    let mut blocks: Vec<u8> = Vec::new();
    let mut seen: FxHashMap<&[u8], u16> = FxHashMap::default();
    for chunk in flat.chunks_exact(BLOCK) {
        let id = *seen.entry(chunk).or_insert_with(|| {
            blocks.extend_from_slice(chunk);
            u16::try_from(blocks.len() / BLOCK - 1).expect("fewer than 65536 distinct blocks")
        });
        index.push(id);
    }

    let mut fold_ascii = [0u8; 128];
    let mut fold_other = Vec::new();
    for &letter in CONTRACTION_LETTERS {
        let c = char::from(letter);
        let mut class = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
        class.try_case_fold_simple().expect("regex-syntax has its case-folding tables");
        for r in class.ranges() {
            for cp in r.start() as u32..=r.end() as u32 {
                if cp < 128 {
                    fold_ascii[cp as usize] = letter;
                } else {
                    fold_other.push((cp, letter));
                }
            }
        }
    }

    Tables {
        bytes,
        two_byte,
        index: index.into_boxed_slice(),
        blocks: blocks.into_boxed_slice(),
        fold_ascii,
        fold_other: fold_other.into_boxed_slice(),
    }
}

/// Builds a fresh copy (for timing the build; everything else uses [`tables`]).
pub fn build_tables() -> Tables {
    build(&CLASS_SOURCES)
}
