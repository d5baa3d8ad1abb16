"""The fast call paths of `Encoding` (checks in Rust, src/py/calls.rs) against the general path.

``encode``, ``encode_to_numpy`` and ``count`` (bound on the instance, src/py/bound.rs) with the
default policy (``allowed_special`` an empty set or frozenset, ``disallowed_special="all"``), with
no special-token handling (both empty, e.g. ``disallowed_special=()``) or with
``allowed_special="all"``, ``encode_ordinary`` and the batches check their arguments in Rust. Any
other argument takes the general path (the Python checks, then the core), which is the reference
here: an empty *tuple* as ``allowed_special`` means the empty set and goes through it. Every input must give
the same ids, or the same exception type and message, both ways: types, the size limit, lone
surrogates, disallowed specials (in a batch: the first text that holds one), sizes on both sides
of the GIL threshold, batches on 1-3 threads in order, and one encoding shared by 4 threads.
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import bpekit
import numpy as np
import pytest
from bpekit import errors, limits

SPECIALS = {"<|end|>": 300, "<|end|>x": 301, "<|fim|>": 302}
MERGES = [b"th", b"he", b"the", b" t", b"in", b"er", b"an", b" the", b"\xc3\xa9", b"  "]
PATTERN = r"""'s|'t| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
ALPHABET = ["a", "e", "t", "h", " ", "\n", "é", "日", "😀", "\ud800", "\udc00", "<|end|>", "<|fim|>", "x", "1"]


@pytest.fixture(scope="module")
def enc() -> bpekit.Encoding:
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({m: 256 + i for i, m in enumerate(MERGES)})
    return bpekit.Encoding("calls-test", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens=SPECIALS)


@pytest.fixture
def restore_limits():
    before = bpekit.get_limits()
    yield
    bpekit.set_limits(**before)


def outcome(fn, *args, **kwargs):
    """("ok", result) or ("err", exception type, message)."""
    try:
        r = fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 (comparing every failure)
        return ("err", type(e), str(e))
    return ("ok", r.tolist() if isinstance(r, np.ndarray) else r)


def random_texts(n: int, seed: int, max_len: int = 40) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(max_len))) for _ in range(n)]


# The fast call, and the same call through the general path. ``allowed_special=()`` (a tuple) and
# a frozenset naming every special take the general path with the meaning of the empty set and
# "all"; the bound methods' fallback is ``Encoding``'s own method.
def every(e: bpekit.Encoding) -> frozenset[str]:
    return frozenset(e.special_tokens_set)


