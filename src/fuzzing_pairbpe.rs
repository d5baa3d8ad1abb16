//! The `pairbpe` fuzz target: a small Hugging Face-style BPE model (`crate::pairbpe`) made from
//! the input, against a textbook reference written here.
//!
//! The model's first symbols are bytes through a byte table (some bytes unknown, dropped) or
//! characters (some unknown: byte fallback when every byte token exists, else the unk token,
//! runs of unks fused or not, or dropped without an unk token); its merges are `(left, right) ->
//! fresh id` in rank order over the symbols and earlier merges; `ignore_merges` maps some whole
//! pieces to ids; the text is one piece (a character model may cut it before `▁` where its
//! merges allow), or split by the GPT-2 pattern (the hand splitter), by two `Split(Isolated)`
//! stages or by `Metaspace` (each scheme, split or not, as the input's first segment or not),
//! with either space-prefix option.
//!
//! The reference: the pieces from fancy-regex itself, each piece's symbols by Hugging Face's
//! rules, then "merge the adjacent pair of lowest rank, leftmost first" until none is left.
//! With fresh merged ids this is what Hugging Face's heap merge computes (its stale-entry check
//! compares merged ids, which are then one per pair). Checked: the ids, a second encode (through
//! the per-thread piece cache), `merge` of every piece, and the linear merge of every piece where it
//! accepts the list (`PairBpe::encode_piece_linear`; a character model's through its stand-in
//! bytes).

use crate::pairbpe::{Affixed, CharAffixes, CharSymbols, BYTE_CHARS, Metaspace, PairBpe, Prepend, Split, Symbols, DROP};
use crate::pretokenize::known::GPT2_TIKTOKEN;
use crate::pretokenize::{Pretokenizer, RegexSplitter};
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// Compiled once per process: the splitters (cloned into each model) and their references.
struct Splitters {
    gpt2: Pretokenizer,
    gpt2_regex: Pretokenizer,
    stages: Vec<RegexSplitter>,
    stage_regexes: Vec<fancy_regex::Regex>,
    /// The stage after ByteLevel ([`BYTE_STAGE`]) and its reference.
    byte_stage: RegexSplitter,
    byte_stage_regex: fancy_regex::Regex,
}

fn splitters() -> &'static Splitters {
    static S: OnceLock<Splitters> = OnceLock::new();
    S.get_or_init(|| {
        let s = Splitters {
            gpt2: Pretokenizer::new(GPT2_TIKTOKEN).expect("GPT-2 pattern"),
            gpt2_regex: Pretokenizer::with_regex(GPT2_TIKTOKEN).expect("GPT-2 pattern"),
            stages: STAGES.iter().map(|p| RegexSplitter::new(p).expect("stage")).collect(),
            stage_regexes: STAGES.iter().map(|p| fancy_regex::Regex::new(p).expect("stage")).collect(),
            byte_stage: RegexSplitter::new(BYTE_STAGE).expect("stage"),
            byte_stage_regex: fancy_regex::Regex::new(BYTE_STAGE).expect("stage"),
        };
        // compile each stage for this thread's slot now, so that the clones carry it
        for stage in s.stages.iter().chain([&s.byte_stage]) {
            stage.isolate("a1", 0, 2, &mut Vec::new()).expect("stage");
        }
        s
    })
}

/// The characters of the target's text (bytes of several widths, spaces, a digit, a newline).
const ALPHABET: [&str; 10] = ["a", "b", "c", " ", "\u{e9}", "\u{2581}", "\u{4e2d}", "\n", "1", "\u{1f600}"];
/// Two `Split(Isolated)` stages (runs of digits, then letters with an optional leading space).
const STAGES: [&str; 2] = [r"\p{N}+", r" ?\p{L}+"];
const UNK: u32 = 900;
const FIRST_MERGED: u32 = 1000;
const BYTE_BASE: u32 = 600;
/// The first id of an affixed model's inside forms (then its last forms, then its one-byte ones).
const AFFIXED: u32 = 2000;
/// The stage after ByteLevel: digits and `¸` (byte 0xB8) in the byte-level string.
const BYTE_STAGE: &str = "[0-9\u{b8}]+";

