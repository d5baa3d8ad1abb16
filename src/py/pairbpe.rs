//! `bpekit._core.PairBPE`: the pair-rank (Hugging Face) BPE model as seen from Python
//! (`bpekit.pipeline.fast.core_model` builds it).

use super::batch;
use super::calls::Fail;
use super::ints::IdInts;
use super::offsets::ByteLengths;
use super::scratch;
use super::added::LiteralMatcher;
use super::calls::{batch_texts, HOLD_GIL_BELOW};
use super::text::utf8;
use super::{run, run_held};
use crate::pairbpe::{byte_level_bytes, merge_ids, Affixed, AFTER_BYTE_LEVEL, CharAffixes, CharSymbols, Metaspace, PairBpe, Prepend, Split, Symbols};
use std::borrow::Cow;
use crate::pretokenize::{Pretokenizer, RegexSplitter};
use crate::normalizer::Program;
use pyo3::prelude::*;
use pyo3::types::{PyAny, PyList, PyString};

/// `[(left id, right id, merged id)]` in rank order for a merge list of token strings (checked:
/// see `crate::pairbpe::merge_ids`).
#[pyfunction]
#[pyo3(signature = (vocab, merges, prefix_len = 0))]
pub fn pair_merge_ids(
    py: Python<'_>,
    vocab: rustc_hash::FxHashMap<String, u32>,
    merges: Vec<(String, String)>,
    prefix_len: usize,
) -> PyResult<Vec<(u32, u32, u32)>> {
    run(py, || merge_ids(&vocab, &merges, prefix_len))
}

/// `(one-character tokens, byte-token ids, unk id, fuse_unk, marker)`: see `PairBPE.new`.
type CharConfig = (rustc_hash::FxHashMap<String, u32>, Option<Vec<u32>>, Option<u32>, bool, Option<char>);
/// `{character: id}`, one of a model's tables of characters by their place in a piece.
type CharIds = rustc_hash::FxHashMap<char, u32>;

#[pyclass(frozen, module = "bpekit._core")]
pub struct PairBPE {
    model: PairBpe,
    /// One shared `int` per id for the lists `encode` returns (see `ints.rs`).
    ints: IdInts,
}

