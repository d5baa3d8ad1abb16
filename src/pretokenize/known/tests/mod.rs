//! The hand-written splitters against fancy-regex: hand-worked examples and edge cases here,
//! exhaustive class tables in `classes`, random text in `fuzz`, corpora and source code in `corpus`.

mod classes;
mod corpus;
mod fuzz;
mod shapes;

use super::*;
use crate::pretokenize::{Pretokenizer, RegexSplitter};

/// A hand-written splitter under test: a [`Known`] family (compared with the regex's matches)
/// or an [`Isolating`] one (compared with the regex's `Split(Isolated)` pieces, gaps included).
#[derive(Clone, Copy, Debug)]
pub(super) enum Hand {
    Known(Known),
    Isolating(Isolating),
}

impl Hand {
    fn pieces(self, text: &str, out: &mut Vec<(usize, usize)>) {
        let mut push = |s, e| {
            out.push((s, e));
            Ok::<(), ()>(())
        };
        match self {
            Hand::Known(k) => k.for_each_piece(text, &mut push),
            Hand::Isolating(i) => i.for_each_piece(text, &mut push),
        }
        .expect("the callback never fails");
    }
}

/// Every hand-written pattern with its regex splitter, built once per test: all of them, or
/// (for the slow tests over tens of megabytes) one pattern per family, the GPT-2 family by
/// tiktoken's spelling and DeepSeek-V3 by its `tokenizer.json` spelling. The other spellings are
/// covered by the fuzz, edge-case and source tests.
pub(super) fn splitters(all_spellings: bool) -> Vec<(&'static str, Hand, Vec<RegexSplitter>)> {
    let known = KNOWN_PATTERNS
        .iter()
        .filter(|&&(p, _)| all_spellings || (p != GPT2_ORIGINAL && p != GPT2_BRACKETED))
        .map(|&(p, k)| (p, Hand::Known(k), vec![RegexSplitter::new(p).expect("known patterns compile")]));
    let regex_only = |p: &str| RegexSplitter::regex_only(p).expect("the pattern compiles");
    let isolating = [DEEPSEEK3, DEEPSEEK3_ESCAPED]
        .into_iter()
        .filter(|&p| all_spellings || p == DEEPSEEK3)
        .map(|p| (p, Hand::Isolating(Isolating::detect(p).expect("detected")), vec![regex_only(p)]));
    let stages = (DEEPSEEK3_STAGES[2], Hand::Isolating(Isolating::DeepSeek3Stages), DEEPSEEK3_STAGES.map(regex_only).to_vec());
    let spark = (SPARK2_5_STAGES[2], Hand::Isolating(Isolating::Spark25Stages), SPARK2_5_STAGES.map(regex_only).to_vec());
    let digit_groups = (DIGIT_GROUPS, Hand::Isolating(Isolating::DigitGroups), vec![regex_only(DIGIT_GROUPS)]);
    // Tiny Aya's list: digit groups, then o200k with ASCII contractions
    let tiny_aya = (O200K_ASCII, Hand::Isolating(Isolating::DigitGroupsThen(Known::O200kAscii)), vec![regex_only(DIGIT_GROUPS), regex_only(O200K_ASCII)]);
    // Hugging Face's `Digits` (individual, or contiguous) before `ByteLevel`'s GPT-2 regex
    // (the `Digits` stage by itself is checked against `char::is_numeric` in `classes`)
    let digits = [(DIGITS, false), (DIGITS_CONTIGUOUS, true)]
        .into_iter()
        .filter(|&(_, contiguous)| all_spellings || !contiguous)
        .map(|(d, contiguous)| {
            let stages = vec![RegexSplitter::new(d).expect("the marker compiles"), regex_only(GPT2_ORIGINAL)];
            (GPT2_ORIGINAL, Hand::Isolating(Isolating::NumbersThen(Known::Gpt2, contiguous)), stages)
        });
    // DeepSeek LLM's and Coder's lists (`(?m)`, as `bpekit.pipeline.fast` writes each stage)
    // and llama.cpp's `default`, `falcon`, `viking`, `superbpe` and `chameleon` lists
    let lists = [
        (DEEPSEEK_LLM_STAGES.as_slice(), Isolating::DeepSeekStages(DeepSeekStages::Llm)),
        (DEEPSEEK_CODER_STAGES.as_slice(), Isolating::DeepSeekStages(DeepSeekStages::Coder)),
        (DEFAULT_STAGES.as_slice(), Isolating::PunctStages(PunctStages::Default)),
        (FALCON_STAGES.as_slice(), Isolating::PunctStages(PunctStages::Falcon)),
        (VIKING_STAGES.as_slice(), Isolating::VikingStages),
        (SUPERBPE_STAGES.as_slice(), Isolating::SuperBpeStages),
        (CHAMELEON_STAGES.as_slice(), Isolating::ChameleonStages),
        (YOUTU_STAGES.as_slice(), Isolating::YoutuStages),
        (&VIKING_STAGES[..1], Isolating::Poro),
    ];
    let lists = lists.into_iter().map(|(list, which)| {
        let regex = list.iter().map(|p| regex_only(&format!("(?m){p}"))).collect();
        (list[list.len().min(2) - 1], Hand::Isolating(which), regex)
    });
    // Jais 2's pattern, with either spelling of the contractions
    let jais = [(JAIS2, false), (JAIS2_ASCII, true)]
        .into_iter()
        .filter(|&(_, ascii)| all_spellings || !ascii)
        .map(|(p, ascii)| (p, Hand::Isolating(Isolating::Jais2(ascii)), vec![regex_only(p)]));
    // MiniCPM 5's and Laguna's (a first stage, then a known family)
    let families = [(FamilyStages::MiniCpm5, false), (FamilyStages::MiniCpm5, true), (FamilyStages::Laguna, false), (FamilyStages::Laguna, true)];
    let families = families.into_iter().filter(|&(_, ascii)| all_spellings || ascii).map(|(which, ascii)| {
        let regex = which.patterns(ascii).iter().map(|p| regex_only(&format!("(?m){p}"))).collect();
        let name = if which == FamilyStages::MiniCpm5 { "minicpm5" } else { "laguna" };
        (name, Hand::Isolating(Isolating::FamilyStages(which, ascii)), regex)
    });
    known.chain(isolating).chain([stages, spark, digit_groups, tiny_aya]).chain(digits).chain(lists).chain(families).chain(jais).collect()
}

