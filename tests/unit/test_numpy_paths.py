"""Numpy output (`encode_to_numpy`, `encode_batch_to_numpy`) and the bound fast methods.

The arrays must be what the list paths give, as fresh, writable, C-contiguous ``uint32`` (ids) and
``int64`` (offsets) arrays, on both sides of the copy / hand-over threshold (src/py/encoder.rs
``COPY_IDS_BELOW``) and of the parallel-chunk threshold; a flat batch fails as the general path
does. ``encode``, ``encode_to_numpy`` and ``count`` (and ``decode``, ``decode_bytes``) are bound on each instance to
``_core.EncodingCalls``: every call it does not take (other arguments, bad signatures) must reach
``Encoding``'s own method, and the binding must not keep an encoding alive.
"""

from __future__ import annotations

import gc
import random
import weakref

import bpekit
import numpy as np
import pytest

SPECIALS = {"<|end|>": 300, "<|fim|>": 302}
PATTERN = r"""'s|'t| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
COPY_IDS_BELOW = 1 << 16  # src/py/encoder.rs
ALPHABET = ["a", "e", "t", "h", " ", "\n", "é", "日", "😀", "\ud800", "\udc00", "<|end|>", "<|fim|>", "x", "1"]


def outcome(fn, *args, **kwargs):
    """("ok", result, with arrays as lists) or ("err", exception type, message)."""
    try:
        r = fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 (comparing every failure)
        return ("err", type(e), str(e))
    if isinstance(r, tuple):
        return ("ok", tuple(x.tolist() if isinstance(x, np.ndarray) else x for x in r))
    return ("ok", r.tolist() if isinstance(r, np.ndarray) else r)


def random_texts(n: int, seed: int, max_len: int = 40) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(max_len))) for _ in range(n)]


@pytest.fixture(scope="module")
def enc() -> bpekit.Encoding:
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({m: 256 + i for i, m in enumerate([b"th", b"he", b"the", b" t", b" the", b"\xc3\xa9"])})
    return bpekit.Encoding("numpy-test", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens=SPECIALS)


def check_array(a: object, dtype: type) -> np.ndarray:
    assert isinstance(a, np.ndarray)
    assert a.dtype == dtype and a.ndim == 1
    assert a.flags.c_contiguous and a.flags.writeable and a.flags.aligned
    return a


@pytest.mark.parametrize("n", [0, 1, 5, COPY_IDS_BELOW - 1, COPY_IDS_BELOW, 3 * COPY_IDS_BELOW])
def test_numpy_output_on_both_sides_of_the_copy_threshold(enc: bpekit.Encoding, n: int) -> None:
    text = " the" * n  # n ids of " the"
    for kwargs in ({}, {"disallowed_special": ()}, {"allowed_special": "all"}):
        a = check_array(enc.encode_to_numpy(text, **kwargs), np.uint32)
        assert len(a) == n and a.tolist() == enc.encode(text, allowed_special=())
        if n:
            a[0] = 7  # a fresh array each call
            assert enc.encode_to_numpy(text, **kwargs)[0] == enc.encode_ordinary(" the")[0]


def flat_reference(enc: bpekit.Encoding, texts: list[str], **kwargs: object) -> tuple[list[int], list[int]]:
    lists = [enc.encode(t, **kwargs) for t in texts]
    return [i for ids in lists for i in ids], np.cumsum([0] + [len(ids) for ids in lists]).tolist()


POLICIES = [
    ({}, {"allowed_special": ()}),
    ({"disallowed_special": ()}, {"allowed_special": (), "disallowed_special": ()}),
    ({"allowed_special": "all"}, {"allowed_special": frozenset(SPECIALS)}),
]


@pytest.mark.parametrize("threads", [1, 2, 3, 0])
@pytest.mark.parametrize("policy", range(len(POLICIES)), ids=["default", "ordinary", "all"])
def test_flat_batches_match_the_lists(enc: bpekit.Encoding, threads: int, policy: int) -> None:
    fast, general = POLICIES[policy]
    texts = random_texts(3000, seed=threads)
    if policy == 0:
        texts = [t.replace("<|", "") for t in texts]
    texts[7] = " the" * (COPY_IDS_BELOW + 10)  # one long text among short ones (uneven chunks)
    for batch in (texts, tuple(texts[:40]), [], [""], texts[7:8]):
        flat, offsets = enc.encode_batch_to_numpy(batch, num_threads=threads, **fast)
        check_array(flat, np.uint32)
        check_array(offsets, np.int64)
        assert (flat.tolist(), offsets.tolist()) == flat_reference(enc, list(batch), **general)
        g_flat, g_offsets = enc.encode_batch_to_numpy(batch, num_threads=threads, **general)
        assert (flat.tolist(), offsets.tolist()) == (g_flat.tolist(), g_offsets.tolist())
        counts = np.diff(offsets).tolist()
        assert enc.count_batch(batch, num_threads=threads, **fast) == counts
        assert enc.count_batch(batch, num_threads=threads, **general) == counts


@pytest.mark.parametrize("threads", [1, 2])
def test_flat_batch_errors_match_the_general_path(enc: bpekit.Encoding, threads: int) -> None:
    texts = random_texts(2000, seed=5)
    clean = [t.replace("<|", "") for t in texts]
    cases = [
        texts,  # many specials: the first text (in order) that holds one is named
        clean[:1500] + ["x <|fim|>"] + clean[1500:] + ["<|end|>"],
        clean + [b"bytes"], clean[:3] + [None] + clean, "not a list", iter(clean), None,
    ]
    for fn in (enc.encode_batch_to_numpy, enc.count_batch):
        for ts in cases:
            fast = outcome(fn, ts, num_threads=threads)
            assert fast == outcome(fn, ts, num_threads=threads, allowed_special=())
            assert fast[0] == "err"
        for bad in (-1, 1.5, True, "2", None):
            assert outcome(fn, clean, num_threads=bad) == outcome(fn, clean, num_threads=bad, allowed_special=())


def test_flat_batch_size_limit(enc: bpekit.Encoding) -> None:
    before = bpekit.get_limits()
    try:
        bpekit.set_limits(max_input_bytes=1000)
        for batch in (["a" * 500, "a" * 500], ["a" * 500, "a" * 501], ["é" * 300, "x"]):
            for fn in (enc.encode_batch_to_numpy, enc.count_batch):
                fast = outcome(fn, batch)
                assert fast == outcome(fn, batch, allowed_special=())
                assert (fast[0] == "err") == (sum(len(t.encode()) for t in batch) > 1000)
    finally:
        bpekit.set_limits(**before)


@pytest.mark.parametrize("method", ["encode", "encode_to_numpy", "count"])
def test_bound_methods_fall_back_to_the_class_method(enc: bpekit.Encoding, method: str) -> None:
    bound, cls = getattr(enc, method), getattr(bpekit.Encoding, method)
    assert type(bound.__self__) is bpekit._core.EncodingCalls  # the fast path is the one under test
    calls = [
        ((), {}), (("a", "b"), {}), (("the",), {"foo": 1}), ((), {"text": "the end"}),
        (("the <|end|>",), {"allowed_special": {"<|end|>"}}), (("the <|end|>",), {"disallowed_special": ["<|end|>"]}),
        (("the <|fim|>",), {"allowed_special": {"<|end|>"}, "disallowed_special": ()}),
        (("x",), {"allowed_special": None}), (("x",), {"disallowed_special": None}),
        (("x",), {"disallowed_special": "al"}), (("x",), {"allowed_special": "all", "disallowed_special": "x"}),
        ((b"x",), {"disallowed_special": ()}), (("x",), {"allowed_special": "all", "disallowed_special": 5}),
        # a policy keyword with another keyword: both must reach the class method
        (("x",), {"allowed_special": "all", "foo": 1}), ((), {"text": "x <|end|>", "disallowed_special": ()}),
        (("x",), {"disallowed_special": (), "allowed_special": set(), "bar": 2}), (("x", "y"), {"disallowed_special": ()}),
    ]  # fmt: skip
    for args, kwargs in calls:
        assert outcome(bound, *args, **kwargs) == outcome(cls, enc, *args, **kwargs), (args, kwargs)


class IntLike(int):
    pass


@pytest.mark.parametrize("method", ["encode", "encode_to_numpy", "count"])
def test_bound_calls_with_a_set_of_allowed_specials(
    enc: bpekit.Encoding, method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`allowed_special` a set or frozenset of strings (disallowed "all"): the bound call matches
    the named specials and refuses the others in Rust; the class method decides in Python. Same
    ids, same error (the first disallowed special), on random texts full of special tokens."""
    bound, cls = getattr(enc, method), getattr(bpekit.Encoding, method)
    allowed_sets = [
        {"<|end|>"}, frozenset({"<|fim|>"}), {"<|end|>", "<|fim|>"}, {"x"}, {"<|end|>", "x", "<|end"},
        {"<|end|>", 5}, {"<|end|>", None},
    ]  # fmt: skip
    for text in random_texts(300, seed=21) + ["<|end|><|fim|>", "<|fim|><|end|>", "a <|end|>"]:
        for allowed in allowed_sets:
            for kwargs in ({"allowed_special": allowed}, {"allowed_special": allowed, "disallowed_special": "all"}):
                assert outcome(bound, text, **kwargs) == outcome(cls, enc, text, **kwargs), (text, kwargs)
    # the sets of strings never reach the Python check (the ones with other items do)
    monkeypatch.setattr(bpekit.Encoding, "_check_special", lambda *a: pytest.fail("took the Python path"))
    assert outcome(bound, "a <|end|>", allowed_special={"<|end|>", "x"})[0] == "ok"
    assert outcome(bound, "a <|fim|>", allowed_special=frozenset({"<|end|>"}))[1] is bpekit.errors.DisallowedSpecialError


