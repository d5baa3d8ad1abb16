"""Pre-tokenization: the ``$`` rewrite, findall-like splitting, agreement with tiktoken."""

from __future__ import annotations

import pytest

from bpekit.errors import PatternError
from bpekit.reference import rewrite_dollar, split


@pytest.mark.parametrize(
    ("pattern", "rewritten"),
    [
        (r"\s++$", r"\s++\Z"),
        (r"a$|b", r"a\Z|b"),
        (r"\$", r"\$"),  # an escaped dollar is a literal
        (r"[$]", r"[$]"),  # inside a class too
        (r"[^$a]$", r"[^$a]\Z"),
        (r"[]$]$", r"[]$]\Z"),  # ']' first in a class is a member, so the class ends later
        (r"[^]$]x", r"[^]$]x"),
        (r"[\]$]$", r"[\]$]\Z"),  # an escaped ']' does not end the class
        (r"\\$", r"\\\Z"),  # an escaped backslash, then an anchor
    ],
)
def test_rewrite_dollar(pattern: str, rewritten: str) -> None:
    assert rewrite_dollar(pattern) == rewritten


def test_dollar_is_end_of_text() -> None:
    # In `regex` (like `re`) "$" also matches before a final "\n"; in tiktoken's fancy-regex it
    # does not, and the rewrite to "\Z" makes `split` follow fancy-regex.
    assert split(r"[a-z]+$|\n", "ab\n") == ["\n"]  # "ab" is not at the end of the text
    assert split(r"[a-z]+$|\n", "ab") == ["ab"]
    assert split(r"[a-z]+$|\n", "ab\ncd") == ["\n", "cd"]


def test_findall_semantics() -> None:
    assert split(r"\d*", "a12b3") == ["12", "3"]  # empty matches are skipped
    assert split(r"[a-z]+", "ab, cd!") == ["ab", "cd"]  # unmatched text is dropped
    assert split(r"(a)(b)?", "abab") == ["ab", "ab"]  # groups do not change what is returned
    assert split(r"\s+|\S+", "") == []


def test_bad_pattern() -> None:
    with pytest.raises(PatternError, match="invalid pre-tokenizer pattern"):
        split("(unclosed", "text")


@pytest.mark.parametrize(
    "text",
    [
        "hello world\n",
        "a  \n",
        "x \n",
        "  \n\n",
        "a\n ",
        "don't I'LL 've",
        "d1000 12345678",
        "\r\n\r\nline\r\n",
        "tab\tand  spaces   end   ",
        "你好，世界！ こんにちは",
        "naïve café ﬁ ǅemal",
    ],
)
def test_pieces_match_tiktoken(cl100k_pair, text: str) -> None:
    """Piece boundaries agree: the tokens of each piece, decoded, concatenate to the piece."""
    theirs, ours = cl100k_pair
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    for piece in split(ours.pat_str, text):
        assert theirs.decode(theirs.encode_ordinary(piece)) == piece
