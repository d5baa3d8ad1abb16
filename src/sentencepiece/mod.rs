//! SentencePiece BPE models encoded as the `sentencepiece` package (0.2.3) does: normalize
//! ([`normalize`], with the [`charsmap`] trie), then merge by score ([`bpe`]). The pure-Python
//! reference is `bpekit.formats.sentencepiece` (`normalizer.py`, `bpe.py`); BPE-dropout stays
//! there. Decoding is `py/decode.rs`'s `SentencePieceIds`.
//!
//! Performance notes: when no piece holds `▁` except as its first character (or only as its
//! last), no merge crosses a `▁`, so the text is cut before (after) each one into chunks (the
//! words of a trained model) that merge independently; each thread keeps a bounded chunk -> ids
//! cache per model, and the heap merge runs only on a miss. Models with UNUSED pieces are never
//! cut (which halves an UNUSED piece splits into is the last split recorded anywhere in the text).

pub mod bpe;
pub mod charsmap;
pub mod normalize;

use crate::error::{Error, Result};
use bpe::{Bpe, Entry, Kind, Segment};
use charsmap::CharsMap;
use normalize::{Normalizer, UserDefined, SPACE_SYMBOL};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Chunks per model and thread before that cache is cleared.
const CACHE_LIMIT: usize = 1 << 16;
/// Models per thread with a cache before all of them are cleared.
const CACHE_MODELS: usize = 8;
/// Chunks longer than this (bytes) are merged every time, not cached.
const CACHE_MAX_CHUNK: usize = 96;

static NEXT_ID: AtomicUsize = AtomicUsize::new(0);

struct Cached {
    ids: Box<[u32]>,
    first_unk: bool,
}

type ChunkCache = FxHashMap<Box<[u8]>, Cached>;

thread_local! {
    static CACHE: RefCell<FxHashMap<usize, ChunkCache>> = RefCell::default();
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Chunking {
    Before,
    After,
}

/// The piece types of the `.model` format (sentencepiece's numbering).
pub const NORMAL: u8 = 1;
pub const USER_DEFINED: u8 = 4;
pub const UNUSED: u8 = 5;

/// The normalizer options of a `NormalizerSpec` and the trainer spec.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
    pub treat_whitespace_as_suffix: bool,
}

/// A piece the model may merge into: `(piece, id, score rank, type)`.
pub type MergeablePiece = (String, u32, i32, u8);

pub struct SentencePiece {
    normalizer: Normalizer,
    bpe: Bpe,
    chunking: Option<Chunking>,
    id: usize,
}

/// One encoded text: the normalized text, each id's span of it (`bpe::BYTE_PIECE` ends a byte
/// piece), and the ids.
pub struct Encoded {
    pub normalized: String,
    pub spans: Vec<(u32, u32)>,
    pub ids: Vec<u32>,
}

impl SentencePiece {
    /// `pieces`: the NORMAL, USER_DEFINED and UNUSED pieces; `byte_ids`: the 256 byte pieces'
    /// ids under byte fallback, else empty; `charsmap`: the `precompiled_charsmap` blob, if any.
    pub fn new(
        pieces: Vec<MergeablePiece>,
        unk_id: u32,
        byte_ids: Vec<u32>,
        charsmap: Option<&[u8]>,
        options: Options,
    ) -> Result<SentencePiece> {
        if !byte_ids.is_empty() && byte_ids.len() != 256 {
            return Err(Error::Vocab(format!("byte fallback needs 256 byte ids, got {}", byte_ids.len())));
        }
        let mut table = FxHashMap::default();
        let mut user_defined = Vec::new();
        for (piece, id, rank, kind) in pieces {
            let kind = match kind {
                NORMAL => Kind::Normal,
                USER_DEFINED => Kind::UserDefined,
                UNUSED => Kind::Unused,
                other => return Err(Error::Vocab(format!("piece {piece:?} (id {id}) of type {other} cannot be merged"))),
            };
            if piece.is_empty() {
                return Err(Error::Vocab(format!("piece {id} is empty")));
            }
            if kind == Kind::UserDefined {
                user_defined.push(piece.clone());
            }
            if table.insert(piece.clone().into_bytes().into_boxed_slice(), Entry { rank, id, kind }).is_some() {
                return Err(Error::Vocab(format!("piece {piece:?} is defined twice")));
            }
        }
        let has_unused = table.values().any(|e: &Entry| e.kind == Kind::Unused);
        let chunking = if has_unused { None } else { chunk_mode(table.keys().map(|k| &k[..])) };
        let charsmap = charsmap.map(CharsMap::new).transpose()?;
        let normalizer = Normalizer::new(
            charsmap,
            UserDefined::new(user_defined.iter().map(|p| p.as_bytes())),
            options.add_dummy_prefix,
            options.remove_extra_whitespaces,
            options.escape_whitespaces,
            options.treat_whitespace_as_suffix,
        );
        let bpe = Bpe {
            table,
            unk_id,
            byte_ids,
            user_defined: UserDefined::new(user_defined.iter().map(|p| p.as_bytes())),
        };
        Ok(SentencePiece { normalizer, bpe, chunking, id: NEXT_ID.fetch_add(1, Ordering::Relaxed) })
    }