/// Reusable piece buffers for [`compare`].
#[derive(Default)]
pub(super) struct Scratch {
    hand: Vec<(usize, usize)>,
    regex: Vec<(usize, usize)>,
}

/// Splits `text` both ways (the regex side: one pattern's matches, or the pieces of `Isolated`
/// stages run one after the other); on a difference, describes the first differing piece.
pub(super) fn compare(
    hand: Hand,
    regex: &[RegexSplitter],
    text: &str,
    scratch: &mut Scratch,
) -> std::result::Result<(), String> {
    scratch.hand.clear();
    scratch.regex.clear();
    hand.pieces(text, &mut scratch.hand);
    let regex_pieces = match hand {
        Hand::Known(_) => regex[0].for_each_match(text, &mut |s, e| {
            scratch.regex.push((s, e));
            Ok(())
        }),
        Hand::Isolating(_) => RegexSplitter::isolate_all(regex, text).map(|p| scratch.regex = p),
    };
    regex_pieces.map_err(|e| format!("regex failed: {e}"))?;
    if scratch.hand == scratch.regex {
        return Ok(());
    }
    let at = scratch.hand.iter().zip(&scratch.regex).position(|(a, b)| a != b);
    let at = at.unwrap_or(scratch.hand.len().min(scratch.regex.len()));
    let show = |v: &[(usize, usize)]| -> String {
        v.get(at).map_or("<none>".into(), |&(s, e)| format!("{:?} at {s}", &text[s..e]))
    };
    let from = scratch.regex.get(at.saturating_sub(2)).map_or(0, |p| p.0);
    let context: String = text[from..].chars().take(40).collect();
    Err(format!(
        "{hand:?}: piece {at} differs: hand {} vs regex {}; text from byte {from}: {context:?}",
        show(&scratch.hand),
        show(&scratch.regex)
    ))
}

