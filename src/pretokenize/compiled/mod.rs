//! A compiled matcher for the common shape of pre-tokenizer patterns, for patterns no
//! hand-written splitter knows: DeepSeek LLM and Coder's stages, llama.cpp's `default` list,
//! BLOOM's, MiniCPM's, a user's own pattern for `train` or `Encoding(pat_str=...)`.
//!
//! Most pre-tokenizer patterns are alternations of sequences of one-char classes with greedy
//! counts (`[^\r\n\p{L}\p{N}]?\p{L}+`, `\p{N}{1,3}`, ` ?[^\s\p{L}\p{N}]+[\r\n]*`,
//! `\s*[\r\n]+`), literal alternations (`'s|'t|...`) and a trailing lookahead (`\s+(?!\S)`).
//! [`build`] turns fancy-regex's own parse tree of such a pattern into a [`Program`]: each class a
//! bit in a table over every code point ([`classes`], from regex-syntax, as the engine's), each
//! alternative a list of atoms. The matcher is a backtracking matcher with the engine's
//! leftmost-first semantics, so it gives the engine's matches by construction; two things keep
//! it fast and linear:
//! - a run only gives chars back when the atoms after it could start on a char of its class
//!   (decided once, from the classes: `\s*[\r\n]+` and `\s+(?!\S)` do; `\s?\p{L}+` never does),
//!   and where the atoms after a long run failed is remembered for the text ([`Memo`]), so an
//!   attempt that starts inside a run already tried does not try it again;
//! - every call has a budget of steps proportional to its text; a call that spends it (a pattern
//!   whose runs overlap in a way real patterns do not) goes on from where it was on the regex
//!   engine, so no input costs more than a constant times its length on top of the engine's cost.
//!
//! A program is checked against the regex engine on a probe text of many scripts when it is
//! built, and not used if they differ. The last 64 patterns' programs are kept (about 150 kB of
//! tables each).
//! Performance: see `src/PERFORMANCE.md`, "Twenty-first round".

mod build;
pub mod classes;

pub use build::Refusal;

use crate::utf8::{char_before, len_of};
use classes::Table;
use rustc_hash::FxHashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Program {
    table: Table,
    alts: Vec<Alt>,
    /// The class bits a match can start with.
    first: u32,
}

/// One alternative of the pattern.
#[derive(Debug, Clone)]
struct Alt {
    atoms: Vec<Atom>,
    look: Look,
    /// The class bits its match can start with.
    first: u32,
}

#[derive(Debug, Clone)]
enum Atom {
    /// `lo..=hi` chars of the class `bit`, greedy; `backtrack`: may give chars back; `ascii`: the
    /// class's ASCII chars as byte ranges, to scan eight bytes at a time.
    Run { bit: u32, lo: u32, hi: u32, backtrack: bool, ascii: Option<Ascii> },
    /// The first of these literal sequences (each char a class bit) that lets the rest match;
    /// none (`optional`) if none does.
    Lits { branches: Vec<Vec<u32>>, optional: bool },
}

impl Atom {
    fn optional(&self) -> bool {
        match *self {
            Atom::Run { lo, .. } => lo == 0,
            Atom::Lits { optional, .. } => optional,
        }
    }

    /// The class bits of the first char this atom consumes.
    fn first_bits(&self) -> u32 {
        match self {
            Atom::Run { bit, .. } => *bit,
            Atom::Lits { branches, .. } => branches.iter().fold(0, |m, b| m | b[0]),
        }
    }
}

/// The ASCII chars of a class as at most four byte ranges, tested eight bytes at a time: a byte
/// `x < 0x80` is at least `lo` when `(x | 0x80) - lo` keeps its high bit, at most `hi` when
/// `(0x80 + hi) - x` does, and neither subtraction borrows from the next byte.
#[derive(Debug, Clone, Copy)]
struct Ascii {
    ranges: [(u8, u8); 4],
    len: usize,
}