/// Hugging Face's `BPE::merge_word` symbols for `piece` (characters; unknown ones as byte tokens
/// or unk), as a plain reading of its rules.
fn reference_char_symbols(s: &CharSymbols, piece: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let mut unk: Option<u32> = None; // pending, written before the next known character
    let n = piece.chars().count();
    for (i, c) in piece.chars().enumerate() {
        // with affixes, the character's form by its place: alone, first, last, inside
        let table = match &s.affixes {
            None => &s.chars,
            Some(a) if n == 1 => &a.only,
            Some(_) if i == 0 => &s.chars,
            Some(a) if i + 1 == n => &a.last,
            Some(a) => &a.middle,
        };
        if let Some(&id) = table.get(&c) {
            out.extend(unk.take());
            out.push(id);
            continue;
        }
        let mut buf = [0u8; 4];
        let bytes: Vec<u32> = match &s.bytes {
            Some(table) => c.encode_utf8(&mut buf).bytes().map(|b| table[b as usize]).collect(),
            None => vec![DROP],
        };
        if !bytes.contains(&DROP) {
            out.extend(bytes);
            continue;
        }
        if let Some(u) = s.unk {
            if let (Some(p), false) = (unk, s.fuse_unk) {
                out.push(p);
            }
            unk = Some(u);
        }
    }
    out.extend(unk);
    out
}

/// `▁`, which a character model may cut a text before (`CharSymbols::marker`).
const MARKER: char = '\u{2581}';

/// Whether no merge joins a token that starts with [`MARKER`] to one that does not end with it:
/// the condition `bpekit.pipeline.models.BPE.fast_merge` checks on the merges' strings, here on
/// the strings of the target's ids (a character of [`ALPHABET`], a byte token `<0xHH>`, `<unk>`,
/// a merge's two parts).
fn marker_allowed(merges: &[(u32, u32, u32)]) -> bool {
    let marker = ALPHABET.iter().position(|a| a.starts_with(MARKER)).expect("the marker is in the alphabet") as u32;
    // id -> (starts with the marker, ends with it)
    let mut ends: FxHashMap<u32, (bool, bool)> = FxHashMap::default();
    let of = |ends: &FxHashMap<u32, (bool, bool)>, id: u32| match ends.get(&id) {
        Some(&e) => e,
        None => (id == marker, id == marker), // a character, a byte token or unk
    };
    for &(a, b, m) in merges {
        let (left, right) = (of(&ends, a), of(&ends, b));
        if right.0 && !left.1 {
            return false;
        }
        ends.insert(m, (left.0, right.1));
    }
    true
}

/// Hugging Face's `Metaspace` pieces of `text`, as a plain reading of its rules: spaces replaced,
/// the replacement prepended (scheme `Always`, or `First` for the first segment) unless the text
/// starts with it, then (`split`) a piece starting at every replacement.
fn reference_metaspace(m: &Metaspace, text: &str, first: bool) -> Vec<String> {
    if text.is_empty() {
        return vec![];
    }
    let mut t = text.replace(' ', &m.replacement.to_string());
    let prepend = m.prepend == Prepend::Always || (m.prepend == Prepend::First && first);
    if prepend && !t.starts_with(m.replacement) {
        t.insert(0, m.replacement);
    }
    if !m.split {
        return vec![t];
    }
    let mut pieces: Vec<String> = Vec::new();
    for c in t.chars() {
        match pieces.last_mut() {
            Some(p) if c != m.replacement => p.push(c),
            _ => pieces.push(c.to_string()),
        }
    }
    pieces
}

/// Lowest rank first, leftmost on ties, until no adjacent pair is a merge.
fn reference_merge(mut ids: Vec<u32>, merges: &FxHashMap<(u32, u32), (u32, u32)>) -> Vec<u32> {
    loop {
        let best = (0..ids.len().saturating_sub(1))
            .filter_map(|i| merges.get(&(ids[i], ids[i + 1])).map(|&(rank, m)| (rank, i, m)))
            .min();
        let Some((_, i, m)) = best else { return ids };
        ids[i] = m;
        ids.remove(i + 1);
    }
}

