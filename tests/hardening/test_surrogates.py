"""Lone surrogates: the one-pass Rust fix (``_core.fix_surrogates``) == tiktoken's UTF-16 round trip.

tiktoken makes text with surrogates encodable with
``text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")``; bpekit copies the code
points out (``PyUnicode_AsUCS4``) and writes the UTF-8 in one Rust pass (``src/py/text.rs``,
``src/surrogates.rs``; 3.8x → 0.9x the time of benign text at 10 MB, ``benches/hostile.py``).
The two must give the same string for any text.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpekit import _core
from bpekit.encoding import _fix_surrogates


def tiktoken_fix(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


# Worked out by hand: U+1F600 is the pair D83D DE00; a pair only counts high-then-low, and each
# surrogate that is not half of such a pair becomes one U+FFFD.
GOLDEN = [
    ("", ""),
    ("plain é€😀", "plain é€😀"),
    ("\ud83d\ude00", "\U0001f600"),
    ("\ude00\ud83d", "\ufffd\ufffd"),
    ("\ud800", "\ufffd"),
    ("a\udfffb", "a\ufffdb"),
    ("\ud800\ud800\udc00", "\ufffd\U00010000"),
    ("\udbff\udfff\udbff", "\U0010ffff\ufffd"),
    ("x\ud800y\udc00z", "x\ufffdy\ufffdz"),
]


@pytest.mark.parametrize(("text", "want"), GOLDEN)
def test_golden(text: str, want: str) -> None:
    assert _fix_surrogates(text) == want
    assert tiktoken_fix(text) == want


# Code points drawn so that surrogates (and pairs of them) are frequent, next to ASCII and planes 1–16.
code_points = st.one_of(
    st.integers(0xD800, 0xDBFF), st.integers(0xDC00, 0xDFFF), st.integers(0, 0x7F), st.integers(0, 0x10FFFF)
)


@given(st.lists(code_points, max_size=40).map(lambda cps: "".join(map(chr, cps))))
def test_any_text_is_fixed_as_tiktoken_does(text: str) -> None:
    assert _fix_surrogates(text) == tiktoken_fix(text)


@given(st.text(max_size=40))
def test_text_without_surrogates_comes_back_unchanged(text: str) -> None:
    assert _core.fix_surrogates(text) == text


def test_fix_surrogates_takes_only_str() -> None:
    with pytest.raises(TypeError):
        _core.fix_surrogates(b"\xed\xa0\x80")


def test_long_text_with_every_kind_of_surrogate_run() -> None:
    unit = "ab\ud83d\ude00\ud800\udc00\udc00\ud800é\udbff"
    text = unit * 50_000
    assert _fix_surrogates(text) == tiktoken_fix(text)
