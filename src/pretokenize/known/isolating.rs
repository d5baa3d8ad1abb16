//! Hand-written splitters for Hugging Face `Split(Isolated)` stages whose pattern does not match
//! at every position (the text between matches is a piece too), and for sequences of stages
//! that one pass can stand for: DeepSeek-V3's stages, `Digits` before a known family. See
//! `src/PERFORMANCE.md`, "Twentieth round".

use super::deepseek_stages::Stages as DeepSeekStages;
use super::family_stages::Stages as FamilyStages;
use super::punct_stages::Stages as PunctStages;
use super::unicode::{self, Tables, N};
use super::digit_groups::{self, DIGIT_GROUPS};
use super::{chameleon, char_at, decode_multi, deepseek3, digit_run, jais, superbpe, viking, youtu, Known};

/// DeepSeek-V3's last split stage as its `tokenizer.json` writes it (`\r` and `\n` as the
/// characters themselves; llama.cpp's `deepseek-v3` list, `bpekit.formats.llamacpp.DEEPSEEK3_LLM_3`).
pub const DEEPSEEK3: &str = concat!(
    r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^"##,
    "\r\n",
    r"\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[",
    "\r\n",
    r"]*|\s*[",
    "\r\n",
    r"]+|\s+(?!\S)|\s+",
);
/// The same pattern with `\r` and `\n` written as regex escapes.
pub const DEEPSEEK3_ESCAPED: &str = concat!(
    r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"##,
    r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
);

/// Spark 2.5's third stage (llama.cpp's `spark2_5`): DeepSeek-V3's with nothing after
/// punctuation and `[\r\n]` for `\s*[\r\n]+` (`\r` and `\n` as the characters themselves).
pub const SPARK2_5_3: &str = concat!(
    r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^"##,
    "\r\n",
    r"\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+|[",
    "\r\n",
    r"]|\s+(?!\S)|\s+",
);
/// The same pattern with `\r` and `\n` written as regex escapes.
pub const SPARK2_5_3_ESCAPED: &str = concat!(
    r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"##,
    r"| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+",
);
/// Spark 2.5's four stages: DeepSeek-V3's first two, [`SPARK2_5_3`], then each number char.
pub const SPARK2_5_STAGES: [&str; 4] = [r"\p{N}{1,3}", "[\u{4E00}-\u{9FA5}\u{3040}-\u{309F}\u{30A0}-\u{30FF}]+", SPARK2_5_3, r"\p{N}"];

/// Hand-written splitters for patterns that do not match at every position, for Hugging Face's
/// `Split(Isolated)` stages: the text between two matches is a piece of its own, so the pieces
/// tile the text as they do for [`Known`]. (A tiktoken-style pre-tokenizer drops that text, so
/// these are not [`Known`] families: `Pretokenizer` keeps such patterns on the regex engine.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Isolating {
    /// DeepSeek-V3's last stage ([`DEEPSEEK3`]).
    DeepSeek3,
    /// DeepSeek-V3's three stages in one pass ([`DEEPSEEK3_STAGES`]): runs of `\p{N}` cut in
    /// threes, and [`Isolating::DeepSeek3`] on each run of CJK ideographs and kana and on the
    /// text between.
    DeepSeek3Stages,
    /// Spark 2.5's four stages in one pass ([`SPARK2_5_STAGES`]): each number char, and Spark's
    /// third stage on each run of CJK ideographs and kana and on the text between.
    Spark25Stages,
    /// A [`Known`] family's pattern as an `Isolated` stage: it matches everywhere, so its pieces
    /// are the matches.
    Known(Known),
    /// DeepSeek LLM's six stages or DeepSeek Coder's five in one pass
    /// ([`super::deepseek_stages`]).
    DeepSeekStages(DeepSeekStages),
    /// llama.cpp's `default` or `falcon` list in one pass ([`super::punct_stages`]).
    PunctStages(PunctStages),
    /// llama.cpp's `viking` list in one pass ([`super::viking`]).
    VikingStages,
    /// llama.cpp's `poro-chat`: the first stage of `viking` alone ([`super::viking`]).
    Poro,
    /// llama.cpp's `youtu` list in one pass ([`super::youtu`]).
    YoutuStages,
    /// llama.cpp's `jais-2` ([`super::jais`]), with ASCII contractions if `true`.
    Jais2(bool),
    /// llama.cpp's `superbpe` list in one pass ([`super::superbpe`]).
    SuperBpeStages,
    /// llama.cpp's `chameleon` list in one pass ([`super::chameleon`]).
    ChameleonStages,
    /// Tiny Aya's first stage as Oniguruma reads it ([`DIGIT_GROUPS`]): digits in threes from
    /// the right where a word boundary ends them ([`super::digit_groups`]).
    DigitGroups,
    /// Tiny Aya's two stages in one pass: [`Isolating::DigitGroups`], then a [`Known`] family
    /// ([`Known::O200kAscii`]) on the text between (a group of one to three digits is one piece
    /// of its `\p{N}{1,3}`).
    DigitGroupsThen(Known),
    /// MiniCPM 5's or Laguna's list: a first stage, then a known family, with ASCII contractions
    /// if `true` ([`super::family_stages`]).
    FamilyStages(FamilyStages, bool),
    /// Hugging Face's `Digits` pre-tokenizer ([`DIGITS`], or [`DIGITS_CONTIGUOUS`] with `true`):
    /// each numeric char (`char::is_numeric`, which `tokenizers` uses: not always the regex
    /// tables' `\p{N}`, whose Unicode version may lag) a piece, or each run of them, and the text
    /// between.
    Numbers(bool),
    /// [`Isolating::Numbers`], then a [`Known`] family on the text between: `Digits` before
    /// `ByteLevel`'s GPT-2 regex (StarCoder 2, SmolLM, Command R), in one pass.
    NumbersThen(Known, bool),
    /// Hugging Face's `Punctuation` pre-tokenizer, `Isolated` ([`PUNCTUATION`]) or `Contiguous`
    /// ([`PUNCTUATION_CONTIGUOUS`], with `true`): each punctuation char (ASCII punctuation, or a
    /// `P*` char of the `unicode_categories` tables `tokenizers` uses) a piece, or each run of
    /// them, and the text between (Falcon's first stage).
    Punctuation(bool),
}

