//! Every merge agrees with every other: backtrack == heap == small (and the dispatcher), on the
//! real OpenAI rank files; the shared checker is also used by `toy_vocab_tests`.
//!
//! Inputs per vocabulary: slices of every corpus file with whitespace removed, long and short
//! synthetic pieces (one letter repeated, random letters, digits, emoji, spaces, mixed scripts,
//! random bytes), long pieces over random alphabets (with tables over the alphabet's bytes too),
//! and every token's own bytes. Their amount is `$BPEKIT_EQUIV_BYTES` (default
//! 1.5 MB in release builds, 150 kB in debug builds) plus the tokens; the rank files and corpora
//! are read in place from `$BPEKIT_TEST_DATA` (default `../shared/data`), and the tests skip with
//! a message without them.

use super::backtrack::{Backtrack, ByteSet};
use super::{byte_pair_encode_with, heap, small, Ranks};
use crate::vocab::Rank;
use std::path::PathBuf;
use std::time::Instant;

/// splitmix64: a small deterministic generator for test inputs.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn heap_encode(ranks: &Ranks, piece: &[u8]) -> Vec<Rank> {
    let mut out = Vec::new();
    if piece.len() == 1 {
        out.push(ranks[piece]);
    } else if !piece.is_empty() {
        heap::encode_into(ranks, usize::MAX, piece, &mut out).unwrap();
    }
    out
}

/// Compares backtrack (when given), heap and (for pieces up to `small_max` bytes) small.
pub(super) fn check(
    ranks: &Ranks,
    bt: Option<&Backtrack>,
    piece: &[u8],
    small_max: usize,
    what: &str,
) {
    if piece.is_empty() {
        return;
    }
    let want = heap_encode(ranks, piece);
    if piece.len() >= 2 && piece.len() <= small_max {
        let mut got = Vec::new();
        small::encode_into(ranks, piece, &mut got).unwrap();
        assert_eq!(
            got,
            want,
            "small != heap ({what}) on {:?}",
            String::from_utf8_lossy(piece)
        );
    }
    if let Some(bt) = bt {
        let mut got = Vec::new();
        if bt.avoids(piece) {
            // a token built out of rank order occurs in the piece: refused, `out` untouched
            assert!(!bt.encode_into(piece, &mut got) && got.is_empty(), "an avoided piece was encoded ({what})");
            return;
        }
        assert!(
            bt.encode_into(piece, &mut got),
            "backtrack found no sequence ({what})"
        );
        if got != want {
            let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
            panic!(
                "backtrack != heap ({what}), {} bytes, first difference at token {at}: {:?} vs {:?}",
                piece.len(),
                &got[at..(at + 5).min(got.len())],
                &want[at..(at + 5).min(want.len())],
            );
        }
    }
    // the dispatcher gives the same answer with or without the tables
    let mut got = Vec::new();
    byte_pair_encode_with(ranks, usize::MAX, bt, piece, &mut got).unwrap();
    assert_eq!(got, want, "dispatch ({what})");
}

fn data_dir() -> PathBuf {
    match std::env::var_os("BPEKIT_TEST_DATA") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"),
    }
}

fn budget() -> usize {
    let default = if cfg!(debug_assertions) {
        150_000
    } else {
        1_500_000
    };
    std::env::var("BPEKIT_EQUIV_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn load(name: &str) -> Option<Ranks> {
    let path = data_dir().join("ranks").join(format!("{name}.tiktoken"));
    match std::fs::read(&path) {
        Ok(data) => Some(crate::rankfile::parse(&data, name).unwrap()),
        Err(e) => {
            eprintln!(
                "SKIPPED: {name}: cannot read {} ({e}); set BPEKIT_TEST_DATA",
                path.display()
            );
            None
        }
    }
}

/// Every corpus file (sorted), whitespace removed so that the pieces are long.
fn corpus_files() -> Vec<(String, Vec<u8>)> {
    let root = data_dir().join("corpora");
    let mut paths = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                paths.push(p);
            }
        }
    }
    paths.sort();
    if paths.is_empty() {
        eprintln!(
            "SKIPPED: no corpora under {}; set BPEKIT_TEST_DATA",
            root.display()
        );
    }
    paths
        .into_iter()
        .filter_map(|p| {
            let data = std::fs::read(&p).ok()?;
            let squeezed = data
                .into_iter()
                .filter(|b| !b.is_ascii_whitespace())
                .collect();
            Some((p.display().to_string(), squeezed))
        })
        .collect()
}

