//! Fuzz target bodies as plain functions: each takes arbitrary bytes and panics on a wrong answer.
//!
//! The `fuzz/` crate (cargo-fuzz, nightly) calls them from libFuzzer; `fuzzing_smoke.rs` calls them
//! on the stable toolchain from `cargo test` with a seed corpus and random inputs, for a bounded
//! time. The vocabularies are the real OpenAI rank files read in place from `$BPEKIT_TEST_DATA`
//! (default `../shared/data`) when present, plus a toy vocabulary that is always there.
//!
//! Targets:
//! - [`pretokenize`]: every hand-written splitter gives the pieces of the fancy-regex pattern
//!   (for DeepSeek-V3's `Split(Isolated)` stage, the matches and the text between them).
//! - [`round_trip`]: encode (with and without specials, text and raw bytes) then decode gives the
//!   input back byte for byte, and `count` equals the number of ids; `unmerged_into`'s marked runs,
//!   merged one by one, give `encode_ordinary`.
//! - [`merges`]: small == heap == backtrack == the dispatcher on any piece.
//! - [`rankfile`]: the `.tiktoken` parser never panics, and what it accepts survives dump → parse.
//! - [`specials`]: `Specials::find_allowed` agrees with a naive scan.
//! - [`sentencepiece`]: a small SentencePiece model made from the input (and, when the input says
//!   so, a character map blob from it, valid or not) either refuses the input with an error or
//!   encodes it with ids in range, the cached chunk path and the chunked pieces equal to one
//!   merge of the whole text.
//! - [`pairbpe`] (`fuzzing_pairbpe.rs`): a small Hugging Face-style pair-merge model (byte or
//!   character symbols, byte fallback, unk, `ignore_merges`, split stages) against a textbook
//!   reference.
//! - [`patterns`] (`fuzzing_patterns.rs`): the compiled pre-tokenizer matcher against the regex
//!   engine, on llama.cpp's patterns and patterns from a grammar of the shapes it compiles.

use crate::core::{CoreBpe, PIECE_START};
use crate::merge::backtrack::Backtrack;
use crate::merge::{byte_pair_encode_with, heap, small, Ranks};
use crate::pretokenize::known::{
    FamilyStages, CHAMELEON_STAGES, CL100K, DEEPSEEK3, DEEPSEEK3_ESCAPED, DEEPSEEK3_STAGES, DEEPSEEK_CODER_STAGES, DEEPSEEK_LLM_STAGES, DEFAULT_STAGES, DIGITS, DIGIT_GROUPS,
    DIGITS_CONTIGUOUS, FALCON_STAGES, GPT2_ORIGINAL, GPT2_TIKTOKEN, JAIS2, JAIS2_ASCII, KNOWN_PATTERNS, O200K, O200K_ASCII, SPARK2_5_STAGES, SUPERBPE_STAGES, VIKING_STAGES, YOUTU_STAGES,
};
use crate::pretokenize::{Pretokenizer, RegexSplitter};
use crate::special::{Found, Specials};
use crate::vocab::{Rank, Vocab};
use std::path::PathBuf;
use std::sync::OnceLock;

/// A target body: arbitrary bytes in, a panic on a wrong answer.
pub type Target = fn(&[u8]);

/// Every target, by the name its `fuzz/fuzz_targets/*.rs` file and corpus folder use.
pub const TARGETS: [(&str, Target); 8] = [
    ("pretokenize", pretokenize),
    ("round_trip", round_trip),
    ("merges", merges),
    ("rankfile", rankfile),
    ("specials", specials),
    ("sentencepiece", sentencepiece),
    ("pairbpe", pairbpe),
    ("patterns", patterns),
];

/// Pieces longer than this are not given to the quadratic flat merge. Production uses it below
/// `HEAP_THRESHOLD` (64 bytes) only; 96 covers that with a margin. At 512 the flat merge took most
/// of the target's time (35 exec/s under load); at 96 the target runs several times faster.
const SMALL_MAX: usize = 96;