PAIRS = {
    "encode": (lambda e, t: e.encode(t), lambda e, t: e.encode(t, allowed_special=())),
    "encode frozenset": (lambda e, t: e.encode(t, allowed_special=frozenset()),
                         lambda e, t: e.encode(t, disallowed_special=e.special_tokens_set)),
    "encode all": (lambda e, t: e.encode(t, allowed_special="all"),
                   lambda e, t: e.encode(t, allowed_special=every(e))),
    "encode all, disallowed=()": (lambda e, t: e.encode(t, allowed_special="all", disallowed_special=()),
                                  lambda e, t: e.encode(t, allowed_special=every(e), disallowed_special=())),
    "encode disallowed=()": (lambda e, t: e.encode(t, disallowed_special=()),
                             lambda e, t: e.encode(t, allowed_special=(), disallowed_special=())),
    "encode_ordinary": (lambda e, t: e.encode_ordinary(t),
                        lambda e, t: e.encode(t, allowed_special=(), disallowed_special=())),
    "encode_to_numpy": (lambda e, t: e.encode_to_numpy(t), lambda e, t: e.encode_to_numpy(t, allowed_special=())),
    "encode_to_numpy all": (lambda e, t: e.encode_to_numpy(t, allowed_special="all"),
                            lambda e, t: e.encode(t, allowed_special=every(e))),
    "encode_to_numpy disallowed=()": (lambda e, t: e.encode_to_numpy(t, disallowed_special=()),
                                      lambda e, t: e.encode_ordinary(t)),
    "encode_to_numpy disallowed=set()": (lambda e, t: e.encode_to_numpy(t, allowed_special=set(), disallowed_special=set()),
                                         lambda e, t: e.encode_to_numpy(t, allowed_special=(), disallowed_special=[])),
    "count": (lambda e, t: e.count(t), lambda e, t: e.count(t, allowed_special=())),
    "count all": (lambda e, t: e.count(t, allowed_special="all"),
                  lambda e, t: len(e.encode(t, allowed_special=every(e)))),
    "count disallowed=[]": (lambda e, t: e.count(t, disallowed_special=[]),
                            lambda e, t: e.count(t, allowed_special=(), disallowed_special=())),
    "class method": (lambda e, t: e.encode_to_numpy(t), lambda e, t: bpekit.Encoding.encode_to_numpy(e, t)),
    # a set of allowed specials (``Policy::Only``; the batches' ``_only_specials``) against the
    # same names as a tuple, which takes the general path
    "encode set": (lambda e, t: e.encode(t, allowed_special={"<|end|>"}),
                   lambda e, t: e.encode(t, allowed_special=("<|end|>",))),
    "encode frozenset of two": (lambda e, t: e.encode(t, allowed_special=frozenset({"<|end|>x", "<|fim|>", "zz"}),
                                                       disallowed_special="all"),
                                lambda e, t: e.encode(t, allowed_special=("<|end|>x", "<|fim|>", "zz"))),
    "encode_to_numpy set": (lambda e, t: e.encode_to_numpy(t, allowed_special={"<|fim|>"}),
                            lambda e, t: e.encode_to_numpy(t, allowed_special=("<|fim|>",))),
    "count set": (lambda e, t: e.count(t, allowed_special={"<|end|>", "<|fim|>"}),
                  lambda e, t: e.count(t, allowed_special=("<|end|>", "<|fim|>"))),
    "batch of one set": (lambda e, t: e.encode_batch([t], num_threads=2, allowed_special={"<|end|>"})[0],
                         lambda e, t: e.encode_batch([t], num_threads=2, allowed_special=("<|end|>",))[0]),
    "numpy batch of one set": (lambda e, t: e.encode_batch_to_numpy([t], allowed_special={"<|fim|>"})[0],
                               lambda e, t: e.encode_batch_to_numpy([t], allowed_special=("<|fim|>",))[0]),
    "batch of one": (lambda e, t: e.encode_batch([t], num_threads=2)[0],
                     lambda e, t: e.encode_batch([t], num_threads=2, allowed_special=())[0]),
    "numpy batch of one": (lambda e, t: e.encode_batch_to_numpy([t], num_threads=2)[0],
                           lambda e, t: e.encode_batch_to_numpy([t], num_threads=2, allowed_special=())[0]),
}  # fmt: skip


class Text(str):
    """A str subclass: accepted as a str."""


ODD_INPUTS = [b"bytes", bytearray(b"x"), None, 12, ["a"], Text("the <|end|>"), Text("the end"), "", "\ud800",
              "the end<|end|>x <|fim|>", "<|end|", "\udbff\udfff <|fim|>", "é" * 3000 + "<|end|>"]


@pytest.mark.parametrize("pair", PAIRS)
@pytest.mark.parametrize("text", ODD_INPUTS, ids=repr)
def test_odd_inputs_match_the_general_path(enc: bpekit.Encoding, pair: str, text: object) -> None:
    fast, general = PAIRS[pair]
    assert outcome(fast, enc, text) == outcome(general, enc, text)


@pytest.mark.parametrize("pair", PAIRS)
def test_random_texts_match_the_general_path(enc: bpekit.Encoding, pair: str) -> None:
    fast, general = PAIRS[pair]
    texts = random_texts(300, seed=len(pair)) + [t * 80 for t in random_texts(10, seed=7)]  # both GIL sides
    for text in texts:
        assert outcome(fast, enc, text) == outcome(general, enc, text), text


def test_lone_surrogates_are_fixed_as_tiktoken_does(enc: bpekit.Encoding) -> None:
    # a high + low pair is the character it encodes, any other surrogate U+FFFD
    assert enc.encode("\ud83d\ude00") == enc.encode("😀")
    assert enc.encode_ordinary("a\ud800b\udc00") == enc.encode_ordinary("a\ufffdb\ufffd")
    long = "\udc00\ud800" * 2000 + "x"  # above the GIL threshold; the middle surrogates pair up
    tiktoken_fix = long.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert enc.count(long) == len(enc.encode_ordinary(tiktoken_fix)) == len(enc.encode(long))


@pytest.mark.parametrize("pair", PAIRS)
def test_size_limit_matches_the_general_path(enc: bpekit.Encoding, pair: str, restore_limits: None) -> None:
    fast, general = PAIRS[pair]
    bpekit.set_limits(max_input_bytes=40)
    for text in ["t" * 40, "t" * 41, "é" * 20, "é" * 21, "😀" * 10, "😀" * 11, "t" * 9, "t" * 400, "\ud800" * 13]:
        got = outcome(fast, enc, text)
        assert got == outcome(general, enc, text)
        assert (got[0] == "err") == (len(text.encode("utf-8", "surrogatepass")) > 40)


