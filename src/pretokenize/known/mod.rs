//! Hand-written splitters for the pre-tokenizer patterns that real vocabularies use.
//!
//! Each family of patterns (GPT-2, cl100k with its Llama 3, Qwen2 and Qwen 3.5 relatives, o200k with Tekken and Kimi K2) is a small
//! state machine over bytes that returns the end of the regex match starting at a given position.
//! The result is exactly what fancy-regex's `find_iter` yields for the pattern, including
//! backtracking into `\s+(?!\S)` and o200k's upper/lower letter runs; the tests compare both on
//! corpora, source code and random text. Every one of these patterns matches at every position,
//! so the pieces tile the text and a splitter only ever has to find where the current piece ends.
//!
//! Character classes come from [`unicode`], which builds them from regex-syntax, the crate that
//! gives fancy-regex its classes, so the two agree on every code point.
//!
//! Performance notes (2026-11-21, this project's 2-core machine, shared with other jobs: load
//! average 2-5, so single figures move by ±30%; `cargo run --release --no-default-features
//! --example split_bench`, input MB/s per CPU-second, same piece counts both ways):
//!
//! | pattern | tinyshakespeare 1.1 MB: hand / fancy-regex | bible, 46 files, 58.7 MB: hand / fancy-regex |
//! |---|---|---|
//! | gpt2   | 140-280 / 7-14  | 175-235 / 15-20 |
//! | cl100k | 150-310 / 7-16  | 140-240 / 12-15 |
//! | llama3 | 145-280 / 12-25 | 145-230 / 20-24 |
//! | qwen2  | 125-280 / 13-23 | 140-235 / 16-30 |
//! | o200k  | 125-280 / 20-31 | 120-215 / 36-37 |
//!
//! 2026-11-22, o200k's ASCII fast path (`o200k::ascii_start`; `--hand-only --only=O200k`, two
//! interleaved runs, src/PERFORMANCE.md "Seventh round: the o200k splitter's ASCII shapes"):
//!
//! | o200k | tinyshakespeare | bible |
//! |---|---|---|
//! | before | 285, 285 | 257, 248 |
//! | after  | 370, 365 (+29%) | 289, 281 (+13%) |
//!
//! 2026-11-26, o200k's `general` in one pass and a direct table for two-byte chars (same command,
//! three alternated runs, a quieter machine; src/PERFORMANCE.md "Eighth round"):
//!
//! | o200k | tinyshakespeare | bible | bible, non-Latin | tatoeba | random Unicode |
//! |---|---|---|---|---|---|
//! | before | 661-687 | 524-525 | 413-424 | 521-522 | 236-242 |
//! | after  | 665-703 | 571-587 (+11%) | 587 (+40%) | 581-604 (+14%) | 266-269 (+12%) |
//!
//! 2026-11-26, cl100k's `piece_end` with the char after a prefix decoded once and non-Latin letter
//! runs in `run_any_multi` (`--only=Cl100k`, three alternated runs; Llama 3 and Qwen2 alike):
//!
//! | cl100k | tinyshakespeare | bible | bible, non-Latin | tatoeba | random Unicode |
//! |---|---|---|---|---|---|
//! | before | 738 | 506-524 | 372-382 | 463 | 261-266 |
//! | after  | 738 | 587-612 (+15%) | 636-664 (+70%) | 625-626 (+35%) | 305-313 (+15%) |
//!
//! Within one run the hand splitters were 3x (o200k on the bible) to 40x (cl100k on Shakespeare)
//! faster than the regex engine that defines them, typically 5-15x; the gap is widest for the
//! tiktoken spellings of gpt2 and cl100k, on which fancy-regex is slowest. The class tables take
//! about 1 ms to build, once per process.
//!
//! What the time goes to (cachegrind on tinyshakespeare, cl100k): about 18 instructions and 0.33
//! branch mispredictions per input byte, i.e. ~80 instructions and ~1.4 mispredictions per piece;
//! two thirds of the mispredictions are the unpredictable end of each letter run. Tried and not
//! kept, because neither changed the measured speed: unchecked indexing in UTF-8 decoding, and
//! `iter().position` instead of an index loop for ASCII runs (fewer instructions, same time).
//!
//! Design choices: one flag byte per code point (5 classes fit in a `u8`), ASCII answered from a
//! 256-entry byte table without decoding (bytes >= 0x80 carry a marker that stops every ASCII
//! loop), no allocation, no lookahead: the whitespace rules look at the whole whitespace run once
//! (its end, its last newline, the start of its last char) and pick the end that the regex's
//! backtracking would pick.

