"""GGUF ``gpt2`` vocabularies: bpekit gives the ids Hugging Face ``tokenizers`` gives on the
pipeline of formats.md §5.8 built from the GGUF data (the reference), on the corpora (a stride;
``BPEKIT_FULL_PARITY=1`` for every line) and on random text; BOS/EOS per the flags; special and
user-defined tokens split out before pre-tokenization; GGUF -> tokenizer -> GGUF is byte-exact."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import pytest
from bpekit.formats import gguf
from bpekit.formats.gguf import container as c
from bpekit.formats.gguf.to_hf import tokenizer_json
from formats.test_gguf_support import (
    BPE_NAMES,
    corpus_sample,
    gguf_path,
    loaded,
    tiny_bpe,
    vocab,
)
from hypothesis import given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")
FULL = os.environ.get("BPEKIT_FULL_PARITY", "") not in ("", "0")
EXTRA = [
    "ied 4 ½ months",
    "Hello <|endoftext|> world <|im_start|>user søren [PAD151700] <｜begin▁of▁sentence｜>",
    "   \n\n x  \t\r\n 12345678 Cửa Việt ſ 'S 'll",
    "",
    " ",
]


@functools.cache
def pair(name: str) -> tuple[Any, Any]:
    """(bpekit tokenizer loaded from the GGUF file, tokenizers on the §5.8 document)."""
    ours = loaded(name)
    ref = tokenizers.Tokenizer.from_str(json.dumps(tokenizer_json(vocab(name))))
    return ours, ref


@pytest.mark.parametrize("name", BPE_NAMES)
def test_gguf_bpe_vocab_matches_tokenizers_on_the_corpora(name: str) -> None:
    ours, ref = pair(name)
    lines = (
        corpus_sample(stride=1 if FULL else 12, per_file=10**9 if FULL else 8) + EXTRA
    )
    for special, sample in ((False, lines), (True, lines[-20:])):
        want = [e.ids for e in ref.encode_batch(sample, add_special_tokens=special)]
        # twice, the piece caches emptied between: the second pass answers the pieces that are one
        # token from what the first learnt (src/merge/tokens.rs)
        for _ in range(2):
            ours.pretoken_cache_bytes = ours.pretoken_cache_bytes
            got = [ours.encode(x, add_special_tokens=special) for x in sample]
            bad = [(x, g, w) for x, g, w in zip(sample, got, want, strict=True) if g != w]
            assert not bad, bad[0]


@settings(max_examples=max(10, settings().max_examples // 4))
@given(st.text(max_size=30))
def test_gguf_bpe_vocabs_match_tokenizers_on_random_text(text: str) -> None:
    for name in ("gpt-2", "deepseek-llm"):
        ours, ref = pair(name)
        assert ours.encode(text) == ref.encode(text, add_special_tokens=False).ids


def test_flags_and_test_vectors() -> None:
    # llama.cpp's first test input (formats.md §5.10); llama-bpe adds BOS (pre llama-bpe), gpt-2 adds none,
    # deepseek-llm adds BOS from its add_bos_token key.
    ids = {
        n: pair(n)[0].encode("ied 4 ½ months", add_special_tokens=True)
        for n in BPE_NAMES
    }
    assert ids["gpt-2"] == [798, 604, 25208, 1933]
    assert ids["llama-bpe"][0] == 128000 and ids["llama-bpe"][1:] == pair("llama-bpe")[
        0
    ].encode("ied 4 ½ months")
    assert ids["deepseek-llm"][0] == 100000 and ids["qwen2"][0] != 151643


def test_special_and_user_defined_tokens_are_split_out_first() -> None:
    ours, _ = pair("qwen2")
    assert ours.encode("a<|im_start|>b") == [64, 151644, 65]
    assert 151700 in ours.encode(
        "x[PAD151700]y"
    )  # USER_DEFINED filler, matched in the text
    deepseek, _ = pair("deepseek-llm")
    assert 100002 in deepseek.encode("søren")  # deepseek's user-defined 'ø' token


@pytest.mark.parametrize("name", BPE_NAMES)
def test_gguf_round_trip_is_byte_exact(name: str, tmp_path: Path) -> None:
    ours, _ = pair(name)
    gguf.save(ours, tmp_path / "x.gguf")
    assert (tmp_path / "x.gguf").read_bytes() == gguf_path(name).read_bytes()


def test_a_hand_built_vocabulary(tmp_path: Path) -> None:
    # tiny_bpe: bytes a, b, Ġ; merges a+b, Ġ+ab; "ab ab" -> "ab", "Ġab" -> ids [3, 4]
    v = tiny_bpe()
    path = tmp_path / "tiny.gguf"
    path.write_bytes(c.serialize(v.to_file()))
    tok = gguf.load(path)
    assert tok.encode("ab ab") == [3, 4]
    assert tok.encode("ab<|eot|>") == [3, 5]
    assert tok.decode([3, 4, 5]) == "ab ab<|eot|>"
    assert tok.encode("ab", add_special_tokens=True) == [
        3
    ]  # gpt-2 pre: no BOS by default
    v.flags = {"add_bos_token": True, "add_eos_token": True}
    path.write_bytes(c.serialize(v.to_file()))
    assert gguf.load(path).encode("ab", add_special_tokens=True) == [5, 3, 5]


@pytest.mark.parametrize(
    ("merges", "match"),
    [
        ([("a", "b"), ("a", "b")], "repeats merge"),  # a duplicate pair
        (
            [("a", "b"), ("ab", "c")],
            "not in the vocabulary",
        ),  # a merge using a token that does not exist
        ([("Ġab", "ab")], "not in the vocabulary"),  # its result is not a token
    ],
)
def test_bad_merge_lists_raise_vocab_errors(merges: list, match: str) -> None:
    from bpekit.errors import VocabError

    v = tiny_bpe()
    v.merges = merges
    with pytest.raises(VocabError, match=match):
        gguf.to_tokenizer(gguf.GGUFVocab.from_file(c.parse(c.serialize(v.to_file()))))
