//! Every code point, once per class, against fancy-regex; and every code point in context.

use super::super::char_at;
use super::super::unicode::{self, CLASS_SOURCES, CONTRACTION_LETTERS, L, N, PS, S, U, W};
use super::{compare, splitters, Scratch};
use fancy_regex::Regex;

fn all_chars() -> impl Iterator<Item = char> {
    (0..=0x10FFFFu32).filter_map(char::from_u32)
}

fn whole(class: &str) -> Regex {
    Regex::new(&format!(r"\A(?:{class})\z")).unwrap()
}

#[test]
fn flag_tables_match_the_regex_classes_on_every_code_point() {
    let t = unicode::tables();
    let mut buf = [0u8; 4];
    for (flag, source) in CLASS_SOURCES {
        let re = whole(source);
        for c in all_chars() {
            let expected = re.is_match(c.encode_utf8(&mut buf)).unwrap();
            assert_eq!(t.flags(c as u32) & flag != 0, expected, "{source} on U+{:04X}", c as u32);
        }
    }
    // granite's tables: its two letter classes as its pattern spells them, every other flag
    // the same as the regex engine's tables
    let g = unicode::granite_tables();
    let upper = whole(r"((?=[\p{L}\p{M}])([^a-z]))");
    let lower = whole(r"((?=[\p{L}\p{M}])([^A-Z]))");
    for c in all_chars() {
        let (f, s) = (g.flags(c as u32), c.encode_utf8(&mut buf));
        assert_eq!(f & U != 0, upper.is_match(s).unwrap(), "granite's upper class on U+{:04X}", c as u32);
        assert_eq!(f & W != 0, lower.is_match(s).unwrap(), "granite's lower class on U+{:04X}", c as u32);
        assert_eq!(f & !(U | W), t.flags(c as u32) & !(U | W), "granite's other flags on U+{:04X}", c as u32);
    }
    // The composite classes the splitters derive from the flags.
    let prefix = whole(r"[^\r\n\p{L}\p{N}]");
    let other = whole(r"[^\s\p{L}\p{N}]");
    let deepseek_prefix = whole("[^\r\n\\p{L}\\p{P}\\p{S}]");
    let ascii_punct = whole(r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]"##);
    for c in all_chars() {
        let f = t.flags(c as u32);
        let s = c.encode_utf8(&mut buf);
        assert_eq!(
            c != '\r' && c != '\n' && f & (L | N) == 0,
            prefix.is_match(s).unwrap(),
            "prefix class on U+{:04X}",
            c as u32
        );
        assert_eq!(
            f & (L | N | S) == 0,
            other.is_match(s).unwrap(),
            "other class on U+{:04X}",
            c as u32
        );
        let cr_lf = c == '\r' || c == '\n';
        assert_eq!(!cr_lf && f & (L | PS) == 0, deepseek_prefix.is_match(s).unwrap(), "DeepSeek prefix on U+{:04X}", c as u32);
        assert_eq!(c.is_ascii() && f & PS != 0, ascii_punct.is_match(s).unwrap(), "ASCII punctuation on U+{:04X}", c as u32);
    }
}

/// Hugging Face's `Digits` (and bpekit's Python copy of it) splits by Rust's `char::is_numeric`,
/// and so does `Isolating::Numbers`, on every code point: a numeric char next to letters, next to
/// itself, and after a digit. (The regex tables' `\p{N}` may lag: regex-syntax 0.8 reads Unicode
/// 16, the standard library 17, where U+11DE0 is a new digit.)
#[test]
fn digits_follow_is_numeric_on_every_code_point() {
    use super::super::Isolating;
    let chars: Vec<char> = all_chars().collect();
    for batch in chars.chunks(4096) {
        let mut text = String::new();
        for &c in batch {
            text.extend([c, 'a', c, c, '1', c, ' ']);
        }
        for contiguous in [false, true] {
            let mut want = Vec::new();
            let mut start = 0;
            let mut prev: Option<bool> = None;
            for (i, c) in text.char_indices() {
                let numeric = c.is_numeric();
                if let Some(p) = prev {
                    if p != numeric || (numeric && !contiguous) {
                        want.push((start, i));
                        start = i;
                    }
                }
                prev = Some(numeric);
            }
            want.push((start, text.len()));
            let mut got = Vec::new();
            Isolating::Numbers(contiguous)
                .for_each_piece(&text, |s, e| {
                    got.push((s, e));
                    Ok::<(), ()>(())
                })
                .unwrap();
            assert_eq!(got, want, "contiguous {contiguous}, from U+{:04X}", batch[0] as u32);
        }
    }
}

/// The splitters read a char's flags through `char_at`, which takes two-byte chars from a direct
/// table: every char, as UTF-8 bytes, gets the flags and length of the block table.
#[test]
fn char_at_matches_the_block_table_on_every_code_point() {
    let t = unicode::tables();
    let mut buf = [0u8; 4];
    for c in all_chars() {
        let s = c.encode_utf8(&mut buf).as_bytes();
        assert_eq!(char_at(t, s, 0), (t.flags(c as u32), s.len()), "U+{:04X}", c as u32);
        if s.len() == 2 {
            assert_eq!(t.two_byte(s[0], s[1]), t.flags(c as u32), "U+{:04X}", c as u32);
        }
    }
}

#[test]
fn contraction_folding_matches_the_regex_on_every_code_point() {
    let t = unicode::tables();
    let mut buf = [0u8; 4];
    for &letter in CONTRACTION_LETTERS {
        let re = whole(&format!("(?i:{})", letter as char));
        let mut members = 0;
        for c in all_chars() {
            let expected = re.is_match(c.encode_utf8(&mut buf)).unwrap();
            members += expected as usize;
            assert_eq!(
                t.fold(c as u32) == Some(letter),
                expected,
                "(?i:{}) on U+{:04X}",
                letter as char,
                c as u32
            );
        }
        assert!(members >= 2, "(?i:{}) matches both cases", letter as char);
    }
}

/// Each code point in a small context that exercises every rule (as a prefix of a letter run,
/// after a space, before and after upper case, after an apostrophe, before and after a digit,
/// doubled, before a newline, after a newline), for one pattern per family. Contexts are concatenated in batches so the regex engine's per-call cost is shared.
#[test]
fn every_code_point_in_context() {
    let splitters = splitters(false);
    let mut scratch = Scratch::default();
    let chars: Vec<char> = all_chars().collect();
    let mut compared = 0;
    for batch in chars.chunks(2048) {
        let mut text = String::new();
        for &c in batch {
            text.extend([c, 'a', ' ', c, 'B', c, '\'', c, '1', c, c, '\n']);
        }
        text.push(batch[0]);
        for (_, known, regex) in &splitters {
            if let Err(e) = compare(*known, regex, &text, &mut scratch) {
                panic!("{e}");
            }
        }
        compared += text.chars().count();
    }
    assert!(compared > 10_000_000);
}

#[test]
fn tables_build_quickly() {
    let start = std::time::Instant::now();
    let t = unicode::build_tables();
    let elapsed = start.elapsed();
    assert_eq!(t.flags('a' as u32) & L, L);
    eprintln!("class tables built in {elapsed:?}");
}