def test_size_limit_from_the_environment(enc: bpekit.Encoding, monkeypatch: pytest.MonkeyPatch,
                                         restore_limits: None) -> None:
    monkeypatch.setattr(limits, "_max_input_bytes", None)  # read again on the next call
    monkeypatch.setenv(limits.ENV_VAR, "20")
    with pytest.raises(errors.EncodeError, match="20 bytes"):
        enc.encode_ordinary("z" * 21)
    assert limits.max_input_bytes() == 20
    monkeypatch.setattr(limits, "_max_input_bytes", None)
    monkeypatch.setenv(limits.ENV_VAR, "many")
    with pytest.raises(errors.UsageError, match=limits.ENV_VAR):
        enc.count("z")


def test_disallowed_special_message_is_tiktokens(enc: bpekit.Encoding) -> None:
    with pytest.raises(errors.DisallowedSpecialError) as fast:
        enc.encode("a <|end|>x b")
    with pytest.raises(errors.DisallowedSpecialError) as general:
        enc.encode("a <|end|>x b", allowed_special=())
    assert str(fast.value) == str(general.value)
    assert "'<|end|>x'" in str(fast.value) and "disallowed_special=()" in str(fast.value)
    assert isinstance(fast.value, ValueError)


BATCHES = {
    "encode_batch": (lambda e, ts, n: e.encode_batch(ts, num_threads=n),
                     lambda e, ts, n: [e.encode(t, allowed_special=()) for t in ts]),
    "encode_batch all": (lambda e, ts, n: e.encode_batch(ts, num_threads=n, allowed_special="all"),
                         lambda e, ts, n: [e.encode(t, allowed_special="all") for t in ts]),
    "encode_ordinary_batch": (lambda e, ts, n: e.encode_ordinary_batch(ts, num_threads=n),
                              lambda e, ts, n: [e.encode_ordinary(t) for t in ts]),
    "encode_batch set all": (lambda e, ts, n: e.encode_batch(ts, num_threads=n, allowed_special={"<|end|>", "<|fim|>", "<|end|>x"}),
                             lambda e, ts, n: [e.encode(t, allowed_special="all") for t in ts]),
    "encode_batch_to_numpy set all": (
        lambda e, ts, n: flat_lists(e.encode_batch_to_numpy(ts, num_threads=n, allowed_special=frozenset(e.special_tokens_set))),
        lambda e, ts, n: [e.encode(t, allowed_special="all") for t in ts]),
}  # fmt: skip


def flat_lists(flat_offsets: tuple[np.ndarray, np.ndarray]) -> list[list[int]]:
    flat, offsets = flat_offsets
    return [flat[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:], strict=True)]


@pytest.mark.parametrize("threads", [1, 2, 3, 0])
@pytest.mark.parametrize("kind", BATCHES)
def test_batches_are_in_order(enc: bpekit.Encoding, kind: str, threads: int) -> None:
    batch, one_by_one = BATCHES[kind]
    texts = [t for t in random_texts(5000, seed=threads) if "<|" not in t or "all" in kind]
    texts[100] = "the " * 20_000  # one long text among short ones (uneven chunks)
    assert len("".join(texts)) > 64 << 10  # bytes: well above the parallel threshold (32 kB)
    assert batch(enc, texts, threads) == one_by_one(enc, texts, threads)
    assert batch(enc, tuple(texts[:50]), threads) == one_by_one(enc, texts[:50], threads)
    assert batch(enc, [], threads) == []


@pytest.mark.parametrize("threads", [1, 2])
def test_batches_with_a_set_of_allowed_specials(enc: bpekit.Encoding, threads: int) -> None:
    names = {"<|end|>", "<|end|>x"}
    texts = [t.replace("<|fim|>", "fim") for t in random_texts(5000, seed=9)]
    assert len("".join(texts)) > 64 << 10 and sum("<|end|>" in t for t in texts) > 1000
    want = [enc.encode(t, allowed_special=tuple(names)) for t in texts]  # the general path
    assert enc.encode_batch(texts, num_threads=threads, allowed_special=names) == want
    assert flat_lists(enc.encode_batch_to_numpy(texts, num_threads=threads, allowed_special=frozenset(names))) == want


