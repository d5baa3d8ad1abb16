"""The Rust alignment of normalizers (``_core.Normalizer.align``, ``src/aligned.rs``, through
``normalizers.InRust``) against the Python stages' ``align`` methods (the reference, which
other tests hold to ``tokenizers``): every stage type on every code point, real text of many
scripts, hostile strings and random text, from plain, shifted, prefixed and listed spans. Then
the pipelines whose offsets now come from one Rust call per segment (normalizer, ``Metaspace`` or
split stages, model, spans mapped back: ``PairBPE.encode_offsets``) against ``tokenizers``."""

from __future__ import annotations

import json
from unittest import mock

import pytest
from bpekit import _core
from bpekit.formats.hf import from_document
from bpekit.pipeline import normalizers as ours
from bpekit.pipeline import pre_tokenizers as ours_pre
from bpekit.pipeline.aligned import Aligned
from bpekit.pipeline.base import Pattern
from bpekit.pipeline.precompiled import Precompiled
from formats.test_clip_layout import corpus_lines
from formats.test_hf_precompiled import nmt_nfkc
from hypothesis import given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, trainers  # noqa: E402

HOSTILE = [
    "", " ", "   ", "\u3000 a \t", "\u0130stanbul \u0130I", "\u00c9\x01\t\u4e2d\u6587 x", "e\u0301\u0302 \u1e9b\u0323",
    "\ufb01ne \u2460 \u3300 \uff76\uff9e", "a\x00b\ufffd\u200bc\u2581d", "\U0001f468\u200d\U0001f469 ok",
    "\u0915\u094d\u0937 \ufdfa", "A\u0301\u0301\u0301B", "  two   spaces  ", "\u1100\u1161\u11a8\uac00",
    "x\u0345\u0399 \u03a3\u03a3", "\ud7ff\ue000\uffff\U0010ffff", "\u212b\u2126 K\u212a",
]  # fmt: skip


def stages() -> dict[str, ours.Normalizer]:
    """One of every normalizer type the Rust program runs, and the real sequences."""
    regex = ours.Replace(Pattern(" {2,}", True), "\u2581")
    return {
        "nfc": ours.NFC(), "nfd": ours.NFD(), "nfkc": ours.NFKC(), "nfkd": ours.NFKD(),
        "lowercase": ours.Lowercase(), "strip_accents": ours.StripAccents(),
        "strip": ours.Strip(True, True), "strip_left": ours.Strip(True, False), "strip_right": ours.Strip(False, True),
        "replace_char": ours.Replace(Pattern(" ", False), "\u2581"),
        "replace_longer": ours.Replace(Pattern("ab", False), "x\u00e9z"),
        "replace_away": ours.Replace(Pattern("\u0301", False), ""),
        "replace_regex": regex, "replace_spaces": ours.Replace(Pattern(r"\s+", True), " "),
        "prepend": ours.Prepend("\u2581"), "prepend_long": ours.Prepend("<s> "),
        "bert": ours.BertNormalizer(), "bert_cased": ours.BertNormalizer(True, True, False, False),
        "bert_accents": ours.BertNormalizer(True, False, True, False), "bert_plain": ours.BertNormalizer(False, True, None, True),
        "nmt": ours.Nmt(), "byte_level": ours.ByteLevel(), "precompiled": Precompiled(nmt_nfkc()),
        "spm_converted": ours.Sequence([Precompiled(nmt_nfkc()), ours.Strip(False, True), regex]),
        "llama2": ours.Sequence([ours.Prepend("\u2581"), ours.Replace(Pattern(" ", False), "\u2581")]),
        "clip": ours.Sequence([ours.NFC(), ours.Replace(Pattern(r"\s+", True), " "), ours.Lowercase()]),
        "nfkd_strip_lower": ours.Sequence([ours.NFKD(), ours.StripAccents(), ours.Lowercase(), ours.Strip()]),
    }  # fmt: skip


STAGES = stages()


def rust(stage: ours.Normalizer) -> ours.InRust:
    program = ours.core_normalizer(stage)
    assert isinstance(program, _core.Normalizer), stage
    return ours.InRust(stage, program)


