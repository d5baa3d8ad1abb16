//! Times the hand-written splitters against fancy-regex on the shared corpora.
//!
//! `cargo run --release --no-default-features --example split_bench [DATA_DIR]`
//! (default `$BPEKIT_TEST_DATA`, else `../shared/data` next to the crate). Prints input MB/s (per CPU-second of
//! the benchmark thread) for each pattern, best of 5 runs (regex: best of 2), after checking that both produce the same number
//! of pieces (the tests check that the pieces are identical). `--hand-only` skips fancy-regex;
//! `--only=NAME` (e.g. `--only=O200k`) times one family. `--compiled` times the compiled matcher
//! (`pretokenize::compiled`) instead, beside the hand-written splitter where the pattern has one,
//! on the known patterns and on llama.cpp stages that only it and the regex engine split.
//!
//! Corpora: tinyshakespeare; the 46 bible translations (mostly Latin script); the bible
//! translations that are mostly non-ASCII bytes (Armenian, Cherokee, Coptic, Gujarati, Ojibwa
//! syllabics, Syriac, Ukrainian: 12.2 MB); the tatoeba sentences (113 languages, 3.9 MB); and
//! 10 MB of random Unicode (the distribution of `tests/hardening/hostile.py`'s `random_unicode`,
//! without its lone surrogates, from a fixed seed). `--corpora=a,b` picks some by name.

use bpekit::pretokenize::compiled::Program;
use bpekit::pretokenize::known::{unicode, Known, KNOWN_PATTERNS};
use bpekit::pretokenize::Pretokenizer;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Seconds this thread has spent on a CPU (Linux's schedstat, in ns), else wall-clock seconds.
/// CPU time keeps the numbers usable on a machine shared with other jobs.
fn cpu_seconds(wall: Instant) -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or_else(|| wall.elapsed().as_secs_f64(), |ns| ns / 1e9)
}

/// The best seconds per call over `runs` samples of `reps` calls each (the CPU clock ticks
/// coarsely, so a sample must last well over a few milliseconds).
fn best_of(runs: usize, reps: usize, mut run: impl FnMut() -> usize) -> (f64, usize) {
    let epoch = Instant::now();
    let mut best = f64::INFINITY;
    let mut pieces = 0;
    for _ in 0..runs {
        let start = cpu_seconds(epoch);
        for _ in 0..reps {
            pieces = run();
        }
        best = best.min((cpu_seconds(epoch) - start) / reps as f64);
    }
    (best, pieces)
}

/// About `n` bytes of random chars: 30% ASCII, 50% from the rest of the BMP (surrogates drawn
/// again), 20% from the other planes; splitmix64 from a fixed seed.
fn random_unicode(n: usize) -> String {
    let mut state = 9u64;
    let mut next = move |below: u32| {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % u64::from(below)) as u32
    };
    let mut s = String::with_capacity(n + 4);
    while s.len() < n {
        let plane = next(10);
        let (lo, hi) = match plane {
            0..=2 => (0, 0x80),
            3..=7 => (0x80, 0x1_0000),
            _ => (0x1_0000, 0x11_0000),
        };
        if let Some(c) = char::from_u32(lo + next(hi - lo)) {
            s.push(c);
        }
    }
    s
}

fn count(p: &Pretokenizer, texts: &[String]) -> usize {
    let mut n = 0;
    for t in texts {
        p.for_each_piece(t, |_, _| {
            n += 1;
            Ok(())
        })
        .unwrap();
    }
    n
}

