"""The pre-token cache (``Encoding.pretoken_cache_bytes``, ``src/merge/cache/``) never changes a
result: bpekit with the cache off, at budgets of one and two buckets (every piece collides and
replaces another), a few KiB, the default and 4 MiB, each encoding the same text twice (the second
pass answered from the cache), equals tiktoken. Includes pieces at and past the size of one cache
line (52 bytes, 13 ids) and a budget change between calls.

Multilingual bible text, sampled (a slice of a few translations); ``BPEKIT_FULL_PARITY=1`` takes
every translation.
"""

from __future__ import annotations

import os
import random

import pytest

import bpekit
from datapaths import DATA
from peers import tiktoken_encoding

BUDGETS = [0, 256, 384, 4096, None, 4 << 20]  # None: the default; 256: one bucket, 384: two
FULL = os.environ.get("BPEKIT_FULL_PARITY") == "1"


def _bible_text() -> str:
    files = sorted((DATA / "corpora" / "bible").glob("*.txt"))
    if not files:
        pytest.skip(f"bible corpus not found in {DATA / 'corpora' / 'bible'}")
    chosen = files if FULL else files[::6]
    return "\n".join(f.read_text(encoding="utf-8", errors="replace")[:12_000] for f in chosen)


def _long_pieces() -> str:
    """Words of 1–40 rare characters (many ids each, 3–4 bytes per character), each repeated."""
    rng = random.Random(3)
    words = []
    for n in range(1, 41):
        lo, hi = ((0x4E00, 0x9FA5), (0x10400, 0x1044F), (0x0A80, 0x0AFF))[n % 3]
        words.append("".join(chr(rng.randrange(lo, hi)) for _ in range(n)))
    return " ".join(words * 3)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_every_budget_gives_tiktokens_ids(name: str) -> None:
    ours = bpekit.get_encoding(name)
    theirs = tiktoken_encoding(name)
    texts = [_bible_text(), _long_pieces()]
    want = [theirs.encode_ordinary(t) for t in texts]
    default = ours.pretoken_cache_bytes
    try:
        for budget in BUDGETS:
            ours.pretoken_cache_bytes = default if budget is None else budget
            for text, ids in zip(texts, want):
                for rnd in range(2):
                    assert ours.encode_ordinary(text) == ids, f"budget {budget}, pass {rnd + 1}"
            # per document, as a service calls it
            docs = texts[0].split("\n")[:2000]
            assert [ours.encode_ordinary(d) for d in docs] == [theirs.encode_ordinary(d) for d in docs]
    finally:
        ours.pretoken_cache_bytes = default


def test_long_pieces_and_many_ids_against_tiktoken() -> None:
    """Pieces around the line limit: 52 bytes with 1 id, 12 bytes with 11 ids, more of either."""
    theirs = tiktoken_encoding("o200k_base")
    ours = bpekit.get_encoding("o200k_base")
    rng = random.Random(5)
    pieces = []
    for n_chars in range(8, 20):
        pieces.append("".join(chr(rng.randrange(0x10400, 0x1044F)) for _ in range(n_chars)))
        pieces.append("x" * (n_chars * 3 + rng.randrange(3)))
    text = " ".join(pieces * 4)
    for _ in range(2):
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_budget_is_kept_and_bad_budgets_are_refused() -> None:
    toy = bpekit.Encoding("toy", pat_str=bpekit.patterns.CL100K, mergeable_ranks={bytes([b]): b for b in range(256)},
                          special_tokens={})
    assert toy.pretoken_cache_bytes == 256 << 10, "the default budget"
    enc = bpekit.get_encoding("cl100k_base")
    default = enc.pretoken_cache_bytes
    try:
        for value in (0, 1, 128, 1 << 30):
            enc.pretoken_cache_bytes = value
            assert enc.pretoken_cache_bytes == value
            assert enc.encode_ordinary("hello wörld, привет мир") == tiktoken_encoding("cl100k_base").encode_ordinary(
                "hello wörld, привет мир"
            )
        for bad in (-1, 1.5, "1", True, None, 1 << 70):
            with pytest.raises(bpekit.errors.InputTypeError, match="pretoken_cache_bytes"):
                enc.pretoken_cache_bytes = bad  # type: ignore[assignment]
    finally:
        enc.pretoken_cache_bytes = default


