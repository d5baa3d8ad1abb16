"""`Tokenizer.encode` and `Tokenizer.decode` bound in Rust (`_core.TokenizerCalls`,
src/py/tokenizer_calls.rs) against the class methods they shadow.

A pair-merge pipeline (GPT-NeoX's ``tokenizer.json``, the byte-level GGUF vocabularies) or a rank
model gets ``encode`` bound on the instance, and a pipeline whose decoder has a table of every id
(ByteLevel, SentencePiece) gets ``decode``; the bound calls take the common argument shapes and
everything else goes to the class method. Both must give the same result or the same exception
(type and message) for every call, a replaced stage must be seen by the next call, and the
binding must survive pickling and copying without tying two tokenizers together or keeping one
alive.
"""

from __future__ import annotations

import copy
import dataclasses
import gc
import pickle
import random
import weakref

import bpekit
import numpy as np
import pytest
from bpekit import Tokenizer
from bpekit.pipeline.added_tokens import AddedVocabulary
from datapaths import DATA

FILES = {
    "neox": DATA / "hf" / "gpt-neox-20b.tokenizer.json",
    "llama3": DATA / "gguf" / "ggml-vocab-llama-bpe.gguf",
    "qwen2": DATA / "gguf" / "ggml-vocab-qwen2.gguf",
    "deepseek": DATA / "gguf" / "ggml-vocab-deepseek-llm.gguf",
    "gpt2": DATA / "gguf" / "ggml-vocab-gpt-2.gguf",
    "spm": DATA / "gguf" / "ggml-vocab-llama-spm.gguf",
    "spm_model": DATA / "spm" / "bpe_multi_bytefb_3000.model",
}
ALPHABET = ["a", "e", " ", "  ", "\n", "The", " the", "é", "e\u0301", "日本", "😀", "\ud800", "\0", "1234", "'s", "\t"]


def load(name: str) -> Tokenizer:
    if name == "cl100k":
        return Tokenizer.from_encoding(bpekit.get_encoding("cl100k_base"))
    path = FILES[name]
    if not path.is_file():
        pytest.skip(f"{path} not found (set BPEKIT_TEST_DATA)")
    return Tokenizer.from_file(path)


def outcome(fn, *args, **kwargs):
    """("ok", result) or ("err", exception type, message)."""
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 (comparing every failure)
        return ("err", type(e), str(e))


def texts(tok: Tokenizer, n: int, seed: int) -> list[str]:
    """Random texts over ``ALPHABET`` and a few of the tokenizer's added tokens, short and long."""
    rng = random.Random(seed)
    words = ALPHABET + sorted(tok.added_tokens.strings.values())[:6] + ["<|endoftext|>"]
    out = ["", "hi", " ", "<|endoftext|>"]
    for i in range(n):
        k = rng.randrange(2000 if i % 10 == 0 else 30)  # some past the GIL threshold
        out.append("".join(rng.choice(words) for _ in range(k)))
    return out


def bound_encode(tok: Tokenizer):
    tok.encode("x")  # the first call binds
    bound = tok.encode
    assert type(bound.__self__) is bpekit._core.TokenizerCalls, "the fast path is the one under test"
    return bound


@pytest.mark.parametrize("name", ["neox", "llama3", "qwen2", "deepseek", "gpt2", "spm", "spm_model", "cl100k"])
def test_bound_encode_answers_as_the_class_method(name: str) -> None:
    tok = load(name)
    bound = bound_encode(tok)
    calls: list[tuple[tuple, dict]] = []
    for t in texts(tok, 60, seed=len(name)):
        calls += [((t,), {}), ((t, False), {}), ((t, True), {}), ((t,), {"add_special_tokens": True}),
                  ((t,), {"add_special_tokens": False})]  # fmt: skip
    for t in ["a <|endoftext|>", "x"]:
        calls += [
            ((t, 1), {}), ((t, None), {}), ((t,), {"add_special_tokens": 0}), ((t,), {"allowed_special": "all"}),
            ((t,), {"disallowed_special": ()}), ((t, True), {"allowed_special": "all"}), ((t, False), {"add_special_tokens": False}),
            ((t,), {"add_special_tokens": True, "foo": 1}), ((), {"text": t}), ((t, False, 3), {}),
            ((t,), {"allowed_special": {"<|endoftext|>"}}),
        ]  # fmt: skip
    calls += [((b"x",), {}), ((None,), {}), ((5, True), {}), ((), {}), ((bytearray(b"x"),), {"add_special_tokens": False})]
    for args, kwargs in calls:
        assert outcome(bound, *args, **kwargs) == outcome(Tokenizer.encode, tok, *args, **kwargs), (args, kwargs)