mod chameleon;
mod cl100k;
mod deepseek3;
mod deepseek_stages;
mod digit_groups;
mod exaone;
mod family_stages;
mod gpt2;
mod isolating;
mod jais;
mod o200k;
mod punct_stages;
mod superbpe;
mod swar;
mod viking;
mod youtu;
pub mod unicode;

#[cfg(test)]
mod tests;

pub use chameleon::CHAMELEON_STAGES;
pub use deepseek_stages::{Stages as DeepSeekStages, DEEPSEEK_CODER_STAGES, DEEPSEEK_LLM_STAGES};
pub use digit_groups::DIGIT_GROUPS;
pub use exaone::{EXAONE_MOE, EXAONE_MOE_ASCII};
pub use family_stages::Stages as FamilyStages;
pub use isolating::{Isolating, DEEPSEEK3, DEEPSEEK3_ESCAPED, DEEPSEEK3_STAGES, DIGITS, DIGITS_CONTIGUOUS, SPARK2_5_3_ESCAPED, SPARK2_5_STAGES};
pub use punct_stages::{Stages as PunctStages, DEFAULT_STAGES, FALCON_STAGES};
pub use superbpe::SUPERBPE_STAGES;
pub use viking::VIKING_STAGES;
pub use jais::{JAIS2, JAIS2_ASCII};
pub use youtu::YOUTU_STAGES;
use crate::pretokenize::compiled::classes::Table as CompiledTable;
use unicode::{Tables, L, MULTI, N, S};

/// A pattern family with a hand-written splitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Known {
    /// GPT-2, r50k_base, p50k_base (tiktoken's possessive form and the original GPT-2 form).
    Gpt2,
    /// cl100k_base as tiktoken writes it (possessive, with `\s++$`).
    Cl100k,
    /// Llama 3: cl100k without possessives or `\s++$` (trailing whitespace splits at newlines).
    Llama3,
    /// Qwen2: like Llama 3 but every digit is its own piece.
    Qwen2,
    /// Qwen 3.5: Qwen2 with marks in the letter runs and out of the punctuation runs.
    Qwen35,
    /// ByteDance's Seed-Coder: Qwen2 with nothing after punctuation.
    SeedCoder,
    /// llama.cpp's `ufakzeka`: Qwen2 without contractions.
    Ufakzeka,
    /// o200k_base and o200k_harmony.
    O200k,
    /// Mistral's Tekken (NeMo, Pixtral, Small 3): o200k with every digit its own piece and no
    /// contractions.
    Tekken,
    /// Moonshot's Kimi K2: o200k with Han runs first and out of the letter classes.
    KimiK2,
    /// o200k with llama.cpp's ASCII contractions (Tiny Aya's second stage).
    O200kAscii,
    /// o200k with ASCII contractions and every digit its own piece (Youtu's second stage).
    Youtu,
    /// EXAONE MoE: letters in whole phrases (single spaces between letters), single digits.
    Exaone,
    /// [`Known::Exaone`] with llama.cpp's ASCII contractions.
    ExaoneAscii,
    /// llama.cpp's `granite-embed-multi-97m`: [`Known::O200kAscii`] whose letter classes leave out
    /// only the ASCII letters of the other case ([`unicode::granite_tables`]).
    GraniteMulti,
}