#[pymethods]
impl PairBPE {
    /// `byte_ids[b]`: id of byte `b`'s character; `merges[rank] = (left, right, merged)`;
    /// `whole`: the vocabulary, given only for `ignore_merges` (byte-level: tokens outside the
    /// byte alphabet are left out); `pattern` `None`: no split, a text is one piece; `isolated`:
    /// Hugging Face `Split(Isolated)` patterns (fancy-regex syntax) that cut the text one after
    /// the other instead of `pattern`; `chars`: a model over characters instead of bytes,
    /// `(one-character tokens, the 256 byte-token ids or None, unk id or None, fuse_unk, marker
    /// or None)` (`byte_ids` is then unused and `whole` holds the tokens' own text; `marker`:
    /// see `CharSymbols::marker`); `metaspace`: Hugging Face's `Metaspace` pre-tokenizer instead
    /// of `pattern` and `isolated`, `(replacement, prepend_scheme, split)` (`"always"`, `"first"`
    /// or `"never"`); `affixes`: a byte-level model with a subword prefix or end-of-word suffix,
    /// `(middle, last, only)`, each 256 ids as `byte_ids` (which is then the first byte's): a
    /// byte inside a piece (prefix + character), the last of two or more (prefix + character +
    /// suffix), a piece of one byte (character + suffix); `char_affixes`: the same for a model
    /// over characters, `(middle, last, only)`, each `{character: id}` (`chars`' one-character
    /// tokens are then the first character's).
    #[new]
    #[pyo3(signature = (byte_ids, merges, pattern, text_prefix = false, piece_prefix = false, whole = None, isolated = vec![], chars = None, metaspace = None, affixes = None, char_affixes = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        byte_ids: Vec<u32>,
        merges: Vec<(u32, u32, u32)>,
        pattern: Option<&str>,
        text_prefix: bool,
        piece_prefix: bool,
        whole: Option<rustc_hash::FxHashMap<String, u32>>,
        isolated: Vec<String>,
        chars: Option<CharConfig>,
        metaspace: Option<(char, String, bool)>,
        affixes: Option<(Vec<u32>, Vec<u32>, Vec<u32>)>,
        char_affixes: Option<(CharIds, CharIds, CharIds)>,
    ) -> PyResult<Self> {
        let metaspace = metaspace
            .map(|(replacement, scheme, split)| {
                let prepend = match scheme.as_str() {
                    "always" => Prepend::Always,
                    "first" => Prepend::First,
                    "never" => Prepend::Never,
                    _ => return Err(pyo3::exceptions::PyValueError::new_err(format!("unknown prepend_scheme {scheme:?}"))),
                };
                Ok(Metaspace { replacement, prepend, split })
            })
            .transpose()?;
        run(py, || {
            let ids256 = |v: Vec<u32>, what: &str| -> crate::Result<[u32; 256]> {
                v.try_into().map_err(|v: Vec<u32>| crate::Error::Vocab(format!("{what} needs 256 ids, got {}", v.len())))
            };
            if chars.is_some() && affixes.is_some() {
                return Err(crate::Error::Vocab("affixes are for a byte-level model, not one over characters".into()));
            }
            if chars.is_none() && char_affixes.is_some() {
                return Err(crate::Error::Vocab("char_affixes are for a model over characters".into()));
            }
            let (symbols, whole) = match chars {
                None => {
                    let whole = whole.map(|w| {
                        w.into_iter().filter_map(|(t, i)| byte_level_bytes(&t).filter(|b| !b.is_empty()).map(|b| (b, i))).collect()
                    });
                    let first = ids256(byte_ids, "byte_ids")?;
                    let symbols = match affixes {
                        None => Symbols::Bytes(first),
                        Some((middle, last, only)) => Symbols::Affixed(Box::new(Affixed {
                            first,
                            middle: ids256(middle, "affixes")?,
                            last: ids256(last, "affixes")?,
                            only: ids256(only, "affixes")?,
                        })),
                    };
                    (symbols, whole)
                }
                Some((singles, bytes, unk, fuse_unk, marker)) => {
                    let mut chars = rustc_hash::FxHashMap::default();
                    for (t, i) in singles {
                        let mut it = t.chars();
                        if let (Some(c), None) = (it.next(), it.next()) {
                            chars.insert(c, i);
                        }
                    }
                    let bytes = bytes.map(|b| ids256(b, "byte tokens")).transpose()?;
                    let whole = whole.map(|w| w.into_iter().filter(|(t, _)| !t.is_empty()).map(|(t, i)| (t.into_bytes(), i)).collect());
                    let affixes = char_affixes.map(|(middle, last, only)| Box::new(CharAffixes { middle, last, only }));
                    let marker = marker.filter(|_| affixes.is_none()); // (cuts would move a char's place)
                    (Symbols::Chars(CharSymbols { chars, bytes, unk, fuse_unk, marker, affixes }), whole)
                }
            };
            // stages after ByteLevel cut each piece's byte-level string
            let (after, isolated): (Vec<String>, Vec<String>) = isolated.into_iter().partition(|p| p.starts_with(AFTER_BYTE_LEVEL));
            let after: Vec<String> = after.iter().map(|p| p[AFTER_BYTE_LEVEL.len()..].to_string()).collect();
            // stages that one hand-written splitter stands for become the splitter
            let (splitter, isolated) = match Pretokenizer::isolated_stages(&isolated) {
                Some(hand) if pattern.is_none() => (Some(hand), Vec::new()),
                _ => (pattern.map(Pretokenizer::new).transpose()?, RegexSplitter::all(&isolated)?),
            };
            let byte_stages = RegexSplitter::all(&after)?;
            let split = Split { splitter, isolated, text_prefix, piece_prefix, metaspace, byte_stages };
            let model = PairBpe::new(symbols, &merges, whole, split)?;
            let ints = IdInts::new(model.max_id());
            Ok(PairBPE { model, ints })
        })
    }

    /// The ids of one text (split, byte-mapped, merged).
    fn encode<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        let ids = run(py, || self.model.encode(text))?;
        self.ints.list(py, &ids)
    }

    /// `encode(text)` and each id's span of `text` in chars, from the pieces the model cuts and
    /// the byte length of each id (`lengths`, whose lengths leave out a subword prefix or
    /// end-of-word suffix): text a split stage drops is in no span; `first`: the text starts the
    /// input (a `Metaspace` model's `First` scheme). With `normalizer` (a `Normalizer` program),
    /// `text` is normalized first and each span mapped back through it (`crate::aligned`).
    /// `None` where the pieces are not the text's own bytes (a space before the whole text, no
    /// splitter and no `Metaspace`) or the lengths do not add up (`PairBpe::encode_char_spans`).
    #[allow(clippy::type_complexity)]
    #[pyo3(signature = (text, lengths, first = true, normalizer = None))]
    fn encode_offsets<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        lengths: &Bound<'py, ByteLengths>,
        first: bool,
        normalizer: Option<PyRef<'py, super::text::Normalizer>>,
    ) -> PyResult<Option<(Bound<'py, PyList>, crate::offsets::Spans)>> {
        let table = lengths.get();
        let program = normalizer.as_ref().map(|n| &n.program);
        let got = run(py, || self.char_spans_of(text, first, program, |i| table.length(i)))?;
        got.map(|(ids, spans)| Ok((self.ints.list(py, &ids)?, spans))).transpose()
    }

    /// `encode_offsets` of each of `texts` (whole inputs: `first`), on `num_threads` threads (0:
    /// one per core) with the GIL released: a list of `(ids, spans)`, `None` for a text whose
    /// spans the model cannot give (`Tokenizer.encode_batch_with_offsets`).
    #[allow(clippy::type_complexity)]
    #[pyo3(signature = (texts, lengths, normalizer = None, num_threads = 0))]
    fn encode_offsets_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<String>,
        lengths: &Bound<'py, ByteLengths>,
        normalizer: Option<PyRef<'py, super::text::Normalizer>>,
        num_threads: usize,
    ) -> PyResult<Vec<Option<(Bound<'py, PyList>, crate::offsets::Spans)>>> {
        let table = lengths.get();
        let program = normalizer.as_ref().map(|n| &n.program);
        let threads = crate::parallel::thread_count(num_threads);
        let got = run(py, || {
            let each = crate::parallel::map(&texts, threads, |text| self.char_spans_of(text, true, program, |i| table.length(i)));
            each.into_iter().collect::<crate::Result<Vec<_>>>()
        })?;
        got.into_iter().map(|one| one.map(|(ids, spans)| Ok((self.ints.list(py, &ids)?, spans))).transpose()).collect()
    }

    /// The ids of `text` with its added tokens: cut at `raw`'s tokens, each part between them
    /// normalized by `normalize` and cut at `norm`'s tokens, each part between those encoded
    /// (`bpekit.pipeline.added_tokens.AddedVocabulary.split`, then `encode` of each model
    /// segment, in one call). The matchers must carry their tokens and have no `single_word`
    /// token (Python keeps those).
    ///
    /// `ascii_invariant`: the normalizer leaves ASCII text as it is (the Unicode forms), so an
    /// ASCII part is not handed to it. `count`: only the number of ids, no list
    /// (`Tokenizer.count`, and its truncation's search).
    #[pyo3(signature = (text, raw, norm, normalize = None, ascii_invariant = false, count = false))]
    #[allow(clippy::too_many_arguments)]
    fn encode_added<'py>(
        &self,
        py: Python<'py>,
        text: Bound<'py, PyString>,
        raw: Option<PyRef<'py, LiteralMatcher>>,
        norm: Option<PyRef<'py, LiteralMatcher>>,
        normalize: Option<Bound<'py, PyAny>>,
        ascii_invariant: bool,
        count: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let text = utf8(&text)?; // lone surrogates fixed as tiktoken does
        self.encode_text(py, &text, raw.as_deref(), norm.as_deref(), normalize.as_ref(), ascii_invariant, count)
    }

    /// `encode_added` of each text, in parallel (`num_threads` 0 = one per core): all of it on
    /// the batch's threads, but for a Python normalizer, which runs on the calling thread with
    /// the raw cut before the batch starts (`Normalize`); `around`'s ids
    /// before and after each text's. As `out` ([`batch::Out`]) says: lists, one `uint32` array and
    /// `int64` offsets (`len(texts) + 1`: the ids of text `i` are `flat[offsets[i]:offsets[i + 1]]`),
    /// or each text's number of ids.
    #[pyo3(signature = (texts, raw, norm, normalize = None, ascii_invariant = false, num_threads = 0, around = (Vec::new(), Vec::new()), out = batch::Out::Lists))]
    #[allow(clippy::too_many_arguments)]
    fn encode_added_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        raw: Option<PyRef<'py, LiteralMatcher>>,
        norm: Option<PyRef<'py, LiteralMatcher>>,
        normalize: Option<Bound<'py, PyAny>>,
        ascii_invariant: bool,
        num_threads: usize,
        around: (Vec<u32>, Vec<u32>),
        out: batch::Out,
    ) -> PyResult<Bound<'py, PyAny>> {
        let texts = batch_texts(&texts)?; // lone surrogates fixed as tiktoken does
        let (raw, norm) = (raw.as_deref(), norm.as_deref());
        let normalize = Normalize::of(normalize.as_ref())?;
        // a Python normalizer: every text prepared on this thread first; none, or a Rust program:
        // each text prepared on the batch's threads as it is encoded
        let prepared = match normalize {
            Normalize::Call(_) => Some(texts.iter().map(|t| Prepared::new(py, t, raw, &normalize, ascii_invariant)).collect::<PyResult<Vec<_>>>()?),
            _ => None,
        };
        let lens: Vec<usize> = match &prepared {
            Some(prepared) => prepared.iter().map(|p| p.text.len()).collect(),
            None => texts.iter().map(|t| t.len()).collect(),
        };
        let program = normalize.program();
        let encode = |i: usize, out: &mut Vec<u32>| {
            match &prepared {
                Some(prepared) => self.encode_prepared(&prepared[i], norm, out),
                None => Prepared::in_rust(&texts[i], raw, program, ascii_invariant).and_then(|p| self.encode_prepared(&p, norm, out)),
            }
            .map_err(Fail::Core)
        };
        batch::encode_out(py, &self.ints, &lens, num_threads, out, batch::around(&around.0, &around.1, encode))
    }

    /// Sets the per-thread piece cache budget in bytes (0 = off) and empties every thread's cache.
    fn set_cache_capacity(&self, bytes: usize) {
        self.model.set_cache_capacity(bytes)
    }

    fn cache_capacity(&self) -> usize {
        self.model.cache_capacity()
    }

    /// The ids of one raw piece (no splitting).
    fn encode_piece(&self, py: Python<'_>, piece: &[u8]) -> PyResult<Vec<u32>> {
        run(py, || {
            let mut out = Vec::new();
            self.model.encode_piece(piece, &mut out)?;
            Ok(out)
        })
    }

    /// The ids of one raw piece by the linear merge of long pieces, its tables built now for the
    /// piece's bytes; `None` where it does not apply (not byte-level, a byte without a token, a
    /// merge list that does not suit it). For tests against `encode_piece`.
    fn encode_piece_linear(&self, py: Python<'_>, piece: &[u8]) -> Option<Vec<u32>> {
        py.detach(|| self.model.encode_piece_linear(piece))
    }

    /// Whether the linear merge's full tables are built (`None`: not yet; `False`: the merge list
    /// does not suit them), and how many tables over a long piece's bytes are.
    fn linear_tables(&self) -> (Option<bool>, usize) {
        self.model.linear_tables()
    }

    /// `encode` of each text, in parallel (`num_threads` 0 = one per core); `around`'s ids before
    /// and after each text's; lists, one array and offsets, or counts (`out`).
    #[pyo3(signature = (texts, num_threads = 0, around = (Vec::new(), Vec::new()), out = batch::Out::Lists))]
    fn encode_batch<'py>(&self, py: Python<'py>, texts: Vec<String>, num_threads: usize, around: (Vec<u32>, Vec<u32>), out: batch::Out) -> PyResult<Bound<'py, PyAny>> {
        let lens: Vec<usize> = texts.iter().map(|t| t.len()).collect();
        let encode = |i: usize, out: &mut Vec<u32>| self.model.encode_into(&texts[i], out).map_err(Fail::Core);
        batch::encode_out(py, &self.ints, &lens, num_threads, out, batch::around(&around.0, &around.1, encode))
    }
}