/// The stage that stands for Hugging Face's `Digits(individual_digits=true)` in a list of
/// `Isolated` stages (`bpekit.pipeline.fast`): a regex comment marks it, so that a `Split` of the
/// regex `\p{N}` keeps the regex engine's tables.
pub const DIGITS: &str = r"(?#Digits)\p{N}";
/// `Digits(individual_digits=false)`: each run of numeric chars.
pub const DIGITS_CONTIGUOUS: &str = r"(?#Digits)\p{N}+";

/// The stage that stands for Hugging Face's `Punctuation` (`Isolated`) in a list of `Isolated`
/// stages, marked as [`DIGITS`] is.
pub const PUNCTUATION: &str = r"(?#Punctuation)\p{P}";
/// `Punctuation` with the `Contiguous` behaviour: each run of punctuation chars.
pub const PUNCTUATION_CONTIGUOUS: &str = r"(?#Punctuation)\p{P}+";

/// Whether the char at `i` is punctuation to Hugging Face's `Punctuation`, and its length.
#[inline(always)]
fn punctuation_at(b: &[u8], i: usize) -> (bool, usize) {
    let x = b[i];
    if x < 0x80 {
        return (x.is_ascii_punctuation(), 1);
    }
    let (cp, n) = decode_multi(b, i);
    (char::from_u32(cp).is_some_and(|c| crate::hf_unicode::Class::Punctuation.contains(c)), n)
}

/// Whether the char at `i` is numeric as Rust's `char::is_numeric` says, and its length.
#[inline(always)]
fn numeric_at(b: &[u8], i: usize) -> (bool, usize) {
    let x = b[i];
    if x < 0x80 {
        return (x.is_ascii_digit(), 1);
    }
    let (cp, n) = decode_multi(b, i);
    (char::from_u32(cp).is_some_and(char::is_numeric), n)
}

/// DeepSeek-V3's `Split(Isolated)` stages, in order (llama.cpp's `deepseek-v3`, `hunyuan-dense`,
/// `hy_v4` and `joyai-llm` lists; the last may also be [`DEEPSEEK3_ESCAPED`]).
pub const DEEPSEEK3_STAGES: [&str; 3] = [r"\p{N}{1,3}", "[\u{4E00}-\u{9FA5}\u{3040}-\u{309F}\u{30A0}-\u{30FF}]+", DEEPSEEK3];

/// Whether the char at `i` is in DeepSeek-V3's second stage's class (`[一-龥\u3040-ゟ゠-ヿ]`):
/// U+3040-U+30FF (three-byte chars led by 0xE3) or U+4E00-U+9FA5 (led by 0xE4-0xE9).
#[inline(always)]
fn cjk_kana(b: &[u8], i: usize) -> bool {
    if !(0xE3..=0xE9).contains(&b[i]) {
        return false;
    }
    let (cp, _) = decode_multi(b, i);
    (0x3040..=0x30FF).contains(&cp) || (0x4E00..=0x9FA5).contains(&cp)
}