fn repeat_pick(rng: &mut Rng, alphabet: &[&str], n_bytes: usize) -> Vec<u8> {
    let mut s = Vec::with_capacity(n_bytes + 8);
    while s.len() < n_bytes {
        s.extend_from_slice(alphabet[rng.below(alphabet.len())].as_bytes());
    }
    s
}

/// The synthetic inputs: runs of one letter, random letters, digits, emoji, random bytes, and
/// runs of mixed scripts.
const KINDS: [&str; 9] = [
    "a*N",
    "ab*N",
    "spaces",
    "random letters",
    "digits",
    "emoji",
    "mixed scripts",
    "random bytes",
    "random bytes from 3",
];

fn synthetic(rng: &mut Rng, kind: &str, n: usize) -> Vec<u8> {
    const LETTERS: [&str; 26] = [
        "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r",
        "s", "t", "u", "v", "w", "x", "y", "z",
    ];
    const DIGITS: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
    const EMOJI: [&str; 10] = ["😀", "😂", "🙂", "🎉", "🔥", "👍", "👍🏽", "❤️", "🇫🇷", "👨‍👩‍👧"];
    const SCRIPTS: [&str; 16] = [
        "hello",
        "Привет",
        "γειά",
        "שלום",
        "مرحبا",
        "नमस्ते",
        "你好",
        "こんにちは",
        "안녕",
        "สวัสดี",
        "!?",
        "...",
        "1234",
        "\u{0301}",
        "ß",
        "ÆØÅ",
    ];
    match kind {
        "a*N" => vec![b'a'; n],
        "ab*N" => b"ab".repeat(n / 2 + 1),
        "spaces" => vec![b' '; n],
        "random letters" => repeat_pick(rng, &LETTERS, n),
        "digits" => repeat_pick(rng, &DIGITS, n),
        "emoji" => repeat_pick(rng, &EMOJI, n),
        "mixed scripts" => repeat_pick(rng, &SCRIPTS, n),
        "random bytes" => (0..n).map(|_| rng.next() as u8).collect(),
        // few distinct bytes make long runs of multi-byte tokens
        _ => (0..n).map(|_| b"xyz"[rng.below(3)]).collect(),
    }
}