/// How a pipeline's text is normalized: not at all, by a program of steps in Rust (a
/// `_core.Normalizer`, which Python passes where the normalizer's stages have one:
/// `bpekit.pipeline.normalizers.core_normalizer`), or by a Python callable.
pub(super) enum Normalize<'a, 'py> {
    Nothing,
    Program(&'a Program),
    Call(&'a Bound<'py, PyAny>),
}

impl<'a, 'py> Normalize<'a, 'py> {
    pub(super) fn of(arg: Option<&'a Bound<'py, PyAny>>) -> PyResult<Self> {
        let Some(arg) = arg else { return Ok(Normalize::Nothing) };
        match arg.cast::<super::text::Normalizer>() {
            Ok(n) => Ok(Normalize::Program(&n.get().program)),
            Err(_) => Ok(Normalize::Call(arg)),
        }
    }

    /// The Rust program, if that is what normalizes.
    fn program(&self) -> Option<&'a Program> {
        match self {
            Normalize::Program(p) => Some(p),
            _ => None,
        }
    }
}

/// A text cut at its raw added tokens, each part between them normalized: the parts back to
/// back in `text`, and `cuts`, where each part ends and the raw token that follows it, if any.
struct Prepared<'a> {
    text: Cow<'a, str>,
    cuts: Vec<(usize, Option<u32>)>,
}

