//! Random text built from the characters the patterns care about, split both ways.
//!
//! The generator is a fixed-seed xorshift, so a failure reproduces. `BPEKIT_FUZZ_STRINGS` sets
//! how many strings are tried (default 300,000, a few million chars).

use super::{compare, splitters, Scratch};

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const ASCII_LETTERS: &[&str] =
    &["a", "b", "e", "s", "t", "x", "A", "B", "E", "S", "T", "X", "ll", "LL", "re", "Ve"];
const PUNCT: &[&str] = &[
    "!", ".", ",", "-", "(", ")", "\"", "#", "$", "%", "&", "*", "+", ":", ";", "<", "=", ">", "?",
    "@", "[", "\\", "]", "^", "_", "`", "{", "|", "}", "~", "/", "//", "\u{2019}", "\u{a9}",
    "\u{20ac}", "\u{2122}", "\u{fffd}", "\u{200b}", "\u{200d}", "\u{feff}", "\u{1}", "\u{7f}",
    "\u{1c}", "\u{1f}",
];
const SPACES: &[&str] = &[
    " ", " ", " ", "  ", "\t", "\n", "\n", "\r", "\r\n", "\u{b}", "\u{c}", "\u{85}", "\u{a0}",
    "\u{1680}", "\u{2000}", "\u{2009}", "\u{2028}", "\u{2029}", "\u{202f}", "\u{3000}",
];
const LETTERS: &[&str] = &[
    "\u{e9}",
    "\u{df}",
    "\u{c9}",
    "\u{17f}",
    "\u{212a}",
    "\u{212b}",
    "\u{3b1}",
    "\u{3a3}",
    "\u{3c2}",
    "\u{436}",
    "\u{416}",
    "\u{10d0}",
    "\u{1c90}",
    "\u{561}",
    "\u{531}",
    "\u{5d0}",
    "\u{627}",
    "\u{915}",
    "\u{e01}",
    "\u{4e2d}",
    "\u{6587}",
    "\u{3042}",
    "\u{30ab}",
    "\u{ac00}",
    "\u{1c5}",
    "\u{1f88}",
    "\u{2b0}",
    "\u{30fc}",
    "\u{1d400}",
    "\u{1d41a}",
    "\u{10400}",
    "\u{10428}",
    "\u{20000}",
    "\u{aa}",
    "\u{1e9e}",
];
const MARKS: &[&str] =
    &["\u{301}", "\u{308}", "\u{903}", "\u{93f}", "\u{20dd}", "\u{fe0f}", "\u{e0100}", "\u{1ab0}"];
const DIGITS: &[&str] = &[
    "0",
    "1",
    "7",
    "9",
    "42",
    "1234",
    "\u{660}",
    "\u{966}",
    "\u{ff10}",
    "\u{216b}",
    "\u{b2}",
    "\u{bd}",
    "\u{1d7ce}",
    "\u{2460}",
];
const EMOJI: &[&str] = &[
    "\u{1f600}",
    "\u{1f44d}\u{1f3fd}",
    "\u{1f468}\u{200d}\u{1f469}",
    "\u{1f1fa}\u{1f1f8}",
    "\u{2764}\u{fe0f}",
];
const APOSTROPHES: &[&str] = &[
    "'", "'s", "'S", "'t", "'T", "'re", "'RE", "'rE", "'ve", "'VE", "'m", "'M", "'ll", "'LL",
    "'lL", "'d", "'D", "'\u{17f}", "'l", "'r", "'v", "''",
];

/// One random string of up to `max_tokens` tokens.
fn random_text(rng: &mut XorShift, max_tokens: usize, out: &mut String) {
    out.clear();
    let tokens = rng.below(max_tokens + 1);
    for _ in 0..tokens {
        let item = match rng.below(100) {
            0..=24 => rng.pick(ASCII_LETTERS),
            25..=34 => rng.pick(PUNCT),
            35..=54 => rng.pick(SPACES),
            55..=66 => rng.pick(LETTERS),
            67..=71 => rng.pick(MARKS),
            72..=79 => rng.pick(DIGITS),
            80..=83 => rng.pick(EMOJI),
            84..=93 => rng.pick(APOSTROPHES),
            _ => {
                // Any code point at all.
                let c = loop {
                    if let Some(c) = char::from_u32((rng.next() % 0x11_0000) as u32) {
                        break c;
                    }
                };
                out.push(c);
                continue;
            }
        };
        // Sometimes a run of the same item, for long whitespace and letter runs.
        let repeat = if rng.below(8) == 0 { 1 + rng.below(6) } else { 1 };
        for _ in 0..repeat {
            out.push_str(item);
        }
    }
}

#[test]
fn random_text_agrees() {
    let strings: usize =
        std::env::var("BPEKIT_FUZZ_STRINGS").ok().and_then(|v| v.parse().ok()).unwrap_or(300_000);
    let splitters = splitters(true);
    let mut scratch = Scratch::default();
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut text = String::new();
    let mut chars = 0;
    for i in 0..strings {
        random_text(&mut rng, if i % 100 == 0 { 400 } else { 24 }, &mut text);
        chars += text.chars().count();
        for (_, known, regex) in &splitters {
            if let Err(e) = compare(*known, regex, &text, &mut scratch) {
                panic!("string {i} {text:?}: {e}");
            }
        }
    }
    eprintln!("fuzz: {strings} strings, {chars} chars, each split by {} patterns", splitters.len());
    assert!(strings < 1000 || chars > 1_000_000);
}