/// tiktoken's `r50k_pat_str` (gpt2, r50k_base, p50k_base, p50k_edit).
pub const GPT2_TIKTOKEN: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// The original GPT-2 pattern (openai/gpt-2 `encoder.py`, HF ByteLevel's built-in regex).
pub const GPT2_ORIGINAL: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
/// The original GPT-2 pattern as tiktoken's source comment writes it (bracketed classes).
pub const GPT2_BRACKETED: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?[\p{L}]+| ?[\p{N}]+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
/// tiktoken's cl100k_base pattern.
pub const CL100K: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
/// Llama 3's pattern (Meta-Llama-3 tokenizer.json; llama.cpp's `llama-bpe` upstream form).
pub const LLAMA3: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Qwen2's pattern (tokenizer.json of Qwen1.5/Qwen2/Qwen2.5).
pub const QWEN2: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Ling's and Ring's pattern (llama.cpp's `bailingmoe`, upstream form): cl100k's possessive
/// spelling with `\p{N}`, no `\s++$` and a final `\s+`, which splits as Qwen2's does (the
/// possessive quantifiers change nothing, and `\s*[\r\n]` ends where `\s*[\r\n]+` does).
pub const BAILINGMOE: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+";
/// Seed-Coder's pattern (llama.cpp's `seed-coder`, upstream form): Qwen2's without the `[\r\n]*`
/// after punctuation (and `\p{N}{1}`, `\r\n` excluded from a class that excludes `\s`).
pub const SEED_CODER: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+";
/// llama.cpp's `ufakzeka` pattern: Qwen2's without the contractions.
pub const UFAKZEKA: &str = r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Qwen 3.5's pattern (llama.cpp's `qwen35`, upstream form): Qwen2 with `[\p{L}\p{M}]+` letter runs
/// and `[^\s\p{L}\p{M}\p{N}]` punctuation.
pub const QWEN35: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// tiktoken's o200k_base pattern (the `|`-join of its seven alternatives).
pub const O200K: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+",
);

/// Mistral's Tekken pattern (`tokenizer.json` of Mistral NeMo and its successors; llama.cpp's
/// `tekken` pre-tokenizer upstream): o200k's alternatives with `\p{N}` and no contractions.
pub const TEKKEN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*",
    "|",
    r"\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
);

/// Moonshot's Kimi K2 pattern (`tokenization_kimi.py`'s `pat_str`; llama.cpp's `kimi-k2`
/// pre-tokenizer runs a hand-written version of it): Han runs, then o200k's alternatives with
/// Han left out of the letter classes and `[\r\n]*` after punctuation.
pub const KIMI_K2: &str = concat!(
    r"[\p{Han}]+",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
);

/// [`O200K`] with llama.cpp's ASCII contractions (llama.cpp's `tiny_aya`, second stage).
pub const O200K_ASCII: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?",
    "|",
    r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
);

/// [`O200K_ASCII`] with `\p{N}` (llama.cpp's `youtu`, second stage).
pub const YOUTU_WORDS: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?",
    "|",
    r"\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
);

/// llama.cpp's `granite-embed-multi-97m` pattern: o200k's alternatives with the letter classes
/// spelled as lookaheads before `[^a-z]` and `[^A-Z]`, marks included, and ASCII contractions.
pub const GRANITE_EMB_MULTI: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?",
    "|",
    r"[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?",
    "|",
    r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
);

/// Every pattern string recognised, with its family.
pub const KNOWN_PATTERNS: [(&str, Known); 18] = [
    (GPT2_TIKTOKEN, Known::Gpt2),
    (GPT2_ORIGINAL, Known::Gpt2),
    (GPT2_BRACKETED, Known::Gpt2),
    (CL100K, Known::Cl100k),
    (LLAMA3, Known::Llama3),
    (QWEN2, Known::Qwen2),
    (BAILINGMOE, Known::Qwen2),
    (QWEN35, Known::Qwen35),
    (SEED_CODER, Known::SeedCoder),
    (UFAKZEKA, Known::Ufakzeka),
    (O200K, Known::O200k),
    (TEKKEN, Known::Tekken),
    (KIMI_K2, Known::KimiK2),
    (O200K_ASCII, Known::O200kAscii),
    (YOUTU_WORDS, Known::Youtu),
    (EXAONE_MOE, Known::Exaone),
    (EXAONE_MOE_ASCII, Known::ExaoneAscii),
    (GRANITE_EMB_MULTI, Known::GraniteMulti),
];