/// The shared data folder (`$BPEKIT_TEST_DATA`, else `../shared/data` beside the crate).
pub fn data_dir() -> PathBuf {
    match std::env::var_os("BPEKIT_TEST_DATA") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"),
    }
}

/// A vocabulary with everything the merge targets need.
pub struct Fixture {
    pub name: &'static str,
    pub ranks: Ranks,
    pub backtrack: Option<Backtrack>,
    pub max_len: usize,
    /// token bytes by id (for decoding merge output)
    pub by_id: Vec<Vec<u8>>,
}

impl Fixture {
    fn new(name: &'static str, ranks: Ranks) -> Fixture {
        let backtrack = Backtrack::new(&ranks);
        let max_len = ranks.keys().map(Vec::len).max().unwrap_or(1);
        let n = ranks.values().max().map_or(0, |&m| m as usize + 1);
        let mut by_id = vec![Vec::new(); n];
        for (bytes, &id) in &ranks {
            by_id[id as usize] = bytes.clone();
        }
        Fixture { name, ranks, backtrack, max_len, by_id }
    }
}

/// 256 single bytes and a few merges chosen so that ties, overlaps and long runs occur.
pub fn toy_ranks() -> Ranks {
    let mut r = Ranks::default();
    for b in 0..=255u8 {
        r.insert(vec![b], b as Rank);
    }
    let merges = ["aa", "ab", "bc", "abc", "aaaa", "cd", "bcd", "abcd", "aaaaaaaa", "  ", "    ", "ba", "bab"];
    for (i, t) in merges.iter().enumerate() {
        r.insert(t.as_bytes().to_vec(), 256 + i as Rank);
    }
    r
}

/// A toy vocabulary with a token BPE builds out of rank order ("aaa" from "aa" + "a", ranked
/// after it): the backtracking tables avoid it and the pieces holding it.
pub fn late_ranks() -> Ranks {
    let mut r = Ranks::default();
    for b in 0..=255u8 {
        r.insert(vec![b], b as Rank);
    }
    let merges = ["aaa", "aa", "aaaa", "ab", "abc", "bc", "aab", "ba", "bab", "cd", "abcd"];
    for (i, t) in merges.iter().enumerate() {
        r.insert(t.as_bytes().to_vec(), 256 + i as Rank);
    }
    r
}

fn load_ranks(name: &str) -> Option<Ranks> {
    let data = std::fs::read(data_dir().join("ranks").join(format!("{name}.tiktoken"))).ok()?;
    crate::rankfile::parse(&data, name).ok()
}

/// The toy vocabularies, then r50k, cl100k and o200k where the data folder has them.
pub fn fixtures() -> &'static [Fixture] {
    static FIXTURES: OnceLock<Vec<Fixture>> = OnceLock::new();
    FIXTURES.get_or_init(|| {
        let mut v = vec![Fixture::new("toy", toy_ranks()), Fixture::new("late", late_ranks())];
        for name in ["r50k_base", "cl100k_base", "o200k_base"] {
            if let Some(r) = load_ranks(name) {
                v.push(Fixture::new(name, r));
            }
        }
        v
    })
}

/// Encoders with their real patterns and specials (the toy one uses the cl100k pattern).
pub fn encoders() -> &'static [CoreBpe] {
    static ENCODERS: OnceLock<Vec<CoreBpe>> = OnceLock::new();
    ENCODERS.get_or_init(|| {
        let eot = |id: Rank| vec![("<|endoftext|>".to_string(), id), ("<|fim_prefix|>".to_string(), id + 1)];
        fixtures()
            .iter()
            .map(|f| {
                let pattern = match f.name {
                    "r50k_base" => GPT2_TIKTOKEN,
                    "o200k_base" => O200K,
                    _ => CL100K,
                };
                let next = f.by_id.len() as Rank;
                CoreBpe::new(f.ranks.clone(), eot(next), pattern).expect("fixture encoder")
            })
            .collect()
    })
}