def inputs(text: str) -> list[Aligned]:
    """``text`` as the pipelines hand it over: found at 0, found further on, after a prefix (no
    list of spans), and with a list of spans (a joined surrogate pair spans two)."""
    listed = [(i + (i > 2), i + 1 + (i >= 2)) for i in range(len(text))]
    return [Aligned.of(text), Aligned.of(text, 7), Aligned("\u2581\u2581" + text, None, 3, 2), Aligned(text, listed, 0)]


def same(stage: ours.Normalizer, text: str) -> None:
    fast = rust(stage)
    for given_ in inputs(text):
        want, got = stage.align(given_), fast.align(given_)
        assert (got.text, got.spans) == (want.text, want.spans), (stage, text, given_)
        if want.text:
            assert got.origin == want.origin, (stage, text)


@pytest.mark.parametrize("name", ["nfc", "nfd", "nfkc", "nfkd", "lowercase", "strip_accents", "strip", "replace_regex",
                                  "replace_spaces", "bert", "bert_cased", "nmt", "byte_level", "precompiled"])
def test_every_code_point(name):
    """Every code point but the surrogates, in runs of 512 that keep a base letter before each
    (marks, casing and compositions then act as in text)."""
    stage = STAGES[name]
    points = [chr(c) for c in range(1, 0x110000) if not 0xD800 <= c <= 0xDFFF]
    text = "".join(f"a{c}" for c in points)
    fast = rust(stage)
    for at in range(0, len(text), 1024):
        part = Aligned.of(text[at:at + 1024], at)
        want, got = stage.align(part), fast.align(part)
        assert (got.text, got.spans) == (want.text, want.spans), (name, at)


@pytest.mark.parametrize("name", sorted(STAGES))
def test_hostile_and_real_text(name):
    for text in [*HOSTILE, *corpus_lines()[::6]]:
        same(STAGES[name], text)


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(exclude_categories=["Cs"]), max_size=40), st.sampled_from(sorted(STAGES)))
def test_random_text(text, name):
    """Random text (the pipelines fix lone surrogates before they normalize)."""
    same(STAGES[name], text)


def test_bad_spans_and_surrogates_are_refused():
    program = ours.core_normalizer(ours.NFC())
    with pytest.raises(ValueError, match="2 spans for 3 chars"):
        program.align("abc", [(0, 1), (1, 2)])
    with pytest.raises(UnicodeEncodeError):
        program.align("a\ud800", None)
    assert program.align("abc", None) is None  # (nothing changed)
    text = Aligned.of("A\ud800\u0130")  # the Python stages take a text with a lone surrogate
    lower = ours.Lowercase()
    got = ours.InRust(lower, ours.core_normalizer(lower)).align(text)
    assert (got.text, got.spans) == ("a\ud800i\u0307", [(0, 1), (1, 2), (2, 3), (2, 3)])


def test_light_normalizers_keep_the_python_alignment():
    """A prefix and one-for-one replacements (Llama 2's) keep no span per character in Python:
    ``aligner`` leaves those to the Python stages; any other program aligns in Rust."""
    for name, light in [("llama2", True), ("prepend", True), ("replace_char", True), ("spm_converted", False),
                        ("replace_longer", False), ("nfc", False), ("clip", False)]:
        stage = STAGES[name]
        got = ours.aligner(stage, ours.core_normalizer(stage))
        assert (got is stage) == light and (light or isinstance(got, ours.InRust)), name
    assert ours.aligner(None, None) is None
    regex = ours.Replace(Pattern(r"(?<=a)b", True), "c")  # (no Rust program: the Python stage)
    assert ours.aligner(regex, ours.core_normalizer(regex)) is regex


def spm_like(lines, *, scheme="always", split=True, normalizer=None, byte_fallback=True, added=()):
    """A character BPE with ``Metaspace``, trained by ``tokenizers`` on ``lines``."""
    tok = tokenizers.Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=byte_fallback, fuse_unk=True))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme=scheme, split=split)
    tok.decoder = decoders.Metaspace(prepend_scheme=scheme, split=split)
    specials = ["<unk>"] + ([f"<0x{b:02X}>" for b in range(256)] if byte_fallback else [])
    tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=900 + len(specials), special_tokens=specials,
                                                       limit_alphabet=300, show_progress=False))
    if added:
        tok.add_tokens(list(added))
    return tok


