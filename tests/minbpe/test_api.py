"""The minbpe API around training: special tokens, allowed_special, round trips, typed errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpekit.errors import (
    DisallowedSpecialError,
    EncodeError,
    InputTypeError,
    InvalidTokenError,
    PatternError,
    VocabError,
)
from bpekit.minbpe import BasicTokenizer, RegexTokenizer

TEXT = "the cat sat on the mat; the cat ate the rat. 123 4567 çà et là, 👋👋!"


@pytest.fixture(scope="module")
def trained() -> RegexTokenizer:
    tok = RegexTokenizer()
    tok.train(TEXT, 280)
    return tok


@given(st.text(st.characters(blacklist_categories=["Cs"]), max_size=60))
def test_round_trip(trained: RegexTokenizer, text: str) -> None:
    assert trained.decode(trained.encode(text, allowed_special="none")) == text
    basic = BasicTokenizer()
    basic.merges, basic.vocab = trained.merges, trained.vocab
    assert basic.decode(basic.encode(text)) == text


def test_decode_invalid_utf8_and_unknown(trained: RegexTokenizer) -> None:
    assert trained.decode([0xC3]) == "\ufffd"
    assert trained.decode_bytes([0xC3, 0xA7]) == "ç".encode()
    with pytest.raises(InvalidTokenError, match="invalid token id: 280"):
        trained.decode([280])
    with pytest.raises(KeyError):  # InvalidTokenError is also a KeyError
        trained.decode([-1])


def test_decode_id_types(trained: RegexTokenizer) -> None:
    np = pytest.importorskip("numpy")
    assert trained.decode([True, np.int64(104), np.uint16(105)]) == "\x01hi"  # ints, as in Encoding
    assert trained.decode(np.array([104, 105])) == "hi"
    assert trained.decode(i for i in [104, 105]) == "hi"
    for bad, name in [(b"hi", "bytes"), ("hi", "str"), (None, "NoneType"), (104, "int"), (np.array(5), "ndarray")]:
        with pytest.raises(InputTypeError, match=f"ids must be a list of int token ids, got {name}"):
            trained.decode(bad)
    for bad, name in [([104.0], "float"), ([[1]], "list"), (np.array([[104]]), "ndarray")]:
        with pytest.raises(InputTypeError, match=f"token ids must be integers, got {name}"):
            trained.decode(bad)
    with pytest.raises(InvalidTokenError, match="invalid token id: 1000"):
        trained.decode([np.int64(1000)])


def test_first_registered_special_wins() -> None:
    tok = RegexTokenizer()
    tok.register_special_tokens({"<|end|>x": 1001, "<|end|>": 1000})
    assert tok.encode("<|end|>x <|end|>", allowed_special="all") == [1001, 32, 1000]
    tok.register_special_tokens({"<|end|>": 1000, "<|end|>x": 1001})
    assert tok.encode("<|end|>x <|end|>", allowed_special="all") == [1000, 120, 32, 1000]
    assert tok.inverse_special_tokens == {1000: "<|end|>", 1001: "<|end|>x"}


def test_allowed_special_forms() -> None:
    tok = RegexTokenizer()
    tok.register_special_tokens({"<|a|>": 500, "<|b|>": 501})
    text = "<|a|><|b|>"
    assert tok.encode(text, allowed_special=frozenset({"<|b|>"})) == tok.encode(text, allowed_special={"<|b|>"})
    assert tok.encode(text, allowed_special={"<|a|>": 0}.keys()) == [500] + tok.encode("<|b|>", "none")
    assert tok.encode(text, allowed_special={"<|zzz|>"}) == tok.encode(text, allowed_special="none")
    with pytest.raises(DisallowedSpecialError, match=r"'<\|b\|>'"):  # the first one in the text
        tok.encode("x<|b|>y<|a|>")
    for bad in ("ALL", ["<|a|>"], ("<|a|>",), None, 1):
        with pytest.raises(EncodeError, match="not understood"):
            tok.encode(text, allowed_special=bad)


def test_register_special_tokens_checks() -> None:
    tok = RegexTokenizer()
    tok.train("ab ab ab", 257)
    for bad, message in [
        ({"": 400}, "empty string"),
        ({"<|a|>": -1}, "outside 0..2"),
        ({"<|a|>": 2**32}, "outside 0..2"),
        ({"<|a|>": 256}, "already a byte or merged token"),
        ({"<|a|>": 400, "<|b|>": 400}, "share the id 400"),
    ]:
        with pytest.raises(VocabError, match=message):
            tok.register_special_tokens(bad)
    for bad, message in [
        ({"<|a|>": "400"}, "must be an int"),
        ({"<|a|>": True}, "must be an int"),
        ({b"<|a|>": 400}, "must be a str"),
        *[(kind, r"special tokens must be a dict of str -> int") for kind in (None, "<|a|>", ["<|a|>"], {"<|a|>"}, [("<|a|>", 400)])],
    ]:
        with pytest.raises(InputTypeError, match=message):
            tok.register_special_tokens(bad)  # type: ignore[arg-type]
    with pytest.raises(VocabError, match="lone surrogate"):  # decode could not give its text
        tok.register_special_tokens({"\ud800": 300})
    assert tok.special_tokens == {}


def test_training_may_not_overrun_special_ids() -> None:
    tok = RegexTokenizer()
    tok.register_special_tokens({"<|eot|>": 257})
    with pytest.raises(VocabError, match="already a byte or merged token"):
        tok.train("abc abc abc", 259)
    assert tok.merges == {}
    tok.train("abc abc abc", 257)
    assert tok.encode("abc<|eot|>", allowed_special="all") == [256, 99, 257]


@pytest.mark.parametrize(
    ("vocab_size", "error"),
    [(255, VocabError), (-1, VocabError), (300.0, InputTypeError), ("300", InputTypeError), (True, InputTypeError)],
)
def test_bad_vocab_size(vocab_size: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="vocab_size must be an integer >= 256"):
        RegexTokenizer().train("abc", vocab_size)  # type: ignore[arg-type]


@pytest.mark.parametrize("vocab_size", [2**32 + 1, 2**70])
def test_vocab_size_too_large(vocab_size: int) -> None:
    with pytest.raises(VocabError, match=r"vocab_size must be an integer <= 2\*\*32"):
        BasicTokenizer().train("aaab", vocab_size)


def test_bad_text_and_pattern() -> None:
    with pytest.raises(InputTypeError, match="text must be a str"):
        BasicTokenizer().train(b"abc", 257)  # type: ignore[arg-type]
    with pytest.raises(EncodeError, match="lone surrogate at position 1"):
        RegexTokenizer().encode("a\ud800b")
    with pytest.raises(EncodeError, match="lone surrogate"):
        BasicTokenizer().encode("\udfff")
    with pytest.raises(PatternError, match="invalid split pattern"):
        RegexTokenizer("(")
    with pytest.raises(InputTypeError, match="pattern must be a str, got list"):
        RegexTokenizer(["a"])  # type: ignore[arg-type]
    with pytest.raises(PatternError, match="split pattern is empty"):
        RegexTokenizer("")


def test_capture_groups_do_not_change_chunks() -> None:
    """minbpe's findall would return the group ('b'), not the chunk ('ab'); chunks are whole matches."""
    tok = RegexTokenizer(r"a(b)|\S")
    tok.train("ab ab ab", 257)
    assert tok.merges == {(97, 98): 256}
    assert tok.encode("abab") == [256, 256]


def test_empty_and_tiny_inputs(trained: RegexTokenizer) -> None:
    assert trained.encode("") == [] and trained.decode([]) == ""
    assert trained.encode("x") == [120]
    assert BasicTokenizer().encode("é") == [0xC3, 0xA9]
