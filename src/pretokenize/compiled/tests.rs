//! The compiled matcher against fancy-regex: real patterns (llama.cpp's pre-tokenizer stages,
//! the known families) and random ones from a grammar of the shapes it takes, on random text
//! from the characters the patterns care about. `BPEKIT_FUZZ_STRINGS` scales the random parts.

use super::*;
use crate::fuzzing::patterns_target::{check, engine_matches as regex_matches, random_pattern, random_text, XorShift, REAL};
use crate::pretokenize::regex_split::compile as engine;

fn strings() -> usize {
    std::env::var("BPEKIT_FUZZ_STRINGS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000)
}

#[test]
fn real_patterns_compile_or_not_as_listed_and_agree_with_the_engine() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for &(pattern, compiles) in REAL {
        let re = engine(pattern).expect("the pattern is valid");
        let program = Program::compile(pattern);
        assert_eq!(program.is_ok(), compiles, "{pattern:?}: {:?}", program.as_ref().err());
        let Ok(p) = program else { continue };
        assert!(agrees(&p, &re, PROBE), "{pattern:?} on the probe");
        for _ in 0..strings() / 8 {
            let text = random_text(&mut rng, 40);
            assert!(!check(pattern, &p, &re, &text), "{pattern:?} spent its budget on {text:?}");
        }
    }
}

#[test]
fn long_runs_stay_within_the_budget() {
    let texts = [
        " ".repeat(100_000),
        "\n".repeat(100_000),
        " \n".repeat(50_000),
        "a".repeat(100_000),
        "A".repeat(100_000),
        "\u{301}".repeat(50_000),
        format!("{}x", " ".repeat(100_000)),
        "1".repeat(100_000),
        "'s".repeat(50_000),
        "\u{4e2d}".repeat(30_000),
    ];
    for &(pattern, compiles) in REAL.iter().filter(|(_, c)| *c) {
        let _ = compiles;
        let re = engine(pattern).unwrap();
        let p = Program::compile(pattern).unwrap();
        for text in &texts {
            check(pattern, &p, &re, text);
        }
    }
}

/// A pattern whose runs overlap so that an attempt costs the rest of the text: the budget stops
/// the compiled matcher, which reports where it stopped, and every match before it is right.
#[test]
fn a_spent_budget_reports_where_the_search_stopped() {
    let pattern = r"\s*[\r\n]+x|\s";
    let p = Program::compile(pattern).unwrap();
    let re = engine(pattern).unwrap();
    let text = "\n".repeat(5_000);
    let mut got = Vec::new();
    let stopped = p.for_each_match(&text, |s, e| {
        got.push((s, e));
        Ok::<(), ()>(())
    });
    let Ok(Err(at)) = stopped else { panic!("expected the budget to run out") };
    let want = regex_matches(&re, &text);
    assert_eq!(got[..], want[..got.len()]);
    assert!(got.last().map_or(true, |&(_, e)| e == at));
}

#[test]
fn random_patterns_agree_with_the_engine() {
    let mut rng = XorShift(0xD1B5_4A32_D192_ED03);
    let (mut compiled, mut tried) = (0, 0);
    for _ in 0..strings() / 20 {
        let pattern = random_pattern(&mut rng);
        let Ok(re) = engine(&pattern) else { continue };
        tried += 1;
        let Ok(p) = Program::compile(&pattern) else { continue };
        compiled += 1;
        for _ in 0..20 {
            check(&pattern, &p, &re, &random_text(&mut rng, 24));
        }
    }
    // (an alternative of optional atoms alone matches the empty string: about half are refused for it)
    assert!(compiled * 3 > tried, "a third of the random patterns compile ({compiled} of {tried})");
}


/// fancy-regex 0.20's optimizer rewrites a run, an optional run and a run of the same thing in a
/// row, and the rewrite matches differently: 0.20.0 found `b` in `b` for `b+c?b+`, 0.20.2 still
/// finds `#िtk` where the pattern says `#िtkv`. The engine compiles such patterns without the
/// optimizer (`regex_split::compile`); the compiled matcher agrees with it and with `regex`.
#[test]
fn the_engine_matches_runs_around_an_optional_run_as_the_pattern_says() {
    let cases = [
        ("b+c?b+", "b", vec![]),
        ("=+a?=+", "x=", vec![]),
        (r"[^\s\p{L}\p{N}]+(?:ab|a)?[^\s\p{L}\p{N}]+(?!\S)", "\u{3a3}=", vec![]),
        (r"\S{1,3}[^\s\p{L}\p{N}]?\S{2}", "#\u{93f}tkve", vec!["#\u{93f}tkv"]),
    ];
    for (pattern, text, want) in cases {
        let re = engine(pattern).unwrap();
        let show = |v: Vec<(usize, usize)>| v.into_iter().map(|(s, e)| &text[s..e]).collect::<Vec<_>>();
        assert_eq!(show(regex_matches(&re, text)), want, "{pattern:?} on {text:?}");
        assert_eq!(show(Program::compile(pattern).unwrap().matches(text).0), want, "{pattern:?} on {text:?}");
        if let Ok(plain) = regex::Regex::new(pattern) {
            assert_eq!(show(plain.find_iter(text).map(|m| (m.start(), m.end())).collect()), want, "regex: {pattern:?}");
        }
    }
}

/// Where the compiled matcher spends its budget and the engine's backtracking VM then gives up
/// (`.?.+a+(?=\s)`: three runs that overlap), the splitter reports the engine's error, a typed
/// `Error::Regex`, as it did before the compiled matcher (the `patterns` fuzz target found the
/// text; the target compares nothing there).
#[test]
fn where_the_engine_gives_up_the_splitter_says_so() {
    let pattern = r".?.+a+(?=\s)|\p{N}";
    let splitter = crate::pretokenize::RegexSplitter::new(pattern).unwrap();
    assert!(splitter.is_compiled());
    let text = format!("{}\u{200d}", "a".repeat(3000));
    let got = splitter.for_each_match(&text, &mut |_, _| Ok(()));
    assert!(matches!(got, Err(crate::error::Error::Regex(_))), "{got:?}");
    assert!(matches!(splitter.for_each_match("aa a1", &mut |_, _| Ok(())), Ok(())));
}


/// jais-2's pattern tries `\s*[\r\n]+` at every 512th space of a run of spaces (its
/// `\s{512}(?!\S)` takes 512 at a time): each attempt scanned the rest of the run again, and a
/// run of 100,000 spaces spent the budget. The memo of what the run's attempts learnt keeps it
/// linear: no fallback, and the engine's pieces.
#[test]
fn a_run_tried_again_inside_itself_is_not_scanned_again() {
    let pattern = REAL.iter().find(|(p, _)| p.contains(r"\s{512}(?!\S)")).expect("jais-2's pattern").0;
    let (p, re) = (Program::compile(pattern).unwrap(), engine(pattern).unwrap());
    for text in [" ".repeat(200_000), format!("{}x", " ".repeat(200_000)), format!("{}\n ", "\t ".repeat(100_000))] {
        let (got, stopped) = p.matches(&text);
        assert_eq!(stopped, None, "the budget is not spent");
        assert_eq!(got, regex_matches(&re, &text));
    }
}
