"""``BertNormalizer``, ``Nmt`` and the ``ByteLevel`` normalizer, as Hugging Face's ``tokenizers``
runs them: the text of every code point, each character's span (offsets), and whole pipelines."""

from __future__ import annotations

import json

import pytest
from bpekit.formats.hf import document, from_document
from bpekit.pipeline import normalizers as ours
from bpekit.errors import FormatError
from hypothesis import given, settings, strategies as st
from formats.test_clip_layout import corpus_lines
from formats.test_hf_stages import EDGE, same, train

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers

# (clean_text, handle_chinese_chars, strip_accents, lowercase)
BERT_OPTIONS = [(True, True, None, True), (True, True, None, False), (False, False, True, False),
                (True, False, False, True), (False, True, None, True)]
HOSTILE = [
    "Héllo\tWörld 中国 \x00x\u200b\ufffd", "ÀÉÎõü ǅ İ ß ﬁ Ǆ́", "\u3000a\u2028b\x85c\u00ad\u200d\u2060",
    "野口里佳 Noguchi Rika 𠀀𪜀", "a\u0301\u0308b\u0903\u20dd", "\r\n\x0b\x0c\x1f\x7f\x8f\x9f\ufeff\u2581 ok",
    "\x00\x00中\x01", "\ue000 private \U000f0000 use", "ΣΑΣ ὈΔΥΣΣΕΎΣ", "\u0130stanbul",
    "हिन्दी में", "ขอบคุณครับ", "שָׁלוֹם", "مُحَمَّد", "Việt Nam",  # nonspacing marks past U+036F
]


def pairs():
    """(name, Hugging Face's normalizer, bpekit's) for every option set."""
    for o in BERT_OPTIONS:
        yield f"bert{o}", normalizers.BertNormalizer(*o), ours.BertNormalizer(*o)
    yield "nmt", normalizers.Nmt(), ours.Nmt()
    yield "byte_level", normalizers.ByteLevel(), ours.ByteLevel()


def test_every_code_point_normalizes_as_in_tokenizers():
    """Each code point after an ``x`` (4,096 to a call; a differing block is searched char by
    char), under every option set: the tables (controls, whitespace, CJK, nonspacing marks, NFD,
    lowercase) are the ones ``tokenizers`` uses."""
    cps = [chr(i) for i in range(1, 0x110000) if not 0xD800 <= i < 0xE000]
    for name, hf, bp in pairs():
        wrong = []
        for i in range(0, len(cps), 4096):
            text = "".join("x" + c for c in cps[i:i + 4096])
            if hf.normalize_str(text) != bp.normalize(text):
                wrong += [c for c in cps[i:i + 4096] if hf.normalize_str("x" + c) != bp.normalize("x" + c)]
        assert not wrong, f"{name}: {[hex(ord(c)) for c in wrong[:10]]}"


def unk_per_char(normalizer):
    """A tokenizer whose tokens are the normalized text's characters, one unk each: its offsets
    are each normalized character's span of the input."""
    hf = tokenizers.Tokenizer(models.BPE({"<unk>": 0}, [], unk_token="<unk>", fuse_unk=False))
    hf.normalizer = normalizer
    hf.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), "isolated")
    return hf, from_document(json.loads(hf.to_str()))


def same_spans(hf, bp, text):
    encoding = hf.encode(text)
    assert bp.encode_with_offsets(text) == (encoding.ids, encoding.offsets), repr(text)


@pytest.mark.parametrize("name", [name for name, _, _ in pairs()])
def test_each_characters_span_is_tokenizers(name):
    hf_norm = next(hf for n, hf, _ in pairs() if n == name)
    hf, bp = unk_per_char(hf_norm)
    for text in [*EDGE, *HOSTILE]:
        same_spans(hf, bp, text)


ALPHABET = st.sampled_from([*"aZé ", "\u094d", "\u0e38", "\u05b0", "\t", "\n", "\r", "\x00", "\x01", "\x7f", "\x85", "\x9f", "\u00a0", "\u00ad",
                            "\u0301", "\u0308", "\u0903", "\u200b", "\u200d", "\u2028", "\u3000", "\ufeff", "\ufffd",
                            "\u2581", "中", "国", "\U00020000", "ﬁ", "İ", "Σ", "Ǆ", "\ue000", "😀"])