/// `data[0]`: flags (bit 0 characters, 1 byte fallback, 2 unk, 3 fuse unk, 4 drop some bytes or
/// characters, 5-6 the split: none / GPT-2 / isolated stages, 7 ignore_merges); `data[1]`:
/// text prefix and piece prefix (bits 0, 1), Metaspace (2-5), not the first segment (6),
/// affixed forms (7: [`Affixed`] for a byte model, [`CharAffixes`] for a character model); `data[2]`: the number of merges (each two bytes
/// picking its left and right among the ids so far); the rest is the text, over [`ALPHABET`].
pub fn pairbpe(data: &[u8]) {
    let mut it = data.iter().copied();
    let (Some(flags), Some(prefixes), Some(n_merges)) = (it.next(), it.next(), it.next()) else { return };
    let chars = flags & 1 != 0;
    let drop_some = flags & 16 != 0;
    // the first symbols' ids
    let mut initial: Vec<u32> = Vec::new();
    let symbols = if chars {
        let mut table = FxHashMap::default();
        for (i, a) in ALPHABET.iter().enumerate() {
            let c = a.chars().next().expect("one character");
            if !(drop_some && i % 3 == 1) {
                table.insert(c, i as u32);
                initial.push(i as u32);
            }
        }
        let bytes = (flags & 2 != 0).then(|| {
            let mut b = [DROP; 256];
            for v in 0..256u32 {
                if !(drop_some && v % 5 == 0) {
                    b[v as usize] = BYTE_BASE + v;
                }
            }
            b
        });
        if let Some(b) = &bytes {
            initial.extend(ALPHABET.iter().flat_map(|a| a.bytes()).map(|v| b[v as usize]).filter(|&v| v != DROP));
        }
        let unk = (flags & 4 != 0).then_some(UNK);
        initial.extend(unk);
        // bit 7 of the prefixes: a subword prefix / end-of-word suffix, each character's form by
        // its place in the piece (some forms missing: unknown there)
        let affixes = (prefixes & 128 != 0).then(|| {
            let form = |base: u32, skip: usize| -> FxHashMap<char, u32> {
                ALPHABET.iter().enumerate().filter(|&(i, _)| i % 4 != skip).map(|(i, a)| (a.chars().next().expect("a char"), base + i as u32)).collect()
            };
            Box::new(CharAffixes { middle: form(AFFIXED, 1), last: form(AFFIXED + 256, 2), only: form(AFFIXED + 512, 3) })
        });
        if let Some(a) = &affixes {
            initial.extend(a.middle.values().chain(a.last.values()).chain(a.only.values()));
        }
        Symbols::Chars(CharSymbols { chars: table, bytes, unk, fuse_unk: flags & 8 != 0, marker: None, affixes })
    } else {
        let mut b = [DROP; 256];
        for v in ALPHABET.iter().flat_map(|a| a.bytes()) {
            if !(drop_some && v >= 0xF0) {
                b[v as usize] = v as u32;
                initial.push(v as u32);
            }
        }
        if prefixes & 128 != 0 {
            // a subword prefix / end-of-word suffix: each byte's form by its place in the piece
            let form = |base: u32| -> [u32; 256] { std::array::from_fn(|v| if b[v] == DROP { DROP } else { base + v as u32 }) };
            let affixed = Affixed { first: b, middle: form(AFFIXED), last: form(AFFIXED + 256), only: form(AFFIXED + 512) };
            initial.extend(affixed.middle.iter().chain(&affixed.last).chain(&affixed.only).copied().filter(|&v| v != DROP));
            Symbols::Affixed(Box::new(affixed))
        } else {
            Symbols::Bytes(b)
        }
    };
    initial.sort_unstable();
    initial.dedup();
    // merges over the ids so far, each making a fresh id
    let mut ids = initial.clone();
    let mut merges = Vec::new();
    let mut table: FxHashMap<(u32, u32), (u32, u32)> = FxHashMap::default();
    for _ in 0..n_merges % 48 {
        let (Some(l), Some(r)) = (it.next(), it.next()) else { break };
        let pair = (ids[l as usize % ids.len()], ids[r as usize % ids.len()]);
        if table.contains_key(&pair) {
            continue;
        }
        let m = FIRST_MERGED + merges.len() as u32;
        table.insert(pair, (merges.len() as u32, m));
        merges.push((pair.0, pair.1, m));
        ids.push(m);
    }
    let mut symbols = symbols;
    if let Symbols::Chars(c) = &mut symbols {
        c.marker = (marker_allowed(&merges) && c.affixes.is_none()).then_some(MARKER);
    }
    let text: String = it.map(|b| ALPHABET[b as usize % ALPHABET.len()]).collect();
    let whole: Option<Vec<(Vec<u8>, u32)>> =
        (flags & 128 != 0).then(|| vec![(b"ab".to_vec(), 800), (" c".as_bytes().to_vec(), 801), ("\u{e9}\u{e9}".as_bytes().to_vec(), 802)]);
    let split_kind = (flags >> 5) & 3;
    let compiled = splitters();
    let split = Split {
        splitter: (split_kind == 1).then(|| compiled.gpt2.clone()),
        isolated: if split_kind >= 2 { compiled.stages.clone() } else { vec![] },
        text_prefix: prefixes & 1 != 0,
        piece_prefix: prefixes & 2 != 0,
        // bits 2-5: Metaspace (no split pattern), its scheme, its split; bit 6: not the first segment
        metaspace: (split_kind == 0 && prefixes & 4 != 0).then(|| Metaspace {
            replacement: MARKER,
            prepend: [Prepend::Always, Prepend::First, Prepend::Never, Prepend::First][(prefixes as usize >> 3) & 3],
            split: prefixes & 32 != 0,
        }),
        byte_stages: vec![],
    };
    let first = prefixes & 64 == 0;
    // bit 7 of the merge count: a stage after ByteLevel (byte models split into pieces), which
    // cuts the byte-level string: `¸` is byte 0xB8, the middle byte of `中` (E4 B8 AD)
    let byte_stage = (n_merges & 128 != 0 && !chars && split_kind >= 1).then(|| (compiled.byte_stage.clone(), &compiled.byte_stage_regex));
    let reference_bytes = |piece: &[u8]| -> Vec<u32> {
        match &symbols {
            Symbols::Chars(_) => unreachable!("bytes of a model over characters"),
            Symbols::Bytes(b) => piece.iter().map(|&v| b[v as usize]).filter(|&v| v != DROP).collect(),
            Symbols::Affixed(a) => {
                let n = piece.len();
                let form = |i: usize| match (i, n) {
                    (_, 1) => &a.only,
                    (0, _) => &a.first,
                    (i, n) if i + 1 == n => &a.last,
                    _ => &a.middle,
                };
                piece.iter().enumerate().map(|(i, &v)| form(i)[v as usize]).filter(|&v| v != DROP).collect()
            }
        }
    };
    let reference_symbols = |piece: &str| match &symbols {
        Symbols::Chars(s) => reference_char_symbols(s, piece),
        _ => reference_bytes(piece.as_bytes()),
    };
    // the reference pieces, from fancy-regex
    let prefixed = if split.text_prefix && !text.starts_with(' ') { format!(" {text}") } else { text.clone() };
    let pieces: Vec<String> = match (split_kind, split.metaspace) {
        (0, Some(m)) => reference_metaspace(&m, &text, first),
        (0, None) => vec![prefixed.clone()],
        (1, _) => {
            let Ok(p) = compiled.gpt2_regex.split(&prefixed) else { return };
            p.into_iter().map(str::to_string).collect()
        }
        _ => {
            let mut pieces = vec![prefixed.clone()];
            for re in &compiled.stage_regexes {
                let mut next = Vec::new();
                for p in &pieces {
                    let mut at = 0;
                    for m in re.find_iter(p) {
                        let Ok(m) = m else { return };
                        next.extend([&p[at..m.start()], m.as_str()].into_iter().filter(|s| !s.is_empty()).map(str::to_string));
                        at = m.end();
                    }
                    next.extend((at < p.len()).then(|| p[at..].to_string()));
                }
                pieces = next;
            }
            pieces
        }
    };
    let mut want = Vec::new();
    let mut raw_pieces = Vec::new();
    for p in pieces.iter().filter(|p| !p.is_empty()) {
        let p = if split.piece_prefix && !p.starts_with(' ') { format!(" {p}") } else { p.clone() };
        // the stage after ByteLevel on the piece's byte-level string (a char per byte)
        let parts: Vec<Vec<u8>> = match &byte_stage {
            None => vec![p.clone().into_bytes()],
            Some((_, re)) => {
                let chars: Vec<char> = p.bytes().map(|b| BYTE_CHARS[b as usize]).collect();
                let s: String = chars.iter().collect();
                let char_at = |byte: usize| s[..byte].chars().count();
                let (mut parts, mut at) = (Vec::new(), 0);
                for m in re.find_iter(&s) {
                    let Ok(m) = m else { return };
                    let (a, b) = (char_at(m.start()), char_at(m.end()));
                    parts.extend([(at, a), (a, b)]);
                    at = b;
                }
                parts.push((at, chars.len()));
                parts.into_iter().filter(|(a, b)| b > a).map(|(a, b)| p.as_bytes()[a..b].to_vec()).collect()
            }
        };
        for part in parts {
            let merged = match byte_stage {
                None => reference_merge(reference_symbols(&p), &table),
                Some(_) => reference_merge(reference_bytes(&part), &table),
            };
            match whole.as_ref().and_then(|w| w.iter().find(|(k, _)| k == &part)) {
                Some(&(_, id)) => want.push(id),
                None => want.extend(&merged),
            }
            raw_pieces.push((part, merged));
        }
    }
    let (text_prefix, piece_prefix, metaspace) = (split.text_prefix, split.piece_prefix, split.metaspace);
    let has_byte_stage = byte_stage.is_some();
    let mut split = split;
    split.byte_stages.extend(byte_stage.map(|(stage, _)| stage));
    let model = PairBpe::new(symbols, &merges, whole, split).expect("fresh merges never repeat a pair");
    let encode = |text: &str| {
        let mut out = Vec::new();
        model.encode_segment(text, first, &mut out).map(|()| out)
    };
    let got = encode(&text).expect("encode");
    assert_eq!(got, want, "encode {text:?} (flags {flags:#x}, prefixes {prefixes})");
    assert_eq!(encode(&text).expect("encode"), want, "the second encode (piece cache) of {text:?}");
    // each id's span of the text, for models over bytes split into pieces of the text's own bytes
    if !chars && split_kind >= 1 && !text_prefix && !has_byte_stage {
        let mut length: FxHashMap<u32, usize> = initial.iter().filter(|&&i| !(FIRST_MERGED..AFFIXED).contains(&i)).map(|&i| (i, 1)).collect();
        for &(a, b, m) in &merges {
            if let (Some(x), Some(y)) = (length.get(&a).copied(), length.get(&b).copied()) {
                length.entry(m).or_insert(x + y);
            }
        }
        length.extend([(800, 2), (801, 2), (802, 4)]);
        let spans = model.encode_byte_spans(&text, |i| length.get(&i).copied()).expect("encode");
        if let Some((ids, spans)) = &spans {
            assert_eq!(ids, &want, "encode_byte_spans of {text:?}");
            assert!(spans.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1), "spans in order: {spans:?}");
            assert!(spans.iter().all(|&(a, b)| a <= b && b < text.len()), "spans inside {text:?}: {spans:?}");
        } else {
            assert!(drop_some, "no spans for {text:?} though no byte is dropped");
        }
    }
    // a model over characters: each token's UTF-8 length (a byte-fallback token one byte)
    let char_lengths = || {
        let mut length: FxHashMap<u32, usize> = FxHashMap::default();
        for (i, a) in ALPHABET.iter().enumerate() {
            for base in [0, AFFIXED, AFFIXED + 256, AFFIXED + 512] {
                length.insert(base + i as u32, a.len());
            }
        }
        length.extend((0..256).map(|b| (BYTE_BASE + b, 1)));
        for &(a, b, m) in &merges {
            if let (Some(x), Some(y)) = (length.get(&a).copied(), length.get(&b).copied()) {
                length.entry(m).or_insert(x + y);
            }
        }
        length.extend([(800, 2), (801, 2), (802, 4)]);
        length
    };
    // a model over characters with `Metaspace` or no splitter: each id's span in chars of the
    // text, against the spans the ids spell over the reference's text (replaced and prefixed for
    // `Metaspace`, the prefix spanning the text's first char, as Hugging Face prepends)
    if chars && split_kind == 0 && !text_prefix && !piece_prefix {
        let length = char_lengths();
        let spaced: String = pieces.concat();
        let lead = spaced.chars().count() - text.chars().count();
        match model.encode_char_spans(&text, first, |i| length.get(&i).copied()).expect("encode") {
            Some((ids, spans)) => {
                assert_eq!(ids, want, "encode_char_spans of {text:?} ({metaspace:?})");
                let n = text.chars().count();
                assert!(spans.iter().all(|&(a, b)| a < b && b <= n), "spans inside {text:?}: {spans:?}");
                if want.iter().all(|i| length.contains_key(i)) {
                    // (the char of byte `b`: a byte-fallback token spans the char its byte is in)
                    let char_of = |b: usize| spaced.as_bytes()[..=b].iter().filter(|&&x| x & 0xC0 != 0x80).count() - 1;
                    let (mut at, mut expect) = (0, Vec::new());
                    for i in &want {
                        let (a, b) = (char_of(at), char_of(at + length[i] - 1) + 1);
                        expect.push((a.saturating_sub(lead), b.saturating_sub(lead).max(1)));
                        at += length[i];
                    }
                    assert_eq!(at, spaced.len(), "the ids spell {spaced:?}");
                    assert_eq!(spans, expect, "the spans of {text:?} ({metaspace:?}, lead {lead})");
                }
            }
            None => {
                let unknown_length = want.iter().any(|&i| !length.contains_key(&i) && i != UNK);
                // (characters dropped: some left out, or an affixed form missing with no unk)
                let dropped = drop_some || (prefixes & 128 != 0 && flags & 4 == 0);
                assert!(dropped || flags & 2 != 0 || unknown_length, "no spans for {text:?} ({metaspace:?}; flags {flags:#x}, prefixes {prefixes})");
            }
        }
    }
    // a model over characters split by stages: each id spans its characters' bytes, the unk
    // token the unknown characters it stands for (no byte fallback: else no spans where one is)
    if chars && split_kind >= 1 && !text_prefix {
        let length = char_lengths();
        if let Some((ids, spans)) = model.encode_byte_spans(&text, |i| length.get(&i).copied()).expect("encode") {
            assert_eq!(ids, want, "encode_byte_spans of {text:?} (characters)");
            // (apart: no two ids share a byte, unless a piece's prefix space joins its first byte)
            assert!(spans.windows(2).all(|w| w[0].1 < w[1].0 || (piece_prefix && w[0] <= w[1])), "spans in order, apart: {spans:?}");
            assert!(spans.iter().all(|&(a, b)| a <= b && b < text.len()), "spans inside {text:?}: {spans:?}");
            // (whole characters, but for byte-fallback tokens, which span a byte of one, and a
            // prefix space, which spans its piece's first byte)
            let whole_chars = |&(a, b): &(usize, usize)| text.is_char_boundary(a) && text.is_char_boundary(b + 1);
            assert!(flags & 2 != 0 || piece_prefix || spans.iter().all(whole_chars), "spans of whole characters in {text:?}: {spans:?}");
        } else {
            // (characters dropped: some left out, or an affixed form missing with no unk; an unk
            // token merged into another has no length; byte fallback beside an unk)
            let dropped = drop_some || (prefixes & 128 != 0 && flags & 4 == 0);
            let unknown_length = want.iter().any(|&i| !length.contains_key(&i) && i != UNK);
            assert!(dropped || flags & 2 != 0 || unknown_length || piece_prefix, "no spans for {text:?} (characters; flags {flags:#x}, prefixes {prefixes})");
        }
    }
    for (p, merged) in raw_pieces.iter().filter(|(p, _)| !p.is_empty()) {
        let mut ids = Vec::new();
        model.encode_piece(p, &mut ids).expect("a short piece");
        assert!(ids.iter().all(|&i| i != DROP), "a dropped symbol in the output of {p:?}");
        // the linear merge of long pieces, where it accepts the list, merges as the reference
        if let Some(linear) = model.encode_piece_linear(p) {
            assert_eq!(&linear, merged, "the linear merge of {p:?}");
        }
    }
}
