"""The Rust core equals the pure-Python spec (`bpekit.reference`) on random vocabularies and text.

Vocabularies are drawn at random: every single byte (or all but a few, so some text cannot be
encoded) plus multi-byte tokens built from the bytes of a small alphabet (so merges really happen,
including tokens that cut a UTF-8 character in two), with unique random ranks that may leave holes.
Both sides must give the same ids, the same bytes back, and the same errors. Pieces of 64 bytes or
more take the Rust heap merge (``merge::HEAP_THRESHOLD``); the ``(?s).+`` pattern and the direct
``_encode_single_piece`` test make sure such pieces are drawn often.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bpekit
from bpekit import errors, patterns
from bpekit.reference import ReferenceEncoding, heap_merge, rank_merge

ALPHABET = ["a", "b", "c", "s", " ", "  ", "\n", "\t", "'", "1", "23", "é", "日", "👍", "!", "<", "|", ">"]
ALPHABET_BYTES = sorted(set(b"".join(c.encode() for c in ALPHABET)))
SPECIALS = ["<|x|>", "<|x|><|y|>", "<|y|>", "ab", "|>"]  # overlapping on purpose
PATTERNS = [
    patterns.CL100K,
    patterns.O200K,
    patterns.GPT2,
    r"\S+|\s+",
    r"[^\n]+|\n",
    r"\w+|\W",
    r"(?s).+",
]



def over(alphabet: list, min_size: int = 0, max_size: int = 40) -> st.SearchStrategy[list]:
    """Lists of alphabet items, drawn as one byte string (element-wise lists are ~10x slower)."""
    return st.binary(min_size=min_size, max_size=max_size).map(lambda b: [alphabet[x % len(alphabet)] for x in b])


def text_over(alphabet: list[str], min_size: int = 0, max_size: int = 40) -> st.SearchStrategy[str]:
    return over(alphabet, min_size, max_size).map("".join)


def bytes_over(min_size: int = 0, max_size: int = 40) -> st.SearchStrategy[bytes]:
    return over(ALPHABET_BYTES, min_size, max_size).map(bytes)


MULTI_BYTE_TOKENS = st.one_of(
    text_over(ALPHABET, 1, 3).map(str.encode),
    bytes_over(2, 6),  # may cut a character in two
).filter(lambda b: len(b) >= 2)


@st.composite
def vocabularies(draw: st.DrawFn, *, drop_bytes: bool = False) -> dict[bytes, int]:
    """Tokens -> unique random ranks: single bytes (some dropped if asked) and multi-byte tokens."""
    singles = [bytes([b]) for b in range(256)]
    if drop_bytes:
        dropped = draw(st.sets(st.sampled_from(ALPHABET_BYTES), min_size=1, max_size=4))
        singles = [s for s in singles if s[0] not in dropped]
    multi = draw(st.lists(MULTI_BYTE_TOKENS, unique=True, max_size=40))
    tokens = singles + multi
    order = list(range(len(tokens)))
    # st.permutations of ~300 items costs more than the test itself; a drawn seed is cheap
    random.Random(draw(st.integers(0, 2**32))).shuffle(order)
    hole_at, gap = draw(st.integers(0, len(tokens))), draw(st.sampled_from([0, 1, 7, 1000]))
    return {tok: r + (gap if r >= hole_at else 0) for tok, r in zip(tokens, order, strict=True)}


def specials_for(ranks: dict[bytes, int], names: list[str]) -> dict[str, int]:
    top = max(ranks.values()) + 1
    return {s: top + 3 * i for i, s in enumerate(names)}  # ids above the ranks, with holes


TEXTS = st.one_of(
    text_over(ALPHABET),
    text_over(ALPHABET + SPECIALS),
    text_over([c for c in ALPHABET if not c.isspace()], 20, 90),  # long pieces
)


def pair(ranks: dict[bytes, int], pat: str, specials: dict[str, int]) -> tuple[bpekit.Encoding, ReferenceEncoding]:
    ours = bpekit.Encoding("random", pat_str=pat, mergeable_ranks=ranks, special_tokens=specials)
    return ours, ReferenceEncoding("random", pat, ranks, specials)


@given(ranks=vocabularies(), pat=st.sampled_from(PATTERNS), text=TEXTS)
def test_encode_ordinary_and_decode(ranks: dict[bytes, int], pat: str, text: str) -> None:
    ours, ref = pair(ranks, pat, specials_for(ranks, SPECIALS))
    ids = ours.encode_ordinary(text)
    assert ids == ref.encode_ordinary(text)
    assert ours.encode(text, disallowed_special=()) == ids
    assert ours.decode_bytes(ids) == ref.decode_bytes(ids) == text.encode()
    assert ours.decode(ids) == ref.decode(ids) == text
    assert ours.decode_tokens_bytes(ids) == ref.decode_tokens_bytes(ids)
    assert ours.max_token_value == ref.max_token_value and ours.n_vocab == ref.n_vocab


@given(
    ranks=vocabularies(),
    pat=st.sampled_from(PATTERNS),
    text=TEXTS,
    specials=st.lists(st.sampled_from(SPECIALS), unique=True, max_size=len(SPECIALS)),
    allowed=st.one_of(st.just("all"), st.sets(st.sampled_from(SPECIALS + ["not special"]))),
    disallowed=st.one_of(st.just("all"), st.just(()), st.sets(st.sampled_from(SPECIALS + ["b"]))),
)
def test_encode_with_specials(ranks, pat, text, specials, allowed, disallowed) -> None:  # noqa: ANN001
    ours, ref = pair(ranks, pat, specials_for(ranks, specials))
    try:
        expected = ref.encode(text, allowed_special=allowed, disallowed_special=disallowed)
    except errors.DisallowedSpecialError as e:
        with pytest.raises(errors.DisallowedSpecialError) as info:
            ours.encode(text, allowed_special=allowed, disallowed_special=disallowed)
        assert str(info.value) == str(e)
        return
    assert ours.encode(text, allowed_special=allowed, disallowed_special=disallowed) == expected
    assert ours.count(text, allowed_special=allowed, disallowed_special=disallowed) == len(expected)
    assert ours.decode(expected) == ref.decode(expected) == text


@given(ranks=vocabularies(drop_bytes=True), pat=st.sampled_from(PATTERNS), text=TEXTS)
def test_missing_bytes_fail_alike(ranks: dict[bytes, int], pat: str, text: str) -> None:
    ours, ref = pair(ranks, pat, {})
    try:
        expected = ref.encode_ordinary(text)
    except errors.EncodeError:
        with pytest.raises(errors.EncodeError):
            ours.encode_ordinary(text)
        with pytest.raises(errors.EncodeError):
            ours.encode_batch([text, text])
        return
    assert ours.encode_ordinary(text) == expected
    assert ours.encode_ordinary_batch([text, "", text]) == [expected, [], expected]


PIECES = st.one_of(
    bytes_over(0, 40),
    bytes_over(64, 160),  # the heap merge
    text_over(ALPHABET, 30, 120).map(str.encode),
)


@given(data=st.data(), piece=PIECES)
def test_single_piece_equals_rank_merge(data: st.DataObject, piece: bytes) -> None:
    ranks = data.draw(st.booleans().flatmap(lambda drop: vocabularies(drop_bytes=drop)), label="ranks")
    ours = bpekit.Encoding("random", pat_str=r"\S+", mergeable_ranks=ranks, special_tokens={})
    try:
        expected = rank_merge(piece, ranks)
    except errors.EncodeError:
        with pytest.raises(errors.EncodeError):
            heap_merge(piece, ranks)
        with pytest.raises(errors.EncodeError):
            ours._encode_single_piece(piece)
        return
    assert heap_merge(piece, ranks) == expected
    assert ours._encode_single_piece(piece) == expected
    assert ours.decode_bytes(expected) == piece


def test_golden_merge_order() -> None:
    """A hand-worked case. Single bytes keep their value as rank; aa=300, ab=301, aaa=302.

    "aaab": the pairs are aa(300), aa(300), ab(301); of the two equal lowest the leftmost merges
    -> [aa, a, b]. Now (aa,a)=aaa(302) and (a,b)=ab(301): ab is lower -> [aa, ab]. "aaab" is not
    a token: stop at [300, 301]. Repeating the block changes nothing, as "ba" is not a token.
    """
    ranks = {bytes([b]): b for b in range(256)} | {b"aa": 300, b"ab": 301, b"aaa": 302}
    ours, ref = pair(ranks, r"\S+", {})
    assert ours._encode_single_piece(b"aaab") == rank_merge(b"aaab", ranks) == [300, 301]
    long = b"aaab" * 40  # 160 bytes: the heap path
    assert ours._encode_single_piece(long) == heap_merge(long, ranks) == [300, 301] * 40
    assert ours.encode_ordinary("aaab " * 20) == ref.encode_ordinary("aaab " * 20)


def test_missing_byte_error_is_typed() -> None:
    ranks = {bytes([b]): b for b in range(256) if b != ord("z")}
    ours, ref = pair(ranks, r"\S+|\s+", {})
    with pytest.raises(errors.EncodeError):
        ref.encode_ordinary("lazy")
    with pytest.raises(errors.EncodeError) as info:
        ours.encode_ordinary("lazy")
    assert isinstance(info.value, ValueError)
    assert ours.encode_ordinary("lay") == ref.encode_ordinary("lay")
