"""One mistake in special tokens raises one error class at every entry point that takes them.

A wrong type (not a dict or list, a key that is not a str, an id that is not an int, one string
for a list, a set whose order would give the ids) is an InputTypeError; a wrong value (an empty
token, a lone surrogate, an id outside 0..2**32, a repeated token) is a VocabError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from datapaths import DATA

from bpekit import Encoding, Tokenizer
from bpekit.errors import InputTypeError, VocabError
from bpekit.minbpe import RegexTokenizer
from bpekit.train import train

BYTES = {bytes([i]): i for i in range(256)}


def _encoding(specials: Any) -> object:
    return Encoding("x", pat_str=r"\S+|\s+", mergeable_ranks=BYTES, special_tokens=specials)


def _tokenizer(specials: Any) -> object:
    return Tokenizer(pattern="gpt2", merges=[], special_tokens=specials)


def _rank_file(specials: Any) -> object:
    ranks = DATA / "ranks" / "r50k_base.tiktoken"
    if not ranks.exists():
        pytest.skip(f"{ranks} not found (set BPEKIT_TEST_DATA)")
    return Tokenizer.from_file(ranks, pattern="gpt2", special_tokens=specials)


def _minbpe(specials: Any) -> object:
    tok = RegexTokenizer()
    tok.register_special_tokens(specials)
    return tok


def _train(specials: Any) -> object:
    return train(iter(["ab ab ab"]), vocab_size=300, special_tokens=specials, show_progress=False)


MAPS: list[Callable[[Any], object]] = [_encoding, _tokenizer, _rank_file, _minbpe]
LISTS: list[Callable[[Any], object]] = [_tokenizer, _train]

MAP_MISTAKES = [
    (None, InputTypeError),
    ([("<|x|>", 60_000)], InputTypeError),
    ({b"<|x|>": 60_000}, InputTypeError),  # (str(b"..") would have made a token "b'<|x|>'")
    ({"<|x|>": 60_000.0}, InputTypeError),
    ({"<|x|>": "60000"}, InputTypeError),
    ({"<|x|>": True}, InputTypeError),
    ({"": 60_000}, VocabError),
    ({"<|\ud800|>": 60_000}, VocabError),
    ({"<|x|>": -1}, VocabError),
    ({"<|x|>": 2**32}, VocabError),
]
LIST_MISTAKES = [
    ("<|x|>", InputTypeError),
    (b"<|x|>", InputTypeError),
    ({"<|x|>", "<|y|>"}, InputTypeError),
    (5, InputTypeError),
    ([b"<|x|>"], InputTypeError),
    ([None], InputTypeError),
    ([""], VocabError),
    (["<|\ud800|>"], VocabError),
    (["<|x|>", "<|x|>"], VocabError),
]


@pytest.mark.parametrize(
    ("entry", "specials", "error"),
    [(entry, specials, error) for entry in MAPS for specials, error in MAP_MISTAKES
     if not (entry is _rank_file and specials is None)],  # (None there: the file's own specials)
    ids=lambda v: v.__name__ if callable(v) else repr(v)[:30],
)
def test_a_mistake_in_a_map_raises_one_class_everywhere(entry, specials, error):
    with pytest.raises(error, match="special"):
        entry(specials)


@pytest.mark.parametrize(
    ("entry", "specials", "error"),
    [(entry, specials, error) for entry in LISTS for specials, error in LIST_MISTAKES],
    ids=lambda v: v.__name__ if callable(v) else repr(v)[:30],
)
def test_a_mistake_in_a_list_raises_one_class_everywhere(entry, specials, error):
    with pytest.raises(error, match="special"):
        entry(specials)


@pytest.mark.parametrize("entry", MAPS, ids=lambda f: f.__name__)
def test_a_good_map_is_taken(entry):
    got = entry({"<|x|>": 60_000})
    assert got.special_tokens == {"<|x|>": 60_000} if not isinstance(got, Encoding) else got.special_tokens_set == {"<|x|>"}


@pytest.mark.parametrize("entry", LISTS, ids=lambda f: f.__name__)
def test_a_good_list_is_taken_in_order(entry):
    got = entry(iter(["<|b|>", "<|a|>"]))  # any iterable but a set or a mapping
    ids = got.special_tokens
    assert list(ids) == ["<|b|>", "<|a|>"] and ids["<|a|>"] == ids["<|b|>"] + 1