DECODE_CALLS = ["decode", "decode_bytes", "decode_tokens_bytes", "decode_with_offsets"]


@pytest.mark.parametrize("method", DECODE_CALLS)
def test_bound_decodes_answer_as_the_class_method(enc: bpekit.Encoding, method: str) -> None:
    """The bound decode calls take exact lists and tuples of ints (both sides of the GIL
    threshold, src/py/decode.rs) and every `errors` handler; anything else goes to the class
    method: both give the same result or the same error."""
    bound, cls = getattr(enc, method), getattr(bpekit.Encoding, method)
    assert type(bound.__self__) is bpekit._core.EncodingCalls
    the, e_acute, c3, a9 = 258, 261, 0xC3, 0xA9
    seqs = [
        [], [the], (the, 32, the), [c3], [c3, a9, e_acute], [a9, 255, 0x80], [a9, the], [300, the, 302], [the] * 5000,
        [0xC3] * 3000, [c3, a9] * 3000, [1 << 40], [-1], [2**32], [2**32 - 1], [99_999], ["x"], [1.0], [IntLike(5)],
        [True], "abc", b"abc", None, 5, np.array([the], dtype=np.uint32), range(3), [[the]],
    ]  # fmt: skip
    calls: list[tuple[tuple, dict]] = [((seq,), {}) for seq in seqs]
    if method == "decode":
        for seq in ([c3, the], [a9], [the], (the,)):
            for errors in ("strict", "replace", "ignore", "backslashreplace", "surrogateescape", "nope", "a\0b", 5, None):
                calls += [((seq, errors), {}), ((seq,), {"errors": errors})]
        calls += [((), {"tokens": [the]}), (([the],), {"errors": "strict", "x": 1}), (([the], "strict", 3), {})]
    else:
        calls += [((), {"tokens": [the]}), (([the],), {"errors": "strict"}), (([the], "strict"), {})]
    for args, kwargs in calls:
        assert outcome(bound, *args, **kwargs) == outcome(cls, enc, *args, **kwargs), (args, kwargs)
    assert outcome(bound, iter([the, 32])) == outcome(cls, enc, iter([the, 32])) == ("ok", cls(enc, [the, 32]))