impl Isolating {
    /// The splitter for `pattern` (either spelling, alone or after `(?m)`, which changes nothing
    /// in a pattern without `^` or `$`), if it has one.
    pub fn detect(pattern: &str) -> Option<Isolating> {
        let p = pattern.strip_prefix("(?m)").unwrap_or(pattern);
        if p == DEEPSEEK3 || p == DEEPSEEK3_ESCAPED {
            return Some(Isolating::DeepSeek3);
        }
        if let Some(ascii) = jais::detect(p) {
            return Some(Isolating::Jais2(ascii));
        }
        match p {
            DIGIT_GROUPS => return Some(Isolating::DigitGroups),
            _ if p == viking::VIKING_STAGES[0] => return Some(Isolating::Poro),
            DIGITS => return Some(Isolating::Numbers(false)),
            DIGITS_CONTIGUOUS => return Some(Isolating::Numbers(true)),
            PUNCTUATION => return Some(Isolating::Punctuation(false)),
            PUNCTUATION_CONTIGUOUS => return Some(Isolating::Punctuation(true)),
            _ => {}
        }
        // `(?m)` makes `$` an end of line (no known pattern has `^` outside a class)
        let p = if p.contains('$') { pattern } else { p };
        Known::detect(p).map(Isolating::Known)
    }

