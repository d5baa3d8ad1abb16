"""Models over characters split by ``Whitespace``, ``WhitespaceSplit``, ``BertPreTokenizer`` and
``Split`` / ``Digits`` / ``Punctuation`` stages run in one Rust call (``fast.char_stages``,
``BPE.char_merge``): the same ids, offsets and batches as ``tokenizers``, and as bpekit's Python
pipeline."""

from __future__ import annotations

import json

import pytest
from bpekit import _core
from bpekit.formats.hf import from_document
from bpekit.pipeline import pre_tokenizers as ours
from bpekit.pipeline.fast import char_stages
from formats.test_clip_layout import corpus_lines
from formats.test_hf_bert_normalizers import HOSTILE
from formats.test_hf_stages import same, train

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers  # noqa: E402

LAYOUTS = {
    # the Hugging Face quicktour's: BPE(unk_token="[UNK]") and Whitespace
    "whitespace": lambda: pre_tokenizers.Whitespace(),
    "whitespace_split": lambda: pre_tokenizers.WhitespaceSplit(),
    "bert": lambda: pre_tokenizers.BertPreTokenizer(),
    "sequence": lambda: pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Digits(True),
                                                 pre_tokenizers.Punctuation("contiguous")]),
    "split": lambda: pre_tokenizers.Split(Regex(r"\s?[^\s]+"), "isolated"),
}


@pytest.fixture(scope="module")
def lines() -> list[str]:
    every = corpus_lines()
    return [*HOSTILE, *every[300::4], *every[:300:10], "12345 a1b2 ¾½ x--y... «quoted» ¿qué? 中文，标点。"]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("fuse_unk", [False, True])
def test_character_models_split_in_rust(lines, layout, fuse_unk):
    hf = train(models.BPE(unk_token="[UNK]", fuse_unk=fuse_unk), LAYOUTS[layout](), lines[:200],
               normalizer=normalizers.NFC(), vocab_size=700, special_tokens=["[UNK]"])
    ours_tok = same(hf, lines)
    assert isinstance(ours_tok._fast, _core.PairBPE), layout
    # unknown characters (the vocabulary was trained on a part of the lines): unk, fused or not
    unknown = ["ǅǅ ⅯⅯ x ᚠᚡ 𝔘𝔫", "\U0001f600\U0001f600 a", "aǅbǅǅc ǅ", "ǅ"]
    texts = [*lines, *unknown]
    assert ours_tok.encode_batch(texts, False, num_threads=2) == [e.ids for e in hf.encode_batch(texts, False)]
    # offsets from the Rust model piece by piece, the unk token spanning its unknown characters
    table = ours_tok._byte_offsets()
    assert table is not None and table[3]
    for text in unknown:
        e = hf.encode(text, add_special_tokens=False)
        assert ours_tok.encode_with_offsets(text) == (e.ids, e.offsets), text
        assert ours_tok._fast.encode_offsets(text, table[0]) is not None


def test_unknown_stages_and_subclasses_stay_in_python(lines):
    class Mine(ours.Whitespace):
        def pre_tokenize(self, splits):
            return super().pre_tokenize(splits)

    assert char_stages(Mine()) is None
    assert char_stages(ours.Sequence([ours.Whitespace(), Mine()])) is None
    assert char_stages(ours.Metaspace()) is None
    assert char_stages(None) is None
    assert char_stages(ours.Sequence([])) is None
    hf = train(models.BPE(unk_token="[UNK]"), pre_tokenizers.FixedLength(3), lines[:100], vocab_size=300,
               special_tokens=["[UNK]"])
    assert same(hf, lines)._fast is None


def test_whitespace_matches_tokenizers_on_every_code_point():
    """The ``Whitespace`` pre-tokenizer's ``\\w`` and ``\\s`` come from the ``regex`` crate, as in
    ``tokenizers`` (Python's ``regex`` module lacks Unicode 17's letters, U+088F and others: the
    Python stage split those 4,699 code points otherwise before it took its matches from Rust)."""
    hf, bp = pre_tokenizers.Whitespace(), ours.Whitespace()
    cps = [chr(i) for i in range(1, 0x110000) if not 0xD800 <= i < 0xE000]
    for i in range(0, len(cps), 4096):
        text = "".join("a" + c + "." for c in cps[i:i + 4096])
        assert [p for p, _ in hf.pre_tokenize_str(text)] == bp.pre_tokenize_str(text), hex(ord(cps[i]))
    assert bp.pre_tokenize_str("a\ud800b c") == ["a", "\ud800", "b", "c"]  # (lone surrogates: Python's regex)


@pytest.mark.parametrize("layout", ["whitespace", "whitespace_split", "bert"])
def test_rust_stages_split_every_code_point_as_tokenizers(layout):
    hf = LAYOUTS[layout]()
    stages = _core.IsolatedSplit(char_stages(from_document(json.loads(
        train(models.BPE(unk_token="[UNK]"), hf, ["a b"], vocab_size=10, special_tokens=["[UNK]"]).to_str())
    ).pre_tokenizer))
    cps = [chr(i) for i in range(1, 0x110000) if not 0xD800 <= i < 0xE000]
    for i in range(0, len(cps), 4096):
        text = "".join("a" + c + "." for c in cps[i:i + 4096])
        assert [p for p, _ in hf.pre_tokenize_str(text)] == stages.split(text), hex(ord(cps[i]))


@pytest.mark.parametrize("affixes", [("", "</w>"), ("##", ""), ("##", "</w>")])
def test_subword_prefix_and_suffix_models(lines, affixes):
    """OpenAI GPT's layout (``BertNormalizer``, ``BertPreTokenizer``, characters with the
    ``</w>`` suffix) and BERT-style ``##`` prefixes: the model over characters in Rust, each
    character's token by its place in the word; offsets from the Rust model with a suffix (its
    tokens' bytes are theirs without it), through the Python stages with a prefix."""
    prefix, suffix = affixes
    options = {k: v for k, v in (("continuing_subword_prefix", prefix), ("end_of_word_suffix", suffix)) if v}
    hf = train(models.BPE(unk_token="<unk>", **options), pre_tokenizers.BertPreTokenizer(), lines[:200],
               normalizer=normalizers.BertNormalizer(), vocab_size=600, special_tokens=["<unk>"], **options)
    hf.decoder = decoders.BPEDecoder(suffix=suffix) if suffix else decoders.WordPiece(prefix=prefix)
    ours_tok = same(hf, lines)
    assert isinstance(ours_tok._fast, _core.PairBPE)
    unknown = ["ǅǅ ⅯⅯ x ᚠᚡ 𝔘𝔫", "aǅbǅǅc ǅ", "ǅ", "x ǅ"]
    for text in unknown:
        e = hf.encode(text, add_special_tokens=False)
        assert ours_tok.encode_with_offsets(text) == (e.ids, e.offsets), text
    assert (ours_tok._byte_offsets() is not None) == (not prefix)
    assert json.loads(hf.to_str())["pre_tokenizer"] == {"type": "BertPreTokenizer"}