PIPELINES = {
    "gpt-neox-20b.tokenizer.json": DATA / "hf" / "gpt-neox-20b.tokenizer.json",
    "deepseek-llm.gguf": DATA / "gguf" / "ggml-vocab-deepseek-llm.gguf",  # a Sequence of splits
    "llama-spm.gguf": DATA / "gguf" / "ggml-vocab-llama-spm.gguf",  # SentencePiece
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_pipeline_budgets_give_the_same_ids(name: str) -> None:
    """``Tokenizer.pretoken_cache_bytes`` of pipelines (``_core.PairBPE``, the SentencePiece core)
    and of the Python path: off, a budget smaller than most entries (every insert empties the
    cache), a few KiB and the default give the ids of a fresh tokenizer, twice each (the second
    pass from the cache, and a split sequence's cached tails)."""
    from bpekit.tokenizer import Tokenizer

    path = PIPELINES[name]
    if not path.is_file():
        pytest.skip(f"{path} not found")
    text = _bible_text()[:60_000] + "\n" + _long_pieces()
    docs = text.split("\n")[:400]
    want = Tokenizer.from_file(path).encode(text)
    ref = Tokenizer.from_file(path)  # (one uncached reference: a fresh load per document took 40 s)
    ref.pretoken_cache_bytes = 0
    want_docs = [ref.encode(d) for d in docs[:40]]
    tok = Tokenizer.from_file(path)
    assert tok.pretoken_cache_bytes == 8 << 20, "the default budget"
    for budget in (0, 100, 4096, 8 << 20):
        tok.pretoken_cache_bytes = budget
        assert tok.pretoken_cache_bytes == budget
        for rnd in range(2):
            assert tok.encode(text) == want, f"budget {budget}, pass {rnd + 1}"
        assert [tok.encode(d) for d in docs[:40]] == want_docs
        assert tok.encode_batch(docs[:40]) == want_docs
    python_path = Tokenizer.from_file(path)
    python_path._fast = None  # the Python stages (until the next pipeline change)
    for budget in (0, 300, 1 << 20):
        python_path._cache_bytes = budget
        assert python_path.encode(docs[3]) == want_docs[3]
        assert len(python_path._pieces) <= budget // 256, f"budget {budget}"


def test_pipeline_budget_survives_a_pickle_and_refuses_bad_values() -> None:
    import pickle

    from bpekit.tokenizer import Tokenizer

    path = PIPELINES["gpt-neox-20b.tokenizer.json"]
    if not path.is_file():
        pytest.skip(f"{path} not found")
    tok = Tokenizer.from_file(path)
    tok.pretoken_cache_bytes = 12345
    again = pickle.loads(pickle.dumps(tok))
    assert again.pretoken_cache_bytes == 12345
    assert again.encode("hello world") == tok.encode("hello world")
    for bad in (-1, 1.5, "1", True, None, 1 << 70):
        with pytest.raises(bpekit.errors.InputTypeError, match="pretoken_cache_bytes"):
            tok.pretoken_cache_bytes = bad  # type: ignore[assignment]
    rank = Tokenizer.from_encoding(bpekit.get_encoding("cl100k_base"))
    assert rank.pretoken_cache_bytes == 256 << 10, "a rank model's is its Encoding's"


def test_sentencepiece_budget() -> None:
    """``SentencePieceBPE.pretoken_cache_bytes``: off, tiny and default budgets give the ids of a
    fresh model, the budget survives a pickle, bad values are refused."""
    import pickle

    from bpekit.formats.sentencepiece.tokenizer import SentencePieceBPE

    path = DATA / "spm" / "bpe_multi_bytefb_3000.model"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    docs = _bible_text().split("\n")[:300]
    ref = SentencePieceBPE.load(path)  # (one uncached reference, not a load per document)
    ref.pretoken_cache_bytes = 0
    want = [ref.encode(d) for d in docs]
    sp = SentencePieceBPE.load(path)
    assert sp.pretoken_cache_bytes == 8 << 20
    for budget in (0, 100, 4096, 8 << 20):
        sp.pretoken_cache_bytes = budget
        assert sp.pretoken_cache_bytes == budget
        for _ in range(2):
            assert [sp.encode(d) for d in docs] == want, f"budget {budget}"
    sp.pretoken_cache_bytes = 4096
    assert pickle.loads(pickle.dumps(sp)).pretoken_cache_bytes == 4096
    for bad in (-1, 1.5, "1", True, None, 1 << 70):
        with pytest.raises(bpekit.errors.InputTypeError, match="pretoken_cache_bytes"):
            sp.pretoken_cache_bytes = bad  # type: ignore[assignment]
