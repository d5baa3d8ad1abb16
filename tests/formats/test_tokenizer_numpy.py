"""``Tokenizer.encode_to_numpy`` / ``encode_batch_to_numpy`` / ``count_batch`` on every real
tokenizer file: the same ids (and counts) as ``encode`` / ``encode_batch``, with and without the post-processor, against Hugging Face's
``tokenizers`` where it reads the file; and the helpers that add ids around texts."""

from __future__ import annotations

import random

import bpekit
import numpy as np
import pytest
from bpekit import Tokenizer
from bpekit.errors import EncodeError, InputTypeError
from bpekit.flat import from_lists, with_affixes
from bpekit.pipeline import processors
from datapaths import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

FILES = [
    DATA / "hf" / "gpt-neox-20b.tokenizer.json",
    DATA / "gguf" / "ggml-vocab-llama-bpe.gguf",  # Llama 3: TemplateProcessing adds <|begin_of_text|>
    DATA / "gguf" / "ggml-vocab-qwen2.gguf",
    DATA / "gguf" / "ggml-vocab-llama-spm.gguf",  # SentencePiece, <s> added by a template
    DATA / "gguf" / "ggml-vocab-deepseek-llm.gguf",
    DATA / "spm" / "bpe_multi_bytefb_3000.model",
]

TEXTS = [
    "",
    "Hello world",
    "First Citizen:\nBefore we proceed any further, hear me speak.",
    "héllo <|endoftext|> wörld  <s> x </s>\n\n\t  tabs",
    "lone \ud800 surrogate",
    "東京の天気は晴れ。 Привет, мир! 12345 🎉",
    " " * 40 + "spaces",
]


def _files() -> list[Tokenizer]:
    missing = [p for p in FILES if not p.is_file()]
    if missing:
        pytest.skip(f"{missing[0]} not found (set BPEKIT_TEST_DATA)")
    return [Tokenizer.from_file(p) for p in FILES]


@pytest.fixture(scope="module")
def tokenizers() -> list[Tokenizer]:
    return _files()


@pytest.fixture(scope="module")
def english() -> list[str]:
    path = DATA / "corpora" / "tinyshakespeare.txt"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return path.read_text(encoding="utf-8").split("\n\n")[:600]


def _rows(flat: np.ndarray, offsets: np.ndarray) -> list[list[int]]:
    return [flat[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])]


