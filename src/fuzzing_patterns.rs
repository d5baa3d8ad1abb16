//! The `patterns` fuzz target: the compiled pre-tokenizer matcher (`pretokenize::compiled`)
//! against the regex engine, on patterns of the shapes it takes (llama.cpp's stages, the known
//! families, and patterns from a grammar of classes, counts, literal alternations and trailing
//! lookaheads) and on text over the characters those patterns tell apart.
//!
//! `data[0]` picks one of [`PATTERNS`] patterns (the real ones first, then the grammar's from a
//! fixed seed per index), compiled once per process; the rest is the text: pieces of [`ALPHABET`]
//! by byte when `data[1]` is even, else the bytes themselves as UTF-8 (lossy). Every pattern the
//! compiler takes must give the engine's matches; a spent budget must report where the search
//! stopped, every match before it right (the engine goes on from there).

use crate::pretokenize::compiled::{self, Program};
use crate::pretokenize::regex_split::compile as engine;
use std::sync::OnceLock;

/// Patterns from llama.cpp's pre-tokenizer table (`bpekit.formats.llamacpp`) and the families,
/// with whether they compile.
pub const REAL: &[(&str, bool)] = &[
    // GPT-2, cl100k, o200k, Llama 3, Qwen2 (hand-written, so the compiled matcher is a second check)
    (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+", true),
    (r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+", true),
    (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+", true),
    (r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+", true),
    (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+", true),
    // llama.cpp's stages
    (r"[\p{P}\$\+<=>\^~\|]+", true),
    (r"\p{N}+", true),
    ("[0-9][0-9][0-9]", true),
    (r"\p{N}{1,3}", true),
    (r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+", true),
    ("[\r\n]", true),
    (r"\s?[A-Za-z\xb5\xc0-\xd6\xd8-\xf6\xf8-\u{1ba}\u{1bc}-\u{1bf}\u{1c4}-\u{293}\u{370}-\u{373}\u{410}-\u{44f}]+", true),
    ("\\s?[!-/:-~\u{ff01}-\u{ff0f}\u{ff1a}-\u{ff5e}\u{2018}-\u{201f}\u{3000}-\u{3002}]+", true),
    (r"\s+$", true),
    ("[\u{4e00}-\u{9fa5}\u{0800}-\u{4e00}\u{ac00}-\u{d7ff}]+", true),
    (r"\s?\p{L}+", true),
    (r"\s?\p{P}+", true),
    (r"\p{N}", true),
    ("[\u{4e00}-\u{9fa5}\u{3040}-\u{309f}\u{30a0}-\u{30ff}]+", true),
    (r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"##, true),
    ("[\u{ac00}-\u{d7a3}\u{3131}-\u{318e}]+|[\u{ff01}\u{2026}\u{201c}\u{201d}\u{2018}\u{2019}\u{2014}\u{ff1a}\u{ff1b}\u{ff0c}\u{3001}-\u{303f}\u{fe30}-\u{fe4f}]+|[\u{3105}-\u{312f}]+|[\u{4e00}-\u{9fa5}\u{3040}-\u{309f}\u{30a0}-\u{30ff}]+", true),
    (r"[\p{P}\$\+<=>\^~\|`]+", true),
    (r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}", true),
    ("[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", true),
    (" ?[^(\\s|.,!?\u{2026}\u{3002}\u{ff0c}\u{3001}\u{0964}\u{06d4}\u{060c})]+", true),
    ("[^\\n]+|[\\n]+", true),
    (r"\S+", true),
    ("<sentinel:[0-9]+>", true),
    ("([\\t\\n]|    |  )", true),
    ("[\\p{P}!-/:-@\\[-`{-~]", true),
    ("(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", true),
    (r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+", false),
    (r"\d{1,3}(?=(?:\d{3})*\b)", false),
    (r"(?=(\d{3})+(?!\d))", false),
    (r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|\p{N}|\s+", true),
    // granite-embed-multi-97m: one-char lookaheads inside repeated groups
    (r"[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+", true),
    (r"((?!\p{N})\S)+|(?=a)b", false),
    (r"(a)\1", false),
    (r"a*?b", false),
    (r"\s*", false),
];

pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Pieces of random text: what the patterns' classes and literals tell apart.
pub const ALPHABET: &[&str] = &[
    "a", "b", "s", "t", "S", "T", "A", "Z", "ll", "LL", "re", "ve", "d", "m", "x", "IMG", "k", "\u{212a}", "\u{17f}",
    "'", "'", "\"", "!", ".", ",", "?", "-", "(", ")", "|", "$", "+", "<", "=", "^", "~", "`", "/", "\\", "_", "{", "}", "@", "#",
    " ", " ", " ", "  ", "\t", "\n", "\n", "\r", "\r\n", "\u{b}", "\u{85}", "\u{a0}", "\u{2003}", "\u{3000}", "\u{2028}",
    "0", "1", "7", "42", "123", "\u{663}", "\u{b2}", "\u{216b}", "\u{2460}",
    "\u{e9}", "\u{c9}", "\u{df}", "\u{3b1}", "\u{3a3}", "\u{436}", "\u{416}", "\u{5d0}", "\u{627}", "\u{915}", "\u{93f}",
    "\u{e01}", "\u{4e2d}", "\u{6587}", "\u{3042}", "\u{30ab}", "\u{30fc}", "\u{ac00}", "\u{3131}", "\u{3105}", "\u{20000}",
    "\u{301}", "\u{308}", "\u{1c5}", "\u{2b0}", "\u{aa}", "\u{1d400}", "\u{10428}",
    "\u{2026}", "\u{3002}", "\u{ff0c}", "\u{3001}", "\u{964}", "\u{6d4}", "\u{60c}", "\u{2019}", "\u{201c}", "\u{ff01}",
    "\u{20ac}", "\u{a9}", "\u{1f44d}", "\u{200d}", "\u{fe0f}", "\u{fffd}", "\u{0}", "\u{7f}",
];

/// Text of up to `max_pieces` pieces of [`ALPHABET`].
#[cfg(test)]
pub fn random_text(rng: &mut XorShift, max_pieces: usize) -> String {
    let n = rng.below(max_pieces) + 1;
    (0..n).map(|_| rng.pick(ALPHABET)).collect()
}

/// The grammar of [`random_pattern`]: classes, counts, literal groups, trailing lookaheads.
const CLASSES: &[&str] = &[
    " ", r"\s", r"\S", r"\p{L}", r"\p{N}", r"[\r\n]", r"[^\s\p{L}\p{N}]", r"[^\r\n\p{L}\p{N}]", r"\p{Lu}", r"\p{Ll}",
    "[A-Za-z]", "'", "a", r"\d", r"[\p{L}\p{M}]", r"\p{M}", ".", r"[\p{P}\p{S}]", "[^a-z]",
    r"((?=[\p{L}\p{M}])([^a-z]))", r"((?!\p{N})\S)",
];
const COUNTS: &[&str] = &["", "", "?", "*", "+", "{1,3}", "{2}", "{0,2}", "{1,3}+", "++", "?+", "*+"];
const LITERALS: &[&str] = &["(?:'s|'t|'re)", "(?i:'s|'ll|'d)", "'(?i:[sdmt]|ll|ve|re)", "(?:ab|a)", "(a|S|\\d)", "(ab)", "(?:a|ab)"];
const LOOKS: &[&str] = &["", "", "", "(?!\\S)", "(?=\\s)", "(?!\\p{L})", "$"];

/// A pattern of one to four alternatives of one to three atoms each, from the grammar above.
pub fn random_pattern(rng: &mut XorShift) -> String {
    let alts = rng.below(4) + 1;
    let mut out = Vec::new();
    for _ in 0..alts {
        let mut alt = String::new();
        for _ in 0..rng.below(3) + 1 {
            if rng.below(8) == 0 {
                alt.push_str(rng.pick(LITERALS));
                alt.push_str(match rng.below(4) {
                    0 => rng.pick(COUNTS),
                    1 => "",
                    _ => "?",
                });
            } else {
                alt.push_str(rng.pick(CLASSES));
                alt.push_str(rng.pick(COUNTS));
            }
        }
        alt.push_str(rng.pick(LOOKS));
        out.push(alt);
    }
    let flags = if rng.below(4) == 0 { "(?m)" } else { "" };
    format!("{flags}{}", out.join("|"))
}

/// The engine's non-empty matches.
#[cfg(test)]
pub fn engine_matches(re: &fancy_regex::Regex, text: &str) -> Vec<(usize, usize)> {
    compiled::engine_matches(re, text).expect("no backtrack limit on this text")
}

/// Panics unless the compiled matcher, and the engine from where it stopped if it spent its
/// budget (as `RegexSplitter` goes on), give the engine's matches, and unless a text where
/// [`Program::can_match_in`] says no match starts has none. Returns whether it spent it
/// (a pattern whose runs overlap, `.+[\p{P}\p{S}]?[^\s\p{L}\p{N}]+$`, does on a line of a few
/// hundred bytes). Where the engine itself gives up (its backtracking limit), there is nothing
/// to compare: `RegexSplitter` reports the engine's error then, as it did before.
pub fn check(pattern: &str, p: &Program, re: &fancy_regex::Regex, text: &str) -> bool {
    let (mut got, stopped) = p.matches(text);
    // the splitter's shortcut: a text where no match can start is one gap
    assert!(p.can_match_in(text.as_bytes()) || got.is_empty() && stopped.is_none(), "pattern {pattern:?}: a match where none can start");
    let Some(want) = compiled::engine_matches(re, text) else { return stopped.is_some() };
    if let Some(at) = stopped {
        assert!(got.last().map_or(true, |&(_, e)| e <= at), "pattern {pattern:?}: stopped at {at}, before its last match");
        let mut from = at;
        loop {
            match re.find_from_pos(text, from) {
                Ok(Some(m)) => {
                    got.push((m.start(), m.end()));
                    from = m.end();
                }
                Ok(None) => break,
                Err(_) => return true, // the engine gives up from here: nothing to compare
            }
        }
    }
    if got != want {
        let shown: String = text.chars().take(80).collect();
        let same = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
        panic!("pattern {pattern:?} on {} bytes {shown:?}...: first difference at match {same}", text.len());
    }
    stopped.is_some()
}

/// How many patterns the target picks from: [`REAL`], then the grammar's.
pub const PATTERNS: usize = 256;

/// A pattern and, if it compiles, its program and the engine's regex.
type Case = (String, Option<(Program, fancy_regex::Regex)>);

/// Pattern `i` (`i < PATTERNS`).
fn pattern(i: usize) -> &'static Case {
    static ALL: OnceLock<Vec<OnceLock<Case>>> = OnceLock::new();
    let all = ALL.get_or_init(|| (0..PATTERNS).map(|_| OnceLock::new()).collect());
    all[i].get_or_init(|| {
        let source = match REAL.get(i) {
            Some(&(p, _)) => p.to_string(),
            None => random_pattern(&mut XorShift(0x5EED_0000 + i as u64)),
        };
        let compiled = match (Program::compile(&source), engine(&source)) {
            (Ok(p), Ok(re)) => Some((p, re)),
            _ => None,
        };
        (source, compiled)
    })
}

/// The target body (see the module doc).
pub fn patterns(data: &[u8]) {
    let [pick, mode, rest @ ..] = data else { return };
    let (source, compiled) = pattern(*pick as usize % PATTERNS);
    let Some((program, re)) = compiled else { return };
    let text: String = if mode % 2 == 0 {
        rest.iter().map(|&b| ALPHABET[b as usize % ALPHABET.len()]).collect()
    } else {
        String::from_utf8_lossy(rest).into_owned()
    };
    check(source, program, re, &text);
}