const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

impl Ascii {
    /// `None` when the class has more than four runs of ASCII chars, or none.
    fn of(class: &classes::Ranges) -> Option<Ascii> {
        let mut ranges = [(0u8, 0u8); 4];
        let mut len = 0;
        for &(s, e) in class.iter().take_while(|r| r.0 < 0x80) {
            if len == 4 {
                return None;
            }
            ranges[len] = (s as u8, e.min(0x7F) as u8);
            len += 1;
        }
        (len > 0).then_some(Ascii { ranges, len })
    }

    /// The high bit of each of the eight bytes of `w` that is ASCII and in the class.
    #[inline(always)]
    fn inside(&self, w: u64) -> u64 {
        let ascii = !w & HIGH;
        let low7 = w & !HIGH;
        let mut inside = 0;
        for &(lo, hi) in &self.ranges[..self.len] {
            let at_least = (low7 | HIGH).wrapping_sub(LOW * lo as u64);
            let at_most = (LOW * (0x80 + hi as u64)).wrapping_sub(low7);
            inside |= at_least & at_most;
        }
        inside & ascii
    }
}

/// What must follow a match (a trailing lookahead or `$`).
#[derive(Debug, Clone, Copy)]
enum Look {
    None,
    Ahead(u32),
    NotAhead(u32),
    EndText,
    /// `$` with the `m` flag: the end of the text or before `\n`.
    EndLine,
}

/// A call spent its budget of steps (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OverBudget;

/// Steps a call may take: this many per byte of its text, plus [`BUDGET_BASE`].
const BUDGET_PER_BYTE: usize = 64;
const BUDGET_BASE: usize = 1 << 16;

/// The budget of a call on `len` bytes.
fn budget(len: usize) -> usize {
    len.saturating_mul(BUDGET_PER_BYTE).saturating_add(BUDGET_BASE)
}

struct Search<'a> {
    program: &'a Program,
    b: &'a [u8],
    steps: &'a mut usize,
    limit: usize,
    memo: &'a mut Memo,
}

/// What the backtracking runs of one text have learnt, for the attempts at later positions:
/// per run atom (by address), a run of its class (`start..end`, unbounded count) and the
/// position from which the atoms after it are known to fail at every char boundary up to `end`
/// (`clear`; none when `clear > end`). The rest of an alternative matched from a position does
/// not depend on where the attempt started, so an attempt that starts inside the same run
/// skips what an earlier one tried. Without it, `\s*[\r\n]+` scanned the rest of a run of
/// spaces again at each position where the alternatives after it took only part of it (jais-2's
/// `\s{512}(?!\S)`: quadratic, 1.7 s for a megabyte of spaces).
/// Only runs of at least [`MEMO_FROM`] bytes are remembered: short ones cost little to try
/// again, and the lookup on every word of an o200k-like pattern (whose case runs backtrack) cost
/// ~15% when every failure was stored.
#[derive(Default)]
struct Memo {
    slots: [(usize, usize, usize, usize); 4],
    next: usize,
    used: bool,
}

const MEMO_FROM: usize = 32;

impl Memo {
    /// `(end, clear)` of the run of atom `key` that holds `pos`.
    #[inline]
    fn find(&self, key: usize, pos: usize) -> Option<(usize, usize)> {
        if !self.used {
            return None;
        }
        self.slots.iter().find(|s| s.0 == key && s.1 <= pos && pos < s.2).map(|s| (s.2, s.3))
    }

    fn store(&mut self, key: usize, start: usize, end: usize, clear: usize) {
        if end - start < MEMO_FROM {
            return;
        }
        self.used = true;
        if let Some(s) = self.slots.iter_mut().find(|s| s.0 == key && s.2 == end) {
            *s = (key, s.1.min(start), end, clear);
            return;
        }
        self.slots[self.next] = (key, start, end, clear);
        self.next = (self.next + 1) % self.slots.len();
    }
}

