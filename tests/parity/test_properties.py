"""Hypothesis-generated text: bpekit == tiktoken on every encoding, and lossless round trips.

The alphabet mixes what breaks tokenizers: emoji, combining marks, CJK, control characters,
``\\r\\n`` runs, digits of several scripts, apostrophes, whitespace of every kind, lone surrogates.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bpekit
from peers import ENCODINGS, tiktoken_encoding

_PIECES = st.sampled_from(
    [
        " ", "  ", "\n", "\r\n", "\r", "\t", "\u00a0", "\u3000", "\u2028", "\x0b", "\x00", "\x85",
        "'s", "'S", "'ll", "'LL", "'ve", "'d", "’s", "hello", "World", "ABC", "naïve", "e\u0301",
        "日本語", "한국어", "中文", "ไทย", "عربى", "हिन्दी", "Ωμέγα", "Привет",
        "123", "4567", "١٢٣", "²", "Ⅻ", "👍", "👨‍👩‍👧", "🇫🇷", "!?", "...", "/", "//", "<|", "|>",
        "<|endoftext|>", "\ud800", "\udfff", "$", "__init__", "x=1;", "\u200d", "\ufeff",
    ]
)
TEXT = st.one_of(
    st.text(max_size=60),
    st.lists(_PIECES | st.text(max_size=3), max_size=30).map("".join),
)


@pytest.mark.parametrize("name", ENCODINGS)
@given(text=TEXT)
def test_encode_equals_tiktoken(name: str, text: str) -> None:
    ours, ref = bpekit.get_encoding(name), tiktoken_encoding(name)
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)
    assert ours.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert ours.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "r50k_base"])
@given(text=TEXT)
def test_round_trip_and_count(name: str, text: str) -> None:
    enc = bpekit.get_encoding(name)
    ids = enc.encode_ordinary(text)
    valid = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert enc.decode(ids) == valid
    assert enc.decode_bytes(ids) == valid.encode("utf-8")
    assert enc.count(text, disallowed_special=()) == len(ids)
    assert enc.encode_to_numpy(text, disallowed_special=()).tolist() == ids


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@given(ids=st.lists(st.integers(0, 100_000), max_size=30))
def test_decode_bytes_arbitrary_ids(name: str, ids: list[int]) -> None:
    ours, ref = bpekit.get_encoding(name), tiktoken_encoding(name)
    try:
        expected = ref.decode_bytes(ids)
    except KeyError:
        with pytest.raises(KeyError):
            ours.decode_bytes(ids)
        return
    assert ours.decode_bytes(ids) == expected
    assert ours.decode(ids) == ref.decode(ids)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "gpt2"])
@given(text=st.text(alphabet=st.sampled_from("ab \n\t.,'12!日👍\u0301"), max_size=12))
def test_encode_with_unstable_equals_tiktoken(name: str, text: str) -> None:
    ours, ref = bpekit.get_encoding(name), tiktoken_encoding(name)
    a_stable, a_completions = ours.encode_with_unstable(text)
    b_stable, b_completions = ref.encode_with_unstable(text)
    assert a_stable == b_stable
    assert sorted(a_completions) == sorted(b_completions)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@given(data=st.binary(max_size=40))
def test_encode_bytes_equals_tiktoken(name: str, data: bytes) -> None:
    ours, ref = bpekit.get_encoding(name), tiktoken_encoding(name)
    assert ours._encode_bytes(data) == ref._encode_bytes(data)
    assert ours.decode_bytes(ours._encode_bytes(data)) == data
