"""Hugging Face BPE models over characters (not byte-level) in Rust: ``BPE.fast_merge``
(``_core.PairBPE`` with character symbols, byte fallback, unk, ``fuse_unk``) against the Python
reference ``BPE.merge_word`` on random models and words, and a Llama-2-style ``tokenizer.json``
(normalizer ``Prepend`` + ``Replace``, no pre-tokenizer, ``byte_fallback``), built here from the
shared Llama GGUF vocabulary as Hugging Face's ``LlamaConverter`` builds it, against
``tokenizers`` on the corpora."""

from __future__ import annotations

import functools
import json
import pickle
import random
import sys
from pathlib import Path

import pytest
from bpekit import _core
from bpekit.formats.hf import from_document
from bpekit.pipeline.models import BPE, MARKER
from bpekit.tokenizer import Tokenizer
from datapaths import DATA, ROOT
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


def random_affixed_model(seed: int, n_merges: int, prefix: str, suffix: str, unk: bool, fuse: bool) -> BPE:
    """A model over characters with a subword prefix and/or end-of-word suffix: each character's
    four forms (alone, inside, at the end, as a word of its own) in the vocabulary at random,
    and merges of random pairs, the second with the prefix (the merged token drops it, as Hugging
    Face)."""
    rng = random.Random(seed)
    vocab: dict[str, int] = {}
    for c in CHARS:
        for form in (c, prefix + c, prefix + c + suffix, c + suffix):
            if rng.random() < 0.75:
                vocab.setdefault(form, len(vocab))
    if unk:
        vocab["<unk>"] = len(vocab)
    tokens = [t for t in vocab if t != "<unk>"]
    merges: list[tuple[str, str]] = []
    for _ in range(n_merges * 3):
        if len(merges) == n_merges or not tokens:
            break
        a, b = rng.choice(tokens), rng.choice([t for t in tokens if t.startswith(prefix)])
        merged = a + b[len(prefix):]
        if (a, b) in merges or len(merged) > 12:
            continue
        merges.append((a, b))
        if merged not in vocab:
            vocab[merged] = len(vocab)
            tokens.append(merged)
    return BPE(vocab, merges, unk_token="<unk>" if unk else None, fuse_unk=fuse,
               continuing_subword_prefix=prefix or None, end_of_word_suffix=suffix or None)


@settings(deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 40), affixes=st.sampled_from([("##", ""), ("", "</w>"), ("##", "</w>")]),
       unk=st.booleans(), fuse=st.booleans(), word=st.text(alphabet=st.sampled_from(CHARS + ["x", "#"]), max_size=30))
def test_rust_merge_of_affixed_characters_equals_python(seed, n, affixes, unk, fuse, word):
    """A subword prefix or end-of-word suffix (OpenAI GPT's ``</w>``, BERT-style ``##``): each
    character's first symbol by its place in the word (``CharAffixes`` in src/pairbpe.rs)."""
    model = random_affixed_model(seed, n, *affixes, unk, fuse)
    fast = model.fast_merge
    assert fast is not None
    assert fast.encode(word) == (model.merge_word(word) if word else [])


def test_models_pickle_after_the_rust_merge_is_built():
    model = random_char_model(2, 20, True, True, True, False)
    before = model.tokenize("abcab\u00e9")
    assert model.fast_merge is not None
    again = pickle.loads(pickle.dumps(model))
    assert again.tokenize("abcab\u00e9") == before


LLAMA_GGUF = DATA / "gguf" / "ggml-vocab-llama-spm.gguf"


@functools.cache
def _llama2_json(tmp: Path, metaspace: bool = False) -> Path:
    """A Llama-2 ``tokenizer.json`` made with ``tokenizers`` from the GGUF vocabulary, as
    ``transformers``' ``LlamaConverter`` makes it (the benchmarks' builder, ``benches/harness``)."""
    pytest.importorskip("tokenizers")
    if str(ROOT / "benches") not in sys.path:
        sys.path.append(str(ROOT / "benches"))  # appended: see tests/unit/test_bench_harness.py
    from harness.hfjson import llama2

    return llama2(tmp, metaspace)


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
    assert isinstance(ours._decode_ids(), _core.FusedIds)  # the Llama-2 decoder in one Rust call
    assert [ours.decode(ids) for ids in want] == [hf.decode(ids) for ids in want]


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