    /// The normalized text of `data` (malformed UTF-8 allowed: each bad byte is U+FFFD).
    pub fn normalize(&self, data: &[u8]) -> Result<String> {
        self.normalizer.normalize(data)
    }

    /// The ids of `data`: normalized, then merged.
    pub fn encode(&self, data: &[u8]) -> Result<Vec<u32>> {
        let normalized = self.normalizer.normalize(data)?;
        let mut ids = Vec::with_capacity(normalized.len() / 3 + 1);
        self.encode_normalized(normalized.as_bytes(), &mut ids);
        Ok(ids)
    }

    /// The ids of already normalized text, appended to `ids`.
    pub fn encode_normalized(&self, text: &[u8], ids: &mut Vec<u32>) {
        let Some(mode) = self.chunking else {
            let mut segment = Segment::new();
            self.bpe.segment(text, &mut segment);
            self.bpe.finish(text, &segment, ids, None);
            return;
        };
        CACHE.with(|cell| {
            let mut caches = cell.borrow_mut();
            if !caches.contains_key(&self.id) && caches.len() >= CACHE_MODELS {
                caches.clear();
            }
            let cache = caches.entry(self.id).or_default();
            let join_unk = self.bpe.byte_ids.is_empty();
            let unk = self.bpe.unk_id;
            let mut last_unk = false;
            let mut segment = Segment::new();
            for_each_chunk(text, mode, |chunk| {
                let from = ids.len();
                let first_unk;
                if let Some(hit) = cache.get(chunk) {
                    ids.extend_from_slice(&hit.ids);
                    first_unk = hit.first_unk;
                } else {
                    segment.clear();
                    self.bpe.segment(chunk, &mut segment);
                    self.bpe.finish(chunk, &segment, ids, None);
                    first_unk = ids.get(from) == Some(&unk);
                    if chunk.len() <= CACHE_MAX_CHUNK {
                        if cache.len() >= CACHE_LIMIT {
                            cache.clear();
                        }
                        cache.insert(chunk.into(), Cached { ids: ids[from..].into(), first_unk });
                    }
                }
                let ends_unk = ids.len() > from && ids.last() == Some(&unk);
                if join_unk && last_unk && first_unk {
                    ids.remove(from); // a run of unknowns across the cut is one piece
                }
                last_unk = ends_unk;
            });
        })
    }

    /// The ids of `data` with each one's span of the normalized text (for piece strings).
    pub fn encode_spans(&self, data: &[u8]) -> Result<Encoded> {
        let normalized = self.normalizer.normalize(data)?;
        let text = normalized.as_bytes();
        let mut segment = Segment::new();
        self.bpe.segment(text, &mut segment);
        let (mut ids, mut spans) = (Vec::new(), Vec::new());
        self.bpe.finish(text, &segment, &mut ids, Some(&mut spans));
        Ok(Encoded { normalized, spans, ids })
    }
}

/// `Before` when every piece with `▁` has it only as its first character, `After` when only as
/// its last, else `None` (then merges may cross a `▁`).
fn chunk_mode<'a>(pieces: impl Iterator<Item = &'a [u8]> + Clone) -> Option<Chunking> {
    let space = SPACE_SYMBOL.as_bytes();
    let find = |p: &[u8], from: usize| memchr::memmem::find(&p[from.min(p.len())..], space).map(|i| i + from);
    if pieces.clone().all(|p| find(p, 1).is_none()) {
        return Some(Chunking::Before);
    }
    if pieces.into_iter().all(|p| match find(p, 0) {
        None => true,
        Some(i) => i + space.len() == p.len(),
    }) {
        return Some(Chunking::After);
    }
    None
}

