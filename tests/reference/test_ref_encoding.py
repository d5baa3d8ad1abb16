"""ReferenceEncoding equals tiktoken on real text in several scripts, for r50k, cl100k and o200k."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpekit.errors import (
    DisallowedSpecialError,
    InputTypeError,
    InvalidTokenError,
    PatternError,
    VocabError,
)
from bpekit.reference import ReferenceEncoding
from bpekit.reference.train import byte_ranks

# (file under corpora/, first line): scripts chosen to exercise the patterns' letter, mark, digit,
# punctuation and whitespace classes; 16 lines from each.
SAMPLES = [
    ("tinyshakespeare.txt", 1000),
    ("taylorswift.txt", 40),
    ("tatoeba/tatoeba.cmn-eng.cmn", 100),
    ("tatoeba/tatoeba.jpn-eng.jpn", 100),
    ("tatoeba/tatoeba.kor-eng.kor", 100),
    ("tatoeba/tatoeba.ara-eng.ara", 100),
    ("tatoeba/tatoeba.hin-eng.hin", 100),
    ("tatoeba/tatoeba.tha-eng.tha", 100),
    ("tatoeba/tatoeba.rus-eng.rus", 100),
    ("tatoeba/tatoeba.ell-eng.ell", 100),
    ("tatoeba/tatoeba.vie-eng.vie", 100),
    ("tatoeba/tatoeba.tur-eng.tur", 100),
    ("bible/Gujarati-NT.txt", 500),
    ("bible/Syriac-NT.txt", 500),
    ("bible/Coptic-NT.txt", 500),
    ("bible/Cherokee-NT.txt", 500),
    ("bible/Tachelhit-NT.txt", 500),
]
LINES = 16


def sample_lines(data_dir, path: str, first: int) -> list[str]:
    file = data_dir / "corpora" / path
    if not file.is_file():
        pytest.skip(f"corpus file {file} not found")
    with open(file, encoding="utf-8", newline="") as f:
        lines = f.read().splitlines(keepends=True)
    return lines[first : first + LINES]


@pytest.mark.parametrize(("path", "first"), SAMPLES, ids=[p.split("/")[-1] for p, _ in SAMPLES])
def test_corpus_lines_equal_tiktoken(encoding_pair, data_dir, path: str, first: int) -> None:
    theirs, ours = encoding_pair
    lines = sample_lines(data_dir, path, first)
    for line in lines:
        assert ours.encode_ordinary(line) == theirs.encode_ordinary(line), line
    block = "".join(lines)  # newlines, and the end-of-text anchors, inside a longer text
    tokens = ours.encode(block)
    assert tokens == theirs.encode(block)
    assert ours.decode(tokens) == block


@pytest.mark.parametrize(
    "text",
    ["\ud83d", "a\ud83d\ude00b", "\udc00x\ud800", "ok"],  # lone and split surrogates
)
def test_surrogates_equal_tiktoken(encoding_pair, text: str) -> None:
    theirs, ours = encoding_pair
    assert ours.encode(text) == theirs.encode(text)
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_reference_values(encoding_pairs) -> None:
    # formats.md section 1.5
    assert encoding_pairs("r50k_base")[1].encode("hello world") == [31373, 995]
    cl100k = encoding_pairs("cl100k_base")[1]
    assert cl100k.encode("hello world") == [15339, 1917]
    assert cl100k.encode("hello <|endoftext|>", allowed_special="all") == [15339, 220, 100257]
    assert cl100k.encode("👍") == [9468, 239, 235]
    assert cl100k.encode(" \x850") == [220, 126, 227, 15]
    assert cl100k.encode("<|endoftext|>", disallowed_special=()) == [27, 91, 8862, 728, 428, 91, 29]
    assert encoding_pairs("o200k_base")[1].encode("hello world") == [24912, 2375]


TEXT = "a <|endoftext|> b <|fim_prefix|>c<|endofprompt|> hello"
SPECIAL_CASES = [
    {"allowed_special": "all"},
    {"disallowed_special": ()},
    {"allowed_special": {"<|fim_prefix|>"}, "disallowed_special": ()},
    {"allowed_special": {"<|endoftext|>", "<|not a special|>"}, "disallowed_special": ()},
    {"allowed_special": "all", "disallowed_special": {"hello"}},
    {},
    {"allowed_special": {"<|fim_prefix|>"}},
    {"disallowed_special": {"<|endofprompt|>"}},
    {"disallowed_special": {"nowhere"}},
]


@pytest.mark.parametrize("kwargs", SPECIAL_CASES)
def test_special_tokens_equal_tiktoken(cl100k_pair, kwargs: dict) -> None:
    theirs, ours = cl100k_pair
    try:
        expected = theirs.encode(TEXT, **kwargs)
    except ValueError as exc:
        with pytest.raises(DisallowedSpecialError) as info:
            ours.encode(TEXT, **kwargs)
        assert str(info.value) == str(exc)
        return
    assert ours.encode(TEXT, **kwargs) == expected


def test_decode(cl100k_pair) -> None:
    theirs, ours = cl100k_pair
    tokens = [15339, 100257, 9468, 239, 100276]
    assert ours.decode_bytes(tokens) == theirs.decode_bytes(tokens)
    assert ours.decode(tokens[:3]) == theirs.decode(tokens[:3])  # a partial emoji: U+FFFD
    assert ours.decode(tokens[:3], errors="ignore") == "hello<|endoftext|>"
    with pytest.raises(InvalidTokenError, match="Invalid token for decoding: 100256") as info:
        ours.decode([100256])  # a hole in cl100k
    assert isinstance(info.value, KeyError)
    assert ours.n_vocab == theirs.n_vocab and ours.max_token_value == theirs.max_token_value


@given(st.text(max_size=40))
def test_random_text_equals_tiktoken(encoding_pairs, text: str) -> None:
    theirs, ours = encoding_pairs("cl100k_base")
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_bad_construction_and_arguments() -> None:
    with pytest.raises(PatternError):
        ReferenceEncoding("bad", "(", byte_ranks())
    ok = ReferenceEncoding("ok", r"\S+", byte_ranks())
    with pytest.raises(InputTypeError, match="allowed_special"):  # a TypeError, as tiktoken's
        ok.encode("x", allowed_special="none")
    with pytest.raises(InputTypeError, match="disallowed_special"):
        ok.encode("x", disallowed_special="none")
    with pytest.raises(InputTypeError, match="bytes"):
        ok.encode_ordinary(b"x")
    dup = byte_ranks() | {b"ab": 97}
    with pytest.raises(VocabError, match="same rank"):
        ReferenceEncoding("dup", r"\S+", dup)
