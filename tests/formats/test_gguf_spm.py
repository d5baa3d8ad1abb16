"""GGUF ``llama`` (SentencePiece-style) vocabularies encode exactly as the ``sentencepiece``
package does on the ``ModelProto`` built from the GGUF data (formats.md §4.8); SentencePiece BPE
models go to GGUF and back with the same encodings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from bpekit.errors import FormatError
from bpekit.formats.gguf import container as c
from bpekit.formats.gguf.to_spm import (
    from_sentencepiece,
    model_proto,
    sentencepiece_bpe,
)
from bpekit.formats.gguf.vocab import CONTROL, UNKNOWN, GGUFVocab
from bpekit.formats.sentencepiece import SentencePieceBPE, SentencePieceModel
from datapaths import DATA
from formats.test_gguf_support import SPM_NAMES, corpus_sample, vocab
from hypothesis import given, settings
from hypothesis import strategies as st

spm = pytest.importorskip("sentencepiece")
FULL = os.environ.get("BPEKIT_FULL_PARITY", "") not in ("", "0")
EXTRA = [
    "ied 4 ½ months",
    "  two  spaces\n\nand\ttabs  ",
    "<s> hi </s> <|user|> [PAD32011]",
    "",
    " ",
    "🦙 llama",
]


def _pair(name: str) -> tuple[SentencePieceBPE, object]:
    v = vocab(name)
    return sentencepiece_bpe(v), spm.SentencePieceProcessor(
        model_proto=model_proto(v).SerializeToString()
    )


@pytest.mark.parametrize("name", SPM_NAMES)
def test_gguf_llama_vocab_encodes_like_sentencepiece_on_the_corpora(name: str) -> None:
    ours, ref = _pair(name)
    lines = (
        corpus_sample(stride=1 if FULL else 9, per_file=10**9 if FULL else 12) + EXTRA
    )
    assert len(lines) > 100
    for line in lines:
        assert ours.encode(line) == ref.encode(line), line  # type: ignore[attr-defined]


@settings(max_examples=max(10, settings().max_examples // 4))
@given(st.text(max_size=40))
def test_gguf_llama_vocab_encodes_like_sentencepiece_on_random_text(text: str) -> None:
    for name in SPM_NAMES:
        ours, ref = _pair_cached(name)
        assert ours.encode(text) == ref.encode(text)  # type: ignore[attr-defined]


_CACHE: dict[str, tuple[SentencePieceBPE, object]] = {}


def _pair_cached(name: str) -> tuple[SentencePieceBPE, object]:
    if name not in _CACHE:
        _CACHE[name] = _pair(name)
    return _CACHE[name]


def test_llama_cpp_test_vector() -> None:
    # llama.cpp's first test input for llama-spm (formats.md §5.10): " 474 287 29871 29946 29871 30226 7378".
    ours, _ = _pair_cached("llama-spm")
    assert ours.encode("ied 4 ½ months") == [474, 287, 29871, 29946, 29871, 30226, 7378]


def test_phi3_types_are_made_sentencepiece_valid() -> None:
    proto = model_proto(vocab("phi-3"))
    assert proto.pieces[0].type == UNKNOWN  # <unk> is CONTROL in the GGUF
    assert (
        proto.pieces[32011].type == CONTROL
    )  # a [PAD] filler typed UNKNOWN in the GGUF
    assert (
        proto.trainer_spec.eos_id == 32000
        and proto.trainer_spec.eos_piece == "<|endoftext|>"
    )


IDENTITY_MODELS = [
    "bpe_identity_raw_600",
    "hm_bytefb",
    "hm_equal_scores",
    "hm_higher_right",
    "hm_unused",
]


@pytest.mark.parametrize("stem", IDENTITY_MODELS)
def test_sentencepiece_model_to_gguf_and_back(stem: str, tmp_path: Path) -> None:
    path = DATA / "spm" / f"{stem}.model"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    model = SentencePieceModel.load(path)
    gguf_vocab = from_sentencepiece(model)
    data = c.serialize(gguf_vocab.to_file())
    again = GGUFVocab.from_file(c.parse(data))
    assert again.tokens == [p.piece for p in model.pieces]
    first, second = SentencePieceBPE(model), sentencepiece_bpe(again)
    lines = corpus_sample(stride=15, per_file=8) + EXTRA
    assert [second.encode(x) for x in lines] == [first.encode(x) for x in lines]
    assert c.serialize(GGUFVocab.from_file(c.parse(data)).to_file()) == data


def test_models_gguf_cannot_hold_are_refused() -> None:
    for stem, why in (("bpe_shakes_1000", "character map"),):
        path = DATA / "spm" / f"{stem}.model"
        if not path.is_file():
            pytest.skip(f"{path} not found")
        with pytest.raises(FormatError, match=why):
            from_sentencepiece(SentencePieceModel.load(path))
    with pytest.raises(FormatError, match="only GGUF 'llama'"):
        model_proto(vocab("gpt-2"))