# ---------------------------------------------------------------- cut before ▁, and Metaspace in Rust

LLAMA2_NORMALIZER = {
    "type": "Sequence",
    "normalizers": [{"type": "Prepend", "prepend": MARKER}, {"type": "Replace", "pattern": {"String": " "}, "content": MARKER}],
}


def _small_char_tokenizer(merges: list[tuple[str, str]], *, normalizer: dict | None = None, pre: dict | None = None,
                          added: list[dict] = ()) -> tuple[Tokenizer, object]:
    """A character BPE with byte fallback over ``abc▁`` and ``merges``: ours and ``tokenizers``'."""
    tokenizers = pytest.importorskip("tokenizers")
    tokens = ["<unk>", "<s>"] + [f"<0x{b:02X}>" for b in range(256)] + list("abc" + MARKER) + [a + b for a, b in merges]
    vocab = {t: i for i, t in enumerate(dict.fromkeys(tokens))}
    model = tokenizers.models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True)
    doc = json.loads(tokenizers.Tokenizer(model).to_str())
    doc["normalizer"], doc["pre_tokenizer"] = normalizer, pre
    more = [{**t, "id": len(vocab) + i} for i, t in enumerate(added)]  # ids after the vocabulary's
    doc["added_tokens"] = [{"id": vocab["<s>"], "content": "<s>", "single_word": False, "lstrip": False, "rstrip": False,
                            "normalized": False, "special": True}, *more]
    return from_document(doc), tokenizers.Tokenizer.from_str(json.dumps(doc))


EDGE_TEXTS = ["abc abc", "  abc  c a", "c abc\u00e9 \U0001f600a", "<s>abc <s> c", "abc<s>", "<s> <s>", "", " ", "cc  ",
              "\u2581a \u2581\u2581b", "a" * 300 + " bc" * 100, "x<s>y z<s>"]
MERGES = [(MARKER, "a"), ("b", "c"), (MARKER + "a", "bc"), (MARKER, MARKER), ("a", "b")]