impl Search<'_> {
    #[inline(always)]
    fn look(&self, look: Look, q: usize) -> bool {
        let class = |q| self.program.table.at(self.b, q).0;
        match look {
            Look::None => true,
            Look::Ahead(bit) => q < self.b.len() && class(q) & bit != 0,
            Look::NotAhead(bit) => q == self.b.len() || class(q) & bit == 0,
            Look::EndText => q == self.b.len(),
            Look::EndLine => q == self.b.len() || self.b[q] == b'\n',
        }
    }

    /// How many chars of class `bit` (at most `hi`) start at `pos`, and where they end. ASCII
    /// runs of a class with [`Ascii`] ranges go eight bytes a step, the run's end found by the
    /// first byte outside (`trailing_zeros`), as the hand-written splitters' letter runs do.
    #[inline(always)]
    fn run(&self, bit: u32, hi: u32, pos: usize, ascii: Option<Ascii>) -> (u32, usize) {
        let (b, table) = (self.b, &self.program.table);
        let (mut q, mut n) = (pos, 0u32);
        if let Some(ascii) = ascii {
            while q + 8 <= b.len() && hi - n >= 8 {
                let mut word = [0u8; 8];
                word.copy_from_slice(&b[q..q + 8]);
                let outside = !ascii.inside(u64::from_le_bytes(word)) & HIGH;
                let k = outside.trailing_zeros() / 8; // 8 when every byte is inside
                q += k as usize;
                n += k;
                if k < 8 {
                    break;
                }
            }
        }
        while n < hi && q < b.len() {
            let x = b[q];
            if x < 0x80 {
                if table.ascii(x) & bit == 0 {
                    break;
                }
                q += 1;
            } else {
                let (m, w) = table.at(b, q);
                if m & bit == 0 {
                    break;
                }
                q += w;
            }
            n += 1;
        }
        (n, q)
    }

    /// The end of the leftmost-first match of `atoms` then `look` at `pos`, if any. Runs that
    /// never give chars back are taken in a loop; a run that may, and a literal alternation, try
    /// the rest for each choice in order (a call per choice).
    fn atoms(&mut self, atoms: &[Atom], look: Look, mut pos: usize) -> Result<Option<usize>, OverBudget> {
        let mut i = 0;
        loop {
            let Some(atom) = atoms.get(i) else {
                return Ok(self.look(look, pos).then_some(pos));
            };
            i += 1;
            match atom {
                &Atom::Run { bit, lo, hi, backtrack: false, ascii } => {
                    let (n, q) = self.run(bit, hi, pos, ascii);
                    *self.steps += n as usize;
                    if n < lo {
                        return Ok(None);
                    }
                    pos = q;
                }
                &Atom::Run { bit, lo, hi, backtrack: true, ascii } => {
                    let b = self.b;
                    let key = atom as *const Atom as usize;
                    let known = if hi == u32::MAX { self.memo.find(key, pos) } else { None };
                    let (end, clear) = match known {
                        Some(known) => known,
                        None => {
                            let (n, end) = self.run(bit, hi, pos, ascii);
                            *self.steps += n as usize;
                            if n < lo {
                                return Ok(None);
                            }
                            (end, usize::MAX)
                        }
                    };
                    // the position after `lo` chars: the lowest the run may give back to
                    let mut least = pos;
                    for _ in 0..lo {
                        if least >= end {
                            return Ok(None);
                        }
                        least += len_of(b[least]);
                    }
                    if clear <= least {
                        return Ok(None);
                    }
                    // from the run's end, or from the char before `clear`: the first not known to fail
                    let mut q = if clear > end { end } else { char_before(b, clear) };
                    loop {
                        if let Some(found) = self.atoms(&atoms[i..], look, q)? {
                            return Ok(Some(found));
                        }
                        if q == least {
                            if hi == u32::MAX {
                                self.memo.store(key, pos, end, least);
                            }
                            return Ok(None);
                        }
                        q = char_before(b, q);
                        *self.steps += 1;
                        if *self.steps > self.limit {
                            return Err(OverBudget);
                        }
                    }
                }
                Atom::Lits { branches, optional } => {
                    let (b, table) = (self.b, &self.program.table);
                    for branch in branches {
                        let mut q = pos;
                        let whole = branch.iter().all(|&bit| {
                            if q < b.len() {
                                let (m, w) = table.at(b, q);
                                if m & bit != 0 {
                                    q += w;
                                    return true;
                                }
                            }
                            false
                        });
                        *self.steps += branch.len();
                        if whole {
                            if let Some(end) = self.atoms(&atoms[i..], look, q)? {
                                return Ok(Some(end));
                            }
                        }
                    }
                    if !*optional {
                        return Ok(None);
                    }
                }
            }
        }
    }
}