/// Compares every recognised pattern on each text; panics listing the first few mismatches.
pub(super) fn assert_all_agree<'a>(texts: impl IntoIterator<Item = &'a str>) -> usize {
    let splitters = splitters(true);
    let mut scratch = Scratch::default();
    let mut failures = Vec::new();
    let mut chars = 0;
    for text in texts {
        chars += text.chars().count();
        for (_, known, regex) in &splitters {
            if let Err(e) = compare(*known, regex, text, &mut scratch) {
                failures.push(e);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches, first: {:#?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    chars
}

fn pieces(pattern: &str, text: &str) -> Vec<String> {
    let p = Pretokenizer::new(pattern).unwrap();
    assert!(p.known().is_some(), "{pattern} should be detected");
    p.split(text).unwrap().into_iter().map(String::from).collect()
}

#[test]
fn detects_exactly_the_known_strings() {
    assert_eq!(Known::detect(GPT2_TIKTOKEN), Some(Known::Gpt2));
    assert_eq!(Known::detect(GPT2_ORIGINAL), Some(Known::Gpt2));
    assert_eq!(Known::detect(CL100K), Some(Known::Cl100k));
    assert_eq!(Known::detect(LLAMA3), Some(Known::Llama3));
    assert_eq!(Known::detect(QWEN2), Some(Known::Qwen2));
    assert_eq!(Known::detect(O200K), Some(Known::O200k));
    assert_eq!(Known::detect(TEKKEN), Some(Known::Tekken));
    assert_eq!(Known::detect(KIMI_K2), Some(Known::KimiK2));
    assert_eq!(Known::detect(QWEN35), Some(Known::Qwen35));
    assert_eq!(Known::detect(BAILINGMOE), Some(Known::Qwen2));
    assert_eq!(Known::detect(SEED_CODER), Some(Known::SeedCoder));
    assert_eq!(Known::detect(DEEPSEEK3), None, "not a tiktoken-style family: it leaves gaps");
    for p in [DEEPSEEK3, DEEPSEEK3_ESCAPED, &format!("(?m){DEEPSEEK3}")] {
        assert_eq!(Isolating::detect(p), Some(Isolating::DeepSeek3), "{p:?}");
        assert_eq!(RegexSplitter::new(p).unwrap().hand(), Some(Isolating::DeepSeek3));
    }
    assert_eq!(Isolating::detect(&format!("{DEEPSEEK3}|x")), None);
    let stages = |v: &[&str]| v.iter().map(|p| format!("(?m){p}")).collect::<Vec<_>>();
    assert_eq!(Isolating::detect_stages(&stages(&DEEPSEEK3_STAGES)), Some(Isolating::DeepSeek3Stages));
    let escaped = [DEEPSEEK3_STAGES[0], DEEPSEEK3_STAGES[1], DEEPSEEK3_ESCAPED];
    assert_eq!(Isolating::detect_stages(&stages(&escaped)), Some(Isolating::DeepSeek3Stages));
    assert_eq!(Isolating::detect_stages(&stages(&DEEPSEEK3_STAGES[1..])), None);
    assert_eq!(Isolating::detect_stages(&stages(&[r"\p{N}", DEEPSEEK3_STAGES[1], DEEPSEEK3])), None);
    assert_eq!(Isolating::detect_stages(&stages(&SPARK2_5_STAGES)), Some(Isolating::Spark25Stages));
    let mut spark = SPARK2_5_STAGES;
    spark[2] = SPARK2_5_3_ESCAPED;
    assert_eq!(Isolating::detect_stages(&stages(&spark)), Some(Isolating::Spark25Stages));
    spark[3] = r"\p{N}+";
    assert_eq!(Isolating::detect_stages(&stages(&spark)), None);
    assert_eq!(Isolating::detect_stages(&stages(&[DEEPSEEK3_STAGES[0], DEEPSEEK3_STAGES[1], DEEPSEEK3, r"\p{N}"])), None);
    // DeepSeek LLM's and Coder's lists, with or without `(?m)`, either spelling of the first stage
    let llm = Some(Isolating::DeepSeekStages(DeepSeekStages::Llm));
    let coder = Some(Isolating::DeepSeekStages(DeepSeekStages::Coder));
    let plain = |v: &[&str]| v.iter().map(|p| p.to_string()).collect::<Vec<_>>();
    assert_eq!(Isolating::detect_stages(&stages(&DEEPSEEK_LLM_STAGES)), llm);
    assert_eq!(Isolating::detect_stages(&plain(&DEEPSEEK_LLM_STAGES)), llm);
    assert_eq!(Isolating::detect_stages(&stages(&DEEPSEEK_CODER_STAGES)), coder);
    let mut escaped = DEEPSEEK_CODER_STAGES;
    escaped[0] = r"[\r\n]";
    assert_eq!(Isolating::detect_stages(&plain(&escaped)), coder);
    escaped[2] = r"\s?\p{S}+";
    assert_eq!(Isolating::detect_stages(&plain(&escaped)), None);
    assert_eq!(Isolating::detect_stages(&plain(&DEEPSEEK_LLM_STAGES[..5])), None);
    let mut swapped = DEEPSEEK_LLM_STAGES;
    swapped.swap(4, 5);
    assert_eq!(Isolating::detect_stages(&plain(&swapped)), None);
    assert_eq!(Isolating::detect_stages(&stages(&DEFAULT_STAGES)), Some(Isolating::PunctStages(PunctStages::Default)));
    assert_eq!(Isolating::detect_stages(&plain(&FALCON_STAGES)), Some(Isolating::PunctStages(PunctStages::Falcon)));
    assert_eq!(Isolating::detect_stages(&plain(&DEFAULT_STAGES[..3])), None);
    assert_eq!(Isolating::detect_stages(&stages(&VIKING_STAGES)), Some(Isolating::VikingStages));
    assert_eq!(Isolating::detect_stages(&plain(&SUPERBPE_STAGES)), Some(Isolating::SuperBpeStages));
    assert_eq!(Isolating::detect_stages(&stages(&CHAMELEON_STAGES)), Some(Isolating::ChameleonStages));
    assert_eq!(Isolating::detect_stages(&plain(&CHAMELEON_STAGES[1..])), None);
    assert_eq!(Isolating::detect_stages(&stages(&SUPERBPE_STAGES)), Some(Isolating::SuperBpeStages));
    assert_eq!(Isolating::detect_stages(&plain(&[SUPERBPE_STAGES[1], SUPERBPE_STAGES[0]])), None);
    assert_eq!(Isolating::detect_stages(&plain(&[r"\p{N}", SUPERBPE_STAGES[1]])), None);
    for which in [FamilyStages::MiniCpm5, FamilyStages::Laguna] {
        for ascii in [false, true] {
            let list = which.patterns(ascii);
            assert_eq!(Isolating::detect_stages(&stages(&[&list[0], &list[1]])), Some(Isolating::FamilyStages(which, ascii)));
            assert_eq!(Isolating::detect_stages(&plain(&[&list[1], &list[0]])), None);
        }
    }
    assert_eq!(Isolating::detect_stages(&plain(&[r"[^\n]+|[\n]+", LLAMA3])), None);
    assert_eq!(Isolating::detect_stages(&plain(&[VIKING_STAGES[0], r"\p{N}+"])), None);
    assert_eq!(Isolating::detect_stages(&plain(&[FALCON_STAGES[0], FALCON_STAGES[1], DEFAULT_STAGES[2], FALCON_STAGES[2]])), None);
    // a known family's pattern as a stage; `(?m)` is dropped only where it changes nothing
    assert_eq!(Isolating::detect(&format!("(?m){LLAMA3}")), Some(Isolating::Known(Known::Llama3)));
    assert_eq!(Isolating::detect(GPT2_TIKTOKEN), Some(Isolating::Known(Known::Gpt2)));
    assert_eq!(Isolating::detect(&format!("(?m){CL100K}")), None, "`$` is an end of line there");
    let digits = |d: &str| vec![d.to_string(), GPT2_ORIGINAL.to_string()];
    assert_eq!(Isolating::detect_stages(&digits(DIGITS)), Some(Isolating::NumbersThen(Known::Gpt2, false)));
    assert_eq!(Isolating::detect_stages(&digits(DIGITS_CONTIGUOUS)), Some(Isolating::NumbersThen(Known::Gpt2, true)));
    assert_eq!(Isolating::detect(DIGITS), Some(Isolating::Numbers(false)));
    // a `Split` of the regex `\p{N}` keeps the regex engine's Unicode tables
    assert_eq!(Isolating::detect_stages(&digits(r"\p{N}")), None);
    assert_eq!(Isolating::detect(r"\p{N}"), None);
    assert_eq!(Isolating::detect_stages(&[r"\p{N}".to_string(), DEEPSEEK3.to_string()]), None);
    assert_eq!(Isolating::detect_stages(&[format!("(?m){SEED_CODER}")]), Some(Isolating::Known(Known::SeedCoder)));
    assert_eq!(Isolating::detect_stages(&[DEEPSEEK3.to_string()]), Some(Isolating::DeepSeek3));
    assert_eq!(Isolating::detect_stages(&[r"\p{N}".to_string()]), None);
    assert_eq!(RegexSplitter::regex_only(DEEPSEEK3).unwrap().hand(), None);
    // llama.cpp's ASCII-only contraction spelling does not match `'ſ`, so it is not Llama 3.
    let adapted = LLAMA3.replace(
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)",
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])",
    );
    assert_eq!(Known::detect(&adapted), None);
    assert_eq!(Known::detect(&format!("{CL100K} ")), None);
    assert!(Pretokenizer::new(r"\w+|\s+").unwrap().known().is_none());
    assert!(Pretokenizer::with_regex(O200K).unwrap().known().is_none());
}

/// Worked by hand from the patterns (see the comments in each family's file).
#[test]
fn hand_worked_examples() {
    // `\s+(?!\S)` leaves the last space to prefix the word; `\s++$` takes trailing spaces whole.
    assert_eq!(pieces(GPT2_TIKTOKEN, "a  b  "), ["a", " ", " b", "  "]);
    // GPT-2 contractions are case-sensitive; cl100k's are not.
    assert_eq!(pieces(GPT2_TIKTOKEN, "I'LL it's"), ["I", "'", "LL", " it", "'s"]);
    assert_eq!(pieces(CL100K, "I'LL it's"), ["I", "'LL", " it", "'s"]);
    // cl100k: digits in threes, any non-newline char prefixes a letter run, `\s++$`.
    assert_eq!(pieces(CL100K, "x12345\tab\n  "), ["x", "123", "45", "\tab", "\n  "]);
    assert_eq!(pieces(LLAMA3, "x12345\tab\n  "), ["x", "123", "45", "\tab", "\n", "  "]);
    assert_eq!(pieces(QWEN2, "x123"), ["x", "1", "2", "3"]);
    // Qwen 3.5: marks join letter runs (Qwen2 cuts the Devanagari word at its vowel signs).
    assert_eq!(pieces(QWEN35, " हिन्दी!\u{301}x"), [" हिन्दी", "!\u{301}x"]);
    assert_eq!(pieces(QWEN2, " हिन्दी"), [" ह", "िन", "्द", "ी"]);
    // Seed-Coder: no newlines after punctuation.
    assert_eq!(pieces(SEED_CODER, "x;\n\ny"), ["x", ";", "\n\n", "y"]);
    assert_eq!(pieces(QWEN2, "x;\n\ny"), ["x", ";\n\n", "y"]);
    // `'ſ` (long s) case-folds to `'s`.
    assert_eq!(pieces(CL100K, "a'\u{17f}"), ["a", "'\u{17f}"]);
    // o200k: camel case splits before each upper-case run that is followed by lower case.
    assert_eq!(pieces(O200K, "HTTPServer don't"), ["HTTPServer", " don't"]);
    assert_eq!(pieces(O200K, "fooBar"), ["foo", "Bar"]);
    assert_eq!(pieces(O200K, "a/b//\n"), ["a", "/b", "//\n"]);
    // Tekken: o200k's letter runs, single digits, no contractions.
    assert_eq!(pieces(TEKKEN, "HTTPServer don't 123"), ["HTTPServer", " don", "'t", " ", "1", "2", "3"]);
    // Kimi K2: Han runs come first and out of the letter runs; no `/` after punctuation.
    assert_eq!(pieces(KIMI_K2, "中文abc 漢字カナDon't a/b//\n"), ["中文", "abc", " ", "漢字", "カナDon't", " a", "/b", "//\n"]);
    // DeepSeek-V3's last stage: ASCII punctuation joins the ASCII letters after it, any char
    // but CR, LF, letters, punctuation and symbols prefixes a letter run, and a char that starts
    // no match (a control char, a digit) is a piece of its own between matches.
    let isolated = |text: &str| -> Vec<String> {
        let mut out = Vec::new();
        Isolating::DeepSeek3
            .for_each_piece(text, |s, e| {
                out.push(text[s..e].to_string());
                Ok::<(), ()>(())
            })
            .unwrap();
        out
    };
    assert_eq!(isolated("it's.Hello 'été'"), ["it", "'s", ".Hello", " '", "été", "'"]);
    assert_eq!(isolated("\u{0}\u{1}ab\u{1}\u{2}"), ["\u{0}", "\u{1}ab", "\u{1}\u{2}"]);
    assert_eq!(isolated("a  .\t.!!\n\nb"), ["a", " ", " .", "\t", ".!!\n\n", "b"]);
}

#[test]
fn edge_cases() {
    let mut cases: Vec<String> = [
        "",
        " ",
        "  ",
        "\n",
        "\r\n",
        "\r\n\r\n",
        " \r\n \r\n ",
        "a",
        "a ",
        "a  ",
        "a \n",
        "a\n ",
        " a",
        "  a",
        "   a",
        " \ta",
        "\t a",
        " \n a",
        "\n\n\na",
        "x \r\n\r\ny",
        "'",
        "''",
        "'s",
        "'S",
        "'LL",
        "'ll",
        "'l",
        "'lL",
        "'re",
        "'Ve",
        "a's",
        "A'S",
        "x'ſ",
        "'ſs",
        " 's",
        "1'm",
        "1,000,000",
        "12345678",
        "a1b22c333d4444",
        " 1",
        "  1",
        " !",
        "  !",
        "!!\n\n",
        "!/\n/",
        "\u{a0}a",
        "\u{3000}\u{3000}a",
        "\u{2028}",
        "a\u{2028}b",
        "\u{85}x",
        "\u{1c}\u{1d}",
        "\u{301}",
        "a\u{301}b",
        " \u{301}",
        "\u{301}\u{301}A",
        "ǅa",
        "ʰA",
        "Aʰ",
        "AʰB",
        "ʰ'S",
        "e\u{301}'s",
        "👍🏽",
        " 😀😀 ",
        "ⅫⅫⅫⅫ",
        "²³¹",
        "٠١٢٣٤",
        "𝐀𝐁𝐜",
        "𐐀𐐨",
        "\u{feff}a",
        "\u{0}",
        "\u{0}\u{1}ab\u{7f}",
        "\u{200b}\u{200b}x\u{200b}",
        "1a",
        "$x",
        "'é",
        " .a",
        "\t\u{301}",
        "\u{301}.",
        "a.\r\n\r\nb",
        "\u{e000}\u{e000}",
        "中",
        "a中b",
        " 中",
        "中 ",
        "\u{301}中",
        "中\u{301}",
        "x〇〇1",
        "1〇",
        "〇a",
        "A中a",
        "ǅ中",
        "'中",
        "中's",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for n in [1, 2, 3, 100, 5000] {
        cases.push(" ".repeat(n));
        cases.push(format!("{}x", " ".repeat(n)));
        cases.push(format!("x{}", " ".repeat(n)));
        cases.push(format!("{}\n", " ".repeat(n)));
        cases.push("\r\n".repeat(n));
        cases.push(format!("{} ", "\r\n".repeat(n)));
        cases.push("a".repeat(n));
        cases.push("A".repeat(n) + "a");
        cases.push("7".repeat(n));
        cases.push("!".repeat(n));
    }
    assert_all_agree(cases.iter().map(String::as_str));
}

#[test]
fn piece_end_matches_for_each_piece() {
    let text = "Hello, world!  It's 2024\r\n\tnew line ";
    for known in KNOWN_PATTERNS.iter().map(|&(_, k)| k) {
        let mut start = 0;
        known
            .for_each_piece(text, |s, e| {
                assert_eq!((s, known.piece_end(text, s)), (start, e));
                start = e;
                Ok::<(), ()>(())
            })
            .unwrap();
        assert_eq!(start, text.len());
    }
}

/// llama.cpp's ASCII contractions against the families' `(?i:...)`: `'ſ` is a contraction only
/// for the latter, so with the ASCII spelling the one pass joins it to the letter run after it
/// (and only to a letter run).
#[test]
fn ascii_contractions_join_quote_long_s_to_the_letters_after_it() {
    let texts = ["'ſtop", "x'ſ", "'ſ'ſ", "'ſ ", " 'ſtop", "'ſ1", "a'ſtop'sb", "'ſ\n'ſſ", "'S'ſ'ſx", "'ſ\u{301}x", "''ſs", "1'ſ22ſ"];
    let mut scratch = Scratch::default();
    for which in [FamilyStages::Laguna, FamilyStages::MiniCpm5] {
        for ascii in [false, true] {
            let regex: Vec<RegexSplitter> = which.patterns(ascii).iter().map(|p| RegexSplitter::regex_only(p).expect("the stage compiles")).collect();
            let hand = Hand::Isolating(Isolating::FamilyStages(which, ascii));
            for text in texts {
                compare(hand, &regex, text, &mut scratch).unwrap_or_else(|e| panic!("{which:?} {ascii} {text:?}: {e}"));
            }
            let mut pieces = Vec::new();
            hand.pieces("'ſtop'sb", &mut pieces);
            let want: &[(usize, usize)] = if ascii { &[(0, 6), (6, 8), (8, 9)] } else { &[(0, 3), (3, 6), (6, 8), (8, 9)] };
            assert_eq!(pieces, want, "{which:?} {ascii}");
        }
    }
}

/// Each text's pieces are the ones written down, and the regex side's.
fn check_cases(hand: Hand, regex: &[RegexSplitter], cases: &[(&str, &[&str])]) {
    let mut scratch = Scratch::default();
    for &(text, want) in cases {
        let mut pieces = Vec::new();
        hand.pieces(text, &mut pieces);
        let got: Vec<&str> = pieces.iter().map(|&(s, e)| &text[s..e]).collect();
        assert_eq!(got, want, "{hand:?} {text:?}");
        compare(hand, regex, text, &mut scratch).unwrap_or_else(|e| panic!("{hand:?} {text:?}: {e}"));
    }
}

/// SuperBPE's list: the digits of a number cut in threes from the right, counted in chars; a cut
/// after another number char makes a piece of it; the stages on fancy-regex agree.
#[test]
fn superbpe_cuts_digits_in_threes_from_the_right() {
    let hand = Hand::Isolating(Isolating::SuperBpeStages);
    let cases: [(&str, &[&str]); 11] = [
        ("1234567", &["1", "234", "567"]),
        ("a 1234567 b", &["a ", "1", "234", "567", " b"]),
        ("\u{b2}123", &["\u{b2}", "123"]),
        ("12\u{b3}456", &["12\u{b3}", "456"]),
        ("1234567890 x 12", &["1", "234", "567", "890", " x ", "12"]),
        ("\u{661}\u{662}\u{663}\u{664}\u{665}", &["\u{661}\u{662}", "\u{663}\u{664}\u{665}"]),
        ("12\u{663}\u{664}5\u{b2}", &["12", "\u{663}\u{664}5\u{b2}"]),
        ("123\u{2167}4567", &["123\u{2167}4", "567"]),
        ("123\u{2167}456", &["123\u{2167}", "456"]),
        ("no numbers, \u{e9}t\u{e9}", &["no numbers, \u{e9}t\u{e9}"]),
        ("", &[]),
    ];
    let regex: Vec<RegexSplitter> = SUPERBPE_STAGES.iter().map(|p| RegexSplitter::regex_only(p).expect("the stage compiles")).collect();
    check_cases(hand, &regex, &cases);
    // the class of the second stage lies inside the first's: the text between numbers has no `\d`
    let (d, n) = (crate::pretokenize::compiled::classes::of_expression(r"\d", false), crate::pretokenize::compiled::classes::of_expression(r"\p{N}", false));
    let (d, n) = (d.expect("parses"), n.expect("parses"));
    assert!(d.iter().all(|&(a, z)| n.iter().any(|&(x, y)| x <= a && z <= y)), "a \\d char outside \\p{{N}}");
}

/// Tiny Aya's first stage as Oniguruma reads it: digits in threes from the right where the run
/// ends at a boundary of Oniguruma's word class (`²³¹¼½¾` in it, the joiners not).
#[test]
fn digit_groups_need_a_word_boundary_after_the_run() {
    let hand = Hand::Isolating(Isolating::DigitGroups);
    let cases: [(&str, &[&str]); 10] = [
        ("1234567", &["1", "234", "567"]),
        ("6\u{be}", &["6\u{be}"]),
        ("123abc 4567.", &["123abc ", "4", "567", "."]),
        ("x1234", &["x", "1", "234"]),
        ("12\u{200d}", &["12", "\u{200d}"]),
        ("\u{661}\u{662}\u{663}\u{664}", &["\u{661}", "\u{662}\u{663}\u{664}"]),
        ("123\u{b2} 45_6 78\u{2167}", &["123\u{b2} 45_", "6", " 78\u{2167}"]),
        ("12\u{301}3", &["12\u{301}", "3"]),
        ("", &[]),
        ("no digits", &["no digits"]),
    ];
    check_cases(hand, &[RegexSplitter::regex_only(DIGIT_GROUPS).expect("the stage compiles")], &cases);
    assert_eq!(Isolating::detect(&format!("(?m){DIGIT_GROUPS}")), Some(Isolating::DigitGroups));
    assert_eq!(Isolating::detect(r"\d{1,3}(?=(?:\d{3})*\b)"), None, "fancy-regex's \\b is not Oniguruma's");
    let list = |second: &str| vec![format!("(?m){DIGIT_GROUPS}"), format!("(?m){second}")];
    assert_eq!(Isolating::detect_stages(&list(O200K_ASCII)), Some(Isolating::DigitGroupsThen(Known::O200kAscii)));
    assert_eq!(Isolating::detect_stages(&list(O200K)), None, "o200k's number groups are not the stage's");
    assert_eq!(Isolating::detect_stages(&list(YOUTU_WORDS)), None, "single digits would cut a group");
    assert_eq!(Known::detect(O200K_ASCII), Some(Known::O200kAscii));
    assert_eq!(Known::detect(YOUTU_WORDS), Some(Known::Youtu));
    assert_eq!(Known::detect(EXAONE_MOE), Some(Known::Exaone));
    assert_eq!(Known::detect(EXAONE_MOE_ASCII), Some(Known::ExaoneAscii));
}

/// EXAONE MoE's phrases: letters joined by single spaces, marks inside, one char before.
#[test]
fn exaone_letters_take_whole_phrases() {
    let cases: [(&str, &[&str]); 8] = [
        ("the cat sat", &["the cat sat"]),
        ("the cat  sat.\n\nNext", &["the cat", " ", " sat", ".\n", "\n", "Next"]),
        ("'s it's x'ſ 'ſ", &["'s", " it", "'s", " x", "'ſ", " '", "ſ"]),
        ("e\u{301}te\u{301} a1 b", &["e\u{301}te\u{301} a", "1", " b"]),
        ("\u{301}a !!x x!!\r\n", &["\u{301}a", " !!", "x x", "!!\r", "\n"]),
        ("12 ab/\n", &["1", "2", " ab", "/\n"]),
        ("  \t x", &["  \t", " x"]),
        ("\u{4e2d}\u{6587} \u{d55c}", &["\u{4e2d}\u{6587} \u{d55c}"]),
    ];
    // (`x'ſ`: a contraction, or with ASCII contractions the quote before a phrase)
    for (known, pattern) in [(Known::Exaone, EXAONE_MOE), (Known::ExaoneAscii, EXAONE_MOE_ASCII)] {
        check_cases(Hand::Known(known), &[RegexSplitter::regex_only(pattern).expect("the pattern compiles")], &cases);
    }
}

/// Chameleon's list on its own markers: image tokens (overlapping, too many letters), sentinels,
/// space runs, against the six stages on fancy-regex.
#[test]
fn chameleon_markers_split_as_the_stages() {
    let hand = Hand::Isolating(Isolating::ChameleonStages);
    let regex: Vec<RegexSplitter> = CHAMELEON_STAGES.iter().map(|p| RegexSplitter::regex_only(p).expect("the stage compiles")).collect();
    let texts = [
        "IMGIMGIMGIMGAZ", "xIMGIMGABCDEZy", "xIMGIMGABCDZy", "xIMGIMGAZy", "IMGIMGZ", "IMGIMGAIMGIMGBZ", "<sentinel:12>a",
        "a<sentinel:>b", "<sentinel:1><sentinel:2>", "     x\t\ty", "1,000.5! it's", "  \n   \t  z", "IMGIMGAZ<sentinel:3>IMGIMG",
    ];
    let mut scratch = Scratch::default();
    for text in texts {
        compare(hand, &regex, text, &mut scratch).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    }
    let mut pieces = Vec::new();
    hand.pieces("IMGIMGIMGIMGAZ", &mut pieces);
    assert_eq!(pieces, [(0, 6), (6, 14)]);
}

/// Jais 2's whitespace: a run without newline in powers of two up to 512, its last char left to
/// the letter, punctuation or single-space rules; a run with newlines first up to its last one.
#[test]
fn jais_takes_whitespace_in_powers_of_two() {
    let hand = Hand::Isolating(Isolating::Jais2(false));
    let regex = [RegexSplitter::regex_only(JAIS2).expect("the pattern compiles")];
    let cases: [(&str, &[&str]); 9] = [
        ("a     b", &["a", "    ", " b"]),
        ("a    b", &["a", "  ", " ", " b"]),
        ("a   .", &["a", "  ", " ."]),
        ("a   ", &["a", "  ", " "]),
        ("a \n\n   x", &["a", " \n\n", "  ", " x"]),
        ("a\u{3000}\u{3000}\u{a0}\u{3000}b", &["a", "\u{3000}\u{3000}", "\u{a0}", "\u{3000}b"]),
        ("1234 it's", &["123", "4", " it", "'s"]),
        ("  ", &["  "]),
        ("", &[]),
    ];
    check_cases(hand, &regex, &cases);
    // long runs: the pieces of 1,000 spaces before a letter, and runs of every length against the
    // regex, with and without a newline, before a letter, a mark, punctuation or the end
    let mut want = vec![512, 256, 128, 64, 32, 4, 2, 1].into_iter().map(|k| " ".repeat(k)).collect::<Vec<_>>();
    want.push(" x".into());
    let text = format!("{}x", " ".repeat(1000));
    let mut pieces = Vec::new();
    hand.pieces(&text, &mut pieces);
    assert_eq!(pieces.iter().map(|&(s, e)| &text[s..e]).collect::<Vec<_>>(), want);
    let mut scratch = Scratch::default();
    for n in (0..40).chain([255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 3000]) {
        for run in [" ".repeat(n), "\u{3000}".repeat(n), format!("{}\n{}", " ".repeat(n / 2), "\t".repeat(n - n / 2))] {
            for after in ["", "x", "\u{301}", ".", "1", "\n"] {
                let text = format!("a{run}{after}");
                compare(hand, &regex, &text, &mut scratch).unwrap_or_else(|e| panic!("{n} {after:?}: {e}"));
            }
        }
    }
    assert_eq!(Isolating::detect(JAIS2_ASCII), Some(Isolating::Jais2(true)));
    assert_eq!(Isolating::detect(&format!("(?m){JAIS2}")), Some(Isolating::Jais2(false)));
}

/// The other last lists off the compiled matcher (session 24): Youtu's four class runs before its
/// o200k stage, Poro's runs between whitespace and punctuation, ufakzeka's Qwen2 without
/// contractions, granite's letter classes where only the ASCII letters have a case.
#[test]
fn youtu_poro_ufakzeka_and_granite_split_as_their_patterns() {
    let stages = |list: &[&str]| list.iter().map(|p| RegexSplitter::regex_only(p).expect("the stage compiles")).collect::<Vec<_>>();
    let youtu: [(&str, &[&str]); 4] = [
        ("\u{d55c}\u{ad6d}\u{c5b4} text\u{ff0c}\u{4e2d}\u{6587}\u{ff01}", &["\u{d55c}\u{ad6d}\u{c5b4}", " text", "\u{ff0c}", "\u{4e2d}\u{6587}", "\u{ff01}"]),
        ("a\u{3042}\u{30a2}b \u{3105}\u{3106}\u{3131}", &["a", "\u{3042}\u{30a2}", "b", " ", "\u{3105}\u{3106}", "\u{3131}"]),
        ("I'M 42\u{3001}\u{3005}x", &["I'M", " ", "4", "2", "\u{3001}\u{3005}", "x"]),
        ("", &[]),
    ];
    check_cases(Hand::Isolating(Isolating::YoutuStages), &stages(&YOUTU_STAGES), &youtu);
    let poro: [(&str, &[&str]); 3] = [
        ("Hello, world! (x|y)", &["Hello", ",", " world", "! (", "x", "|", "y", ")"]),
        ("\u{3002}  a\u{964}b ", &["\u{3002} ", " a", "\u{964}", "b", " "]),
        ("", &[]),
    ];
    check_cases(Hand::Isolating(Isolating::Poro), &stages(&VIKING_STAGES[..1]), &poro);
    let ufakzeka: [(&str, &[&str]); 2] = [("it'sa 123 can't", &["it", "'sa", " ", "1", "2", "3", " can", "'t"]), ("", &[])];
    check_cases(Hand::Known(Known::Ufakzeka), &stages(&[UFAKZEKA]), &ufakzeka);
    let granite: [(&str, &[&str]); 5] = [
        ("a\u{c9}b \u{c9}T\u{c9}", &["a\u{c9}b", " \u{c9}T\u{c9}"]),
        ("aB \u{e9}B", &["a", "B", " \u{e9}", "B"]),
        ("HELLOworld's", &["HELLOworld's"]),
        ("\u{3b1}\u{391}\u{3b1}x Y", &["\u{3b1}\u{391}\u{3b1}x", " Y"]),
        ("", &[]),
    ];
    check_cases(Hand::Known(Known::GraniteMulti), &stages(&[GRANITE_EMB_MULTI]), &granite);
    assert_eq!(Known::detect(GRANITE_EMB_MULTI), Some(Known::GraniteMulti));
    assert_eq!(Isolating::detect_stages(&[format!("(?m){}", VIKING_STAGES[0])]), Some(Isolating::Poro));
    assert_eq!(Isolating::detect_stages(&YOUTU_STAGES.map(String::from)), Some(Isolating::YoutuStages));
}