def _same_as_tokenizers(ours: Tokenizer, hf: object, texts: list[str]) -> None:
    want = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert [ours.encode(t) for t in texts] == want
    assert ours.encode_batch(texts, num_threads=2) == want
    flat, offsets = ours.encode_batch_to_numpy(texts, num_threads=2)
    assert [flat[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == want
    assert ours.count_batch(texts, num_threads=2) == [len(w) for w in want]
    assert [ours.count(t) for t in texts] == [len(w) for w in want]


@pytest.mark.parametrize("crossing", [False, True])
def test_llama2_style_texts_cut_before_the_marker_as_tokenizers(crossing: bool) -> None:
    """A merge that joins a character to a following ``▁`` (``crossing``) turns the cut off; either
    way the ids are ``tokenizers``', and the normalizer runs in Rust."""
    merges = MERGES + ([("c", MARKER)] if crossing else [])
    ours, hf = _small_char_tokenizer(merges, normalizer=LLAMA2_NORMALIZER)
    assert ours.model._cuts_before(MARKER) is not crossing
    ours._refresh()
    assert isinstance(ours._normalize[0], _core.Normalizer)
    _same_as_tokenizers(ours, hf, EDGE_TEXTS)


def test_the_unk_token_must_not_end_with_the_marker() -> None:
    vocab = {"a": 0, MARKER: 1, "x" + MARKER: 2}
    assert not BPE(vocab, [], unk_token="x" + MARKER)._cuts_before(MARKER)
    assert BPE(vocab, [], unk_token=None)._cuts_before(MARKER)
    assert not BPE({"a": 0}, [])._cuts_before(MARKER)  # no marker token


NORMALIZED_ADDED = {"content": "ca", "single_word": False, "lstrip": True, "rstrip": False, "normalized": True,
                    "special": False}
SINGLE_WORD = {"content": "cc", "single_word": True, "lstrip": False, "rstrip": False, "normalized": False,
               "special": False}


@pytest.mark.parametrize("scheme", ["always", "first", "never"])
@pytest.mark.parametrize("split", [True, False])
@pytest.mark.parametrize("added", [[], [NORMALIZED_ADDED], [SINGLE_WORD]], ids=["plain", "normalized", "single_word"])
def test_metaspace_runs_in_rust_as_tokenizers(scheme: str, split: bool, added: list[dict]) -> None:
    """``Metaspace`` before a character BPE, every scheme, split or not, with added tokens cut in
    Rust (then ``first`` is the input's first segment alone) or in Python (a ``single_word`` token:
    the ``first`` scheme stays in Python)."""
    pre = {"type": "Metaspace", "replacement": MARKER, "prepend_scheme": scheme, "split": split}
    ours, hf = _small_char_tokenizer(MERGES, pre=pre, added=added)
    ours._refresh()
    in_rust = isinstance(ours._fast, _core.PairBPE)
    assert in_rust is not (scheme == "first" and added == [SINGLE_WORD])
    _same_as_tokenizers(ours, hf, EDGE_TEXTS + ["abc ca c", " ca<s>ca", "cc cc<s>cc", "ca", " ca", "b ca", "ca b", "cabc a"])


def test_metaspace_follows_the_added_tokens_it_is_given() -> None:
    """Replacing the added tokens with a ``single_word`` one moves the ``first`` scheme back to
    Python (and back again)."""
    from bpekit.pipeline.added_tokens import AddedToken, AddedVocabulary

    pre = {"type": "Metaspace", "replacement": MARKER, "prepend_scheme": "first", "split": False}
    ours, _ = _small_char_tokenizer(MERGES, pre=pre)
    ours._refresh()
    assert isinstance(ours._fast, _core.PairBPE)
    plain = ours.added_tokens
    ours.added_tokens = AddedVocabulary([*plain.tokens, AddedToken(len(ours.model.vocab), "cc", single_word=True)])
    ours._refresh()
    assert ours._fast is None and ours.encode("x cc<s>cc") == ours._encode_pipeline("x cc<s>cc", True)
    ours.added_tokens = plain
    ours._refresh()
    assert isinstance(ours._fast, _core.PairBPE)


@pytest.mark.skipif(not LLAMA_GGUF.is_file(), reason="llama-spm GGUF vocabulary not found")
@pytest.mark.parametrize("scheme,split", [("first", False), ("always", True)])
def test_metaspace_llama_tokenizer_json_encodes_as_tokenizers(tmp_path_factory, scheme: str, split: bool) -> None:
    """The Llama vocabulary with the ``Metaspace`` pre-tokenizer that ``transformers`` writes for
    non-legacy Llama/Mistral files (``first``, no split) and the older split form, on the corpora."""
    tokenizers = pytest.importorskip("tokenizers")
    doc = json.loads(_llama2_json(tmp_path_factory.mktemp("llama2"), True).read_text(encoding="utf-8"))
    assert doc["normalizer"] is None and doc["pre_tokenizer"]["prepend_scheme"] == "first"
    doc["pre_tokenizer"] = {"type": "Metaspace", "replacement": MARKER, "prepend_scheme": scheme, "split": split}
    ours, hf = from_document(doc), tokenizers.Tokenizer.from_str(json.dumps(doc))
    lines = [line for file_lines in corpus_lines().values() for line in file_lines[::40]]
    _same_as_tokenizers(ours, hf, lines + EDGE_TEXTS)


# ---------------------------------------------------------------- the Llama-2 decoder in Rust

LLAMA2_DECODER = {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": MARKER}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"},
    {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}


@functools.cache
def _decoding_pair(decoder: str) -> tuple[Tokenizer, object]:
    """The small character BPE with ``LLAMA2_DECODER`` (or a variant) and two added tokens."""
    tokenizers = pytest.importorskip("tokenizers")
    doc_decoder = json.loads(decoder)
    ours, hf = _small_char_tokenizer(MERGES, normalizer=LLAMA2_NORMALIZER, added=[NORMALIZED_ADDED])
    doc = json.loads(hf.to_str())
    doc["decoder"] = doc_decoder
    return from_document(doc), tokenizers.Tokenizer.from_str(json.dumps(doc))


VARIANTS = [
    LLAMA2_DECODER,
    {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]},
    {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "a"}, "content": "<0x41>"},
                                      {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": "x", "start": 2, "stop": 1}]},
]


@settings(deadline=None, max_examples=150)
@given(variant=st.sampled_from(range(len(VARIANTS))), skip=st.booleans(),
       ids=st.lists(st.sampled_from([0, 1, 2, 3, 0x41 + 2, 0x20 + 2, 0xE2 + 2, 0x96 + 2, 0x81 + 2, 0xC3 + 2, 0xFF + 2]) | st.integers(258, 267),
                    max_size=12))
def test_the_fused_decoder_decodes_as_tokenizers(variant: int, skip: bool, ids: list[int]) -> None:
    """``Replace``s, ``ByteFallback`` (valid and invalid UTF-8 runs), ``Fuse`` and ``Strip`` in one
    Rust call (``_core.FusedIds``): ``tokenizers``' text and the Python decoders'."""
    ours, hf = _decoding_pair(json.dumps(VARIANTS[variant]))
    assert isinstance(ours._decode_ids(), _core.FusedIds)
    kept = [i for i in ids if not skip or i not in ours._special_id_set()]
    want = ours.decoder.decode([ours.id_to_token(i) for i in kept])
    assert ours.decode(ids, skip_special_tokens=skip) == want
    try:
        theirs = hf.decode(ids, skip_special_tokens=skip)
    except BaseException:  # noqa: BLE001 (tokenizers 0.23.3 panics on Strip(stop > 0) of an empty text)
        assert not kept and VARIANTS[variant]["decoders"][-1].get("stop")
        return
    assert theirs == want


def test_other_decoder_sequences_keep_the_python_decoders() -> None:
    for decoder in ({"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "ByteFallback"}]},
                    {"type": "Sequence", "decoders": [{"type": "Strip", "content": " ", "start": 1, "stop": 0}, {"type": "Fuse"}]},
                    {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Fuse"}]}):
        ours, hf = _decoding_pair(json.dumps(decoder))
        assert ours._decode_ids() is None
        assert ours.decode([3, 2, 0xE2 + 2, 3]) == hf.decode([3, 2, 0xE2 + 2, 3])
    ours, _ = _decoding_pair(json.dumps(LLAMA2_DECODER))
    with pytest.raises(Exception):
        ours.decode([10**6])  # an unknown id: the Python path's error
    # Strip counts past 32 bits or below 0 (an atheris `hf` find, session 19: `OverflowError`
    # building the table) leave the decoding to Python
    _, hf = _decoding_pair(json.dumps(LLAMA2_DECODER))
    for start, stop in ((2**70, 0), (1, 2**64), (-1, 0)):  # (tokenizers refuses such a file)
        strip = {"type": "Strip", "content": " ", "start": start, "stop": stop}
        doc = json.loads(hf.to_str())
        doc["decoder"] = {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}, strip]}
        ours = from_document(doc)
        assert ours._decode_ids() is None
        ids = [2 + 0x20, 258, 2 + 0x20]  # <0x20>, "a", <0x20>
        assert ours.decode(ids) == ours.decoder.decode([ours.id_to_token(i) for i in ids])


@pytest.mark.skipif(not LLAMA_GGUF.is_file(), reason="llama-spm GGUF vocabulary not found")
def test_long_words_of_a_character_model_take_the_linear_merge(tmp_path_factory) -> None:
    """A word of a character model made of its stand-in characters (``PseudoBytes``: every ASCII
    token, then the rest by id) goes through the byte-level linear merge once its tables are
    built: the Llama vocabulary's merge list suits it; ids as ``tokenizers``', and as the pair
    merge's (``encode_piece_linear`` against ``encode_piece``)."""
    import random

    tokenizers = pytest.importorskip("tokenizers")
    path = _llama2_json(tmp_path_factory.mktemp("llama2"))
    ours, hf = Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(str(path))
    rng = random.Random(3)
    alphabet = "abcdefghijklmnopqrstuvwxyzABC0123456789.,;é"
    texts = ["".join(rng.choice(alphabet) for _ in range(n)) for n in (70_000, 5_000, 300, 65)]
    texts += ["a" * 40_000, "\u2581" * 3000 + "x", "x" * 100 + "\u4e2d" + "y" * 100]
    want = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert [ours.encode(t) for t in texts] == want
    ours._refresh()
    full, partial = ours._fast.linear_tables()
    assert full is not False and (full or partial >= 1)  # tables over a word's characters, then all
    model = ours._fast
    for word in ("\u2581" + texts[2], "\u2581" + texts[3], "\u2581" * 100, "\u2581ab" * 40):
        linear = model.encode_piece_linear(word.encode())
        assert linear is not None and linear == model.encode_piece(word.encode()), word[:20]
    # no stand-in byte for "中" (the 256 are the ASCII tokens and the lowest-id others)
    assert model.encode_piece_linear(("\u4e2d" * 70).encode()) is None
