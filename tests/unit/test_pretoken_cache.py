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
        for bad in (-1, 1.5, "1", True, None):
            with pytest.raises(bpekit.errors.InputTypeError, match="pretoken_cache_bytes"):
                enc.pretoken_cache_bytes = bad  # type: ignore[assignment]
    finally:
        enc.pretoken_cache_bytes = default