/// Text from fuzz bytes: the bytes themselves when they are UTF-8, else their lossy decoding.
fn text_of(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

/// `data[0]` picks a known pattern (or an `Isolated` stage with a hand-written splitter); the
/// rest is the text. Hand splitter == fancy-regex.
pub fn pretokenize(data: &[u8]) {
    static REGEX: OnceLock<Vec<(Pretokenizer, Pretokenizer)>> = OnceLock::new();
    static ISOLATING: OnceLock<Vec<(RegexSplitter, RegexSplitter)>> = OnceLock::new();
    let pairs = REGEX.get_or_init(|| {
        KNOWN_PATTERNS
            .iter()
            .map(|(p, _)| (Pretokenizer::new(p).unwrap(), Pretokenizer::with_regex(p).unwrap()))
            .collect()
    });
    let isolating = ISOLATING.get_or_init(|| {
        [DEEPSEEK3, DEEPSEEK3_ESCAPED, JAIS2, JAIS2_ASCII, VIKING_STAGES[0]]
            .iter()
            .map(|p| (RegexSplitter::new(p).unwrap(), RegexSplitter::regex_only(p).unwrap()))
            .collect()
    });
    // sequences of stages one splitter stands for, against the stages one after the other (the
    // `Digits` stage is hand-written either way: its own test checks it against `char::is_numeric`)
    static STAGES: OnceLock<Vec<(Pretokenizer, Vec<RegexSplitter>)>> = OnceLock::new();
    let stages = STAGES.get_or_init(|| {
        let lists: [&[&str]; 14] = [
            &DEEPSEEK3_STAGES,
            &[DIGITS, GPT2_ORIGINAL],
            &[DIGITS_CONTIGUOUS, GPT2_ORIGINAL],
            &DEEPSEEK_LLM_STAGES,
            &DEEPSEEK_CODER_STAGES,
            &DEFAULT_STAGES,
            &FALCON_STAGES,
            &VIKING_STAGES,
            &SUPERBPE_STAGES,
            &[DIGIT_GROUPS],
            &[DIGIT_GROUPS, O200K_ASCII],
            &SPARK2_5_STAGES,
            &CHAMELEON_STAGES,
            &YOUTU_STAGES,
        ];
        let families = [FamilyStages::MiniCpm5, FamilyStages::Laguna].into_iter().flat_map(|s| [s.patterns(false).to_vec(), s.patterns(true).to_vec()]);
        lists
            .iter()
            .map(|list| list.iter().map(|p| p.to_string()).collect::<Vec<String>>())
            .chain(families)
            .map(|patterns| {
                let regex = patterns
                    .iter()
                    .map(|p| if [DIGITS, DIGITS_CONTIGUOUS].contains(&p.as_str()) { RegexSplitter::new(p) } else { RegexSplitter::regex_only(p) }.unwrap())
                    .collect();
                (Pretokenizer::isolated_stages(&patterns).expect("hand-written stages"), regex)
            })
            .collect()
    });
    let Some((&sel, rest)) = data.split_first() else { return };
    let text = text_of(rest);
    let sel = sel as usize % (pairs.len() + isolating.len() + stages.len());
    if let Some((hand, regex)) = stages.get(sel.wrapping_sub(pairs.len() + isolating.len())) {
        // the whole sequence of `Isolated` stages, each cutting every piece of the one before
        let Ok(want) = RegexSplitter::isolate_all(regex, &text) else { return };
        let want: Vec<&str> = want.into_iter().map(|(s, e)| &text[s..e]).collect();
        assert_eq!(hand.split(&text).expect("hand splitters cannot fail"), want, "{} on {text:?}", hand.pattern());
        return;
    }
    if let Some((hand, regex)) = isolating.get(sel.wrapping_sub(pairs.len())) {
        // a `Split(Isolated)` stage: matches and the text between them
        assert!(hand.hand().is_some(), "pattern not recognised as hand-written");
        let (mut got, mut want) = (Vec::new(), Vec::new());
        if regex.isolate(&text, 0, text.len(), &mut want).is_err() {
            return; // fancy-regex gave up (backtrack limit)
        }
        hand.isolate(&text, 0, text.len(), &mut got).expect("hand splitters cannot fail");
        assert_eq!(got, want, "{:?} splitter != regex on {text:?}", hand.hand());
        return;
    }
    let (known, regex) = &pairs[sel];
    assert!(known.known().is_some(), "pattern not recognised as known");
    let want = match regex.split(&text) {
        Ok(w) => w,
        Err(_) => return, // fancy-regex gave up (backtrack limit): nothing to compare against
    };
    let got = known.split(&text).expect("hand splitters cannot fail");
    assert_eq!(got, want, "{:?} splitter != regex on {text:?}", known.known());
}

/// `data[0]` picks an encoder; the rest is text (or raw bytes). Everything decodes back exactly, and
/// `truncate` keeps the text of the first whole-character ids for any budget.
pub fn round_trip(data: &[u8]) {
    let encoders = encoders();
    let Some((&sel, rest)) = data.split_first() else { return };
    let enc = &encoders[sel as usize % encoders.len()];
    // raw bytes (tiktoken's `_encode_bytes`)
    let ids = enc.encode_bytes(rest).expect("encode_bytes");
    assert_eq!(enc.decode_bytes(&ids).expect("decode"), rest, "encode_bytes round trip");
    let text = text_of(rest);
    let ordinary = enc.encode_ordinary(&text).expect("encode_ordinary");
    assert_eq!(enc.decode_bytes(&ordinary).unwrap(), text.as_bytes(), "encode_ordinary round trip");
    assert_eq!(enc.count_ordinary(&text).unwrap(), ordinary.len(), "count_ordinary");
    // what bpekit.torch merges: each marked run merged alone is `encode_ordinary`
    let mut unmerged = vec![];
    enc.unmerged_into(&text, &mut unmerged).expect("unmerged_into");
    let starts: Vec<usize> = (0..unmerged.len()).filter(|&i| unmerged[i] & PIECE_START != 0).chain([unmerged.len()]).collect();
    assert_eq!(starts.len() - 1, enc.pretokenizer.split(&text).unwrap().len(), "one mark per piece");
    let mut merged = vec![];
    for w in starts.windows(2) {
        let ids: Vec<Rank> = unmerged[w[0]..w[1]].iter().map(|&t| t & !PIECE_START).collect();
        merged.extend(enc.encode_single_piece(&enc.decode_bytes(&ids).unwrap()).unwrap());
    }
    assert_eq!(merged, ordinary, "unmerged pieces merged");
    let none = vec![false; enc.specials.tokens.len()];
    assert_eq!(enc.encode(&text, &none).unwrap().0, ordinary, "encode with no specials allowed");
    let all = vec![true; enc.specials.tokens.len()];
    let (with_specials, _) = enc.encode(&text, &all).expect("encode");
    assert_eq!(enc.decode_bytes(&with_specials).unwrap(), text.as_bytes(), "encode round trip");
    assert_eq!(enc.count(&text, &all).unwrap(), with_specials.len(), "count");
    // truncate: the text of the first k <= n ids, k the largest ending on a character boundary,
    // for budgets around the edges, as long as it encodes to at most n ids (else the budget
    // shrinks); past a piece of TRUNCATE_LONG_PIECE bytes (256 in this build) the cut is searched:
    // it fits and one character more does not
    let chars_after = |at: usize| (at + 1..=text.len()).find(|&i| text.is_char_boundary(i));
    for (allowed, ids) in [(&none, &ordinary), (&all, &with_specials)] {
        let len = ids.len();
        for n in [0, 1, 2, len / 3, len / 2, len.saturating_sub(1), len, len + 1] {
            let end = enc.truncate(&text, allowed, n).expect("truncate");
            let (mut budget, mut retries) = (n, 0);
            let want = loop {
                let mut k = budget.min(len);
                let at = loop {
                    let at = enc.decode_bytes(&ids[..k]).unwrap().len();
                    if text.is_char_boundary(at) {
                        break at;
                    }
                    k -= 1;
                };
                let count = enc.count(&text[..at], allowed).unwrap();
                if count <= n {
                    break at;
                }
                budget = budget.saturating_sub(crate::core::truncate_step(retries));
                retries += 1;
            };
            assert!(enc.count(&text[..end], allowed).unwrap() <= n, "truncate to {n}: the cut does not fit");
            if end != want {
                assert!(has_long_piece(enc, &text, allowed), "truncate to {n} of {len} ids: {end} != {want}");
                let next = chars_after(end).expect("a cut short of the text");
                assert!(enc.count(&text[..next], allowed).unwrap() > n, "truncate to {n}: a longer cut fits");
            }
        }
    }
}

/// Whether `truncate` may search its cut: a piece of at least `TRUNCATE_LONG_PIECE` bytes between
/// the allowed special tokens.
fn has_long_piece(enc: &CoreBpe, text: &str, allowed: &[bool]) -> bool {
    let mut start = 0;
    loop {
        let next = enc.specials.find_allowed(text.as_bytes(), start, allowed);
        let stop = next.map_or(text.len(), |f| f.start);
        if enc.pretokenizer.split(&text[start..stop]).unwrap().iter().any(|p| p.len() >= crate::core::TRUNCATE_LONG_PIECE) {
            return true;
        }
        match next {
            Some(f) => start = f.end,
            None => return false,
        }
    }
}

/// `data[0]` picks a vocabulary; the rest is one piece. Every merge gives the same ids.
pub fn merges(data: &[u8]) {
    let fixtures = fixtures();
    let Some((&sel, piece)) = data.split_first() else { return };
    if piece.is_empty() {
        return;
    }
    let f = &fixtures[sel as usize % fixtures.len()];
    let mut want = Vec::new();
    if piece.len() == 1 {
        want.push(f.ranks[piece]);
    } else {
        heap::encode_into(&f.ranks, f.max_len, piece, &mut want).expect("heap");
    }
    let decoded: Vec<u8> = want.iter().flat_map(|&t| f.by_id[t as usize].iter().copied()).collect();
    assert_eq!(decoded, piece, "{}: heap ids do not decode to the piece", f.name);
    if (2..=SMALL_MAX).contains(&piece.len()) {
        let mut got = Vec::new();
        small::encode_into(&f.ranks, piece, &mut got).expect("small");
        assert_eq!(got, want, "{}: small != heap", f.name);
    }
    // the two- to four-byte path takes pieces that are not tokens
    if (2..=4).contains(&piece.len()) && !f.ranks.contains_key(piece) {
        let mut got = Vec::new();
        assert_eq!(small::encode_tiny(&f.ranks, piece, &mut got), Some(got.len()), "{}: tiny", f.name);
        assert_eq!(got, want, "{}: tiny != heap", f.name);
    }
    if let Some(bt) = &f.backtrack {
        let mut got = Vec::new();
        if bt.avoids(piece) {
            assert!(!bt.encode_into(piece, &mut got), "{}: an avoided piece was encoded", f.name);
        } else {
            assert!(bt.encode_into(piece, &mut got), "{}: backtrack found no sequence", f.name);
            assert_eq!(got, want, "{}: backtrack != heap", f.name);
        }
    }
    let mut got = Vec::new();
    byte_pair_encode_with(&f.ranks, f.max_len, f.backtrack.as_ref(), piece, &mut got).expect("dispatch");
    assert_eq!(got, want, "{}: dispatcher != heap", f.name);
}

/// Any bytes as a rank file: an error or ranks that survive dump → parse (and build a `Vocab`,
/// or are refused with an error, without a huge allocation).
pub fn rankfile(data: &[u8]) {
    let Ok(ranks) = crate::rankfile::parse(data, "fuzz") else { return };
    let again = crate::rankfile::parse(&crate::rankfile::dump(&ranks), "dump").expect("dump parses");
    assert_eq!(again, ranks, "dump → parse changed the ranks");
    let _ = Vocab::new(ranks, &[]);
}

/// The alphabet of the special-token target: few letters, so that specials overlap and repeat.
const SPECIAL_ALPHABET: &[u8] = b"<|>ab";

/// `data[0]`: allowed mask; `data[1]`: how many specials (1–6); then each special's length byte
/// and bytes; the rest is the text. All bytes map onto a five-letter alphabet.
pub fn specials(data: &[u8]) {
    let letter = |b: u8| SPECIAL_ALPHABET[b as usize % SPECIAL_ALPHABET.len()];
    let mut it = data.iter().copied();
    let (Some(mask), Some(n)) = (it.next(), it.next()) else { return };
    let mut tokens: Vec<(String, Rank)> = Vec::new();
    for i in 0..1 + n as usize % 6 {
        let len = 1 + it.next().unwrap_or(0) as usize % 5;
        let s: Vec<u8> = (0..len).map(|_| letter(it.next().unwrap_or(0))).collect();
        let s = String::from_utf8(s).expect("ASCII");
        if !tokens.iter().any(|t| t.0 == s) {
            tokens.push((s, 1000 + i as Rank));
        }
    }
    let text: Vec<u8> = it.map(letter).collect();
    let allowed: Vec<bool> = (0..tokens.len()).map(|i| (mask >> i) & 1 == 1).collect();
    with_specials(&tokens, |sp| {
        let mut from = 0;
        loop {
            let got = sp.find_allowed(&text, from, &allowed);
            let want = naive_find(&tokens, &text, from, &allowed);
            assert_eq!(got, want, "specials {tokens:?} allowed {allowed:?} in {:?} from {from}", String::from_utf8_lossy(&text));
            match got {
                Some(f) => from = f.end,
                None => break,
            }
        }
    });
}

/// Runs `f` on the `Specials` of `tokens`, built once per distinct token list (per thread) and
/// kept: building the Aho-Corasick automaton (and its prefilter) was most of the target's time,
/// and libFuzzer mostly mutates the text under an unchanged token list. There are at most
/// 6 specials of 1–5 letters from 5, so the lists seen are few; the cache is cleared past 4096.
fn with_specials(tokens: &[(String, Rank)], f: impl FnOnce(&Specials)) {
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static BUILT: RefCell<HashMap<Vec<(String, Rank)>, Specials>> = RefCell::new(HashMap::new());
    }
    BUILT.with(|built| {
        let mut built = built.borrow_mut();
        if !built.contains_key(tokens) {
            if built.len() >= 4096 {
                built.clear();
            }
            built.insert(tokens.to_vec(), Specials::new(tokens.to_vec()).expect("non-empty specials"));
        }
        f(&built[tokens]);
    });
}

