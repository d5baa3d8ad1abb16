"""``Tokenizer.add_tokens`` / ``add_special_tokens`` give the ids, the encodings and the decodings
that Hugging Face's methods of the same names give on the same tokenizer.json; a rank model takes
new special tokens as tiktoken's, after its highest id."""

from __future__ import annotations

import pytest

from bpekit import Tokenizer, get_encoding
from bpekit.errors import DisallowedSpecialError, InputTypeError, UsageError

TEXTS = ["a<new1>b <sp> hello world", "the  <new1><sp>the", "<|endoftext|> hello", "HELLO <NEW1>", ""]


def test_added_tokens_as_tokenizers_adds_them(neox_path):
    tokenizers = pytest.importorskip("tokenizers")
    path = neox_path
    hf, ours = tokenizers.Tokenizer.from_file(str(path)), Tokenizer.from_file(path)
    for step in (
        lambda t: t.add_tokens(["<new1>", "hello", "<new1>", "Ġthe"]),  # a duplicate; two the model has
        lambda t: t.add_special_tokens(["<sp>", "<|endoftext|>"]),  # one already there
        lambda t: t.add_tokens([tokenizers.AddedToken("<x>", lstrip=True, rstrip=True), "world"]),
        lambda t: t.add_tokens([]),
    ):
        assert step(ours) == step(hf)
        assert ours.get_vocab() == hf.get_vocab() and ours.get_vocab_size() == hf.get_vocab_size()
        for text in TEXTS + ["spaces <x> around", "a<x>b"]:
            ids = hf.encode(text).ids
            assert ours.encode(text) == ids, text
            assert ours.decode(ids) == hf.decode(ids, skip_special_tokens=False)
            assert ours.decode(ids, skip_special_tokens=True) == hf.decode(ids, skip_special_tokens=True)
    assert ours.token_to_id("<new1>") == hf.token_to_id("<new1>") == 50277


def test_a_rank_model_takes_special_tokens_after_its_highest_id(tmp_path):
    tok = Tokenizer.from_encoding(get_encoding("cl100k_base"))
    assert tok.add_special_tokens(["<|im_start|>", "<|im_end|>", "<|endoftext|>"]) == 2
    assert tok.special_tokens["<|im_start|>"] == 100277 and tok.special_tokens["<|im_end|>"] == 100278
    text = "<|im_start|>user hi<|im_end|>"
    assert tok.encode(text, allowed_special="all") == [100277, 882, 15960, 100278]
    with pytest.raises(DisallowedSpecialError):
        tok.encode(text)
    assert get_encoding("cl100k_base").n_vocab == 100277  # the shared encoding is not changed
    tok.save(tmp_path / "t.tiktoken", "tiktoken")
    again = Tokenizer.from_file(tmp_path / "t.tiktoken")
    assert again.encode(text, allowed_special="all") == [100277, 882, 15960, 100278]
    with pytest.raises(UsageError, match="add_special_tokens"):
        tok.add_tokens(["plain"])
    assert tok.add_special_tokens(["", "<|im_end|>"]) == 0


def test_bad_tokens_are_refused(neox_path):
    tok = Tokenizer.from_file(neox_path)
    for bad in ("<one>", None, [5], [b"<x>"]):
        with pytest.raises(InputTypeError):
            tok.add_tokens(bad)  # type: ignore[arg-type]
    assert tok.add_special_tokens([""]) == 0  # nothing to match, as Hugging Face