impl<'a> Prepared<'a> {
    /// `text` cut at `raw`'s tokens (none: one part), each part normalized, unless it is ASCII
    /// and `ascii_invariant`; a Python normalizer is called here (the GIL held).
    fn new(py: Python<'_>, text: &'a str, raw: Option<&LiteralMatcher>, normalize: &Normalize<'_, '_>, ascii_invariant: bool) -> PyResult<Prepared<'a>> {
        let Normalize::Call(f) = normalize else {
            return Prepared::in_rust(text, raw, normalize.program(), ascii_invariant).map_err(|e| super::to_py_err(py, e));
        };
        let keep = |part: &str| ascii_invariant && part.is_ascii();
        Prepared::cut(text, raw, keep, |part| Ok(Some(f.call1((part,))?.extract::<&str>()?.to_owned())), |e| super::to_py_err(py, e))
    }

    /// As [`Prepared::new`] with no normalizer or a Rust program: no Python, so on any thread.
    fn in_rust(text: &'a str, raw: Option<&LiteralMatcher>, program: Option<&Program>, ascii_invariant: bool) -> crate::Result<Prepared<'a>> {
        let Some(program) = program else {
            return Prepared::cut(text, raw, |_| true, |_| Ok(None), |e| e);
        };
        let normalize = |part: &str| Ok(match program.apply(part) {
            Cow::Borrowed(_) => None,
            Cow::Owned(changed) => Some(changed),
        });
        Prepared::cut(text, raw, |part| ascii_invariant && part.is_ascii(), normalize, |e| e)
    }

    /// `text` cut at `raw`'s tokens, each part that `keep` does not keep as it is through
    /// `normalize` (`None`: unchanged); `text` itself, borrowed, where nothing changes it.
    fn cut<E>(
        text: &'a str,
        raw: Option<&LiteralMatcher>,
        keep: impl Fn(&str) -> bool,
        normalize: impl Fn(&str) -> Result<Option<String>, E>,
        matcher_err: impl Fn(crate::Error) -> E,
    ) -> Result<Prepared<'a>, E> {
        let segments = match raw {
            None => vec![(0, text.len(), None)],
            Some(m) => m.segments(text).map_err(matcher_err)?,
        };
        if segments.iter().all(|s| s.2.is_none()) && (segments.len() == 1 || keep(text)) {
            let changed = if keep(text) { None } else { normalize(text)? };
            let text = changed.map_or(Cow::Borrowed(text), Cow::Owned);
            return Ok(Prepared { cuts: vec![(text.len(), None)], text });
        }
        let mut joined = String::with_capacity(text.len());
        let mut cuts = Vec::new();
        for (s, e, id) in segments {
            let part = &text[s..e];
            match id {
                Some(id) => cuts.push((joined.len(), Some(id))),
                None if keep(part) => joined.push_str(part),
                None => joined.push_str(normalize(part)?.as_deref().unwrap_or(part)),
            }
        }
        cuts.push((joined.len(), None));
        Ok(Prepared { text: Cow::Owned(joined), cuts })
    }
}