@settings(max_examples=150, deadline=None)
@given(text=st.one_of(st.lists(ALPHABET, max_size=24).map("".join), st.text(max_size=16)))
def test_random_texts_spans(text):
    for _, hf_norm, _ in pairs():
        hf, bp = unk_per_char(hf_norm)
        if "\ud800" <= max(text, default="a") or any("\ud800" <= c <= "\udfff" for c in text):
            continue  # (tokenizers refuses lone surrogates)
        same_spans(hf, bp, text)


@pytest.fixture(scope="module")
def lines() -> list[str]:
    """The hostile texts, 50 lines of five other scripts and 30 English lines (``same`` checks
    the first 60 one by one, all of them in a batch)."""
    every = corpus_lines()
    return [*HOSTILE, *every[300::4], *every[:300:10]]


def test_bert_pipeline_as_openai_gpt(lines):
    """OpenAI GPT's layout as ``transformers`` converts it: ``BertNormalizer`` (lowercase), a
    whitespace split, a BPE with an unk token and the ``</w>`` suffix, the ``BPEDecoder``."""
    hf = train(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"), pre_tokenizers.WhitespaceSplit(), lines,
               normalizer=normalizers.BertNormalizer(lowercase=True), vocab_size=600, end_of_word_suffix="</w>",
               special_tokens=["<unk>"])
    hf.decoder = decoders.BPEDecoder(suffix="</w>")
    same(hf, lines)


@pytest.mark.parametrize("options", BERT_OPTIONS)
def test_bert_pipelines(lines, options):
    hf = train(models.BPE(unk_token="[UNK]"), pre_tokenizers.WhitespaceSplit(), lines,
               normalizer=normalizers.BertNormalizer(*options), vocab_size=500, special_tokens=["[UNK]"])
    same(hf, lines)


def test_nmt_and_byte_level_pipelines(lines):
    hf = train(models.BPE(unk_token="<unk>"), pre_tokenizers.Metaspace(), lines,
               normalizer=normalizers.Sequence([normalizers.Nmt(), normalizers.NFKC()]), vocab_size=500,
               special_tokens=["<unk>"])
    hf.decoder = decoders.Metaspace()
    same(hf, lines)
    hf = train(models.BPE(), pre_tokenizers.Split(Regex("\u0120"), "merged_with_next"), lines,
               normalizer=normalizers.ByteLevel(), vocab_size=500,
               initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    hf.decoder = decoders.ByteLevel()
    same(hf, lines)


def test_the_rust_pipelines_run_them():
    """Each is a step of the Rust normalizer program (no Python call per text)."""
    for _, _, bp in pairs():
        assert bp.core_steps() is not None
    tok = from_document({"normalizer": {"type": "Sequence", "normalizers": [
        {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
         "lowercase": True}, {"type": "Nmt"}, {"type": "ByteLevel"}]},
        "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})
    assert tok.normalizer.core_steps() == [("bert", True, True, True, True), ("nmt",), ("byte_level",)]


def test_json_round_trip_and_errors():
    doc = {"type": "BertNormalizer", "clean_text": False, "handle_chinese_chars": True, "lowercase": False}
    n = ours.NORMALIZERS["BertNormalizer"].from_json(doc, "normalizer")
    assert n.to_json() == {**doc, "strip_accents": None}
    model = {"type": "BPE", "vocab": {"a": 0}, "merges": []}
    for normalizer in [doc, {"type": "Nmt"}, {"type": "ByteLevel"}, {**doc, "strip_accents": True}]:
        tok = from_document({"normalizer": normalizer, "model": model})
        again = document(tok)["normalizer"]
        assert from_document({"normalizer": again, "model": model}).normalizer == tok.normalizer
        hf = tokenizers.Tokenizer.from_str(json.dumps(document(tok)))
        assert hf.normalizer.normalize_str("Ab 中\t") == tok.normalizer.normalize("Ab 中\t")
    for bad in [{"type": "BertNormalizer"}, {**doc, "lowercase": 1}, {**doc, "strip_accents": "yes"},
                {k: v for k, v in doc.items() if k != "clean_text"}]:
        with pytest.raises(FormatError, match="normalizer"):
            from_document({"normalizer": bad, "model": model})


def test_surrogates_stay_where_they_are():
    """A lone surrogate (which ``tokenizers`` cannot take; a ``Tokenizer`` replaces it before its
    normalizer runs) is left in place by ``normalize``, and the text around it normalized."""
    for _, hf, bp in pairs():
        assert bp.normalize("A\ud800中\t") == hf.normalize_str("A") + "\ud800" + hf.normalize_str("中\t")