KEEP_BYTES = 1 << 18  # src/py/scratch.rs: a per-thread buffer grown past this is not kept


@pytest.mark.parametrize("method", DECODE_CALLS)
def test_decodes_out_of_the_threads_buffers_are_their_own(enc: bpekit.Encoding, method: str) -> None:
    """Single decodes read the ids into, and write the bytes to, buffers kept per thread: in any
    order of short sequences, long ones (past the size a buffer is kept at) and ones the class
    method refuses, each result is the class method's."""
    the = 258
    seqs = [[the, 32], [], [0xC3, 0xA9], [the] * (KEEP_BYTES // 3 + 1), (the,) * 10, [the, 99_999], [the, "x"],
            [0xC3] * (KEEP_BYTES + 1), [the] * 100]  # fmt: skip
    bound, cls = getattr(enc, method), getattr(bpekit.Encoding, method)
    expected = [outcome(cls, enc, seq) for seq in seqs]
    rng = random.Random(9)
    for i in [rng.randrange(len(seqs)) for _ in range(60)]:
        assert outcome(bound, seqs[i]) == expected[i], seqs[i][:3]


def test_bound_single_token_calls_answer_as_the_class_method(enc: bpekit.Encoding) -> None:
    """`decode_single_token_bytes` and `encode_single_token` bound in Rust: exact ints, bytes and
    strs that are ordinary tokens; specials, unknown ids and other types reach the class method."""
    for method, args in [
        ("decode_single_token_bytes", [0, 255, 258, 261, 300, 302, 301, 99_999, -1, 2**32, 2**32 - 1, 1 << 70, True,
                                       IntLike(258), 1.0, "1", None]),
        ("encode_single_token", ["the", b"the", " the", "é", b"\xc3", "\xc3", "<|end|>", "<|fim|>", b"<|end|>", "",
                                 b"", "\ud800", "thethe", bytearray(b"the"), memoryview(b"the"), 258, None]),
    ]:  # fmt: skip
        bound, cls = getattr(enc, method), getattr(bpekit.Encoding, method)
        assert type(bound.__self__) is bpekit._core.EncodingCalls
        for a in args:
            assert outcome(bound, a) == outcome(cls, enc, a), (method, a)
        for a, kw in [((), {}), ((258, 259), {}), ((), {"token": 258}), ((), {"text_or_bytes": "the"})]:
            assert outcome(bound, *a, **kw) == outcome(cls, enc, *a, **kw), (method, a, kw)


def test_subclass_overrides_are_kept() -> None:
    class Upper(bpekit.Encoding):
        def encode(self, text: str, **kwargs: object) -> list[int]:  # type: ignore[override]
            return super().encode(text.upper(), **kwargs)

    ranks = {bytes([i]): i for i in range(256)}
    sub = Upper("upper", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens={})
    assert sub.encode("ab") == [65, 66]
    assert sub.encode_to_numpy("ab").tolist() == [97, 98]  # not overridden: bound


def test_binding_does_not_keep_the_encoding_alive() -> None:
    ranks = {bytes([i]): i for i in range(256)}
    e = bpekit.Encoding("short-lived", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens={})
    assert e.count("abc") == 3
    ref = weakref.ref(e)
    del e
    gc.collect()
    assert ref() is None