def check(hf, texts) -> None:
    """ids and offsets equal to ``tokenizers``', each segment through the Rust call: the Python
    ``Metaspace`` stage and the Python normalizer stages are never asked."""
    ours_tok = from_document(json.loads(hf.to_str()))
    refuse = mock.Mock(side_effect=AssertionError("the Python stages ran"))
    with mock.patch.object(ours_pre.Metaspace, "pre_tokenize_aligned", refuse):
        for text in texts:
            want = hf.encode(text, add_special_tokens=False)
            assert ours_tok.encode_with_offsets(text, False) == (want.ids, want.offsets), repr(text)
            assert ours_tok.encode(text, False) == want.ids, repr(text)


@pytest.mark.parametrize("scheme, split", [("always", True), ("always", False), ("first", True), ("never", True)])
def test_metaspace_models_give_offsets_in_rust(scheme, split):
    lines = corpus_lines()
    normalizer = normalizers.Sequence([normalizers.Precompiled(nmt_nfkc()), normalizers.Strip(left=False, right=True),
                                       normalizers.Replace(Regex(" {2,}"), "\u2581")])
    texts = [*HOSTILE, *lines[::5], "a <b> c<b>d  <b>", "<b>"]
    # (a token matched in normalized text: the segments are aligned by the program, then merged;
    # with none, the model's call normalizes each segment itself)
    check(spm_like(lines[1::3], scheme=scheme, split=split, normalizer=normalizer, added=["<b>"]), texts)
    check(spm_like(lines[1::3], scheme=scheme, split=split, normalizer=normalizer), texts)
    check(spm_like(lines[1::3], scheme=scheme, split=split, byte_fallback=False), texts)


def test_bert_layout_offsets_in_rust_with_its_normalizer():
    """OpenAI GPT's layout (``BertNormalizer``, ``BertPreTokenizer``, ``</w>`` characters): the
    normalizer's alignment is computed in the model's call; its Python ``align`` never runs."""
    lines = corpus_lines()
    tok = tokenizers.Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(lines[1::3], trainers.BpeTrainer(vocab_size=1500, special_tokens=["<unk>"],
                                                             end_of_word_suffix="</w>", show_progress=False))
    refuse = mock.Mock(side_effect=AssertionError("the Python alignment ran"))
    with mock.patch.object(ours.BertNormalizer, "align", refuse):
        check(tok, [*HOSTILE, *lines[::5]])



def test_batches_of_character_models_in_rust():
    """``encode_batch_with_offsets`` of a model over characters: the texts no added token cuts
    in one Rust call on the batch's threads (``PairBPE.encode_offsets_batch``), the others text
    by text; every result equal to ``encode_with_offsets`` and to ``tokenizers``' batch."""
    lines = corpus_lines()
    normalizer = normalizers.Sequence([normalizers.Precompiled(nmt_nfkc()), normalizers.Strip(left=False, right=True),
                                       normalizers.Replace(Regex(" {2,}"), "\u2581")])
    hf = spm_like(lines[1::3], normalizer=normalizer)
    hf.add_special_tokens(["<b>"])
    ours_tok = from_document(json.loads(hf.to_str()))
    texts = [*HOSTILE, *lines[::4], "a <b> c", "<b>", "x \ud800 y", "\ud83d\ude00 ok"]
    calls = []
    real = _core.PairBPE.encode_offsets_batch

    def spy(self, batch, *args):
        calls.append(len(batch))
        return real(self, batch, *args)

    with mock.patch.object(_core.PairBPE, "encode_offsets_batch", spy, create=False):
        got = ours_tok.encode_batch_with_offsets(texts, num_threads=2)
    assert calls == [len(texts) - 2]  # (the two texts with the added token: text by text)
    assert got == [ours_tok.encode_with_offsets(t) for t in texts]
    valid = [not any("\ud800" <= c <= "\udfff" for c in t) for t in texts]  # (what tokenizers takes)
    want = hf.encode_batch([t for t, v in zip(texts, valid) if v], add_special_tokens=False)
    assert [g for g, v in zip(got, valid) if v] == [(e.ids, e.offsets) for e in want]
