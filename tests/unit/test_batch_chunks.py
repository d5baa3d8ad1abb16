"""Batches cut into chunks and run on several threads, the calling thread one of them
(src/py/chunks.rs), against one call per text.

List batches (``encode_batch``, ``encode_ordinary_batch``), flat numpy batches
(``encode_batch_to_numpy``) and counts (``count_batch``: the lists' lengths) must give each text's ids in order, whatever the batch's shape: empty,
one text, empty texts among others, one huge text, texts exactly at the chunk size, fewer texts
than threads, more threads than cores, long texts after short ones (each starts a chunk of its own),
over a dozen chunks; an error in the first, a middle or the last chunk must be the one the general
path raises, and the encoder must work afterwards; batches from several Python threads at once
share the pools. The cyclic collector, paused while a batch's lists are made
(src/py/ints.rs ``GcPause``), is left as it was and never seen paused by another thread.
"""

from __future__ import annotations

import functools
import gc
import itertools
import random
import threading
from concurrent.futures import ThreadPoolExecutor

import bpekit
import numpy as np
import pytest

SPECIALS = {"<|end|>": 300, "<|fim|>": 301}
PATTERN = r"""'s|'t| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
MIN_CHUNK_BYTES = 16 << 10  # src/py/chunks.rs
WORDS = ["the", " the", " theatre", " é", " 日本", " 😀", "\n", "  ", " 12", ",", " x"]


@pytest.fixture(scope="module")
def enc() -> bpekit.Encoding:
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({m: 256 + i for i, m in enumerate([b"th", b"he", b"the", b" t", b" the", b"\xc3\xa9"])})
    return bpekit.Encoding("chunks-test", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens=SPECIALS)


def text(rng: random.Random, n_bytes: int) -> str:
    out, size = [], 0
    while size < n_bytes:
        w = rng.choice(WORDS)
        out.append(w)
        size += len(w.encode())
    return "".join(out)


@functools.cache
def shapes() -> dict[str, list[str]]:
    rng = random.Random(7)
    many = [text(rng, rng.randrange(300)) for _ in range(500)]  # ~75 kB: a few chunks per thread
    return {
        "empty": [],
        "one empty": [""],
        "empties": [""] * 50,
        "one short": ["the theatre"],
        "one huge": [text(rng, 70_000)],
        "huge among short": many[:100] + [text(rng, 50_000)] + many[100:300],
        "many": many,
        "empty every third": [t if i % 3 else "" for i, t in enumerate(many)],
        "at the chunk size": [text(rng, MIN_CHUNK_BYTES) for _ in range(9)],
        "two just above": [text(rng, MIN_CHUNK_BYTES + 1) for _ in range(2)],
        "fewer than threads": [text(rng, 20_000) for _ in range(3)],
        # a long text after short ones starts its own chunk (src/py/chunks.rs `chunks`)
        "huge last": many + [text(rng, 60_000)],
        "long texts between short": many[:50] + [text(rng, 40_000)] + many[50:60] + [text(rng, 30_000)] + many[60:],
        "a long text at each chunk's edge": [t for i in range(12) for t in (text(rng, 15_000), text(rng, 25_000))],
        "many chunks": [text(rng, rng.randrange(600)) for _ in range(1_000)],  # ~300 kB: over a dozen chunks
    }


BATCHES = {
    "encode_ordinary_batch": lambda e, ts, n: e.encode_ordinary_batch(ts, num_threads=n),
    "encode_batch": lambda e, ts, n: e.encode_batch(ts, num_threads=n),
    "encode_batch_to_numpy": lambda e, ts, n: flat_as_lists(*e.encode_batch_to_numpy(ts, num_threads=n)),
}


def flat_as_lists(flat: np.ndarray, offsets: np.ndarray) -> list[list[int]]:
    assert flat.dtype == np.uint32 and offsets.dtype == np.int64 and offsets[0] == 0
    return [flat[a:b].tolist() for a, b in itertools.pairwise(offsets)]


@pytest.fixture(scope="module")
def expected(enc: bpekit.Encoding) -> dict[str, list[list[int]]]:
    return {name: [enc.encode_ordinary(t) for t in texts] for name, texts in shapes().items()}


@pytest.mark.parametrize("threads", [1, 2, 5, 0])
@pytest.mark.parametrize("kind", BATCHES)
def test_every_shape_matches_one_call_per_text(enc: bpekit.Encoding, expected: dict, kind: str, threads: int) -> None:
    for name, texts in shapes().items():
        assert BATCHES[kind](enc, texts, threads) == expected[name], name
    assert BATCHES[kind](enc, tuple(shapes()["many"]), threads) == expected["many"]


def outcome(fn, *args, **kwargs):
    """("ok", result) or ("err", exception type, message)."""
    try:
        r = fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 (comparing every failure)
        return ("err", type(e), str(e))
    return ("ok", flat_as_lists(*r) if isinstance(r, tuple) else r)


@pytest.mark.parametrize("threads", [1, 2, 5, 0])
def test_counts_of_every_shape_are_the_lengths(enc: bpekit.Encoding, expected: dict, threads: int) -> None:
    for name, texts in shapes().items():
        assert enc.count_batch(texts, num_threads=threads) == [len(ids) for ids in expected[name]], name


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("method", ["encode_batch", "encode_batch_to_numpy", "count_batch"])
def test_an_error_anywhere_is_the_general_paths(enc: bpekit.Encoding, method: str, threads: int) -> None:
    texts = shapes()["many"]
    fn = getattr(enc, method)
    for at, bad in ((0, "x <|fim|>"), (len(texts) // 2, "<|end|>"), (len(texts), "é <|end|>")):
        batch = texts[:at] + [bad] + texts[at:]
        fast = outcome(fn, batch, num_threads=threads)
        assert fast[0] == "err" and fast == outcome(fn, batch, num_threads=threads, allowed_special=())
    two = texts[:10] + ["<|fim|>"] + texts[10:400] + ["<|end|>"] + texts[400:]
    assert "<|fim|>" in outcome(fn, two, num_threads=threads)[2]  # the first by index, not by chunk
    want = [enc.encode(t) for t in texts]
    if method == "count_batch":
        want = [len(ids) for ids in want]  # type: ignore[misc]
    assert outcome(fn, texts, num_threads=threads) == ("ok", want)  # still works


@pytest.mark.parametrize("method", ["encode_ordinary_batch", "encode_batch_to_numpy"])
def test_batches_from_several_python_threads(enc: bpekit.Encoding, method: str) -> None:
    texts = shapes()["many"]
    ids = [enc.encode_ordinary(t) for t in texts]
    fn = BATCHES[method]

    def work(i: int) -> bool:
        part = texts[i * 50:] + texts[: i * 50]
        return fn(enc, part, 2 + i % 2) == ids[i * 50:] + ids[: i * 50]

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(8)))


def test_the_collector_is_left_as_it_was(enc: bpekit.Encoding) -> None:
    texts = shapes()["many"]
    assert gc.isenabled()
    for threads in (1, 2):
        enc.encode_ordinary_batch(texts, num_threads=threads)
        assert gc.isenabled()
        assert outcome(enc.encode_batch, texts + ["<|end|>"], num_threads=threads)[0] == "err"
        assert gc.isenabled()
    gc.disable()
    try:
        assert enc.encode_ordinary_batch(texts, num_threads=2)[:3] == [enc.encode_ordinary(t) for t in texts[:3]]
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_no_other_thread_sees_the_collector_paused(enc: bpekit.Encoding) -> None:
    texts = shapes()["many"] * 4
    done, seen_paused = threading.Event(), []

    def watch() -> None:
        while not done.is_set():
            if not gc.isenabled():
                seen_paused.append(True)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for _ in range(5):
            enc.encode_ordinary_batch(texts, num_threads=2)
    finally:
        done.set()
        watcher.join()
    assert not seen_paused