/// `$each!(splitter)` with the `piece_end` function (its parameters fixed) of the family
/// `$family`: the one table of which function splits which family.
macro_rules! with_splitter {
    ($family:expr, $each:ident) => {
        match $family {
            Known::Gpt2 => $each!(gpt2::piece_end),
            Known::Cl100k => $each!(cl100k::piece_end::<3, true, false, true, true>),
            Known::Llama3 => $each!(cl100k::piece_end::<3, false, false, true, true>),
            Known::Qwen2 => $each!(cl100k::piece_end::<1, false, false, true, true>),
            Known::Qwen35 => $each!(cl100k::piece_end::<1, false, true, true, true>),
            Known::SeedCoder => $each!(cl100k::piece_end::<1, false, false, false, true>),
            Known::Ufakzeka => $each!(cl100k::piece_end::<1, false, false, true, false>),
            Known::O200k => $each!(o200k::piece_end::<3, { o200k::FOLDED }, false>),
            Known::O200kAscii | Known::GraniteMulti => $each!(o200k::piece_end::<3, { o200k::ASCII }, false>),
            Known::Youtu => $each!(o200k::piece_end::<1, { o200k::ASCII }, false>),
            Known::Exaone => $each!(exaone::piece_end::<false>),
            Known::ExaoneAscii => $each!(exaone::piece_end::<true>),
            Known::Tekken => $each!(o200k::piece_end::<1, { o200k::NONE }, false>),
            Known::KimiK2 => $each!(o200k::piece_end::<3, { o200k::FOLDED }, true>),
        }
    };
}

impl Known {
    /// The family whose splitter reproduces `pattern` exactly, if `pattern` is one of the
    /// recognised strings (exact comparison: any other spelling falls back to the regex engine).
    pub fn detect(pattern: &str) -> Option<Known> {
        KNOWN_PATTERNS.iter().find(|(p, _)| *p == pattern).map(|&(_, k)| k)
    }

    /// The end of the match that starts at byte `start` of `text`; always greater than `start`.
    ///
    /// Panics unless `start < text.len()` is a char boundary (like slicing `text` would).
    #[inline]
    pub fn piece_end(&self, text: &str, start: usize) -> usize {
        assert!(
            start < text.len() && text.is_char_boundary(start),
            "piece_end: {start} is not the start of a char of the text"
        );
        self.piece_end_in(self.tables(), text.as_bytes(), start)
    }

    /// The class tables the family's splitter reads: the regex engine's, but granite's letter
    /// classes for [`Known::GraniteMulti`].
    #[inline(always)]
    fn tables(&self) -> &'static Tables {
        match self {
            Known::GraniteMulti => unicode::granite_tables(),
            _ => unicode::tables(),
        }
    }

    #[inline(always)]
    fn piece_end_in(&self, t: &Tables, b: &[u8], start: usize) -> usize {
        macro_rules! end_at {
            ($splitter:expr) => {
                $splitter(t, b, start)
            };
        }
        with_splitter!(self, end_at)
    }

    /// Calls `f` with the byte range of every piece of `text`, in order.
    #[inline]
    pub fn for_each_piece<E>(
        &self,
        text: &str,
        mut f: impl FnMut(usize, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        let t = self.tables();
        let b = text.as_bytes();
        let mut start = 0;
        // One loop per family, so that the family match is hoisted out of the hot loop.
        macro_rules! tile {
            ($splitter:expr) => {
                while start < b.len() {
                    let end = $splitter(t, b, start);
                    f(start, end)?;
                    start = end;
                }
            };
        }
        with_splitter!(self, tile);
        Ok(())
    }
}

/// The flags and byte length of the char at `i` (`i < b.len()`, a char boundary of valid UTF-8).
#[inline(always)]
fn char_at(t: &Tables, b: &[u8], i: usize) -> (u8, usize) {
    let f = t.byte(b[i]);
    if f & MULTI == 0 {
        return (f, 1);
    }
    multi_at(t, b, i)
}

/// The flags and byte length of the multi-byte char at `i` (lead byte >= 0x80); a two-byte
/// char (lead byte below 0xE0) is looked up without decoding its code point first.
#[inline(always)]
fn multi_at(t: &Tables, b: &[u8], i: usize) -> (u8, usize) {
    if b[i] < 0xE0 {
        return (t.two_byte(b[i], b[i + 1]), 2);
    }
    let (cp, n) = decode_multi(b, i);
    (t.flags(cp), n)
}

/// (`b` is valid UTF-8 and `i` a char boundary: every splitter gets its bytes from a `&str`,
/// and [`Known::piece_end`] checks the one it is given.)
pub(super) use crate::utf8::decode_multi;