impl PairBPE {
    /// `encode_offsets`' work: `text` normalized by `program` with its spans, where one is
    /// given and changes it, then the model's char spans, mapped back to `text`.
    fn char_spans_of(&self, text: &str, first: bool, program: Option<&Program>, length: impl Fn(u32) -> Option<usize>) -> crate::Result<Option<crate::pairbpe::IdsAndSpans>> {
        let Some(done) = program.and_then(|p| p.align(&crate::aligned::Aligned::of(text))) else {
            return self.model.encode_char_spans(text, first, length);
        };
        let Some((ids, spans)) = self.model.encode_char_spans(&done.text, first, length)? else { return Ok(None) };
        Ok(Some((ids, spans.into_iter().map(|(a, b)| done.input_span(a, b)).collect())))
    }

    /// `encode_added` of `text` (UTF-8 already, lone surrogates fixed), for the bound
    /// `Tokenizer.encode` too (`tokenizer_calls.rs`): the list of ids, or (`count`) their number.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn encode_text<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        raw: Option<&LiteralMatcher>,
        norm: Option<&LiteralMatcher>,
        normalize: Option<&Bound<'py, PyAny>>,
        ascii_invariant: bool,
        count: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let prepared = Prepared::new(py, text, raw, &Normalize::of(normalize)?, ascii_invariant)?;
        let mut ids = scratch::ids();
        let out: &mut Vec<u32> = &mut ids;
        let work = || self.encode_prepared(&prepared, norm, out);
        if text.len() < HOLD_GIL_BELOW { run_held(py, work)? } else { run(py, work)? };
        if count {
            return Ok(ids.len().into_pyobject(py)?.into_any());
        }
        Ok(self.ints.list(py, &ids)?.into_any())
    }

    /// The ids of a prepared text: each part cut at `norm`'s tokens and the pieces between them
    /// encoded, the raw tokens between the parts.
    /// The segment that starts the input (the first part, before any raw token, from its
    /// start) is encoded as the first (`PairBpe::encode_segment`).
    fn encode_prepared(&self, p: &Prepared<'_>, norm: Option<&LiteralMatcher>, out: &mut Vec<u32>) -> crate::Result<()> {
        let mut from = 0;
        for (i, &(end, raw)) in p.cuts.iter().enumerate() {
            let part = &p.text[from..end];
            match norm {
                _ if part.is_empty() => {}
                None => self.model.encode_segment(part, i == 0, out)?,
                Some(m) => {
                    for (s, e, id) in m.segments(part)? {
                        match id {
                            Some(id) => out.push(id),
                            None => self.model.encode_segment(&part[s..e], i == 0 && s == 0, out)?,
                        }
                    }
                }
            }
            out.extend(raw);
            from = end;
        }
        Ok(())
    }
}

