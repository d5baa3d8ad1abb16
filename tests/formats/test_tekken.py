"""Mistral's Tekken pre-tokenizer (``bpekit.patterns.TEKKEN``, llama.cpp's ``tekken``) runs on the
Rust core's hand-written splitter and gives Hugging Face ``tokenizers``' ids: Llama 3's GGUF
vocabulary with the ``tekken`` pre-tokenizer name, against ``tokenizers`` on the same document
(formats.md §5.8), on the corpora and random text. Every named pattern has a hand-written
splitter (the Rust core recognises the exact strings of ``bpekit.patterns``)."""

from __future__ import annotations

import dataclasses
import functools
import json
from typing import Any

import pytest
from bpekit import _core
from bpekit.formats.gguf import to_tokenizer
from bpekit.formats.gguf.to_hf import tokenizer_json
from bpekit.formats.llamacpp import TEKKEN_UPSTREAM
from bpekit.patterns import PATTERNS, TEKKEN
from bpekit.pipeline.fast import split_config
from formats.test_gguf_support import corpus_sample, vocab
from hypothesis import given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")


def test_every_named_pattern_has_a_hand_written_splitter() -> None:
    families = {name: _core.hand_written_family(p) for name, p in PATTERNS.items()}
    assert families["tekken"] == "tekken" and families["o200k"] == "o200k"
    assert all(families.values()), families
    assert TEKKEN_UPSTREAM == TEKKEN
    # one character more and the pattern runs on fancy-regex
    assert _core.hand_written_family(TEKKEN + "|x") is None
    assert _core.hand_written_family("(?m)" + TEKKEN) is None


@functools.cache
def pair() -> tuple[Any, Any]:
    """(bpekit from Llama 3's GGUF vocabulary named ``tekken``, tokenizers on its document)."""
    v = dataclasses.replace(vocab("llama-bpe"), pre="tekken")
    ref = tokenizers.Tokenizer.from_str(json.dumps(tokenizer_json(v)))
    return to_tokenizer(v), ref


def test_tekken_is_on_the_hand_written_path() -> None:
    ours, _ = pair()
    assert split_config(ours.pre_tokenizer) == (TEKKEN, False, False)


TEXTS = [
    "Les 12345 élèves d'aujourd'hui DON'T ſtop: 3.14159/2 http://x.io/a\n\n  \tok ",
    "CamelCaseWords ABCdef aBC Ǆǅǆ e\u0301 ﬁ 漢字かなカナ 한국어 ١٢٣ Ⅻ",
    "",
    " ",
    "\r\n\r\n x",
]


def test_tekken_matches_tokenizers_on_the_corpora() -> None:
    ours, ref = pair()
    lines = corpus_sample(stride=3, per_file=6) + TEXTS
    assert len(lines) > 200
    want = [e.ids for e in ref.encode_batch(lines, add_special_tokens=False)]
    assert [ours.encode(x) for x in lines] == want
    assert ours.encode_batch(lines) == want


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.text(), st.sampled_from(["'s", "'LL", "123", " \n", "Ab", "aB", "\u0301"])), max_size=8).map("".join))
def test_tekken_matches_tokenizers_on_random_text(text: str) -> None:
    ours, ref = pair()
    assert ours.encode(text) == ref.encode(text, add_special_tokens=False).ids