/// The flags of the char at `i`, or 0 at the end of the text.
#[inline(always)]
fn flags_or_end(t: &Tables, b: &[u8], i: usize) -> u8 {
    if i < b.len() {
        char_at(t, b, i).0
    } else {
        0
    }
}

/// The end of the run of chars, from `i`, whose flags intersect `mask`.
#[inline(always)]
fn run_any(t: &Tables, b: &[u8], i: usize, mask: u8) -> usize {
    run_any_but(t, b, i, mask, 0)
}

/// [`run_any`], also stopping at a multi-byte char whose flags meet `but` (Kimi's letter runs
/// stop at Han chars: `but` is [`unicode::HAN`], which no ASCII char has).
#[inline(always)]
fn run_any_but(t: &Tables, b: &[u8], mut i: usize, mask: u8, but: u8) -> usize {
    loop {
        // Whole words of ASCII class bytes first, then ASCII bytes in one tight loop: a byte
        // >= 0x80 has only MULTI, so it stops the loop too.
        i = swar::ascii_run(b, i, mask);
        while i < b.len() && t.byte(b[i]) & mask != 0 {
            i += 1;
        }
        if i == b.len() || b[i] < 0x80 {
            return i;
        }
        let (f, n) = multi_at(t, b, i);
        if f & mask == 0 || f & but != 0 {
            return i;
        }
        i += n;
    }
}

/// [`run_any`] for a run that starts among multi-byte chars (a word of a non-Latin script): those
/// are decoded in a loop of their own, and only an ASCII byte goes to [`run_any`]'s word test.
#[inline(always)]
fn run_any_multi(t: &Tables, b: &[u8], i: usize, mask: u8) -> usize {
    run_any_multi_but(t, b, i, mask, 0)
}

/// [`run_any_multi`] stopping at chars whose flags meet `but` too, as [`run_any_but`].
#[inline(always)]
fn run_any_multi_but(t: &Tables, b: &[u8], mut i: usize, mask: u8, but: u8) -> usize {
    while i < b.len() && b[i] >= 0x80 {
        let (f, n) = multi_at(t, b, i);
        if f & mask == 0 || f & but != 0 {
            return i;
        }
        i += n;
    }
    run_any_but(t, b, i, mask, but)
}

/// The end of the run of chars, from `i`, whose flags avoid `mask` entirely.
#[inline(always)]
fn run_none(t: &Tables, b: &[u8], mut i: usize, mask: u8) -> usize {
    loop {
        while i < b.len() && t.byte(b[i]) & (mask | MULTI) == 0 {
            i += 1;
        }
        if i == b.len() || b[i] < 0x80 {
            return i;
        }
        let (f, n) = multi_at(t, b, i);
        if f & mask != 0 {
            return i;
        }
        i += n;
    }
}

/// `\p{N}{1,max}` after its first digit (which ends at `end`): the end of at most `max - 1` more
/// digits.
#[inline(always)]
fn digit_run(t: &Tables, b: &[u8], mut end: usize, max: usize) -> usize {
    for _ in 1..max {
        if end >= b.len() {
            break;
        }
        let (g, m) = char_at(t, b, end);
        if g & unicode::N == 0 {
            break;
        }
        end += m;
    }
    end
}

/// Whether `patterns` are the stages of `list`, each after an optional `(?m)` (which changes
/// nothing in the one-pass lists: no `^`, and `$` only in pieces without a line end).
fn is_list<S: AsRef<str>>(patterns: &[String], list: &[S]) -> bool {
    patterns.len() == list.len() && patterns.iter().zip(list).all(|(p, want)| p.strip_prefix("(?m)").unwrap_or(p) == want.as_ref())
}

