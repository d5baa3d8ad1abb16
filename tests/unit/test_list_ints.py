"""The Python boundary of one call (src/py/ints.rs, src/py/calls.rs): id lists and the size limit.

Each encoder hands out one shared ``int`` per id (made on first use, stored in a pointer table);
a list item is that object with its count raised. These tests check the values (every id of a
small vocabulary, cold and warm, and a far special id), that each list
owns exactly one reference per item (a missed or extra count change shows in
``sys.getrefcount``), and that the size limit, read in Rust on every call, follows each change
(``set_limits``, the module attribute, values that do not fit a C long).
"""

from __future__ import annotations

import sys

import bpekit
import pytest
from bpekit import errors, limits

MERGES = [b"th", b"he", b"the", b" t", b"in", b"er", b"an", b" the"]
PATTERN = r""" ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+"""
FAR_ID = 1_000_000  # a sparse id space: a table of a million entries, nearly all unused


def make_encoding(name: str, far: bool = False) -> bpekit.Encoding:
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({m: 256 + i for i, m in enumerate(MERGES)})
    specials = {"<|far|>": FAR_ID} if far else {"<|end|>": 256 + len(MERGES)}
    return bpekit.Encoding(
        name, pat_str=PATTERN, mergeable_ranks=ranks, special_tokens=specials
    )


@pytest.fixture
def restore_limits():
    before = bpekit.get_limits()
    yield
    bpekit.set_limits(**before)


def test_every_id_comes_back_as_its_int() -> None:
    enc = make_encoding("ints-every")
    n = 256 + len(MERGES)
    pieces = [enc.decode_single_token_bytes(i) for i in range(n)]
    for _ in range(2):  # cold table, then warm
        for i, piece in enumerate(pieces):
            text = piece.decode("latin-1") if i < 256 else piece.decode()
            if (
                i < 128 or i >= 256
            ):  # one token on its own (bytes >= 128 are not one char)
                got = enc.encode_ordinary(text)
                assert got == [i] and type(got[0]) is int
    text = "the then in an er, the tan 42 " * 5
    assert (
        enc.encode_ordinary(text)
        == enc.encode_to_numpy(text, disallowed_special=()).tolist()
    )


def test_a_sparse_id_space() -> None:
    enc = make_encoding("ints-far", far=True)
    got = enc.encode("a<|far|>the<|far|>", allowed_special="all")
    assert got == [ord("a"), FAR_ID, 258, FAR_ID]
    assert enc.encode_batch(["<|far|>"] * 3, allowed_special="all") == [[FAR_ID]] * 3


def test_each_list_item_owns_one_reference() -> None:
    enc = make_encoding("ints-refs")
    the = enc.encode_ordinary("the")[0]  # 258: not one of CPython's small ints
    assert the == 258
    base = sys.getrefcount(the)
    lists = [enc.encode_ordinary("the,the,the") for _ in range(10)]
    lists += enc.encode_ordinary_batch(["the"] * 5, num_threads=2)
    assert all(lst[0] is the and lst[-1] is the for lst in lists)
    assert sys.getrefcount(the) == base + 10 * 3 + 5
    del lists
    assert sys.getrefcount(the) == base


def test_limit_changes_are_seen_by_the_next_call(
    restore_limits: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    enc = make_encoding("ints-limit")
    for limit, ok, bad in [(100, 100, 101), (7, 7, 8), (1 << 30, 4000, None), (0, 9000, None),
                           (1 << 62, 500, None), (1 << 70, 500, None)]:  # fmt: skip
        bpekit.set_limits(max_input_bytes=limit)
        enc.encode_ordinary("x" * ok)
        if bad is not None:
            with pytest.raises(errors.EncodeError, match=f"{limit:,} bytes"):
                enc.encode_ordinary("x" * bad)
    monkeypatch.setattr(
        limits, "_max_input_bytes", 12
    )  # the attribute itself, as tests set it
    with pytest.raises(errors.EncodeError, match="12 bytes"):
        enc.count("x" * 13)
    monkeypatch.setattr(
        limits, "_max_input_bytes", (1 << 64) + 5
    )  # no C long: the Python check
    assert enc.count("x" * 13) == 13
