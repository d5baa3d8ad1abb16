//! `bpekit._core.CoreBPE`: the Rust encoder as seen from Python (`bpekit.Encoding` wraps it).

use super::batch::encode_lists;
use super::batch::around as around_ids;
use super::flat::{count_at, encode_flat, encode_flat_at, FlatBatch};
use super::calls::{batch_items, batch_texts, encode_call, text_arg, threads_arg, Fail, Only, Policy};
use super::ints::IdInts;
use super::scratch::{self, Spare};
use super::{run, to_py_err};
use crate::core::CoreBpe;
use crate::merge::Ranks;
use crate::vocab::Rank;
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// Outputs up to this many ids are copied into an array numpy allocates; longer ones are handed
/// over without a copy (the `Vec` becomes the array's memory). Numbers in src/PERFORMANCE.md,
/// "Numpy output and batches, fourth round".
const COPY_IDS_BELOW: usize = 1 << 16;

/// `ids` as a numpy `uint32` array: copied when short (one allocation, no owner object; `ids`
/// is left as it is, to be reused), moved when long (no copy; `ids` is left empty).
pub(super) fn ids_array<'py>(py: Python<'py>, ids: &mut Vec<Rank>) -> PyResult<Bound<'py, PyArray1<Rank>>> {
    numpy_ready(py)?;
    Ok(if ids.len() < COPY_IDS_BELOW {
        PyArray1::from_slice(py, ids)
    } else {
        std::mem::take(ids).into_pyarray(py)
    })
}

/// Imports numpy, the first time, as a Python call that can fail. The `numpy` crate fetches
/// numpy's C API on its first array and panics if that fails: a Ctrl-C while numpy was being
/// imported there (`bpekit tokenize`, session 29) crossed into Python as a `PanicException` with
/// a Rust backtrace. Once numpy is imported, fetching the API runs no Python code to interrupt.
pub(super) fn numpy_ready(py: Python<'_>) -> PyResult<()> {
    static READY: AtomicBool = AtomicBool::new(false);
    if !READY.load(Ordering::Relaxed) {
        py.import("numpy")?;
        READY.store(true, Ordering::Relaxed);
    }
    Ok(())
}


#[pyclass(frozen, module = "bpekit._core")]
pub struct CoreBPE {
    core: CoreBpe,
    /// special string -> its index in `core.specials.tokens` (for building allowed masks).
    special_index: HashMap<String, usize>,
    /// The allowed mask "every special".
    every: Vec<bool>,
    /// The Python int of each id (list output).
    ints: IdInts,
}

impl From<CoreBpe> for CoreBPE {
    fn from(core: CoreBpe) -> Self {
        let special_index = core.specials.tokens.iter().enumerate().map(|(i, (s, _))| (s.clone(), i)).collect();
        let n = core.specials.tokens.len();
        let max_id = core.vocab.max_ordinary().into_iter().chain(core.specials.tokens.iter().map(|&(_, id)| id)).max();
        CoreBPE { core, special_index, every: vec![true; n], ints: IdInts::new(max_id) }
    }
}

/// Parses a `.tiktoken` rank file's contents into a dict {token bytes: rank}.
#[pyfunction]
#[pyo3(signature = (data, source = "<bytes>"))]
pub fn parse_tiktoken_ranks<'py>(py: Python<'py>, data: &[u8], source: &str) -> PyResult<Bound<'py, PyDict>> {
    let ranks = run(py, || crate::rankfile::parse(data, source))?;
    ranks_to_dict(py, &ranks)
}

fn ranks_to_dict<'py>(py: Python<'py>, ranks: &Ranks) -> PyResult<Bound<'py, PyDict>> {
    let mut items: Vec<(&Vec<u8>, Rank)> = ranks.iter().map(|(k, &v)| (k, v)).collect();
    items.sort_unstable_by_key(|x| x.1);
    let d = PyDict::new(py);
    for (k, v) in items {
        d.set_item(PyBytes::new(py, k), v)?;
    }
    Ok(d)
}

impl CoreBPE {
    /// `encode` under tiktoken's default policy (`refuse`: any special token in the text is an
    /// error, else none is matched) or with every special token allowed, appending to `out`.
    fn encode_policy_into(&self, text: &str, refuse: bool, out: &mut Vec<Rank>) -> Result<(), Fail> {
        if refuse {
            self.refuse_specials(text)?;
            self.core.encode_ordinary_into(text, out)?;
        } else {
            self.core.encode_into(text, &self.every, out)?;
        }
        Ok(())
    }