/// `P?C+` as an `Isolated` stage on `b[s..e]` (P and C class bits of `t`): each match and each
/// text between two, with whether it is a match. A match starts at a char of C, or at a char of
/// P that one follows, and takes the run of C after its first char. (A char in both, as U+3000
/// in DeepSeek LLM's `\s?[...　-。]+`: the regex takes it as P first, or failing that as C,
/// and either way the match ends where the run after it ends.)
#[inline(always)]
fn prefixed_runs<E>(
    t: &CompiledTable,
    b: &[u8],
    s: usize,
    e: usize,
    prefix: u32,
    class: u32,
    mut f: impl FnMut(usize, usize, bool) -> Result<(), E>,
) -> Result<(), E> {
    let (mut p, mut gap) = (s, s);
    while p < e {
        let (m, n) = t.at(b, p);
        let starts = m & class != 0 || m & prefix != 0 && p + n < e && t.at(b, p + n).0 & class != 0;
        if !starts {
            p += n;
            continue;
        }
        // the run of the class after the match's first char
        let mut q = p + n;
        while q < e {
            let (m, n) = t.at(b, q);
            if m & class == 0 {
                break;
            }
            q += n;
        }
        if gap < p {
            f(gap, p, false)?;
        }
        f(p, q, true)?;
        p = q;
        gap = q;
    }
    if gap < e {
        f(gap, e, false)?;
    }
    Ok(())
}

/// The end of the run of chars of class `digit` (a bit of `t`) from `start`, and its length in
/// chars.
#[inline(always)]
fn class_run(t: &CompiledTable, b: &[u8], start: usize, digit: u32) -> (usize, usize) {
    let (mut end, mut chars) = (start, 0);
    while end < b.len() {
        let (m, n) = t.at(b, end);
        if m & digit == 0 {
            break;
        }
        end += n;
        chars += 1;
    }
    (end, chars)
}

/// Calls `cut` with the start of every digit of the run `b[start..end]` (`digits` chars of
/// `t`) that has a multiple of three digits from it to the run's end, the first digit included
/// if the run is a multiple of three long: where a lookahead of `(\d{3})+` then the run's end
/// holds.
#[inline(always)]
fn cuts_in_threes<E>(t: &CompiledTable, b: &[u8], start: usize, end: usize, digits: usize, mut cut: impl FnMut(usize) -> Result<(), E>) -> Result<(), E> {
    let mut q = start;
    for i in 0..digits {
        if i % 3 == digits % 3 {
            cut(q)?;
        }
        q += if end - start == digits { 1 } else { t.at(b, q).1 };
    }
    Ok(())
}

/// `\p{N}+` (`runs`) or `\p{N}` as an `Isolated` stage on `b[s..e]` (`s < e`): the numbers
/// (each run, or each char) and the text between, in order.
#[inline(always)]
fn number_stage<E>(b: &[u8], s: usize, e: usize, runs: bool, mut f: impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
    // most pieces are ASCII without a digit: no number, one piece
    if b[s..e].is_ascii() && !b[s..e].iter().any(u8::is_ascii_digit) {
        return f(s, e);
    }
    let t = unicode::tables();
    let mut p = s;
    while p < e {
        let (m, n) = char_at(t, b, p);
        let number = m & N != 0;
        let mut q = p + n;
        if !number || runs {
            while q < e {
                let (m, n) = char_at(t, b, q);
                if (m & N != 0) != number {
                    break;
                }
                q += n;
            }
        }
        f(p, q)?;
        p = q;
    }
    Ok(())
}

/// ` ?[^\s\p{L}\p{N}]+` and then any bytes of `trail` (cl100k's `[\r\n]*`, o200k's `[\r\n/]*`),
/// at `i`, whose char has first byte `x`, flags `f` and length `n`, followed by a char of flags
/// `g` and length `m` (`m` 0 at the end of the text): the end of the piece, or `None` when the
/// rule does not match there and a whitespace rule decides.
#[inline(always)]
fn punctuation(t: &Tables, b: &[u8], i: usize, (x, f, n): (u8, u8, usize), (g, m): (u8, usize), trail: &[u8]) -> Option<usize> {
    punctuation_but(t, b, i, (x, f, n), (g, m), trail, L | N | S)
}

/// [`punctuation`] for the class of chars whose flags avoid `not` (which holds `S`): Qwen 3.5's
/// `[^\s\p{L}\p{M}\p{N}]` leaves marks out too. The char at `i` is in the class unless it is
/// whitespace (the caller has ruled the rest out).
#[inline(always)]
fn punctuation_but(t: &Tables, b: &[u8], i: usize, (x, f, n): (u8, u8, usize), (g, m): (u8, usize), trail: &[u8], not: u8) -> Option<usize> {
    let rest = m > 0 && g & not == 0;
    if f & S == 0 {
        let end = if rest { run_none(t, b, i + n + m, not) } else { i + n };
        return Some(run_bytes(b, end, trail));
    }
    if x == b' ' && rest {
        return Some(run_bytes(b, run_none(t, b, i + 1 + m, not), trail));
    }
    None
}

