"""Pre-tokenizers split by the Rust core's hand-written splitters since session 20 give Hugging
Face ``tokenizers``' ids: Mistral's Tekken (``bpekit.patterns.TEKKEN``, llama.cpp's ``tekken``),
Moonshot's Kimi K2 (``bpekit.patterns.KIMI_K2``, llama.cpp's ``kimi-k2``, which bpekit refused
before), Qwen 3.5 (``bpekit.patterns.QWEN35``), DeepSeek-V3's three ``Split(Isolated)`` stages (llama.cpp's ``deepseek-v3`` and the names
sharing its list) and ``Sequence[Digits, ByteLevel(use_regex=true)]`` (SmolLM, StarCoder 2,
Command R; it ran in Python), through Llama 3's GGUF vocabulary under those pre-tokenizer names, against
``tokenizers`` on the same document (formats.md §5.8), on the corpora and random text. Every
named pattern has a hand-written splitter (the Rust core recognises the exact strings of
``bpekit.patterns``)."""

from __future__ import annotations

import dataclasses
import functools
import json
from typing import Any

import bpekit
import pytest
from bpekit import _core
from bpekit.formats.gguf import to_tokenizer
from bpekit.formats.gguf.to_hf import tokenizer_json
from bpekit.formats import llamacpp
from bpekit.formats.llamacpp import TEKKEN_UPSTREAM
from bpekit.patterns import KIMI_K2, PATTERNS, QWEN35, TEKKEN
from bpekit.pipeline.byte_level import GPT2_PATTERN
from bpekit.pipeline.fast import DIGITS_STAGE, isolated_config, split_config
from datapaths import DATA
from formats.test_gguf_support import corpus_sample, vocab
from hypothesis import given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")


def test_every_named_pattern_has_a_hand_written_splitter() -> None:
    families = {name: _core.hand_written_family(p) for name, p in PATTERNS.items()}
    assert families["tekken"] == "tekken" and families["o200k"] == "o200k" and families["kimi_k2"] == "kimik2"
    assert families["qwen35"] == "qwen35"
    assert all(families.values()), families
    assert TEKKEN_UPSTREAM == TEKKEN
    # one character more and the pattern runs on fancy-regex
    assert _core.hand_written_family(TEKKEN + "|x") is None
    assert _core.hand_written_family("(?m)" + TEKKEN) is None


NAMES = ["tekken", "kimi-k2", "qwen35", "deepseek-v3", "joyai-llm", "smollm", "starcoder", "bailingmoe", "seed-coder"]


@functools.cache
def pair(name: str) -> tuple[Any, Any]:
    """(bpekit from Llama 3's GGUF vocabulary named ``name``, tokenizers on its document)."""
    v = dataclasses.replace(vocab("llama-bpe"), pre=name)
    ref = tokenizers.Tokenizer.from_str(json.dumps(tokenizer_json(v)))
    return to_tokenizer(v), ref


def test_the_families_are_on_the_hand_written_path() -> None:
    assert split_config(pair("tekken")[0].pre_tokenizer) == (TEKKEN, False, False)
    assert split_config(pair("kimi-k2")[0].pre_tokenizer) == (KIMI_K2, False, False)
    assert split_config(pair("qwen35")[0].pre_tokenizer) == (QWEN35, False, False)
    assert llamacpp.upstream_regexes(llamacpp.PRE_TOKENIZERS["qwen35"]) == (QWEN35,)
    for name in NAMES[3:5]:
        patterns, _ = isolated_config(pair(name)[0].pre_tokenizer)
        assert len(patterns) == 3 and _core.IsolatedSplit(patterns).hand_written, name
    # the first two stages alone run on the regex engine
    assert not _core.IsolatedSplit(patterns[:2]).hand_written
    # Sequence[Digits, ByteLevel(use_regex=true)]: HF's Digits, then the GPT-2 regex
    for name in NAMES[5:7]:
        assert isolated_config(pair(name)[0].pre_tokenizer) == ([DIGITS_STAGE, GPT2_PATTERN], False), name
    assert _core.IsolatedSplit([DIGITS_STAGE, GPT2_PATTERN]).hand_written
    assert not _core.IsolatedSplit(["\\p{N}", "\\p{L}+"]).hand_written
    # Ling's pattern splits as Qwen2's, Seed-Coder's is a family of its own: one stage each,
    # split by hand
    for name in NAMES[7:]:
        patterns, _ = isolated_config(pair(name)[0].pre_tokenizer)
        assert len(patterns) == 1 and _core.IsolatedSplit(patterns).hand_written, name


TEXTS = [
    "Les 12345 élèves d'aujourd'hui DON'T ſtop: 3.14159/2 http://x.io/a\n\n  \tok ",
    "CamelCaseWords ABCdef aBC Ǆǅǆ e\u0301 ﬁ 漢字かなカナ 한국어 ١٢٣ Ⅻ",
    "",
    " ",
    "\r\n\r\n x",
    "価格は1234567円です。ネイティブ・アメリカン゠カナ ゛x\u3099 2024年12月",
    "\x00\x01ab\u200b\u200bc 1a2b3c .Hello,World!! 'é \t.",
    "x=12345;y=\U00011de0\U00011de1 42²³ ٣٤ Ⅻ 3.14",
]


@pytest.mark.parametrize("name", NAMES)
def test_matches_tokenizers_on_the_corpora(name: str) -> None:
    ours, ref = pair(name)
    lines = corpus_sample(stride=3, per_file=6) + TEXTS
    assert len(lines) > 200
    want = [e.ids for e in ref.encode_batch(lines, add_special_tokens=False)]
    assert [ours.encode(x) for x in lines] == want
    assert ours.encode_batch(lines) == want


PARTS = ["'s", "'LL", "123", " \n", "Ab", "aB", "\u0301", "漢字", "カナ・", "\x00", ".x", " !", "\t", "〇", "中a", "/\n", " हिन्दी", "!\u0301"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.text(), st.sampled_from(PARTS)), max_size=8).map("".join))
def test_matches_tokenizers_on_random_text(text: str) -> None:
    for name in NAMES[:4] + NAMES[5:6]:
        ours, ref = pair(name)
        assert ours.encode(text) == ref.encode(text, add_special_tokens=False).ids, name


@functools.cache
def o200k_ranks() -> dict[bytes, int]:
    tiktoken_load = pytest.importorskip("tiktoken.load")
    path = DATA / "ranks" / "o200k_base.tiktoken"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return tiktoken_load.load_tiktoken_bpe(str(path))


@pytest.mark.parametrize("pattern", [TEKKEN, KIMI_K2])
def test_an_encoding_with_the_pattern_gives_tiktokens_ids(pattern: str) -> None:
    """The tiktoken-style path (Kimi K2 ships a ``tiktoken.model`` and its pattern): o200k's ranks
    split by the pattern, against tiktoken (whose fancy-regex reads ``&&`` as bpekit's does)."""
    tiktoken = pytest.importorskip("tiktoken")
    ranks = o200k_ranks()
    theirs = tiktoken.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    ours = bpekit.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    lines = corpus_sample(stride=2, per_file=6) + TEXTS
    assert [ours.encode_ordinary(x) for x in lines] == theirs.encode_ordinary_batch(lines)
    assert ours.encode_ordinary_batch(lines) == theirs.encode_ordinary_batch(lines)
