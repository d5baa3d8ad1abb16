"""The Rust SentencePiece encoder (``formats/sentencepiece/fast.py``, ``src/sentencepiece/``)
against the Python reference it replaced (``normalizer.py`` and ``bpe.py``), on every shared
model: ids through the cached chunk path and pieces through the uncached one, normalized text,
malformed bytes, batches, pickling, many models in one thread, and corrupt character maps."""

from __future__ import annotations

import functools
import pickle
import random

import pytest
from bpekit.errors import EncodeError, FormatError, InputTypeError
from bpekit.formats.sentencepiece import ModelProto, SentencePieceBPE, SentencePieceModel
from bpekit.formats.sentencepiece.bpe import BpeEncoder
from bpekit.tokenizer import Tokenizer
from datapaths import DATA
from formats.test_sentencepiece_support import corpus_lines, model_paths
from hypothesis import given, settings
from hypothesis import strategies as st

MODELS = model_paths()
MODEL_IDS = [p.stem for p in MODELS]
needs_models = pytest.mark.skipif(not MODELS, reason="shared SentencePiece models not found")

# Characters the shared models' rules and pieces care about, and plenty they do not.
_ALPHABET = st.one_of(
    st.sampled_from(
        list("aeiouthngsAB .,") + ["  ", "\t", "\n", "\r\n", "\x00", "\x7f", "\u0301", "\u00e9", "\uff21",
        "\uff76\uff9e", "\ufb01", "\u2581", "\u2581\u2581", "\u3000", "\u00a0", "\U0001d400", "\U0001f600",
        "\ufffd", "<s>", "<unk>", "<sep>", "[MASK]", "ing", "the", "\u65e5\u672c", "\u0627\u0644", "x\u0338"]
    ),
    st.text(max_size=3),
)  # fmt: skip
TEXT = st.lists(_ALPHABET, max_size=30).map("".join)


@functools.cache
def _tok(index: int) -> SentencePieceBPE:
    return SentencePieceBPE.load(MODELS[index])


@functools.cache
def _reference_bpe(index: int) -> BpeEncoder:
    return BpeEncoder(_tok(index).model)


def _reference(index: int, text: str | bytes) -> tuple[list[str], list[int]]:
    """The pure-Python normalizer and merge: the reference the Rust encoder must equal."""
    normalized = _tok(index).model.normalizer.normalize(text)
    return _reference_bpe(index).encode(normalized)


def _assert_matches(index: int, text: str | bytes) -> None:
    tok = _tok(index)
    want = _reference(index, text)
    assert tok.encode_pieces_and_ids(text) == want, text
    assert tok.encode(text) == want[1], text
    assert tok.encode(text) == want[1], text  # again: now from the chunk cache


@needs_models
@given(text=TEXT, index=st.integers(0, max(0, len(MODELS) - 1)))
def test_random_text_matches_the_python_reference(text: str, index: int) -> None:
    normalizer = _tok(index).model.normalizer
    assert _tok(index).normalize(text) == normalizer.normalize(text) == normalizer.normalize_reference(text)
    _assert_matches(index, text)


@needs_models
@given(data=st.binary(max_size=40), index=st.integers(0, max(0, len(MODELS) - 1)))
def test_malformed_utf8_matches_the_python_reference(data: bytes, index: int) -> None:
    assert _tok(index).normalize(data) == _tok(index).model.normalizer.normalize(data)
    _assert_matches(index, data)


@needs_models
@pytest.mark.parametrize("index", range(len(MODELS)), ids=MODEL_IDS)
def test_corpus_lines_match_the_python_reference(index: int) -> None:
    lines = [line for file_lines in corpus_lines().values() for line in file_lines[::40]]
    tok = _tok(index)
    for line in lines:
        want = _reference(index, line)
        assert tok.encode(line) == want[1], line
        assert tok.encode_pieces_and_ids(line) == want, line
    # the whole sample as one text: long chunks, and the cache filled by the lines above
    text = "\n".join(lines[:200])
    assert tok.encode(text) == _reference(index, text)[1]


