"""CLIP's ``tokenizer.json`` layout in Rust: a ``Replace`` of the regex ``\\s+`` in the
normalizer program, a ``Split`` that keeps only its matches (``Removed`` with ``invert``), and a
byte-level ``BPE`` whose tokens carry the end-of-word suffix ``</w>`` (or a subword prefix), each
held to ``tokenizers`` and to bpekit's Python stages."""

from __future__ import annotations

import json

import pytest
from bpekit import _core
from bpekit.formats.hf import from_document
from bpekit.pipeline import normalizers
from bpekit.pipeline.aligned import Aligned
from bpekit.pipeline.base import Pattern
from bpekit.pipeline.byte_level import to_bytes
from bpekit.pipeline.fast import MATCHES_ONLY, isolated_config
from datapaths import DATA
from formats.test_hf_stages import EDGE, same
from hypothesis import given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, decoders, models, pre_tokenizers, processors, trainers  # noqa: E402

CLIP_SPLIT = r"""'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
MORE = ["İstanbul İİ ǅ ẞ", "A\n\n\nB \t\u3000 C\u2028D", "  leading and trailing  ", "\u00a0\u1680\u2000x\u205f",
        "it's THEY'RE we'd", "<|startoftext|>a photo of a CAT<|endoftext|>", "x</w>y </w>"]


def corpus_lines(english_only: bool = False) -> list[str]:
    """The first 300 lines of the English corpus and 40 of four Tatoeba languages (skips the
    test without the shared data)."""
    english = DATA / "corpora" / "taylorswift.txt"
    if not english.is_file():
        pytest.skip(f"{english} not found (set BPEKIT_TEST_DATA)")
    out = english.read_text(encoding="utf-8").splitlines()[:300]
    for name in () if english_only else ("rus", "jpn", "ell", "hin", "ara"):
        path = DATA / "corpora" / "tatoeba" / f"tatoeba.{name}-eng.{name}"
        assert path.is_file(), f"{path} is missing from the shared data"
        out += path.read_text(encoding="utf-8").splitlines()[:40]
    return out


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return corpus_lines()


def clip_like(lines: list[str], prefix: str = "", suffix: str = "</w>") -> tokenizers.Tokenizer:
    """A tokenizer laid out as ``transformers`` converts CLIP's, trained on ``lines``, with every
    byte's character alone and with the suffix in its vocabulary, as CLIP's has."""
    affixes = {"continuing_subword_prefix": prefix, **({"end_of_word_suffix": suffix} if suffix else {})}
    tok = tokenizers.Tokenizer(models.BPE(unk_token="<|endoftext|>", **affixes))
    tok.normalizer = tokenizers.normalizers.Sequence([tokenizers.normalizers.NFC(),
                                                      tokenizers.normalizers.Replace(Regex(r"\s+"), " "),
                                                      tokenizers.normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(CLIP_SPLIT), behavior="removed", invert=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False)])
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    affixes = {k: v for k, v in affixes.items() if v}
    trainer = trainers.BpeTrainer(vocab_size=600, show_progress=False, initial_alphabet=alphabet,
                                  special_tokens=["<|startoftext|>", "<|endoftext|>"], **affixes)
    tok.train_from_iterator(lines, trainer)
    doc = json.loads(tok.to_str())
    vocab = doc["model"]["vocab"]
    for c in sorted(alphabet):
        for token in (c, prefix + c, prefix + c + suffix, c + suffix):
            vocab.setdefault(token, len(vocab))
    hf = tokenizers.Tokenizer.from_str(json.dumps(doc))
    hf.decoder = decoders.ByteLevel()
    ids = hf.get_vocab()
    hf.post_processor = processors.RobertaProcessing(("<|endoftext|>", ids["<|endoftext|>"]),
                                                     ("<|startoftext|>", ids["<|startoftext|>"]),
                                                     add_prefix_space=False, trim_offsets=False)
    return hf


def test_clip_layout_runs_in_rust_as_tokenizers(lines):
    hf = clip_like(lines)
    ours = same(hf, [*MORE, *lines])
    same(hf, [*MORE, *lines], add_special_tokens=True)
    ours._refresh()
    assert isinstance(ours._fast, _core.PairBPE)  # the split stages and the suffixed model
    assert isinstance(ours._normalize[0], _core.Normalizer)  # NFC, the regex Replace, Lowercase
    assert "encode" in ours.__dict__  # bound in Rust, added tokens cut there
    assert ours._byte_offsets()[3]  # offsets piece by piece: the stage drops whitespace
    same_batches(hf, ours, [*EDGE, *MORE, *lines])


def same_batches(hf, ours, texts: list[str]) -> None:
    """``encode_batch_with_offsets`` (2 threads) gives ``tokenizers``' ids and offsets."""
    assert ours.encode_batch_with_offsets(texts, num_threads=2) == [
        (e.ids, e.offsets) for e in hf.encode_batch(texts, add_special_tokens=False)]


def same_on_long(hf, texts: list[str]) -> None:
    """Long texts, one call each: ``tokenizers``' ids from ``encode`` and with the offsets."""
    ours = from_document(json.loads(hf.to_str()))
    for text in texts:
        want = hf.encode(text, add_special_tokens=False)
        assert ours.encode(text) == want.ids
        assert ours.encode_with_offsets(text) == (want.ids, want.offsets)