/// llama.cpp stages that no hand-written splitter knows (`bpekit.formats.llamacpp`: JAIS2,
/// UFAKZEKA, MINICPM5_2, PORO, DEEPSEEK_CODER_2).
const OTHERS: [(&str, &str); 5] = [
    ("jais-2", r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}"),
    ("ufakzeka", r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
    ("minicpm5", r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
    ("poro", " ?[^(\\s|.,!?\u{2026}\u{3002}\u{ff0c}\u{3001}\u{0964}\u{06d4}\u{060c})]+"),
    ("deepseek-coder letters", r"\s?\p{L}+"),
];

fn count_compiled(p: &Program, texts: &[String]) -> usize {
    let mut n = 0;
    for t in texts {
        let done = p.for_each_match(t, |_, _| {
            n += 1;
            Ok::<(), ()>(())
        });
        assert_eq!(done, Ok(Ok(())), "the budget is not spent on the corpora");
    }
    n
}

fn main() {
    let hand_only = std::env::args().any(|a| a == "--hand-only");
    let compiled = std::env::args().any(|a| a == "--compiled");
    let only = std::env::args().find_map(|a| a.strip_prefix("--only=").map(str::to_owned));
    let dir =
        std::env::args().skip(1).find(|a| !a.starts_with("--")).map(PathBuf::from).unwrap_or_else(
            || {
                std::env::var_os("BPEKIT_TEST_DATA")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"))
            },
        );
    let corpora = dir.join("corpora");
    let read =
        |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let shakespeare = vec![read(&corpora.join("tinyshakespeare.txt"))];
    let mut bible_paths: Vec<PathBuf> =
        std::fs::read_dir(corpora.join("bible")).unwrap().flatten().map(|e| e.path()).collect();
    bible_paths.sort();
    let bible: Vec<String> = bible_paths.iter().map(|p| read(p)).collect();
    let non_latin: Vec<String> = bible
        .iter()
        .filter(|t| t.bytes().filter(|&x| x >= 0x80).count() * 2 > t.len())
        .cloned()
        .collect();
    let mut tatoeba_paths: Vec<PathBuf> =
        std::fs::read_dir(corpora.join("tatoeba")).unwrap().flatten().map(|e| e.path()).collect();
    tatoeba_paths.sort();
    let tatoeba: Vec<String> = tatoeba_paths.iter().map(|p| read(p)).collect();
    let random = vec![random_unicode(10_000_000)];
    let picked = std::env::args().find_map(|a| a.strip_prefix("--corpora=").map(str::to_owned));

    let start = Instant::now();
    let tables = unicode::build_tables();
    println!("class tables: built in {:?} ({:?})", start.elapsed(), tables.flags('a' as u32));

    for (name, texts) in [
        ("tinyshakespeare", &shakespeare),
        ("bible", &bible),
        ("bible-non-latin", &non_latin),
        ("tatoeba", &tatoeba),
        ("random-unicode", &random),
    ] {
        if picked.as_ref().is_some_and(|p| !p.split(',').any(|c| c == name)) {
            continue;
        }
        let mb = texts.iter().map(String::len).sum::<usize>() as f64 / 1e6;
        println!("{name} ({mb:.1} MB): pattern, hand MB/s, fancy-regex MB/s, speed-up");
        let wanted = |k: &Known| only.as_ref().map_or(true, |o| format!("{k:?}") == *o);
        if compiled {
            let known = KNOWN_PATTERNS.iter().filter(|(p, k)| !p.starts_with("'s") && wanted(k)).map(|(p, k)| (format!("{k:?}"), *p));
            for (label, pattern) in known.chain(OTHERS.iter().map(|&(l, p)| (l.to_string(), p))) {
                let program = Program::compile(pattern).unwrap_or_else(|e| panic!("{label}: {e}"));
                let (tc, nc) = best_of(5, (50.0 / mb).ceil() as usize, || count_compiled(&program, texts));
                let hand = Pretokenizer::new(pattern).unwrap();
                let hand = hand.known().map(|_| best_of(5, (50.0 / mb).ceil() as usize, || count(&hand, texts)));
                let regex = Pretokenizer::with_regex(pattern).unwrap();
                let (tr, nr) = best_of(2, 1, || count(&regex, texts));
                assert_eq!(nc, nr, "{label}: piece counts differ");
                let hand = hand.map_or(String::new(), |(th, _)| format!(", hand {:.0} MB/s", mb / th));
                println!("  {label}: compiled {:.0} / regex {:.1} MB/s (x{:.1}){hand}", mb / tc, mb / tr, tr / tc);
            }
            continue;
        }
        for (pattern, known) in
            KNOWN_PATTERNS.iter().filter(|(p, k)| !p.starts_with("'s") && wanted(k))
        {
            let hand = Pretokenizer::new(pattern).unwrap();
            let (th, nh) = best_of(5, (50.0 / mb).ceil() as usize, || count(&hand, texts));
            if hand_only {
                println!("  {known:?}: {:.0} MB/s, {nh} pieces", mb / th);
                continue;
            }
            let regex = Pretokenizer::with_regex(pattern).unwrap();
            let (tr, nr) = best_of(2, 1, || count(&regex, texts));
            assert_eq!(nh, nr, "{known:?}: piece counts differ");
            println!("  {known:?}: {:.0} / {:.1} MB/s (x{:.1})", mb / th, mb / tr, tr / th);
        }
    }
}