fn check_real_vocab(name: &str) {
    let Some(ranks) = load(name) else { return };
    let t0 = Instant::now();
    let bt = Backtrack::new(&ranks).unwrap_or_else(|| panic!("{name}: backtrack tables rejected"));
    eprintln!(
        "{name}: tables built in {:.1} ms, {} tokens left out, ~{:.1} MB",
        t0.elapsed().as_secs_f64() * 1e3,
        bt.excluded,
        bt.memory_bytes() as f64 / 1e6
    );
    let budget = budget();
    let mut rng = Rng::new(0x5eed ^ name.len() as u64);
    let mut compared = 0usize;
    // half the budget: slices of every corpus file, lengths 1..=8 kB
    let files = corpus_files();
    let per_file = budget / 2 / files.len().max(1);
    for (path, data) in &files {
        let mut used = 0;
        while used < per_file && !data.is_empty() {
            let len = (1 + rng.below(8192))
                .min(data.len())
                .min(per_file - used + 1);
            let start = rng.below(data.len() - len + 1);
            check(
                &ranks,
                Some(&bt),
                &data[start..start + len],
                600,
                &format!("{name} {path}@{start}"),
            );
            used += len;
        }
        compared += used;
    }
    // the other half: synthetic inputs, in pieces of random length plus one long piece each
    let per_kind = budget / 2 / KINDS.len();
    for kind in KINDS {
        let long = synthetic(&mut rng, kind, per_kind / 2);
        check(
            &ranks,
            Some(&bt),
            &long,
            0,
            &format!("{name} {kind} x{}", long.len()),
        );
        let mut used = long.len();
        while used < per_kind {
            let len = 1 + rng.below(2000);
            let piece = synthetic(&mut rng, kind, len);
            check(&ranks, Some(&bt), &piece, 600, &format!("{name} {kind}"));
            used += piece.len();
        }
        compared += used;
    }
    // tables for the tokens over one input's bytes agree on that input
    for kind in KINDS {
        let long = synthetic(&mut rng, kind, 20_000);
        let set = ByteSet::of(&long);
        if (0..=255u8).filter(|&b| set.has(b)).count() > 128 {
            continue;
        }
        let part = Backtrack::for_bytes(&ranks, &set)
            .unwrap_or_else(|| panic!("{name} {kind}: sub-vocabulary tables rejected"));
        check(&ranks, Some(&part), &long, 300, &format!("{name} {kind} over its bytes"));
    }
    // random alphabets (a subset of the lowercase letters, or arbitrary byte values): tables over
    // the alphabet (16-bit ids) and the full tables (16-bit below 65,535 tokens) agree
    assert_eq!(bt.is_narrow(), ranks.len() < 0xFFFF, "{name}: width of the full tables");
    for case in 0..12 {
        let size = 2 + rng.below(if case % 2 == 0 { 25 } else { 40 });
        let alphabet: Vec<u8> = (0..size)
            .map(|_| if case % 2 == 0 { b'a' + rng.below(26) as u8 } else { rng.below(256) as u8 })
            .collect();
        let long: Vec<u8> = (0..4000).map(|_| alphabet[rng.below(size)]).collect();
        let part = Backtrack::for_bytes(&ranks, &ByteSet::of(&long))
            .unwrap_or_else(|| panic!("{name} alphabet {alphabet:?}: sub-vocabulary tables rejected"));
        assert!(part.is_narrow(), "{name}: {} tokens over {alphabet:?}", part.len());
        let what = format!("{name} random alphabet {alphabet:?}");
        check(&ranks, Some(&part), &long, 0, &what);
        check(&ranks, Some(&bt), &long, 0, &what);
    }
    check_char_alphabets(name, &ranks, &bt, &mut rng);
    for n in 1..=300 {
        check(
            &ranks,
            Some(&bt),
            &vec![b'a'; n],
            600,
            &format!("{name} a*{n}"),
        );
    }
    // every token's own bytes (this exercises every entry of the split table)
    for token in ranks.keys() {
        check(
            &ranks,
            Some(&bt),
            token,
            600,
            &format!("{name} token {token:?}"),
        );
        compared += token.len();
    }
    eprintln!("{name}: {compared} bytes compared");
}

/// A random character of `kind`: a CJK ideograph, a code point from any plane (no surrogates), or
/// an emoji (with skin tones and joiners, so tokens span characters).
fn random_char(rng: &mut Rng, kind: usize) -> char {
    let code = match kind {
        0 => 0x4E00 + rng.below(0x9FA5 - 0x4E00) as u32,
        1 => match rng.below(3) {
            0 => 0x80 + rng.below(0x800 - 0x80) as u32,
            1 => 0xE000 + rng.below(0x10000 - 0xE000) as u32,
            _ => 0x10000 + rng.below(0x110000 - 0x10000) as u32,
        },
        _ => [0x1F600 + rng.below(80) as u32, 0x1F3FB + rng.below(5) as u32, 0x200D, 0x2764][rng.below(4)],
    };
    char::from_u32(code).unwrap_or('?')
}

/// Long pieces over random alphabets of CJK ideographs, code points from every plane and emoji
/// (multi-byte characters: wide trie nodes, tokens that are parts of characters): tables over
/// the piece's bytes and the full tables agree with the heap merge.
fn check_char_alphabets(name: &str, ranks: &Ranks, bt: &Backtrack, rng: &mut Rng) {
    for case in 0..9 {
        let kind = case % 3;
        let size = 2 + rng.below([3000, 300, 40][kind]);
        let alphabet: Vec<String> = (0..size).map(|_| random_char(rng, kind).to_string()).collect();
        let alphabet: Vec<&str> = alphabet.iter().map(String::as_str).collect();
        let long = repeat_pick(rng, &alphabet, 6000);
        let what = format!("{name} random characters (kind {kind}, {size})");
        if let Some(part) = Backtrack::for_bytes(ranks, &ByteSet::of(&long)) {
            check(ranks, Some(&part), &long, 0, &what);
        } else {
            panic!("{what}: sub-vocabulary tables rejected");
        }
        check(ranks, Some(bt), &long, 0, &what);
    }
}

#[test]
fn real_cl100k() {
    check_real_vocab("cl100k_base");
}

#[test]
fn real_o200k() {
    check_real_vocab("o200k_base");
}

#[test]
fn real_r50k() {
    check_real_vocab("r50k_base");
}

#[test]
fn real_p50k() {
    check_real_vocab("p50k_base");
}