impl Program {
    /// Compiles `pattern` without checking it against the regex engine (tests compare the two).
    pub fn compile(pattern: &str) -> Result<Program, Refusal> {
        build::compile(pattern)
    }

    /// The leftmost-first match in `b` at or after `from`, as byte offsets; `steps` counts the
    /// work done, up to `limit`.
    fn find(&self, b: &[u8], from: usize, steps: &mut usize, limit: usize, memo: &mut Memo) -> Result<Option<(usize, usize)>, OverBudget> {
        let mut search = Search { program: self, b, steps, limit, memo };
        let mut p = from;
        while p < b.len() {
            let (m, n) = self.table.at(b, p);
            if m & self.first != 0 {
                for alt in &self.alts {
                    if alt.first & m != 0 {
                        if let Some(end) = search.atoms(&alt.atoms, alt.look, p)? {
                            return Ok(Some((p, end)));
                        }
                    }
                }
            }
            p += n;
            *search.steps += 1;
            if *search.steps > limit {
                return Err(OverBudget);
            }
        }
        Ok(None)
    }

    /// Whether a match can start anywhere in `b` (valid UTF-8): false when no char of it is one
    /// a match starts with, so the whole text is one gap. Cheaper than a search (no state, one
    /// table load per ASCII byte): later stages of a `Sequence` of splits see mostly words that
    /// they leave whole.
    #[inline]
    pub fn can_match_in(&self, b: &[u8]) -> bool {
        let mut i = 0;
        while i < b.len() {
            let (m, n) = self.table.at(b, i);
            if m & self.first != 0 {
                return true;
            }
            i += n;
        }
        false
    }

    /// Calls `f` with every match of `text`, as the regex engine's `find_iter` would (no pattern
    /// compiled here matches the empty string). If the call spends its budget, returns
    /// `Err(offset)`, the offset the search had reached: every match before it was given to `f`.
    pub fn for_each_match<E>(
        &self,
        text: &str,
        mut f: impl FnMut(usize, usize) -> Result<(), E>,
    ) -> Result<Result<(), usize>, E> {
        let b = text.as_bytes();
        let (mut steps, limit) = (0, budget(b.len()));
        let mut memo = Memo::default();
        let mut at = 0;
        loop {
            match self.find(b, at, &mut steps, limit, &mut memo) {
                Ok(Some((s, e))) => {
                    f(s, e)?;
                    at = e;
                }
                Ok(None) => return Ok(Ok(())),
                Err(OverBudget) => return Ok(Err(at)),
            }
        }
    }

    /// Every match of `text`, and where the search stopped if it spent its budget.
    pub fn matches(&self, text: &str) -> (Vec<(usize, usize)>, Option<usize>) {
        let mut out = Vec::new();
        let done = self.for_each_match(text, |s, e| {
            out.push((s, e));
            Ok::<(), std::convert::Infallible>(())
        });
        match done {
            Ok(Ok(())) => (out, None),
            Ok(Err(at)) => (out, Some(at)),
        }
    }
}

