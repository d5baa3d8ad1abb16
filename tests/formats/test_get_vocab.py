"""``Tokenizer.get_vocab`` / ``get_vocab_size`` equal Hugging Face's on the same tokenizer: the
GPT-NeoX ``tokenizer.json`` as loaded, and the ``tokenizer.json`` that bpekit exports from a rank
model (cl100k, with its id hole at 100,256) and from llama.cpp GGUF vocabularies; a SentencePiece
model's vocabulary is its pieces, as ``sentencepiece`` lists them."""

from __future__ import annotations

import pytest
from datapaths import DATA

from bpekit import Tokenizer, get_encoding
from bpekit.errors import InputTypeError


def _need(path):
    if not path.is_file():
        pytest.skip(f"{path} not found (set BPEKIT_TEST_DATA)")
    return path


def _same_as_hf(ours: Tokenizer, hf) -> None:  # noqa: ANN001
    for added in (True, False):
        assert ours.get_vocab(added) == hf.get_vocab(added), f"with_added_tokens={added}"
        assert ours.get_vocab_size(with_added_tokens=added) == hf.get_vocab_size(with_added_tokens=added)


def test_a_tokenizer_json_as_loaded(neox):
    _same_as_hf(*neox)


def test_a_rank_model_as_its_exported_tokenizer_json(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    ours = Tokenizer.from_encoding(get_encoding("cl100k_base"))
    ours.export_hf(tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert ours.get_vocab() == hf.get_vocab() and ours.get_vocab_size() == hf.get_vocab_size()
    assert ours.get_vocab()["<|endoftext|>"] == 100257 and ours.get_vocab()["Ġhello"] == 24748
    # the export keeps the specials in the model's vocabulary too (to keep their ids past the
    # hole at 100,256); without added tokens, a rank model lists its mergeable tokens alone
    specials = ours.special_tokens
    assert ours.get_vocab(False) == {t: i for t, i in hf.get_vocab(False).items() if t not in specials}


@pytest.mark.parametrize("name", ["ggml-vocab-qwen2.gguf", "ggml-vocab-gpt-2.gguf"])
def test_gguf_vocabularies_as_their_exported_tokenizer_json(tmp_path, name):
    tokenizers = pytest.importorskip("tokenizers")
    ours = Tokenizer.from_file(_need(DATA / "gguf" / name))
    ours.save(tmp_path / "tokenizer.json", "hf")
    _same_as_hf(ours, tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json")))


def test_a_sentencepiece_model_lists_its_pieces():
    spm = pytest.importorskip("sentencepiece")
    path = _need(DATA / "spm" / "bpe_multi_bytefb_3000.model")
    ref = spm.SentencePieceProcessor(model_file=str(path))
    vocab = Tokenizer.from_file(path).get_vocab()
    assert vocab == {ref.id_to_piece(i): i for i in range(ref.get_piece_size())}


def test_the_flag_is_a_bool():
    tok = Tokenizer.from_encoding(get_encoding("r50k_base"))
    assert tok.get_vocab_size() == 50257 and tok.get_vocab_size(False) == 50256
    with pytest.raises(InputTypeError, match="with_added_tokens"):
        tok.get_vocab("no")  # type: ignore[arg-type]