    /// The one splitter that stands for a whole sequence of `Split(Isolated)` stages, if any
    /// (each pattern as [`Isolating::detect`] takes it).
    pub fn detect_stages(patterns: &[String]) -> Option<Isolating> {
        let bare = |p: &str| p.strip_prefix("(?m)").unwrap_or(p).to_string();
        if let Some(stages) = DeepSeekStages::detect(patterns) {
            return Some(Isolating::DeepSeekStages(stages));
        }
        if let Some(stages) = PunctStages::detect(patterns) {
            return Some(Isolating::PunctStages(stages));
        }
        if viking::detect(patterns) {
            return Some(Isolating::VikingStages);
        }
        if youtu::detect(patterns) {
            return Some(Isolating::YoutuStages);
        }
        if superbpe::detect(patterns) {
            return Some(Isolating::SuperBpeStages);
        }
        if chameleon::detect(patterns) {
            return Some(Isolating::ChameleonStages);
        }
        if let Some((stages, ascii)) = FamilyStages::detect(patterns) {
            return Some(Isolating::FamilyStages(stages, ascii));
        }
        match patterns {
            // one stage: its own splitter (a known family's pattern takes the family's)
            [a] => Isolating::detect(a),
            [a, b, c] => {
                let ours = bare(a) == DEEPSEEK3_STAGES[0] && bare(b) == DEEPSEEK3_STAGES[1];
                (ours && Isolating::detect(c) == Some(Isolating::DeepSeek3)).then_some(Isolating::DeepSeek3Stages)
            }
            [a, b, c, d] => {
                let ours = bare(a) == SPARK2_5_STAGES[0] && bare(b) == SPARK2_5_STAGES[1] && bare(d) == SPARK2_5_STAGES[3];
                (ours && [SPARK2_5_3, SPARK2_5_3_ESCAPED].contains(&bare(c).as_str())).then_some(Isolating::Spark25Stages)
            }
            [a, b] => match (Isolating::detect(a)?, Isolating::detect(b)?) {
                (Isolating::Numbers(contiguous), Isolating::Known(k)) => Some(Isolating::NumbersThen(k, contiguous)),
                (Isolating::DigitGroups, Isolating::Known(Known::O200kAscii)) => Some(Isolating::DigitGroupsThen(Known::O200kAscii)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Calls `f` with the byte range of every match of `text` and of every run of text between
    /// two matches (or before the first, after the last), in order.
    pub fn for_each_piece<E>(&self, text: &str, mut f: impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
        let t = unicode::tables();
        let b = text.as_bytes();
        match *self {
            Isolating::Known(k) => k.for_each_piece(text, f),
            Isolating::Numbers(contiguous) => numbers(b, contiguous, |s, e, _| f(s, e)),
            Isolating::Punctuation(contiguous) => class_runs(b, contiguous, punctuation_at, |s, e, _| f(s, e)),
            // The family cuts every piece of `Digits`; a single char is one piece of it anyway. (A
            // run of digits may not be: the regex tables' `\p{N}` may lack a digit that
            // `char::is_numeric` has.)
            Isolating::NumbersThen(k, contiguous) => numbers(b, contiguous, |s, e, numeric| {
                if numeric && !contiguous {
                    f(s, e)
                } else {
                    k.for_each_piece(&text[s..e], |a, z| f(s + a, s + z))
                }
            }),
            Isolating::DeepSeekStages(stages) => stages.for_each_piece(text, f),
            Isolating::PunctStages(stages) => stages.for_each_piece(text, f),
            Isolating::VikingStages => viking::for_each_piece(true, text, f),
            Isolating::Poro => viking::for_each_piece(false, text, f),
            Isolating::YoutuStages => youtu::for_each_piece(text, f),
            Isolating::Jais2(ascii) => jais::for_each_piece(ascii, text, f),
            Isolating::SuperBpeStages => superbpe::for_each_piece(text, f),
            Isolating::ChameleonStages => chameleon::for_each_piece(text, f),
            Isolating::DigitGroups => digit_groups::for_each_piece(text, |s, e, _| f(s, e)),
            Isolating::DigitGroupsThen(k) => digit_groups::for_each_piece(text, |s, e, group| {
                if group {
                    f(s, e)
                } else {
                    k.for_each_piece(&text[s..e], |a, z| f(s + a, s + z))
                }
            }),
            Isolating::FamilyStages(stages, ascii) => stages.for_each_piece(ascii, text, f),
            Isolating::DeepSeek3 => matches_and_gaps::<false, E>(t, b, 0, &mut f),
            Isolating::DeepSeek3Stages => cjk_stages::<false, E>(t, b, f),
            Isolating::Spark25Stages => cjk_stages::<true, E>(t, b, f),
        }
    }
}

/// DeepSeek-V3's stages (or with `SPARK`, Spark 2.5's) on `b` in one pass.
#[inline(always)]
fn cjk_stages<const SPARK: bool, E>(t: &Tables, b: &[u8], mut f: impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
    let mut i = 0;
    while i < b.len() {
        let (g, n) = char_at(t, b, i);
        // Every stage cuts every piece of the stage before. A group of digits is one
        // piece of DeepSeek's last stage too (no digit starts a match of it, and no
        // digit is a letter to prefix), so it is not cut again; Spark's last stage
        // (`\p{N}`) cuts it into its chars.
        if g & N != 0 {
            let end = if SPARK { i + n } else { digit_run(t, b, i + n, 3) };
            f(i, end)?;
            i = end;
            continue;
        }
        // A run of ideographs and kana, or the text up to the next digit or ideograph:
        // the last stage cuts either (kana runs hold punctuation: `・`, `゠`).
        let mut e = i + n;
        if cjk_kana(b, i) {
            while e < b.len() && cjk_kana(b, e) {
                e += 3;
            }
        } else {
            while e < b.len() {
                let (g, n) = char_at(t, b, e);
                if g & N != 0 || cjk_kana(b, e) {
                    break;
                }
                e += n;
            }
        }
        matches_and_gaps::<SPARK, E>(t, &b[i..e], i, &mut f)?;
        i = e;
    }
    Ok(())
}

/// The pieces of `Digits`: each numeric char (each run of them with `contiguous`) and each run of
/// other chars, with whether it is numeric.
#[inline(always)]
fn numbers<E>(b: &[u8], contiguous: bool, f: impl FnMut(usize, usize, bool) -> Result<(), E>) -> Result<(), E> {
    class_runs(b, contiguous, numeric_at, f)
}

/// [`numbers`] for the class `at` tells (whether the char at a position is in it, and its length).
#[inline(always)]
fn class_runs<E>(
    b: &[u8],
    contiguous: bool,
    at: impl Fn(&[u8], usize) -> (bool, usize),
    mut f: impl FnMut(usize, usize, bool) -> Result<(), E>,
) -> Result<(), E> {
    let mut i = 0;
    while i < b.len() {
        let (numeric, n) = at(b, i);
        let mut e = i + n;
        if !numeric || contiguous {
            while e < b.len() {
                let (next, m) = at(b, e);
                if next != numeric {
                    break;
                }
                e += m;
            }
        }
        f(i, e, numeric)?;
        i = e;
    }
    Ok(())
}

/// [`Isolating::DeepSeek3`] (with `SPARK`, Spark 2.5's third stage) on `b` as a text of its own
/// (its end is the text's end for the pattern's lookahead), the ranges offset by `at`.
fn matches_and_gaps<const SPARK: bool, E>(t: &Tables, b: &[u8], at: usize, f: &mut impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
    let (mut i, mut gap) = (0, None);
    while i < b.len() {
        match deepseek3::match_end::<SPARK>(t, b, i) {
            Some(end) => {
                if let Some(g) = gap.take() {
                    f(at + g, at + i)?;
                }
                f(at + i, at + end)?;
                i = end;
            }
            None => {
                gap.get_or_insert(i);
                i += char_at(t, b, i).1;
            }
        }
    }
    if let Some(g) = gap {
        f(at + g, at + b.len())?;
    }
    Ok(())
}