@pytest.mark.parametrize("name", ["neox", "cl100k"])
def test_bound_encode_keeps_the_size_limit(name: str) -> None:
    tok = load(name)
    bound = bound_encode(tok)
    before = bpekit.get_limits()
    try:
        bpekit.set_limits(max_input_bytes=100)
        for t in ["a" * 100, "a" * 101, "é" * 60, "x" * 10_000]:
            got = outcome(bound, t)
            assert got == outcome(Tokenizer.encode, tok, t), t
            assert (got[0] == "err") == (len(t.encode()) > 100)
    finally:
        bpekit.set_limits(**before)


def test_replaced_stages_are_seen_by_the_next_call() -> None:
    """Assigning a stage drops the bound call; the next call binds one for the new stages (the
    added tokens were missed before: the Rust matchers were made once, at the first refresh)."""
    tok = load("neox")
    text = "hello <|endoftext|> caf\u0065\u0301"
    with_eot = bound_encode(tok)(text)
    assert 0 in with_eot  # <|endoftext|>
    tokens = tok.added_tokens.tokens
    tok.added_tokens = AddedVocabulary([t for t in tokens if t.content != "<|endoftext|>"], tok.normalizer.normalize)
    without = tok.encode(text)
    assert 0 not in without and tok.decode(without) == tok.decode(with_eot)
    assert type(tok.encode.__self__) is bpekit._core.TokenizerCalls  # bound again
    tok.added_tokens = AddedVocabulary(tokens, tok.normalizer.normalize)
    assert tok.encode(text) == with_eot
    # the normalizer (NFC) joins e + U+0301; without it the ids differ
    nfc = tok.normalizer
    tok.normalizer = None
    assert tok.encode(text) != with_eot
    assert tok.encode(text) == Tokenizer.encode(tok, text)
    tok.normalizer = nfc
    assert tok.encode(text) == with_eot


def test_post_processor_is_read_at_each_call() -> None:
    tok = load("llama3")
    bound = bound_encode(tok)
    bos = tok.encode("hi", add_special_tokens=True)
    assert bos[0] == 128000 and bos[1:] == bound("hi")

    class Tail:
        def __init__(self) -> None:
            self.extra = [7]

        def process(self, ids: list[int]) -> list[int]:
            return ids + self.extra

    post = tok.post_processor
    tok.post_processor = Tail()
    assert tok.encode("hi", True) == [*bound("hi"), 7]
    tok.post_processor.extra = [8, 9]  # changed in place: the method reads it per call, so does the bound call
    assert tok.encode("hi", add_special_tokens=True) == [*bound("hi"), 8, 9]
    tok.post_processor = None
    assert tok.encode("hi", True) == tok.encode("hi")
    tok.post_processor = post
    assert tok.encode("hi", True) == bos


@pytest.mark.parametrize("name", ["neox", "cl100k"])
def test_pickles_and_copies_bind_their_own_calls(name: str) -> None:
    tok = load(name)
    bound = bound_encode(tok)
    sample = texts(tok, 20, seed=5)
    want = [outcome(bound, t) for t in sample]
    for other in (pickle.loads(pickle.dumps(tok)), copy.copy(tok), copy.deepcopy(tok)):
        assert [outcome(other.encode, t) for t in sample] == want
        assert other.encode.__self__ is not bound.__self__  # its own, not tok's
    if name == "neox":  # a copy's stages are its own: replacing one does not change the original
        other = copy.copy(tok)
        other.added_tokens = AddedVocabulary([], None)
        assert 0 not in other.encode("<|endoftext|>") and tok.encode("<|endoftext|>") == [0]