/// Calls `f` on each chunk of `text`: cut before (`Before`) or after (`After`) each `▁`.
fn for_each_chunk(text: &[u8], mode: Chunking, mut f: impl FnMut(&[u8])) {
    let space = SPACE_SYMBOL.as_bytes();
    let mut start = 0;
    for at in memchr::memmem::find_iter(text, space) {
        let cut = if mode == Chunking::Before { at } else { at + space.len() };
        if cut > start && cut < text.len() {
            f(&text[start..cut]);
            start = cut;
        }
    }
    if start < text.len() {
        f(&text[start..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(pieces: &[(&str, f32, u8)], byte_fallback: bool, options: Options) -> SentencePiece {
        // id 0 is <unk>; the byte pieces follow the given ones under byte fallback
        let mut list = Vec::new();
        for (i, &(p, score, kind)) in pieces.iter().enumerate() {
            list.push((p.to_string(), i as u32 + 1, rank(score), kind));
        }
        let byte_ids = if byte_fallback { (0..256).map(|b| pieces.len() as u32 + 1 + b).collect() } else { vec![] };
        SentencePiece::new(list, 0, byte_ids, None, options).unwrap()
    }

    fn rank(score: f32) -> i32 {
        let bits = score.to_bits() as i32 as i64;
        (if bits >= 0 { bits } else { i32::MIN as i64 - 1 - bits }) as i32
    }

    const OPTIONS: Options = Options {
        add_dummy_prefix: true,
        remove_extra_whitespaces: true,
        escape_whitespaces: true,
        treat_whitespace_as_suffix: false,
    };

    #[test]
    fn merges_by_score_then_leftmost() {
        let m = model(
            &[("a", 0.0, NORMAL), ("b", 0.0, NORMAL), ("▁", 0.0, NORMAL), ("ab", -1.0, NORMAL), ("ba", -1.0, NORMAL)],
            false,
            OPTIONS,
        );
        // "▁aba": ab and ba tie; the leftmost (ab) wins
        assert_eq!(m.encode(b"aba").unwrap(), vec![3, 4, 1]);
        assert_eq!(m.normalize(b"  a  b ").unwrap(), "▁a▁b");
    }

    #[test]
    fn unknown_runs_join_or_spell_bytes() {
        let pieces = [("a", 0.0, NORMAL), ("▁", 0.0, NORMAL)];
        let m = model(&pieces, false, OPTIONS);
        assert_eq!(m.encode("a€€ a".as_bytes()).unwrap(), vec![2, 1, 0, 2, 1]);
        // a chunk that is one unknown joins the runs on both sides into one
        let no_space = model(&[("a", 0.0, NORMAL)], false, OPTIONS);
        assert_eq!(no_space.encode("a€ €€ €a".as_bytes()).unwrap(), vec![0, 1, 0, 1]);
        let fb = model(&pieces, true, OPTIONS);
        let euro: Vec<u32> = "€".bytes().map(|b| 3 + b as u32).collect();
        assert_eq!(fb.encode("a€".as_bytes()).unwrap(), [vec![2, 1], euro].concat());
    }

    #[test]
    fn chunk_modes() {
        let p = |v: &[&'static str]| v.iter().map(|s| s.as_bytes()).collect::<Vec<_>>();
        assert_eq!(chunk_mode(p(&["▁a", "b"]).into_iter()), Some(Chunking::Before));
        assert_eq!(chunk_mode(p(&["a▁", "b"]).into_iter()), Some(Chunking::After));
        assert_eq!(chunk_mode(p(&["a▁b"]).into_iter()), None);
        let mut seen = Vec::new();
        for_each_chunk("x▁a▁▁b".as_bytes(), Chunking::Before, |c| seen.push(String::from_utf8(c.to_vec()).unwrap()));
        assert_eq!(seen, ["x", "▁a", "▁", "▁b"]);
    }

    #[test]
    fn corrupt_charsmap_is_a_format_error() {
        // one unit whose base points far outside the trie
        let blob = [4u8, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0];
        let m = SentencePiece::new(vec![], 0, vec![], Some(&blob), OPTIONS).unwrap();
        assert!(matches!(m.normalize(b"abc"), Err(Error::Format(m)) if m.contains("outside its 1 units")));
        assert!(matches!(CharsMap::new(&[1, 0, 0, 0]), Err(Error::Format(_))));
    }
}