/// The end of the run of bytes, from `i`, that are in `set`.
#[inline(always)]
fn run_bytes(b: &[u8], mut i: usize, set: &[u8]) -> usize {
    while i < b.len() && set.contains(&b[i]) {
        i += 1;
    }
    i
}

/// A maximal run of whitespace (`\s`) chars.
struct WsRun {
    /// Where the run ends (the text ends there, or a non-space char starts).
    end: usize,
    /// Where the run's last char starts.
    last: usize,
    /// Where the run's last `\r` or `\n` starts, if it has one.
    last_newline: Option<usize>,
}

/// The whitespace run starting at `i` (the char at `i` is whitespace).
#[inline(always)]
fn ws_run(t: &Tables, b: &[u8], mut i: usize) -> WsRun {
    let mut last = i;
    let mut last_newline = None;
    while i < b.len() {
        let x = b[i];
        let n = if x < 0x80 {
            if t.byte(x) & S == 0 {
                break;
            }
            if x == b'\n' || x == b'\r' {
                last_newline = Some(i);
            }
            1
        } else {
            let (f, n) = char_at(t, b, i);
            if f & S == 0 {
                break;
            }
            n
        };
        last = i;
        i += n;
    }
    WsRun { end: i, last, last_newline }
}

impl WsRun {
    /// Where `\s+(?!\S)|\s+` ends for this run, started at `i` in a text of `len` bytes: the
    /// whole run if the text ends there or it is one char, else all but its last char (which
    /// then prefixes the next piece).
    #[inline(always)]
    fn lookahead_end(&self, i: usize, len: usize) -> usize {
        if self.end == len || self.last == i {
            self.end
        } else {
            self.last
        }
    }
}

/// `\s*[\r\n]+|\s+(?!\S)|\s+` at the start of a whitespace run (Llama 3, Qwen2, o200k): through
/// the run's last newline; else the whole run if the text ends there; else all but the run's last
/// char (which then prefixes the next piece), unless that char is the only one.
#[inline(always)]
fn ws_newline_first(t: &Tables, b: &[u8], i: usize) -> usize {
    let r = ws_run(t, b, i);
    match r.last_newline {
        Some(nl) => nl + 1,
        None => r.lookahead_end(i, b.len()),
    }
}

/// The end of llama.cpp's `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])` at `i`
/// (where `b[i] == b'\''`), if it matches: [`contraction_folded`] but for `'ſ`.
#[inline]
fn contraction_ascii(b: &[u8], i: usize) -> Option<usize> {
    let lower = |j: usize| b.get(j).map(u8::to_ascii_lowercase);
    match (lower(i + 1), lower(i + 2)) {
        (Some(b's' | b't' | b'm' | b'd'), _) => Some(i + 2),
        (Some(b'l'), Some(b'l')) | (Some(b'r' | b'v'), Some(b'e')) => Some(i + 3),
        _ => None,
    }
}

/// The end of `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `i` (where `b[i] == b'\''`), if it matches.
/// Case folding is regex-syntax's simple folding, so `'ſ` (U+017F) counts as `'s`.
#[inline]
fn contraction_folded(t: &Tables, b: &[u8], i: usize) -> Option<usize> {
    let fold_at = |j: usize| -> Option<(u8, usize)> {
        if j >= b.len() {
            return None;
        }
        let x = b[j];
        if x < 0x80 {
            return t.fold(x as u32).map(|l| (l, 1));
        }
        let (cp, n) = decode_multi(b, j);
        t.fold(cp).map(|l| (l, n))
    };
    let (first, n) = fold_at(i + 1)?;
    let j = i + 1 + n;
    let second = match first {
        b's' | b't' | b'm' | b'd' => return Some(j),
        b'l' => b'l',
        b'r' | b'v' => b'e',
        _ => return None,
    };
    match fold_at(j) {
        Some((l, n2)) if l == second => Some(j + n2),
        _ => None,
    }
}