@needs_models
@pytest.mark.parametrize("index", range(len(MODELS)), ids=MODEL_IDS)
def test_long_text_without_a_split_point(index: int) -> None:
    rng = random.Random(index)
    text = "".join(rng.choice("abcdefghij\u00e9\u65e5") for _ in range(20_000))
    assert _tok(index).encode(text) == _reference(index, text)[1]


LLAMA_GGUF = DATA / "gguf" / "ggml-vocab-llama-spm.gguf"


@functools.cache
def _llama() -> tuple[SentencePieceBPE, BpeEncoder]:
    spm = Tokenizer.from_file(LLAMA_GGUF).model.spm
    return spm, BpeEncoder(spm.model)


@pytest.mark.skipif(not LLAMA_GGUF.is_file(), reason="llama-spm GGUF vocabulary not found")
@given(text=st.lists(st.sampled_from(["    ", "  ", " ", "\n", "\t", "def", "x", "\u2581", "\u65e5", "()", "  # c"]), max_size=30).map("".join))
def test_llama_runs_of_spaces_match_the_python_reference(text: str) -> None:
    """Llama's pieces with an inner ``▁`` are runs of ``▁``: its text is cut before each ``▁``
    that follows another character, never inside a run (the reference does not cut at all)."""
    spm, reference = _llama()
    want = reference.encode(spm.model.normalizer.normalize(text))
    assert spm.encode(text) == spm.encode(text) == want[1]
    assert spm.encode_pieces_and_ids(text) == want


@needs_models
def test_batches_equal_single_calls() -> None:
    tok = _tok(0)
    lines = [line for file_lines in corpus_lines().values() for line in file_lines[:50]]
    single = [tok.encode(line) for line in lines]
    for threads in (-1, 0, 1, 2):  # -1: sentencepiece's default, every core
        assert tok.encode(lines, num_threads=threads) == single
    assert tok.encode(tuple(lines[:3])) == single[:3]
    assert tok.encode(lines[:3], out_type=str) == [tok.encode(line, out_type=str) for line in lines[:3]]
    if tok.bos_id() >= 0:
        assert tok.encode(lines[:3], add_bos=True) == [[tok.bos_id(), *ids] for ids in single[:3]]
    assert tok.encode([]) == []
    with pytest.raises(InputTypeError, match="num_threads"):
        tok.encode(lines, num_threads=-2)
    with pytest.raises(InputTypeError):
        tok.encode(["fine", 3])  # type: ignore[list-item]


@needs_models
def test_lone_surrogates_are_refused_as_before() -> None:
    tok = _tok(0)
    for call in (tok.encode, tok.normalize, tok.encode_pieces_and_ids, lambda t: tok.encode([t])):
        with pytest.raises(EncodeError, match="surrogate"):
            call("ok \ud800 no")


@needs_models
def test_pickled_models_encode_the_same() -> None:
    tok = _tok(0)
    text = "Pickled and restored, the encoder is rebuilt."
    again = pickle.loads(pickle.dumps(tok))
    assert again.encode(text) == tok.encode(text)
    pipeline = Tokenizer.from_file(MODELS[0])
    assert pickle.loads(pickle.dumps(pipeline)).encode(text) == pipeline.encode(text) == tok.encode(text)
    texts = [text, "", "two", text.upper()]
    assert pipeline.encode_batch(texts) == [tok.encode(t) for t in texts]  # the Rust batch


@needs_models
def test_many_models_in_one_thread() -> None:
    """Each thread caches chunks per model, a bounded number of models: alternate past it."""
    texts = ["the same words again", "\u65e5\u672c the same words", "again"]
    toks = [(index, SentencePieceBPE.load(path)) for index, path in enumerate(MODELS)] * 2
    for _ in range(3):
        for index, tok in toks:
            for text in texts:
                assert tok.encode(text) == _reference(index, text)[1]


