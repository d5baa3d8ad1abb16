"""`Encoding.decode_batch`'s one-call path (src/py/decode.rs) against the general path.

Lists or tuples of lists or tuples of ``int`` are read and decoded in Rust, each text made by
CPython's UTF-8 decoder with the caller's ``errors``; every other input goes through
``decode_bytes_batch`` and ``bytes.decode`` as before. Both must give the same texts, or the same
exception type and message: bad ids (bools, negatives, too large, unknown, floats), bad
containers, every error handler (``strict`` raising, an unknown handler name), bad thread counts.
"""

from __future__ import annotations

import random

import bpekit
import numpy as np
import pytest

SPECIALS = {"<|end|>": 300}


@pytest.fixture(scope="module")
def enc() -> bpekit.Encoding:
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({b"th": 256, b"\xc3\xa9": 257, b"\xe6\x97": 258})
    return bpekit.Encoding("decode-test", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens=SPECIALS)


def general(enc: bpekit.Encoding, batch: object, errors: str = "replace", num_threads: object = 8) -> list[str]:
    """The path every input took before: ``decode_bytes_batch``, then ``bytes.decode``."""
    return [b.decode("utf-8", errors=errors) for b in enc.decode_bytes_batch(batch, num_threads=num_threads)]


def outcome(fn, *args, **kwargs):
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 (comparing every failure)
        return ("err", type(e), str(e))


def random_batch(rng: random.Random, n: int) -> list[list[int]]:
    ids = [*range(259), 300]  # every byte (invalid UTF-8 alone), the merges, the special
    return [[rng.choice(ids) for _ in range(rng.randrange(12))] for _ in range(n)]


@pytest.mark.parametrize("errors", ["replace", "ignore", "strict", "surrogateescape", "backslashreplace", "nope"])
@pytest.mark.parametrize("threads", [1, 2, 0])
def test_random_batches_match_the_general_path(enc: bpekit.Encoding, errors: str, threads: int) -> None:
    rng = random.Random(hash((errors, threads)) & 0xFFFF)
    batch = random_batch(rng, 400)
    fast = outcome(enc.decode_batch, batch, errors=errors, num_threads=threads)
    assert fast == outcome(general, enc, batch, errors, threads)
    valid = [[104, 256, 257, 32, 300]] * 50
    assert enc.decode_batch(tuple(tuple(t) for t in valid), errors=errors, num_threads=threads) == ["hthé <|end|>"] * 50


BAD_BATCHES = [
    [[1, 2], [True, 104]], [[1, -1]], [[2**32]], [[2**64]], [[259]], [[1.0]], [["a"]], [[104], None],
    [b"ab"], ["ab"], "ab", b"ab", None, 5, [np.array([104, 105], dtype=np.uint32)], [[104], (105,), range(3)],
    iter([[104]]), [], [[]], {1: [104]}, [[104], [2**31, 259]],
]  # fmt: skip


@pytest.mark.parametrize("batch", BAD_BATCHES, ids=repr)
def test_odd_batches_match_the_general_path(enc: bpekit.Encoding, batch: object) -> None:
    make = (lambda: iter([[104]])) if isinstance(batch, type(iter([]))) else (lambda: batch)
    assert outcome(enc.decode_batch, make()) == outcome(general, enc, make())


@pytest.mark.parametrize("threads", [-1, 1.5, True, "2", None, 2**70])
def test_bad_thread_counts_match_the_general_path(enc: bpekit.Encoding, threads: object) -> None:
    batch = [[104, 105]]
    assert outcome(enc.decode_batch, batch, num_threads=threads) == outcome(general, enc, batch, "replace", threads)