/// The regex engine's non-empty matches of `text`, or `None` where it gives up (its
/// backtracking limit).
pub fn engine_matches(regex: &fancy_regex::Regex, text: &str) -> Option<Vec<(usize, usize)>> {
    regex.find_iter(text).map(|m| m.ok().map(|m| (m.start(), m.end()))).filter(|m| m.map_or(true, |(s, e)| e > s)).collect()
}

/// Text the compiled program must split as the regex engine does before it is used: letters,
/// marks, digits and punctuation of several scripts, every kind of space, contractions in
/// several cases, CJK, kana, Hangul, emoji, lone line ends.
const PROBE: &str = concat!(
    "Hello world's WORLD'S can't I'M we'LL they'Re you've he'd 'ſ 'K ſtop Kelvin\n",
    "  indented   line\t\ttabs \r\n\r\n\n\n  \n trailing   \n\u{a0}nbsp\u{2003}em\u{3000}ideographic\u{85}nel\u{2028}ls\n",
    "123 4567 89012345 3.14159 1,000,000 ٣٤٥ ²³ ⅫⅣ ① 十二 x²+y³=z⁴ 0x1F 1e-9\n",
    "Ünïcödé café naïve résumé Ελληνικά ΚΕΦΑΛΑΙΑ русский ТЕКСТ עברית العربية हिन्दी ภาษาไทย\n",
    "e\u{301}\u{302} a\u{308}b \u{301}\u{301} ǅungla ǈ ᾈ ß ŉ ﬁ\n",
    "中文字符，标点。日本語のテキスト、カタカナ・ひらがな 한국어 텍스트 ㄅㄆ 𠀀𪚥\n",
    "emoji 👍🏽 👨\u{200d}👩\u{200d}👧 🇫🇷 ❤️ ★☆ → ∑∫ € $ £ ¥ % ‰ © ® ™\n",
    "code: fn main() { let x = a[i] + b.c(d, \"e\"); } // comment /* block */ <tag attr='v'>&amp;\n",
    "punctuation!!! ??? ... --- ___ *** ''' \"\"\" ((( ))) [[ ]] {{ }} @#$%^&|~`\\/ :;.,<>?\n",
    "IMGIMGAZ <sentinel:12> mixedCASEWords camelCase snake_case kebab-case ALLCAPS Title\n",
    "\u{0}nul\u{1}\u{7f}del\u{fffd}\u{feff}\u{200b}zw\u{200c}\u{200d} end   ",
);

/// The compiled program for `pattern`, if it compiles and splits [`PROBE`] as `regex` does.
pub fn for_pattern(pattern: &str, regex: &fancy_regex::Regex) -> Option<Arc<Program>> {
    static PROGRAMS: OnceLock<Mutex<FxHashMap<String, Option<Arc<Program>>>>> = OnceLock::new();
    const KEPT: usize = 64; // about 150 kB of tables each
    let programs = PROGRAMS.get_or_init(Default::default);
    if let Some(p) = programs.lock().ok()?.get(pattern) {
        return p.clone();
    }
    let program = Program::compile(pattern).ok().filter(|p| agrees(p, regex, PROBE)).map(Arc::new);
    let mut map = programs.lock().ok()?;
    if map.len() >= KEPT {
        map.clear();
    }
    map.insert(pattern.to_string(), program.clone());
    program
}

/// Whether `program` finds exactly the regex engine's matches in `text` (and every suffix of
/// `text` starting at one of its lines).
fn agrees(program: &Program, regex: &fancy_regex::Regex, text: &str) -> bool {
    let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1));
    starts.into_iter().all(|s| {
        let (ours, stopped) = program.matches(&text[s..]);
        stopped.is_none() && engine_matches(regex, &text[s..]) == Some(ours)
    })
}

#[cfg(test)]
mod tests;