def test_subclasses_and_python_stages_keep_the_method() -> None:
    class Shout(Tokenizer):
        def encode(self, text: str, *args: object, **kwargs: object) -> list[int]:  # type: ignore[override]
            return super().encode(text.upper(), *args, **kwargs)

    sub = pickle.loads(pickle.dumps(load("neox")))  # (loaders make a Tokenizer)
    sub.__class__ = Shout
    assert sub.encode("ab") == sub.encode("AB") != Tokenizer.encode(sub, "ab")
    assert "encode" not in sub.__dict__
    # a pipeline whose stages the core does not run in one call keeps the method: GPT-NeoX with a
    # single_word added token (cut in Python)
    tok = load("neox")
    tokens = list(tok.added_tokens.tokens)
    tokens[0] = dataclasses.replace(tokens[0], single_word=True)
    tok.added_tokens = AddedVocabulary(tokens, tok.normalizer.normalize)
    assert tok.encode("a <|endoftext|>") == Tokenizer.encode(tok, "a <|endoftext|>") and "encode" not in tok.__dict__


def test_binding_does_not_keep_the_tokenizer_alive() -> None:
    tok = load("gpt2")
    bound_encode(tok)
    ref = weakref.ref(tok)
    del tok
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("name", ["neox", "llama3", "qwen2", "deepseek", "spm", "cl100k"])
def test_bound_decode_answers_as_the_class_method(name: str) -> None:
    tok = load(name)
    tok.decode([0])  # the first call binds
    bound = tok.decode
    assert type(bound.__self__) is bpekit._core.TokenizerCalls
    n = tok.vocab_size
    specials = sorted(tok._special_id_set())[:3]
    rng = random.Random(7)
    seqs: list[object] = [[], [0], [n - 1], [n], [n + 5], [-1], [2**32], [1 << 70], specials, [*specials, 300, *specials]]
    seqs += [[rng.randrange(n) for _ in range(rng.randrange(1, 60))] for _ in range(40)]
    seqs += [tuple(seqs[-1]), np.array([1, 2]), [1.0], ["a"], [True], "ab", None, 5, [[1]]]
    calls: list[tuple[tuple, dict]] = []
    for seq in seqs:
        calls += [((seq,), {}), ((seq,), {"skip_special_tokens": True}), ((seq, "strict"), {})]
    for seq in ([1, 2], specials):
        calls += [
            ((seq,), {"errors": "ignore"}), ((seq,), {"errors": 5}), ((seq,), {"skip_special_tokens": 1}),
            ((seq,), {"skip_special_tokens": None}), ((seq, "replace"), {"errors": "strict"}), ((seq, "x", 3), {}),
            ((seq,), {"skip_special_tokens": False, "errors": "strict"}), ((seq,), {"foo": 1}), ((), {"tokens": seq}),
            ((seq, "strict"), {"skip_special_tokens": True}), ((), {}),
        ]  # fmt: skip
    for args, kwargs in calls:
        assert outcome(bound, *args, **kwargs) == outcome(Tokenizer.decode, tok, *args, **kwargs), (args, kwargs)
    assert outcome(bound, iter([1, 2])) == outcome(Tokenizer.decode, tok, iter([1, 2]))
    if name == "cl100k":
        return  # (a rank model decodes through its Encoding, whatever its decoder)
    # a replaced decoder is seen
    ids = tok.encode("hello world")
    text = tok.decode(ids)
    decoder, tok.decoder = tok.decoder, None
    assert tok.decode(ids) == Tokenizer.decode(tok, ids) != text
    tok.decoder = decoder
    assert tok.decode(ids) == text and type(tok.decode.__self__) is bpekit._core.TokenizerCalls


@pytest.mark.parametrize("name", ["neox", "llama3", "spm", "cl100k"])
def test_count_is_the_length_of_encode(name: str) -> None:
    tok = load(name)
    for t in texts(tok, 30, seed=11):
        for add in (False, True):
            assert outcome(tok.count, t, add) == outcome(lambda *a: len(tok.encode(*a)), t, add), (t, add)
    assert outcome(tok.count, "a <|endoftext|>", allowed_special="all") == outcome(
        lambda t, **k: len(tok.encode(t, **k)), "a <|endoftext|>", allowed_special="all"
    )
