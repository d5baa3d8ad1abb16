"""Hugging Face BPE models over characters (not byte-level) in Rust: ``BPE.fast_merge``
(``_core.PairBPE`` with character symbols, byte fallback, unk, ``fuse_unk``) against the Python
reference ``BPE.merge_word`` on random models and words, and a Llama-2-style ``tokenizer.json``
(normalizer ``Prepend`` + ``Replace``, no pre-tokenizer, ``byte_fallback``), built here from the
shared Llama GGUF vocabulary as Hugging Face's ``LlamaConverter`` builds it, against
``tokenizers`` on the corpora."""

from __future__ import annotations

import functools
import pickle
import random
from pathlib import Path

import pytest
from bpekit.pipeline.models import BPE
from bpekit.tokenizer import Tokenizer
from datapaths import DATA
from formats.test_pairbpe import random_merges
from formats.test_sentencepiece_support import corpus_lines
from hypothesis import given, settings
from hypothesis import strategies as st

CHARS = ["a", "b", "c", "\u00e9", "\u2581", "\U0001f600", " "]


def random_char_model(seed: int, n_merges: int, fallback: bool, unk: bool, fuse: bool, ignore: bool) -> BPE:
    """Some characters are tokens (not all: the rest take byte fallback or unk), some byte
    tokens exist, merges of existing tokens."""
    rng = random.Random(seed)
    vocab: dict[str, int] = {}
    for c in CHARS:
        if rng.random() < 0.7:
            vocab[c] = len(vocab)
    if unk:
        vocab["<unk>"] = len(vocab)
    for b in range(256):
        if fallback and rng.random() < 0.9:
            vocab[f"<0x{b:02X}>"] = len(vocab)
    merges = random_merges(rng, vocab, [t for t in vocab if len(t) == 1], n_merges, 5)
    return BPE(vocab, merges, unk_token="<unk>" if unk else None, fuse_unk=fuse, byte_fallback=fallback,
               ignore_merges=ignore)


@settings(deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 40), fallback=st.booleans(), unk=st.booleans(),
       fuse=st.booleans(), ignore=st.booleans(), word=st.text(alphabet=st.sampled_from(CHARS + ["x", "\u20ac"]), max_size=30))
def test_rust_character_merge_equals_python(seed, n, fallback, unk, fuse, ignore, word):
    model = random_char_model(seed, n, fallback, unk, fuse, ignore)
    fast = model.fast_merge
    assert fast is not None
    want = model.merge_word(word) if word else []
    if ignore and word in model.vocab:
        want = [model.vocab[word]]
    assert fast.encode(word) == want
    assert model.tokenize(word) == want


def test_python_only_models_have_no_rust_merge():
    model = random_char_model(1, 10, True, True, True, False)
    assert BPE(model.vocab, model.merges, dropout=0.1).fast_merge is None
    assert BPE(model.vocab, model.merges, unk_token="<absent>").fast_merge is None
    assert BPE(model.vocab, [], continuing_subword_prefix="##").fast_merge is None
    assert BPE(model.vocab, [], end_of_word_suffix="</w>").fast_merge is None


def test_models_pickle_after_the_rust_merge_is_built():
    model = random_char_model(2, 20, True, True, True, False)
    before = model.tokenize("abcab\u00e9")
    assert model.fast_merge is not None
    again = pickle.loads(pickle.dumps(model))
    assert again.tokenize("abcab\u00e9") == before


LLAMA_GGUF = DATA / "gguf" / "ggml-vocab-llama-spm.gguf"


@functools.cache
def _llama2_json(tmp: Path) -> Path:
    """A Llama-2 ``tokenizer.json`` (the legacy layout) made with ``tokenizers`` from the GGUF
    vocabulary: merges from the scores as ``transformers``' ``SentencePieceExtractor`` makes them."""
    tokenizers = pytest.importorskip("tokenizers")
    pieces = Tokenizer.from_file(LLAMA_GGUF).model.spm.model.pieces
    vocab = {p.piece: i for i, p in enumerate(pieces)}
    merges = []
    for p in pieces:
        local = [(p.piece[:k], p.piece[k:], p.score) for k in range(1, len(p.piece))
                 if p.piece[:k] in vocab and p.piece[k:] in vocab]
        merges += sorted(local, key=lambda m: (vocab[m[0]], vocab[m[1]]))
    merges.sort(key=lambda m: m[2], reverse=True)
    model = tokenizers.models.BPE(vocab=vocab, merges=[(a, b) for a, b, _ in merges], unk_token="<unk>",
                                  fuse_unk=True, byte_fallback=True)
    tok = tokenizers.Tokenizer(model)
    tok.normalizer = tokenizers.normalizers.Sequence(
        [tokenizers.normalizers.Prepend("\u2581"), tokenizers.normalizers.Replace(" ", "\u2581")]
    )
    path = tmp / "llama2-tokenizer.json"
    tok.save(str(path))
    return path


@pytest.mark.skipif(not LLAMA_GGUF.is_file(), reason="llama-spm GGUF vocabulary not found")
def test_llama2_style_tokenizer_json_encodes_as_tokenizers(tmp_path_factory):
    tokenizers = pytest.importorskip("tokenizers")
    path = _llama2_json(tmp_path_factory.mktemp("llama2"))
    ours, hf = Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(str(path))
    ours._refresh()
    assert ours._fast is not None  # the whole segment is one Rust call
    lines = [line for file_lines in corpus_lines().values() for line in file_lines[::30]]
    lines += ["emoji \U0001f600 and \u20ac\u00e9", "  two  spaces ", "", "\u65e5\u672c\u8a9e\n\ttab"]
    want = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
    assert [ours.encode(line) for line in lines] == want
    assert ours.encode_batch(lines) == want
    flat, offsets = ours.encode_batch_to_numpy(lines, num_threads=2)
    assert [flat[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == want


def test_whole_texts_are_not_kept_in_the_word_caches():
    """With no pre-tokenizer (or Metaspace without a split) a word is a whole text: words over
    ``CACHE_MAX_WORD`` characters are merged every time, not cached (memory stays bounded)."""
    from bpekit.pipeline.models import CACHE_MAX_WORD

    model = random_char_model(5, 30, True, True, True, False)
    rng = random.Random(0)
    for _ in range(50):
        word = "".join(rng.choice("abc\u00e9") for _ in range(CACHE_MAX_WORD + 1))
        assert model.tokenize(word) == model.merge_word(word)
    assert model.tokenize("abc") == model.merge_word("abc")
    assert list(model._cache) == ["abc"]
