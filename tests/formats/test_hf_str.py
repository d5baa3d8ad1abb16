"""``Tokenizer.from_str`` / ``from_buffer`` / ``to_str``, as Hugging Face's: the text of a
``tokenizer.json`` goes both ways between bpekit and ``tokenizers`` and encodes the same."""

from __future__ import annotations

import json

import pytest

from bpekit import Tokenizer, get_encoding
from bpekit.errors import FormatError, InputTypeError

TEXTS = ["Hello world!", "  indented\tcode()\n", "naïve café 東京 🙂", "<|endoftext|> after", ""]


def test_a_tokenizer_json_both_ways(neox_path):
    tokenizers = pytest.importorskip("tokenizers")
    path = neox_path
    hf = tokenizers.Tokenizer.from_file(str(path))
    ours = Tokenizer.from_str(path.read_text(encoding="utf-8"))
    assert Tokenizer.from_buffer(path.read_bytes()).to_str() == ours.to_str()
    back = tokenizers.Tokenizer.from_str(ours.to_str())
    again = Tokenizer.from_str(hf.to_str())
    for text in TEXTS:
        want = hf.encode(text).ids
        assert ours.encode(text) == want and back.encode(text).ids == want and again.encode(text) == want
    assert json.loads(ours.to_str()) == json.loads(ours.to_str(pretty=True)) == json.loads(path.read_text("utf-8"))
    assert "\n" not in ours.to_str() and ours.to_str(pretty=True).startswith('{\n  "version"')


def test_a_rank_model_to_tokenizers():
    tokenizers = pytest.importorskip("tokenizers")
    ours = Tokenizer.from_encoding(get_encoding("cl100k_base"))
    hf = tokenizers.Tokenizer.from_str(ours.to_str())
    for text in TEXTS:
        assert hf.encode(text).ids == ours.encode(text, allowed_special="all"), text


def test_bad_input():
    with pytest.raises(InputTypeError, match="from_buffer"):
        Tokenizer.from_str(b"{}")  # type: ignore[arg-type]
    with pytest.raises(InputTypeError, match="bytes"):
        Tokenizer.from_buffer("{}")  # type: ignore[arg-type]
    with pytest.raises(FormatError, match="not valid JSON"):
        Tokenizer.from_str("{")
    with pytest.raises(FormatError, match="lone surrogate"):
        Tokenizer.from_str('{"\ud800": 1}')
    with pytest.raises(FormatError):
        Tokenizer.from_str("[]")
    with pytest.raises(InputTypeError, match="pretty"):
        Tokenizer.from_encoding(get_encoding("r50k_base")).to_str("yes")  # type: ignore[arg-type]