def test_clip_layout_on_long_and_hostile_text(lines):
    import random

    hf = clip_like(lines)
    rng = random.Random(7)
    texts = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(20_000)), "a" * 20_000,
             " \n\t" * 5_000, "".join(rng.choice("0123456789") for _ in range(5_000)),
             "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(5_000)), "I" * 3_000 + "İ" * 10]
    same_on_long(hf, texts)


@pytest.mark.parametrize("prefix, suffix", [("##", "</w>"), ("##", ""), ("", "@@")])
def test_subword_prefix_and_suffix_tables(lines, prefix, suffix):
    hf = clip_like(lines, prefix, suffix)
    ours = same(hf, [*MORE, *lines[:120]])
    assert isinstance(ours._fast, _core.PairBPE)


@pytest.mark.parametrize("pattern", [CLIP_SPLIT, r"\p{L}+|\p{N}", r"[a-z]+", r"\S+"])
def test_a_stage_that_keeps_only_its_matches(lines, pattern):
    from bpekit.pipeline import pre_tokenizers as ours

    hf = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(pattern), behavior="removed", invert=True),
                                  pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    python = ours.Sequence([ours.Split(Pattern(pattern, True), "Removed", True),
                            ours.ByteLevel(add_prefix_space=False, use_regex=False)])
    stages, _ = isolated_config(python)
    assert stages[0].startswith(MATCHES_ONLY)
    split = _core.IsolatedSplit(stages)
    assert split.engines[0] != "hand"
    for text in [*EDGE, *MORE, *lines]:
        want = [to_bytes(p) for p, _ in hf.pre_tokenize_str(text)]
        assert [p.encode() for p in split.split(text)] == want, repr(text)
        assert [to_bytes(p) for p, _ in python.pre_tokenize([(text, True)])] == want, repr(text)


REGEXES = [r"\s+", r" {2,}", r"[ \t]+", r"\n+|\r+", r"\s\s+"]


@pytest.mark.parametrize("pattern", REGEXES)
def test_regex_replace_in_the_normalizer_program(pattern):
    ours = normalizers.Replace(Pattern(pattern, True), " ")
    steps = ours.core_steps()
    assert steps is not None and steps[0][0] == "replace_regex"
    program = normalizers.core_normalizer(ours)
    hf = tokenizers.normalizers.Replace(Regex(pattern), " ")
    # every code point, each between two letters so that runs stay apart
    text = "x".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    assert program.normalize(text) == hf.normalize_str(text) == ours.normalize(text)
    # the matches found in Rust give the spans the Python regex's give
    sample = text[:20_000] + "  \n\t x" * 50
    got = ours.align(Aligned.of(sample, 3))
    want = Aligned.of(sample, 3).replace_reference(list(ours._matches(sample)), " ")
    assert (got.text, got.spans) == (want.text, want.spans)


@pytest.mark.parametrize("pattern", [r"\s*", r"(?=a)b", r"\b", r"a|", r"x(?!y)", r"\d+", r"[\p{P}]+", r"\w"])
def test_regex_replace_the_core_may_read_otherwise_stays_in_python(pattern):
    """Patterns that may match the empty string, or whose classes follow the engine's Unicode
    version (the regex crate's ``\\d`` takes U+11DE0, Oniguruma's does not)."""
    ours = normalizers.Replace(Pattern(pattern, True), "-")
    assert ours.core_steps() is None
    assert normalizers.core_normalizer(ours) == ours.normalize
    hf = tokenizers.normalizers.Replace(Regex(pattern), "-")
    for text in ["", " ", "a", "ab ba", "xy xz  a b", "1 23!?"]:
        assert ours.normalize(text) == hf.normalize_str(text)
    with pytest.raises(ValueError, match="empty string"):
        _core.Normalizer([("replace_regex", r"\s*", "-")])


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30), st.lists(st.tuples(st.integers(0, 30), st.integers(0, 3)), max_size=6),
       st.text(max_size=3), st.integers(0, 3), st.integers(0, 5), st.booleans())
def test_replaced_spans_equal_the_python_replace(text, raw, content, lead, origin, listed):
    cuts, at = [], 0
    for start, width in sorted(raw):
        start = max(start, at)
        if start + width > len(text):
            break
        cuts.append((start, start + width))
        at = start + width
    lead = min(lead, len(text))
    base = Aligned(text, None, origin, lead)
    if listed:
        base = Aligned(text, list(base.spans), origin)
    got = base.replace(cuts, content)
    want = base.replace_reference(cuts, content)
    assert (got.text, got.spans) == (want.text, want.spans)


def test_replaced_spans_refuses_matches_out_of_order():
    with pytest.raises(ValueError, match="out of order"):
        _core.replaced_spans(None, 0, 0, 5, [(2, 3), (1, 2)], 1)
    with pytest.raises(ValueError, match="past"):
        _core.replaced_spans(None, 0, 0, 5, [(4, 6)], 1)
    with pytest.raises(ValueError, match="spans for"):
        _core.replaced_spans([(0, 1)], 0, 0, 5, [], 1)