    /// The default policy's check: the first special token in `text`, if any, as the failure.
    fn refuse_specials(&self, text: &str) -> Result<(), Fail> {
        self.refuse(text, &self.every)
    }

    /// The first special token in `text` among those `refused` (a mask), if any, as the failure.
    fn refuse(&self, text: &str, refused: &[bool]) -> Result<(), Fail> {
        match self.core.specials.find_allowed(text.as_bytes(), 0, refused) {
            Some(f) => Err(Fail::Special(text[f.start..f.end].to_string())),
            None => Ok(()),
        }
    }

    /// The encoder of a batch, appending a text's ids to the buffer it is given (one per chunk
    /// of texts): the specials in `allowed_special` (`None` = all) are matched, and with `refuse`
    /// every other special token in a text is its failure (`refuse` with none allowed: the default
    /// policy; with some: [`Policy::Only`]).
    fn batch_encoder(&self, allowed_special: Option<Vec<String>>, refuse: bool) -> impl Fn(&str, &mut Vec<Rank>) -> Result<(), Fail> + Sync + '_ {
        let only = Only::new(self.allowed(allowed_special));
        let ordinary = refuse && !only.allowed.contains(&true);
        move |t, out| {
            if ordinary {
                self.encode_policy_into(t, true, out)
            } else {
                if refuse {
                    self.refuse(t, &only.refused)?;
                }
                self.core.encode_into(t, &only.allowed, out).map(drop).map_err(Fail::Core)
            }
        }
    }

    /// `encode` under a fast-path policy, appending to `out`.
    fn encode_with_into(&self, text: &str, policy: &Policy, out: &mut Vec<Rank>) -> Result<(), Fail> {
        match policy {
            Policy::Refuse => self.encode_policy_into(text, true, out),
            Policy::All => self.encode_policy_into(text, false, out),
            Policy::Ordinary => Ok(self.core.encode_ordinary_into(text, out).map(drop)?),
            Policy::Only(only) => {
                self.refuse(text, &only.refused)?;
                Ok(self.core.encode_into(text, &only.allowed, out).map(drop)?)
            }
        }
    }

    /// The ids of `text` under `policy`, in this thread's spare buffer of ids (`scratch.rs`).
    fn spare_ids(&self, py: Python<'_>, text: &str, policy: &Policy) -> PyResult<Spare<Rank>> {
        let mut ids = scratch::ids();
        // sized as each call's own `Vec` was: a long text's ids do not grow it from empty
        ids.reserve(text.len() / 3 + 1);
        let out: &mut Vec<Rank> = &mut ids;
        encode_call(py, text.len(), || self.encode_with_into(text, policy, out))?;
        Ok(ids)
    }

    /// [`Policy::Only`] for the items of `set` (an exact `set` or `frozenset`): `None` unless every
    /// item is an exact `str` (the general path decides the rest).
    pub(super) fn only_policy(&self, set: &Bound<'_, PyAny>) -> Option<Policy> {
        let n = self.core.specials.tokens.len();
        let mut allowed = vec![false; n];
        for item in set.try_iter().ok()? {
            let item = item.ok()?;
            let s = item.cast_exact::<PyString>().ok()?;
            if let Some(&i) = s.to_str().ok().and_then(|s| self.special_index.get(s)) {
                allowed[i] = true;
            }
        }
        Some(Policy::Only(Box::new(Only::new(allowed))))
    }

    /// One `encode` call from Python: the argument checked (module `calls`), a list of ints.
    pub(super) fn list_call<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>, policy: &Policy) -> PyResult<Bound<'py, PyList>> {
        let text = text_arg(text)?;
        self.ints.list(py, &self.spare_ids(py, &text, policy)?)
    }

    /// One `encode_to_numpy` call from Python (see [`ids_array`]).
    pub(super) fn numpy_call<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>, policy: &Policy) -> PyResult<Bound<'py, PyArray1<Rank>>> {
        let text = text_arg(text)?;
        let mut ids = self.spare_ids(py, &text, policy)?;
        ids_array(py, &mut ids)
    }

    /// The encoder (for the bound calls of `bound.rs`).
    pub(super) fn core(&self) -> &CoreBpe {
        &self.core
    }

    /// One `count` call from Python.
    pub(super) fn count_call(&self, py: Python<'_>, text: &Bound<'_, PyAny>, policy: &Policy) -> PyResult<usize> {
        let text = text_arg(text)?;
        encode_call(py, text.len(), || match policy {
            Policy::All => Ok(self.core.count(&text, &self.every)?),
            Policy::Ordinary => Ok(self.core.count_ordinary(&text)?),
            Policy::Refuse => {
                self.refuse_specials(&text)?;
                Ok(self.core.count_ordinary(&text)?)
            }
            Policy::Only(only) => {
                self.refuse(&text, &only.refused)?;
                Ok(self.core.count(&text, &only.allowed)?)
            }
        })
    }

    /// The mask of allowed specials: `None` = every special token, else the named ones.
    fn allowed(&self, allowed: Option<Vec<String>>) -> Vec<bool> {
        let n = self.core.specials.tokens.len();
        match allowed {
            None => vec![true; n],
            Some(names) => {
                let mut mask = vec![false; n];
                for s in names {
                    if let Some(&i) = self.special_index.get(&s) {
                        mask[i] = true;
                    }
                }
                mask
            }
        }
    }
}

