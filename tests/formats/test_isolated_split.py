"""Sequences of ``Split(Isolated)`` stages run in Rust (``pipeline.fast.isolated_config``,
``_core.IsolatedSplit``, the ``isolated`` stages of ``_core.PairBPE``): every llama.cpp
pre-tokenizer family they accept splits exactly as Hugging Face ``tokenizers`` does (Oniguruma,
the reference for these pipelines), on the corpora and on random text over all of Unicode, and a
GGUF pipeline that takes the path encodes as its Python stages do."""

from __future__ import annotations

import functools

import pytest
from bpekit import _core
from bpekit.formats import llamacpp
from bpekit.pipeline.base import Pattern
from bpekit.pipeline.byte_level import to_chars
from bpekit.pipeline.fast import SPELLED_OUT, core_splitter, isolated_config
from bpekit.pipeline.pre_tokenizers import ByteLevel, Sequence, Split
from bpekit.tokenizer import Tokenizer
from datapaths import DATA
from formats.test_sentencepiece_support import corpus_lines
from hypothesis import given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")

FAMILIES = sorted(
    name
    for name, pre in llamacpp.PRE_TOKENIZERS.items()
    if pre.byte_encode and not any(rx in llamacpp.HAND_WRITTEN for rx in pre.regexes)
)
SPELLINGS = ("adapted", "upstream")


def _regexes(name: str, spelling: str) -> tuple[str, ...]:
    pre = llamacpp.PRE_TOKENIZERS[name]
    return pre.regexes if spelling == "adapted" else llamacpp.upstream_regexes(pre)


def _sequence(regexes: tuple[str, ...], prefix: bool = False) -> Sequence:
    return Sequence([*(Split(Pattern(rx, True), "Isolated") for rx in regexes), ByteLevel(prefix, False, False)])


@functools.cache
def _pair(name: str, spelling: str) -> tuple[object, object] | None:
    """The Rust splitter and the ``tokenizers`` one for a family, or ``None`` if not accepted."""
    regexes = _regexes(name, spelling)
    config = isolated_config(_sequence(regexes))
    if config is None:
        return None
    hf = tokenizers.pre_tokenizers.Sequence(
        [tokenizers.pre_tokenizers.Split(tokenizers.Regex(rx), "isolated") for rx in regexes]
    )
    return _core.IsolatedSplit(config[0]), hf


def _assert_same(name: str, spelling: str, texts: list[str]) -> None:
    pair = _pair(name, spelling)
    if pair is None:
        return
    ours, hf = pair
    for text in texts:
        assert ours.split(text) == [p for p, _ in hf.pre_tokenize_str(text)], (name, spelling, text)  # type: ignore[attr-defined]


@functools.cache
def _corpus_sample() -> list[str]:
    lines = [line for file_lines in corpus_lines().values() for line in file_lines[::25]]
    return lines + ["\n".join(lines[i : i + 8]) for i in range(0, len(lines), 97)]


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("name", FAMILIES)
def test_families_split_as_tokenizers_on_the_corpora(name: str, spelling: str) -> None:
    _assert_same(name, spelling, _corpus_sample())


_ODD = st.sampled_from(
    ["'s", "'S", "'\u017f", "\u212a", " ", "  ", "\n", "\r\n", "\t", "\u00a0", "\u3000", "\u2028", "\x85", "\x1c",
     "\x0b", "12345", "\u0661\u0662", "\u00be", "\u2167", "a\u0301", "\u00df", "\u01c5", "\u4e2d\u6587", "\u3042",
     "\uac00", "\U0001f600", "\U00032e49", "\U0010bcd3", "!?", "...", "\uff01", "\u2019", "<|x|>"]
)  # fmt: skip
TEXT = st.lists(st.one_of(_ODD, st.text(max_size=4)), max_size=20).map("".join)


@settings(max_examples=60)
@given(text=TEXT)
def test_families_split_as_tokenizers_on_random_text(text: str) -> None:
    for name in FAMILIES:
        for spelling in SPELLINGS:
            _assert_same(name, spelling, [text])