/// Hugging Face `Split(Isolated)` stages run one after the other, in Rust: the raw pieces.
#[pyclass(frozen, module = "bpekit._core")]
pub struct IsolatedSplit {
    stages: Vec<RegexSplitter>,
    /// The hand-written splitter that stands for all the stages, if one does.
    hand: Option<Pretokenizer>,
    /// How many stages.
    count: usize,
}

#[pymethods]
impl IsolatedSplit {
    /// `regex_only`: every stage on fancy-regex, no hand-written or compiled splitter (to compare
    /// against, or to benchmark).
    #[new]
    #[pyo3(signature = (patterns, regex_only = false))]
    fn new(py: Python<'_>, patterns: Vec<String>, regex_only: bool) -> PyResult<Self> {
        run(py, || {
            if regex_only {
                let stages = patterns.iter().map(|p| RegexSplitter::regex_only(p)).collect::<crate::Result<Vec<_>>>()?;
                return Ok(IsolatedSplit { stages, hand: None, count: patterns.len() });
            }
            let hand = Pretokenizer::isolated_stages(&patterns);
            let stages = if hand.is_some() { Vec::new() } else { RegexSplitter::all(&patterns)? };
            Ok(IsolatedSplit { stages, hand, count: patterns.len() })
        })
    }

    /// The pieces of `text`.
    fn split(&self, py: Python<'_>, text: &str) -> PyResult<Vec<String>> {
        run(py, || {
            if let Some(hand) = &self.hand {
                return Ok(hand.split(text)?.into_iter().map(str::to_string).collect());
            }
            let pieces = RegexSplitter::isolate_all(&self.stages, text)?;
            Ok(pieces.into_iter().map(|(s, e)| text[s..e].to_string()).collect())
        })
    }