@pytest.mark.parametrize("add_special_tokens", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
def test_batch_to_numpy_equals_encode_batch(tokenizers, english, add_special_tokens, threads) -> None:
    texts = TEXTS + english
    for tok in tokenizers:
        flat, offsets = tok.encode_batch_to_numpy(texts, add_special_tokens, num_threads=threads)
        assert flat.dtype == np.uint32 and offsets.dtype == np.int64 and len(offsets) == len(texts) + 1
        assert offsets[0] == 0 and offsets[-1] == len(flat)
        assert _rows(flat, offsets) == tok.encode_batch(texts, add_special_tokens, num_threads=threads)
        assert _rows(flat, offsets) == [tok.encode(t, add_special_tokens) for t in texts]
        assert tok.count_batch(texts, add_special_tokens, num_threads=threads) == np.diff(offsets).tolist()


@pytest.mark.parametrize("add_special_tokens", [False, True])
def test_one_text_to_numpy(tokenizers, add_special_tokens) -> None:
    for tok in tokenizers:
        for text in TEXTS:
            got = tok.encode_to_numpy(text, add_special_tokens)
            assert got.dtype == np.uint32
            assert got.tolist() == tok.encode(text, add_special_tokens)


def test_single_calls_out_of_the_threads_buffer_are_their_own(tokenizers, english) -> None:
    # `encode`, `count` and `decode` of one text go through buffers kept per thread
    # (src/py/scratch.rs, kept up to 65,536 ids): in any order of short and long texts (some past
    # that, one over the size limit), each result is the batch path's, and no later call changes
    # a list already returned.
    long = "\n\n".join(english) * 4
    texts = TEXTS + english[:20] + [long[: 1 << 15], long[: 3 << 16], long]
    rng = random.Random(3)
    order = [rng.randrange(len(texts)) for _ in range(60)]
    for tok in tokenizers:
        expected = tok.encode_batch(texts, num_threads=1)
        assert max(map(len, expected)) > 1 << 16
        kept = [(i, tok.encode(texts[i])) for i in order]
        assert all(ids == expected[i] for i, ids in kept)
        assert [tok.count(texts[i]) for i in order] == [len(expected[i]) for i in order]
        decoded = tok.decode_batch(expected)
        assert [tok.decode(expected[i]) for i in order] == [decoded[i] for i in order]
        before = bpekit.get_limits()
        bpekit.set_limits(max_input_bytes=1 << 14)
        try:
            with pytest.raises(EncodeError, match="max_input_bytes"):
                tok.encode(long[: 1 << 15])
        finally:
            bpekit.set_limits(**before)
        assert tok.encode(texts[order[0]]) == expected[order[0]]


def test_the_template_adds_its_ids_in_numpy(tokenizers) -> None:
    llama3 = tokenizers[1]
    bos = llama3.token_to_id("<|begin_of_text|>")
    assert processors.affixes(llama3.post_processor) == ([bos], [])
    flat, offsets = llama3.encode_batch_to_numpy(["a", "", "b c"], True)
    assert flat[offsets[:-1]].tolist() == [bos] * 3
    assert np.diff(offsets).tolist() == [2, 1, 3]
    assert llama3.count_batch(["a", "", "b c"], True) == [2, 1, 3]
    assert llama3.count_batch(["a", "", "b c"]) == [1, 0, 2]


def test_neox_against_hugging_face(english) -> None:
    hf = pytest.importorskip("tokenizers")
    path = FILES[0]
    if not path.is_file():
        pytest.skip(f"{path} not found")
    ours, theirs = Tokenizer.from_file(path), hf.Tokenizer.from_file(str(path))
    texts = [t for t in TEXTS if "\ud800" not in t] + english
    flat, offsets = ours.encode_batch_to_numpy(texts)
    assert _rows(flat, offsets) == [e.ids for e in theirs.encode_batch(texts, add_special_tokens=False)]


@pytest.fixture(scope="module")
def cl100k():
    """(cl100k_base's Encoding, its rank-model Tokenizer)."""
    ranks = DATA / "ranks" / "cl100k_base.tiktoken"
    if not ranks.is_file():
        pytest.skip(f"{ranks} not found")
    import bpekit

    enc = bpekit.get_encoding("cl100k_base")
    return enc, Tokenizer.from_encoding(enc)


def test_a_rank_model_goes_to_its_encoding(cl100k) -> None:
    enc, tok = cl100k
    texts = ["hello <|endoftext|>", "world"]
    flat, offsets = tok.encode_batch_to_numpy(texts, allowed_special="all")
    assert _rows(flat, offsets) == enc.encode_batch(texts, allowed_special="all")
    with pytest.raises(ValueError, match="endoftext"):  # tiktoken's policy, as encode_batch
        tok.encode_batch_to_numpy(texts)
    with pytest.raises(ValueError, match="endoftext"):
        tok.count_batch(texts)
    assert tok.count_batch(texts, allowed_special="all") == [len(ids) for ids in enc.encode_batch(texts, allowed_special="all")]
    assert enc.count_batch(texts, disallowed_special=()) == [len(ids) for ids in enc.encode_batch(texts, disallowed_special=())]
    assert tok.encode_to_numpy("hi there").tolist() == enc.encode("hi there")


class _Reverse(processors.PostProcessor):
    """Not an affix processor: the batch falls back to lists."""

    def process(self, ids: list[int], pair: list[int] | None = None) -> list[int]:
        return [7, *reversed(ids)]


def test_a_post_processor_that_does_more_runs_per_text(tokenizers) -> None:
    tok = tokenizers[0]
    before = tok.post_processor
    tok.post_processor = _Reverse()
    try:
        assert processors.affixes(tok.post_processor) is None
        flat, offsets = tok.encode_batch_to_numpy(["hello world", "", "x"], True)
        assert _rows(flat, offsets) == [[7, *reversed(tok.encode("hello world"))], [7], [7, *tok.encode("x")]]
        assert tok.count_batch(["hello world", "", "x"], True) == np.diff(offsets).tolist()
    finally:
        tok.post_processor = before


def test_affixes_of_each_processor() -> None:
    bert = processors.BertProcessing(("[SEP]", 102), ("[CLS]", 101))
    roberta = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    template = processors.TemplateProcessing(
        [("SpecialToken", "<s>", 0), ("Sequence", "A", 0), ("SpecialToken", "</s>", 0), ("SpecialToken", "</s>", 0)],
        [("Sequence", "A", 0), ("Sequence", "B", 1)], {"<s>": [1], "</s>": [2]},
    )
    twice = processors.TemplateProcessing([("Sequence", "A", 0), ("Sequence", "A", 0)], [], {})
    assert processors.affixes(bert) == ([101], [102])
    assert processors.affixes(roberta) == ([0], [2])
    assert processors.affixes(template) == ([1], [2, 2])
    assert processors.affixes(processors.ByteLevel()) == ([], [])
    assert processors.affixes(processors.Sequence([processors.ByteLevel(), bert])) == ([101], [102])
    assert processors.affixes(twice) is None  # the text twice is not an affix


def test_bad_batches_are_typed_errors(tokenizers) -> None:
    tok = tokenizers[0]
    for call in (tok.encode_batch_to_numpy, tok.count_batch):
        for bad in ["a string", b"bytes", ["ok", 3], None]:
            with pytest.raises(InputTypeError):
                call(bad)  # type: ignore[arg-type]
        for threads in [-1, 1.5, True]:
            with pytest.raises(InputTypeError):
                call(["a"], num_threads=threads)  # type: ignore[arg-type]
    with pytest.raises(InputTypeError):
        tok.encode_to_numpy(b"bytes")  # type: ignore[arg-type]
    flat, offsets = tok.encode_batch_to_numpy([])
    assert flat.tolist() == [] and offsets.tolist() == [0]
    assert tok.count_batch([]) == []


ids_lists = st.lists(st.lists(st.integers(0, 2**32 - 1), max_size=6), max_size=8)
affix = st.lists(st.integers(0, 2**32 - 1), max_size=3)


@settings(max_examples=200, deadline=None)
@given(ids_lists, affix, affix)
def test_with_affixes_puts_the_ids_around_every_text(lists, prefix, suffix) -> None:
    flat, offsets = from_lists(lists)
    assert _rows(flat, offsets) == lists
    out, new_offsets = with_affixes(flat, offsets, prefix, suffix)
    assert out.dtype == np.uint32
    assert _rows(out, new_offsets) == [[*prefix, *ids, *suffix] for ids in lists]


def test_with_affixes_refuses_ids_that_do_not_fit() -> None:
    flat, offsets = from_lists([[1, 2]])
    for bad in [-1, 2**32, "3", 1.0, True]:
        with pytest.raises(InputTypeError, match="2\\*\\*32"):
            with_affixes(flat, offsets, [bad], [])


def test_a_python_model_and_the_segments_path() -> None:
    """A model only Python runs (a subword prefix: no Rust merge) and a template: the same ids
    from every batch call, with the template's id around each text."""
    from bpekit.pipeline import BPE, AddedToken, pre_tokenizers

    model = BPE({"a": 0, "b": 1, "##b": 2, "ab": 3, " ": 4, "<s>": 5, "##a": 6}, [("a", "##b")], continuing_subword_prefix="##")
    template = processors.TemplateProcessing([("SpecialToken", "<s>", 0), ("Sequence", "A", 0)], [], {"<s>": [5]})
    tok = Tokenizer(model, pre_tokenizer=pre_tokenizers.Split(" ", "Isolated"), added_tokens=[AddedToken(5, "<s>")],
                    post_processor=template)
    assert tok._fast is None
    texts = ["ab ba<s>", "ab", ""]
    want = [[5, 3, 4, 1, 6, 5], [5, 3], [5]]
    assert [tok.encode(t, True) for t in texts] == want
    assert tok.encode_batch(texts, True) == want
    assert _rows(*tok.encode_batch_to_numpy(texts, True)) == want
    assert tok.count_batch(texts, True) == [6, 2, 1] and tok.count_batch(texts) == [5, 1, 0]
    assert tok.encode_batch(texts) == [w[1:] for w in want]


def test_ids_past_uint32_are_refused_for_arrays_only(tokenizers) -> None:
    """A template written by hand may hold any int: lists keep it, an array refuses it (typed)."""
    from bpekit.errors import VocabError

    tok = tokenizers[0]
    before = tok.post_processor
    tok.post_processor = processors.TemplateProcessing([("SpecialToken", "x", 0), ("Sequence", "A", 0)], [], {"x": [2**40]})
    try:
        assert processors.affixes(tok.post_processor) is None
        assert tok.encode_batch(["hi"], True) == [[2**40, *tok.encode("hi")]]
        with pytest.raises(VocabError, match="uint32"):
            tok.encode_batch_to_numpy(["hi"], True)
    finally:
        tok.post_processor = before
    flat, offsets = from_lists([[1], [], [2, 3]])
    assert flat.tolist() == [1, 2, 3] and offsets.tolist() == [0, 1, 1, 3]
    for bad in [[[-1]], [[2**32]], [["1"]]]:
        with pytest.raises(VocabError):
            from_lists(bad)


@pytest.mark.parametrize("skip", [False, True])
def test_decode_batch_is_decode_of_each(tokenizers, skip) -> None:
    for tok in tokenizers:
        batch = tok.encode_batch(TEXTS, True) + [[], tok.encode("x")]
        assert tok.decode_batch(batch, skip_special_tokens=skip) == [tok.decode(ids, skip_special_tokens=skip) for ids in batch]
        assert tok.decode_batch(tuple(tuple(ids) for ids in batch), skip_special_tokens=skip, num_threads=2) == \
            [tok.decode(ids, skip_special_tokens=skip) for ids in batch]
    for bad in ["abc", b"abc", 3]:
        with pytest.raises(InputTypeError):
            tokenizers[0].decode_batch(bad)  # type: ignore[arg-type]


def test_decode_batch_of_a_rank_model(cl100k) -> None:
    enc, tok = cl100k
    parrot = enc.encode("🦜")
    assert len(parrot) > 1
    batch = [enc.encode("hello <|endoftext|> world", allowed_special="all"), [], parrot[:1]]
    assert tok.decode_batch(batch) == enc.decode_batch(batch)
    assert tok.decode_batch(batch)[2] == "\ufffd"
    assert tok.decode_batch(batch, skip_special_tokens=True)[0] == "hello  world"


@pytest.mark.parametrize("add_special_tokens", [False, True])
def test_count_is_the_length_of_encode(tokenizers, english, add_special_tokens) -> None:
    for tok in tokenizers:
        for text in TEXTS + english[:50]:
            assert tok.count(text, add_special_tokens) == len(tok.encode(text, add_special_tokens)), text[:40]