def test_word_boundaries_stay_in_python() -> None:
    """Oniguruma's ``\\w`` holds ``²³¹¼½¾``, fancy-regex's does not: ``\\b`` differs (``6¾``
    splits otherwise), so such stages keep the Python path, but Tiny Aya's first stage, which
    goes to Rust spelled out (``SPELLED_OUT``) and is split by hand there."""
    regexes = llamacpp.PRE_TOKENIZERS["tiny_aya"].regexes
    assert "\\b" in regexes[0] and regexes[0] in SPELLED_OUT
    config = isolated_config(_sequence(regexes))
    assert config is not None and config[0][0] == SPELLED_OUT[regexes[0]]
    assert _core.IsolatedSplit(config[0]).engines == ["hand", "hand"]  # one pass with o200k (ASCII contractions)
    assert isolated_config(_sequence(("\\d+\\b", regexes[1]))) is None
    assert isolated_config(_sequence((*llamacpp.PRE_TOKENIZERS["deepseek-llm"].regexes, "(?:ab)+"))) is None
    assert isolated_config(_sequence(llamacpp.PRE_TOKENIZERS["deepseek-llm"].regexes)) is not None


@pytest.mark.parametrize("prefix", [False, True])
def test_core_splitter_gives_the_python_pieces(prefix: bool) -> None:
    """Texts whose characters both engines class alike (Unicode 14 and earlier)."""
    seq = _sequence(llamacpp.PRE_TOKENIZERS["deepseek-llm"].regexes, prefix)
    split = core_splitter(seq)
    assert split is not None
    for text in _corpus_sample()[::5] + ["  x\n\n  y  ", "12 345 6789", "\u4e2d\u6587abc \uac00"]:
        assert [to_chars(p.encode("utf-8")) for p in split(text)] == seq.pre_tokenize_str(text), text


DEEPSEEK = DATA / "gguf" / "ggml-vocab-deepseek-llm.gguf"


@pytest.mark.skipif(not DEEPSEEK.is_file(), reason="deepseek-llm GGUF vocabulary not found")
def test_deepseek_gguf_encodes_in_rust_as_in_python() -> None:
    tok = Tokenizer.from_file(DEEPSEEK)
    tok._refresh()
    assert isinstance(tok._fast, _core.PairBPE)
    texts = _corpus_sample()[::3] + ["def f(x):\n    return x  # 12345\n", "\u4e2d\u6587 and \uac00\ud55c 12"]
    fast = [tok.encode(t) for t in texts]
    fast_batch = tok.encode_batch(texts)
    tok._fast = None  # the Python stages (until the next pipeline change)
    assert fast == fast_batch == [tok.encode(t) for t in texts]


def test_tiny_aya_digit_groups_split_as_tokenizers_after_every_code_point() -> None:
    """Tiny Aya's first stage in Rust against Oniguruma, a run of digits before every code point
    (whether it ends a word decides the match) and every decimal digit in a run."""
    stage = llamacpp.PRE_TOKENIZERS["tiny_aya"].regexes[0]
    ours = _core.IsolatedSplit([SPELLED_OUT[stage]])
    hf = tokenizers.pre_tokenizers.Split(tokenizers.Regex(stage), "isolated")
    code_points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for i in range(0, len(code_points), 20_000):
        chunk = code_points[i : i + 20_000]
        text = "".join(f"1234{chr(c)} x{chr(c)}56 " for c in chunk)
        assert ours.split(text) == [p for p, _ in hf.pre_tokenize_str(text)], hex(chunk[0])


LLAMA_BPE = DATA / "gguf" / "ggml-vocab-llama-bpe.gguf"


@pytest.mark.skipif(not LLAMA_BPE.is_file(), reason="llama-bpe GGUF vocabulary not found")
def test_tiny_aya_gguf_encodes_in_rust_as_in_python() -> None:
    """Llama 3's vocabulary under ``tiny_aya``: the Rust pipeline (first stage by hand) gives the
    ids of the Python stages (Python's ``regex``, Oniguruma's word class)."""
    import dataclasses

    from bpekit.formats.gguf import to_tokenizer
    from bpekit.formats.gguf.vocab import GGUFVocab

    tok = to_tokenizer(dataclasses.replace(GGUFVocab.read(LLAMA_BPE), pre="tiny_aya"))
    tok._refresh()
    assert isinstance(tok._fast, _core.PairBPE)
    odd = ["1234567 x1234 6\u00be 12\u200d 45_6 \u0661\u0662\u0663\u0664.", "$1,000,000 in 2026"]
    texts = _corpus_sample()[::3] + odd
    fast = [tok.encode(t) for t in texts]
    tok._fast = None  # the Python stages (until the next pipeline change)
    assert fast == [tok.encode(t) for t in texts]