    /// The pieces of `text` as `(start, end)` char indices (a stage that keeps only its matches
    /// leaves the text between them out).
    fn spans(&self, py: Python<'_>, text: &str) -> PyResult<Vec<(usize, usize)>> {
        run(py, || {
            let bytes: Vec<(usize, usize)> = match &self.hand {
                Some(hand) => {
                    let mut out = Vec::new();
                    hand.for_each_piece(text, |s, e| {
                        out.push((s, e));
                        Ok(())
                    })?;
                    out
                }
                None => RegexSplitter::isolate_all(&self.stages, text)?,
            };
            let mut chars = crate::offsets::Boundaries::new(text.as_bytes());
            Ok(bytes.into_iter().map(|(s, e)| (chars.index(s), chars.index(e))).collect())
        })
    }

    /// How many pieces `split` would return, without making them (for benchmarks).
    fn count(&self, py: Python<'_>, text: &str) -> PyResult<usize> {
        run(py, || {
            if let Some(hand) = &self.hand {
                let mut n = 0;
                hand.for_each_piece(text, |_, _| {
                    n += 1;
                    Ok(())
                })?;
                return Ok(n);
            }
            Ok(RegexSplitter::isolate_all(&self.stages, text)?.len())
        })
    }

    /// Whether a hand-written splitter stands for the stages (or for one of them).
    #[getter]
    fn hand_written(&self) -> bool {
        self.hand.is_some() || self.stages.iter().any(|s| s.hand().is_some())
    }

    /// How each stage is split: `"hand"` (a hand-written splitter, for the stage or for the whole
    /// sequence), `"compiled"` (the compiled matcher) or `"regex"` (fancy-regex).
    #[getter]
    fn engines(&self) -> Vec<&'static str> {
        let engine = |s: &RegexSplitter| match (s.hand(), s.is_compiled()) {
            (Some(_), _) => "hand",
            (None, true) => "compiled",
            (None, false) => "regex",
        };
        match &self.hand {
            Some(_) => vec!["hand"; self.count],
            None => self.stages.iter().map(engine).collect(),
        }
    }
}