/// The specification of `find_allowed`: at the leftmost position where any special occurs, the
/// longest special there if allowed, else the longest allowed one there; else scan on.
fn naive_find(tokens: &[(String, Rank)], text: &[u8], from: usize, allowed: &[bool]) -> Option<Found> {
    if !allowed.iter().any(|&a| a) {
        return None;
    }
    for start in from..text.len() {
        let best = (0..tokens.len())
            .filter(|&i| allowed[i] && text[start..].starts_with(tokens[i].0.as_bytes()))
            .max_by_key(|&i| tokens[i].0.len());
        if let Some(i) = best {
            return Some(Found { start, end: start + tokens[i].0.len(), id: tokens[i].1 });
        }
    }
    None
}

#[path = "fuzzing_pairbpe.rs"]
mod pairbpe_target;
pub use pairbpe_target::pairbpe;

#[path = "fuzzing_patterns.rs"]
pub(crate) mod patterns_target;
pub use patterns_target::patterns;

#[cfg(test)]
#[path = "fuzzing_smoke.rs"]
mod smoke;

/// The symbols of the SentencePiece target's pieces and text.
const SPM_ALPHABET: [&str; 6] = ["a", "b", "c", "\u{2581}", "\u{e9}", " "];

/// `data[0]`: flags (bits 0-3 the normalizer options, 4 byte fallback, 5 a charsmap follows,
/// 6 raw text); `data[1]`: how many pieces (1-12), then per piece a length byte, its symbols and a
/// score/type byte; with bit 5 a length byte and that many bytes of charsmap blob (the 4-byte
/// trie size first); the rest is the text (raw bytes with bit 6, else mapped to the alphabet).
pub fn sentencepiece(data: &[u8]) {
    use crate::sentencepiece::{Options, SentencePiece, NORMAL, UNUSED, USER_DEFINED};
    let mut it = data.iter().copied();
    let (Some(flags), Some(n)) = (it.next(), it.next()) else { return };
    let symbol = |b: u8| SPM_ALPHABET[b as usize % (SPM_ALPHABET.len() - 1)];
    let mut pieces = Vec::new();
    for i in 0..1 + n as usize % 12 {
        let len = 1 + it.next().unwrap_or(0) as usize % 4;
        let piece: String = (0..len).map(|_| symbol(it.next().unwrap_or(0))).collect();
        let meta = it.next().unwrap_or(0);
        let kind = [NORMAL, NORMAL, NORMAL, NORMAL, USER_DEFINED, UNUSED][meta as usize % 6];
        let score = -((meta >> 3) as f32) / 2.0;
        let bits = score.to_bits() as i32 as i64;
        let rank = (if bits >= 0 { bits } else { i32::MIN as i64 - 1 - bits }) as i32;
        pieces.push((piece, 1 + i as u32, rank, kind));
    }
    let n_pieces = pieces.len() as u32;
    let byte_ids: Vec<u32> = if flags & 16 != 0 { (0..256).map(|b| 1 + n_pieces + b).collect() } else { vec![] };
    let vocab = 1 + n_pieces + byte_ids.len() as u32;
    let blob: Option<Vec<u8>> = (flags & 32 != 0).then(|| {
        let len = it.next().unwrap_or(0) as usize;
        it.by_ref().take(len).collect()
    });
    let rest: Vec<u8> = it.collect();
    let text: Vec<u8> = if flags & 64 != 0 {
        rest
    } else {
        rest.iter().flat_map(|&b| SPM_ALPHABET[b as usize % SPM_ALPHABET.len()].bytes()).collect()
    };
    let options = Options {
        add_dummy_prefix: flags & 1 != 0,
        remove_extra_whitespaces: flags & 2 != 0,
        escape_whitespaces: flags & 4 != 0,
        treat_whitespace_as_suffix: flags & 8 != 0,
    };
    let Ok(model) = SentencePiece::new(pieces, 0, byte_ids, blob.as_deref(), options) else { return };
    let Ok(ids) = model.encode(&text) else {
        assert!(model.normalize(&text).is_err(), "encode failed but normalize did not");
        return;
    };
    assert!(ids.iter().all(|&i| i < vocab), "an id outside the vocabulary: {ids:?}");
    assert_eq!(model.encode(&text).expect("encoded once"), ids, "the cached chunks differ");
    let whole = model.encode_spans_whole(&text).expect("encoded once");
    assert_eq!(whole.ids, ids, "chunked and whole-text merges differ on {:?}", String::from_utf8_lossy(&text));
    assert_eq!(whole.normalized, model.normalize(&text).expect("normalized once"));
    let chunked = model.encode_spans(&text).expect("encoded once");
    assert_eq!((chunked.ids, chunked.spans), (whole.ids, whole.spans), "chunked pieces differ");
    // offsets (a str only): the same ids, spans in order inside the text
    if let Ok(s) = std::str::from_utf8(&text) {
        let (ids_o, spans) = model.encode_offsets(s).expect("encoded once");
        assert_eq!(ids_o, ids, "encode_offsets gives other ids");
        let chars = s.chars().count();
        assert!(spans.iter().all(|&(a, b)| a <= b && b <= chars), "a span outside the text: {spans:?}");
        assert!(spans.windows(2).all(|w| w[0] <= w[1]), "spans out of order: {spans:?}");
    }
}