#[pymethods]
impl CoreBPE {
    /// `CoreBPE(ranks: dict[bytes, int], special_tokens: dict[str, int], pattern: str)`
    #[new]
    fn new(py: Python<'_>, ranks: HashMap<Vec<u8>, Rank>, special_tokens: Vec<(String, Rank)>, pattern: &str) -> PyResult<Self> {
        let ranks: Ranks = ranks.into_iter().collect();
        let core = run(py, || CoreBpe::new(ranks, special_tokens, pattern))?;
        Ok(core.into())
    }

    /// Builds an encoder straight from a rank file's bytes (the fast load path).
    #[staticmethod]
    #[pyo3(signature = (data, special_tokens, pattern, source = "<bytes>"))]
    fn from_tiktoken_bytes(py: Python<'_>, data: &[u8], special_tokens: Vec<(String, Rank)>, pattern: &str, source: &str) -> PyResult<Self> {
        let core = run(py, || {
            let flat = crate::rankfile::parse_flat(data, source)?;
            CoreBpe::from_flat(flat, special_tokens, pattern)
        })?;
        Ok(core.into())
    }

    fn mergeable_ranks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        ranks_to_dict(py, self.core.vocab.encoder())
    }

    fn dump_tiktoken<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let data = py.detach(|| crate::rankfile::dump(self.core.vocab.encoder()));
        PyBytes::new(py, &data)
    }

    /// Sets the per-thread pre-token cache budget in bytes (0 = off).
    fn set_cache_capacity(&self, bytes: usize) {
        self.core.set_cache_capacity(bytes)
    }

    fn cache_capacity(&self) -> usize {
        self.core.cache_capacity()
    }

    /// The largest ordinary token id (`None` for an empty vocabulary).
    fn max_rank(&self) -> Option<Rank> {
        self.core.vocab.max_ordinary()
    }

    fn n_mergeable(&self) -> usize {
        self.core.vocab.n_ordinary()
    }

    fn pattern(&self) -> &str {
        self.core.pretokenizer.pattern()
    }

    // ---- encoding, with the argument checks of `Encoding` (module `calls`) ----

    /// Encodes text, treating special-token text as ordinary text (`Encoding.encode_ordinary`,
    /// bound to each instance: it checks its argument as the Python method does).
    fn encode_ordinary_str<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        self.list_call(py, text, &Policy::Ordinary)
    }

    /// `Encoding.encode` under a fast-path policy (`Policy::from_code`: 0 refuse, 1 all, 2 ordinary).
    fn encode_str<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>, policy: u8) -> PyResult<Bound<'py, PyList>> {
        self.list_call(py, text, &Policy::from_code(policy)?)
    }

    /// `Encoding.encode_to_numpy`, policies as `encode_str`.
    fn encode_to_numpy_str<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>, policy: u8) -> PyResult<Bound<'py, PyArray1<Rank>>> {
        self.numpy_call(py, text, &Policy::from_code(policy)?)
    }

    /// `Encoding.count`, policies as `encode_str`.
    fn count_str(&self, py: Python<'_>, text: &Bound<'_, PyAny>, policy: u8) -> PyResult<usize> {
        self.count_call(py, text, &Policy::from_code(policy)?)
    }

    /// `Encoding.encode_batch` / `encode_ordinary_batch`: the specials in `allowed_special` (`None`
    /// = all) are matched and, with `refuse`, every other special token is refused (see
    /// [`CoreBPE::batch_encoder`]).
    #[pyo3(signature = (texts, num_threads, allowed_special, refuse))]
    fn encode_batch_lists<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        num_threads: &Bound<'py, PyAny>,
        allowed_special: Option<Vec<String>>,
        refuse: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let items = batch_items(texts)?;
        let threads = threads_arg(num_threads)?;
        let texts = batch_texts(&items)?;
        encode_lists(py, &self.ints, &texts, threads, self.batch_encoder(allowed_special, refuse))
    }

    /// `Encoding.encode_batch_to_numpy`, arguments as `encode_batch_lists`.
    #[pyo3(signature = (texts, num_threads, allowed_special, refuse))]
    fn encode_batch_numpy<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        num_threads: &Bound<'py, PyAny>,
        allowed_special: Option<Vec<String>>,
        refuse: bool,
    ) -> PyResult<FlatBatch<'py>> {
        let items = batch_items(texts)?;
        let threads = threads_arg(num_threads)?;
        let texts = batch_texts(&items)?;
        encode_flat(py, &texts, threads, self.batch_encoder(allowed_special, refuse))
    }

    /// `Encoding.count_batch`, arguments as `encode_batch_lists`: each text's number of ids,
    /// counted without keeping them.
    #[pyo3(signature = (texts, num_threads, allowed_special, refuse))]
    fn count_batch(&self, py: Python<'_>, texts: &Bound<'_, PyAny>, num_threads: &Bound<'_, PyAny>, allowed_special: Option<Vec<String>>, refuse: bool) -> PyResult<Vec<usize>> {
        let items = batch_items(texts)?;
        let threads = threads_arg(num_threads)?;
        let texts = batch_texts(&items)?;
        let lens: Vec<usize> = texts.iter().map(|t| t.len()).collect();
        let encode = self.batch_encoder(allowed_special, refuse);
        count_at(py, &lens, threads, |i: usize, out: &mut Vec<Rank>| encode(&texts[i], out))
    }

    // ---- encoding, arguments checked by the caller ----

    fn encode(&self, py: Python<'_>, text: &str, allowed_special: Option<Vec<String>>) -> PyResult<Vec<Rank>> {
        let mask = self.allowed(allowed_special);
        run(py, || self.core.encode(text, &mask).map(|r| r.0))
    }

    fn encode_to_numpy<'py>(&self, py: Python<'py>, text: &str, allowed_special: Option<Vec<String>>) -> PyResult<Bound<'py, PyArray1<Rank>>> {
        let mask = self.allowed(allowed_special);
        let v = run(py, || self.core.encode(text, &mask).map(|r| r.0))?;
        numpy_ready(py)?;
        Ok(v.into_pyarray(py))
    }

    fn count(&self, py: Python<'_>, text: &str, allowed_special: Option<Vec<String>>) -> PyResult<usize> {
        let mask = self.allowed(allowed_special);
        run(py, || self.core.count(text, &mask))
    }

    /// `CoreBpe::truncate`, in characters: `text[:n]` is the longest prefix that fits.
    fn truncate(&self, py: Python<'_>, text: &str, allowed_special: Option<Vec<String>>, max_tokens: usize) -> PyResult<usize> {
        let mask = self.allowed(allowed_special);
        run(py, || self.core.truncate(text, &mask, max_tokens).map(|end| text[..end].chars().count()))
    }

    fn encode_with_unstable(&self, py: Python<'_>, text: &str, allowed_special: Option<Vec<String>>) -> PyResult<(Vec<Rank>, Vec<Vec<Rank>>)> {
        let mask = self.allowed(allowed_special);
        let (t, c) = run(py, || self.core.encode_with_unstable(text, &mask))?;
        Ok((t, c.into_iter().collect()))
    }

    fn encode_single_piece(&self, py: Python<'_>, piece: &[u8]) -> PyResult<Vec<Rank>> {
        run(py, || self.core.encode_single_piece(piece))
    }

    fn encode_bytes(&self, py: Python<'_>, data: &[u8]) -> PyResult<Vec<Rank>> {
        run(py, || self.core.encode_bytes(data))
    }

    fn encode_single_token(&self, piece: &[u8]) -> Option<Rank> {
        self.core.vocab.rank(piece)
    }

    /// The leftmost special token in `text` among `names` (`None` = all), if any.
    #[pyo3(signature = (text, names = None))]
    fn first_special(&self, py: Python<'_>, text: &str, names: Option<Vec<String>>) -> Option<String> {
        let mask = self.allowed(names);
        let found = py.detach(|| self.core.specials.find_allowed(text.as_bytes(), 0, &mask));
        found.map(|f| text[f.start..f.end].to_string())
    }

    /// Pre-tokenizes `text` (the pieces BPE sees).
    fn split<'py>(&self, py: Python<'py>, text: &'py str) -> PyResult<Vec<&'py str>> {
        run(py, || self.core.pretokenizer.split(text))
    }

    /// Encodes a batch into one flat uint32 array plus int64 offsets (len = n + 1), `around`'s
    /// ids before and after each text's (a dataset's BOS / EOS); arguments checked by the caller
    /// (lone surrogates are fixed here).
    #[pyo3(signature = (texts, allowed_special, num_threads = 0, around = (Vec::new(), Vec::new())))]
    fn encode_batch_flat<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allowed_special: Option<Vec<String>>,
        num_threads: usize,
        around: (Vec<Rank>, Vec<Rank>),
    ) -> PyResult<FlatBatch<'py>> {
        let texts = batch_texts(&texts)?;
        let lens: Vec<usize> = texts.iter().map(|t| t.len()).collect();
        let encode = self.batch_encoder(allowed_special, false);
        encode_flat_at(py, &lens, num_threads, around_ids(&around.0, &around.1, |i: usize, out: &mut Vec<Rank>| encode(&texts[i], out)))
    }

    /// What the merge starts from ([`CoreBpe::unmerged_into`]) for every text, in
    /// `encode_batch_flat`'s layout: for `bpekit.torch`, which merges on tensors. Texts checked by
    /// the caller (lone surrogates are fixed here).
    #[pyo3(signature = (texts, num_threads = 0))]
    fn unmerged_batch_flat<'py>(&self, py: Python<'py>, texts: Vec<Bound<'py, PyString>>, num_threads: usize) -> PyResult<FlatBatch<'py>> {
        let texts = batch_texts(&texts)?;
        let lens: Vec<usize> = texts.iter().map(|t| t.len()).collect();
        encode_flat_at(py, &lens, num_threads, |i: usize, out: &mut Vec<Rank>| Ok(self.core.unmerged_into(&texts[i], out)?))
    }

    // ---- decoding ----

    fn decode_bytes<'py>(&self, py: Python<'py>, tokens: Vec<Rank>) -> PyResult<Bound<'py, PyBytes>> {
        let b = run(py, || self.core.decode_bytes(&tokens))?;
        Ok(PyBytes::new(py, &b))
    }

    /// `Encoding.decode_batch` in one call, or `None` where the general path must decide.
    fn decode_batch_str<'py>(&self, batch: &Bound<'py, PyAny>, errors: &Bound<'py, PyAny>, num_threads: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyList>>> {
        super::decode::decode_batch(&self.core, batch, errors, num_threads)
    }

    #[pyo3(signature = (batch, num_threads = 0))]
    fn decode_bytes_batch<'py>(&self, py: Python<'py>, batch: Vec<Vec<Rank>>, num_threads: usize) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let out = match super::decode::decode_all(py, &self.core, &batch, num_threads) {
            Ok(r) => r.map_err(|e| to_py_err(py, e))?,
            Err(p) => return Err(super::panic_err(py, p)),
        };
        Ok(out.iter().map(|b| PyBytes::new(py, b)).collect())
    }

    /// The char span of each of `ids` over `text`, which they encode (`bpekit.offsets`).
    fn char_offsets(&self, text: &str, ids: Vec<Rank>) -> PyResult<Vec<(usize, usize)>> {
        let vocab = &self.core.vocab;
        let lengths = ids.iter().map(|&i| vocab.token_bytes(i).map(<[u8]>::len));
        crate::offsets::char_spans(text, lengths, 0).ok_or_else(super::offsets::not_spelled)
    }

    /// The bytes of one token (ordinary or special); `None` for an unknown id.
    fn token_bytes<'py>(&self, py: Python<'py>, token: Rank) -> Option<Bound<'py, PyBytes>> {
        self.core.vocab.token_bytes(token).map(|b| PyBytes::new(py, b))
    }

    fn token_byte_values<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyBytes>> {
        let v = py.detach(|| self.core.token_byte_values());
        v.iter().map(|b| PyBytes::new(py, b)).collect()
    }

    fn is_special(&self, token: Rank) -> bool {
        self.core.vocab.is_special(token)
    }

    /// Raises the typed error for an invalid id (used by the Python layer for messages).
    fn check_token(&self, py: Python<'_>, token: Rank) -> PyResult<()> {
        match self.core.vocab.token_bytes(token) {
            Some(_) => Ok(()),
            None => Err(to_py_err(py, crate::Error::InvalidToken(token))),
        }
    }
}