@pytest.mark.parametrize(
    "blob", [bytes([8, 0, 0, 0, 1, 2, 3, 4, 5, 6]), bytes([4, 0, 0, 0, 0xFF]), bytes([12, 0, 0, 0, 0, 1, 0, 0, 7])]
)
def test_a_trie_declared_past_the_blob_end_is_a_format_error(blob: bytes) -> None:
    """Found by the Rust fuzz target: the Rust reader sliced past the end (a panic), the Python
    one raised ValueError from ``array.frombytes`` on the partial unit."""
    proto = ModelProto()
    _ = proto.pieces.add(piece="<unk>", score=0.0, type=2)
    _ = proto.pieces.add(piece="a", score=0.0)
    proto.trainer_spec.model_type = 2
    proto.normalizer_spec.precompiled_charsmap = blob
    try:
        tok = SentencePieceBPE.load(proto.SerializeToString())
    except FormatError:
        return
    for call in (tok.normalize, tok.encode, tok.model.normalizer.normalize_reference):
        with pytest.raises(FormatError):
            call("ab")


@needs_models
@settings(max_examples=40)
@given(st.data())
def test_corrupt_character_maps_fail_as_the_reference_does(draw: st.DataObject) -> None:
    path = next((p for p in MODELS if SentencePieceModel.load(p).precompiled_charsmap), None)
    if path is None:
        pytest.skip("no shared model with a character map")
    proto = ModelProto()
    proto.ParseFromString(SentencePieceModel.load(path).serialize())
    blob = bytearray(proto.normalizer_spec.precompiled_charsmap)
    for _ in range(draw.draw(st.integers(1, 30))):  # the units near the root: most text walks them
        blob[draw.draw(st.integers(4, min(len(blob) - 1, 1024)))] = draw.draw(st.integers(0, 255))
    proto.normalizer_spec.precompiled_charsmap = bytes(blob)
    try:
        tok = SentencePieceBPE.load(proto.SerializeToString())
    except FormatError:
        return
    text = draw.draw(TEXT)
    try:
        want: str | type[FormatError] = tok.model.normalizer.normalize_reference(text)
    except FormatError:
        want = FormatError
    if want is FormatError:
        with pytest.raises(FormatError):
            tok.normalize(text)
        with pytest.raises(FormatError):
            tok.encode(text)
    else:
        assert tok.normalize(text) == want


@needs_models
def test_max_input_bytes_applies_to_every_call() -> None:
    import bpekit

    tok = _tok(0)
    pipeline = Tokenizer.from_file(MODELS[0])
    before = bpekit.get_limits()["max_input_bytes"]
    bpekit.set_limits(max_input_bytes=100)
    try:
        for call, arg in [
            (tok.encode, "a" * 101),
            (tok.encode, b"a" * 101),
            (tok.encode, ["a" * 60, "b" * 60]),
            (tok.encode, ["a" * 60, b"b" * 60]),
            (tok.normalize, "a" * 101),
            (tok.encode_pieces_and_ids, "a" * 101),
            (pipeline.encode, "a" * 101),
        ]:
            with pytest.raises(EncodeError, match="max_input_bytes"):
                call(arg)
        assert tok.encode("a" * 100) == tok.encode(b"a" * 100)
        assert len(tok.encode(["a" * 50, b"b" * 50])) == 2
    finally:
        bpekit.set_limits(max_input_bytes=before)


_RUNS = ["a" * 3000, " " * 3000, "ab" * 1500, "a" * 1500 + "b" + "a" * 1500, "aab" * 1000, "\u65e5" * 2000, "e" * 999 + " e" * 999]


@pytest.mark.skipif(not LLAMA_GGUF.is_file(), reason="llama-spm GGUF vocabulary not found")
@pytest.mark.parametrize("text", _RUNS, ids=range(len(_RUNS)))
def test_long_runs_merge_as_the_reference(text: str) -> None:
    """Texts of 256 symbols or more merge with the laned agenda (``agenda.rs`` ``Laned``): runs of
    one character push their first pairs in the lane's order, the others mix lane and heap."""
    spm, reference = _llama()
    assert spm.encode(text) == reference.encode(spm.model.normalizer.normalize(text))[1]
    for index in range(len(MODELS)):
        assert _tok(index).encode(text) == _reference(index, text)[1], MODEL_IDS[index]