@pytest.mark.parametrize("threads", [1, 2])
def test_batch_errors_match_the_general_path(enc: bpekit.Encoding, threads: int, restore_limits: None) -> None:
    texts = random_texts(2000, seed=5)
    clean = [t.replace("<|", "") for t in texts]
    cases = [
        texts,  # many specials: the first text (in order) that holds one is named
        clean[:1500] + ["x <|fim|>"] + clean[1500:] + ["<|end|>"],
        clean + [b"bytes"], clean[:3] + [None] + clean, "not a list", iter(clean), (t for t in clean),
    ]
    for ts in cases:
        fast = outcome(enc.encode_batch, ts, num_threads=threads)
        general = outcome(enc.encode_batch, ts, num_threads=threads, allowed_special=())
        assert fast == general
        assert fast[0] == "err"
        # a set of allowed specials: the first text holding another special is named
        for names in ({"<|end|>"}, frozenset({"<|fim|>", "x"})):
            fast = outcome(enc.encode_batch, ts, num_threads=threads, allowed_special=names)
            assert fast == outcome(enc.encode_batch, ts, num_threads=threads, allowed_special=tuple(names))
    for bad in (-1, 1.5, True, "2"):
        assert outcome(enc.encode_batch, clean, num_threads=bad) == outcome(
            enc.encode_batch, clean, num_threads=bad, allowed_special=())
        assert outcome(enc.encode_ordinary_batch, clean, num_threads=bad)[0] == "err"
    bpekit.set_limits(max_input_bytes=1000)
    assert outcome(enc.encode_batch, ["a" * 500, "a" * 501]) == outcome(
        enc.encode_batch, ["a" * 500, "a" * 501], allowed_special=())


def test_lists_are_fresh_and_hold_plain_ints(enc: bpekit.Encoding) -> None:
    a = enc.encode("the theatre")
    a.append(-1)
    a[0] = 10**9
    b = enc.encode("the theatre")
    assert b == enc.encode("the theatre", allowed_special=()) and -1 not in b
    assert all(type(i) is int for i in b + enc.encode_batch(["é x"])[0])


KEEP_IDS = 1 << 16  # src/py/scratch.rs: a thread's spare buffer of ids is kept up to 256 KiB


@pytest.mark.parametrize("pair", ["encode", "encode all", "encode_to_numpy", "encode_to_numpy set", "encode set"])
def test_results_out_of_the_threads_buffer_are_their_own(enc: bpekit.Encoding, pair: str) -> None:
    # Single calls encode into a buffer kept per thread: whatever came before (a longer text, a
    # refused one, one whose ids outgrow the buffer kept or a numpy array takes over), every
    # result holds its own ids, and no later call changes an array or list already returned.
    texts = ["theatre", "", "é x", "the " * 40, "the " * (KEEP_IDS - 2), "the " * KEEP_IDS, "the " * (KEEP_IDS + 2),
             "x<|end|>y the", "<|fim|>", "日" * 5000]  # fmt: skip
    fast, general = PAIRS[pair]
    expected = {t: outcome(general, enc, t) for t in texts}
    rng = random.Random(7)
    kept = []
    for t in [rng.choice(texts) for _ in range(40)]:
        try:
            kept.append((t, fast(enc, t)))
        except Exception as e:  # noqa: BLE001 (compared below)
            assert expected[t] == ("err", type(e), str(e))
    for t, r in kept:
        assert ("ok", r.tolist() if isinstance(r, np.ndarray) else r) == expected[t]
    arrays = [r for _, r in kept if isinstance(r, np.ndarray)]
    assert not any(np.shares_memory(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1:] if len(a) and len(b))


def test_one_encoding_from_four_threads(enc: bpekit.Encoding) -> None:
    texts = [t.replace("<|", "") for t in random_texts(200, seed=11, max_len=200)]
    expected = [enc.encode(t, allowed_special=()) for t in texts]

    def work(seed: int) -> bool:
        order = list(range(len(texts)))
        random.Random(seed).shuffle(order)
        ok = all(enc.encode(texts[i]) == expected[i] and enc.count(texts[i]) == len(expected[i]) for i in order)
        return ok and enc.encode_batch(texts, num_threads=2) == expected

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(8)))


def test_tokenizer_takes_the_same_paths(enc: bpekit.Encoding) -> None:
    tok = bpekit.Tokenizer.from_encoding(enc)
    for text in random_texts(50, seed=3):
        assert outcome(tok.encode, text) == outcome(enc.encode, text, allowed_special=())
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
