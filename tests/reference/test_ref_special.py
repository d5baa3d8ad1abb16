"""Special tokens: the leftmost-longest-allowed search and tiktoken's disallowed-special check."""

from __future__ import annotations

import pytest

from bpekit.errors import DisallowedSpecialError
from bpekit.reference import Found, check_disallowed, disallowed_message, find_special
from bpekit.reference.train import byte_ranks

A, AB = "<|a|>", "<|a|><|b|>"


@pytest.mark.parametrize(
    ("allowed", "expected"),
    [
        ({A, AB}, Found(2, 12, AB)),  # both start at 2: the longest allowed wins
        ({AB}, Found(2, 12, AB)),
        ({A}, Found(2, 7, A)),  # the longest is not allowed, but a shorter one starting there is
        (set(), None),
        ({"<|b|>"}, None),  # not a special token: ignored
    ],
)
def test_longest_allowed_at_the_leftmost_start(allowed: set[str], expected: Found | None) -> None:
    assert find_special("x <|a|><|b|> y", 0, [A, AB], allowed) == expected


def test_disallowed_occurrence_is_skipped() -> None:
    # "aa" starts first but is not allowed; the search moves on one character and finds "ab".
    assert find_special("aab", 0, ["aa", "ab"], {"ab"}) == Found(1, 3, "ab")
    assert find_special("aab aa", 0, ["aa", "ab"], {"aa"}) == Found(0, 2, "aa")
    assert find_special("aab aa", 1, ["aa", "ab"], {"aa"}) == Found(4, 6, "aa")
    assert find_special("", 0, ["aa"], {"aa"}) is None


def test_disallowed_message_text() -> None:
    # formats.md section 1.5, verified against tiktoken 0.14
    assert disallowed_message("<|endoftext|>") == (
        "Encountered text corresponding to disallowed special token '<|endoftext|>'.\n"
        "If you want this text to be encoded as a special token, pass it to `allowed_special`, "
        "e.g. `allowed_special={'<|endoftext|>', ...}`.\n"
        "If you want this text to be encoded as normal text, disable the check for this token by "
        "passing `disallowed_special=(enc.special_tokens_set - {'<|endoftext|>'})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )


def test_check_disallowed_reports_leftmost_then_longest() -> None:
    check_disallowed("nothing here", {"<|x|>"})
    with pytest.raises(DisallowedSpecialError) as info:
        check_disallowed("b <|a|><|b|> <|c|>", {A, AB, "<|c|>"})
    assert str(info.value) == disallowed_message(AB)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("special", ["<|endoftext|>", "it's", 'say "hi"', "both ' and \"", "ünï"])
def test_message_equals_tiktoken(special: str) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    enc = tiktoken.Encoding(
        "toy", pat_str=r"\S+|\s+", mergeable_ranks=byte_ranks(), special_tokens={special: 256}
    )
    text = f"before {special} after"
    with pytest.raises(ValueError) as theirs:
        enc.encode(text)
    with pytest.raises(DisallowedSpecialError) as ours:
        check_disallowed(text, {special})
    assert str(ours.value) == str(theirs.value)
