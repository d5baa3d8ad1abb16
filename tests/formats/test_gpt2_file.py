"""GPT-2's encoder.json + vocab.bpe as Tokenizers: tiktoken's gpt2 ids, byte-identical re-saves
of OpenAI's files (from the pair, from r50k_base's ranks, from the gpt-2 GGUF), Hugging Face's
merge-list reading for pairs tiktoken refuses, typed errors for malformed pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bpekit import Tokenizer, patterns
from bpekit.errors import FormatError
from bpekit.formats import gpt2
from bpekit.pipeline.models import BPE
from datapaths import DATA
from formats.test_gguf_support import corpus_sample, loaded

RANKS = DATA / "ranks"
tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")


def _pair() -> Path:
    if not (RANKS / "encoder.json").is_file():
        pytest.skip(f"GPT-2 files not found in {RANKS}")
    return RANKS / "encoder.json"


def test_pair_loads_as_tiktokens_gpt2(tmp_path: Path) -> None:
    from peers import tiktoken_encoding

    tok = gpt2.load(_pair())
    assert tok.encoding is not None and tok.special_tokens == {"<|endoftext|>": 50256}
    ref = tiktoken_encoding(
        "r50k_base"
    )  # gpt2's ranks are r50k_base's (formats.md §1.1), cheaper to load
    for line in corpus_sample(stride=8, per_file=10) + ["hello <|endoftext|> world"]:
        assert tok.encode(line, allowed_special="all") == ref.encode(
            line, allowed_special="all"
        )


@pytest.mark.parametrize("source", ["r50k", "gguf"])
def test_saving_reproduces_openais_files(source: str, tmp_path: Path) -> None:
    if source == "r50k":
        _pair()
        tok = Tokenizer.from_file(RANKS / "r50k_base.tiktoken")
    else:
        _pair()
        tok = loaded("gpt-2")
    enc_path, bpe_path = gpt2.save(tok, tmp_path / "out")
    assert enc_path.read_bytes() == (RANKS / "encoder.json").read_bytes()
    assert bpe_path.read_bytes() == (RANKS / "vocab.bpe").read_bytes()


def test_other_pairs_read_as_hugging_face_does(tmp_path: Path) -> None:
    # A trained tokenizer numbers byte b as id b, which tiktoken's reader refuses; the pair is then
    # read as Hugging Face's merge-list BPE and must agree with tokenizers on the same files.
    trained = Tokenizer(
        pattern=patterns.GPT2,
        merges=[(b"h", b"e"), (b"he", b"l"), (b" ", b"w"), (b"l", b"o")],
        special_tokens=["<|eot|>"],
    )
    gpt2.save(trained, tmp_path)
    tok = gpt2.load(tmp_path / "vocab.bpe")
    assert isinstance(tok.model, BPE)
    ref = tokenizers.Tokenizer(
        tokenizers.models.BPE.from_file(
            str(tmp_path / "encoder.json"), str(tmp_path / "vocab.bpe")
        )
    )
    ref.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    for text in ["hello world", "hhe hel lo", "wow  ww", "x"]:
        assert tok.encode(text) == ref.encode(text).ids == trained.encode_ordinary(text)
    assert tok.encode("a<|eot|>") == [97, 260]
    gpt2.save(tok, tmp_path / "again")
    assert (tmp_path / "again" / "vocab.bpe").read_bytes() == (
        tmp_path / "vocab.bpe"
    ).read_bytes()
    assert json.loads((tmp_path / "again" / "encoder.json").read_bytes()) == json.loads(
        (tmp_path / "encoder.json").read_bytes()
    )


@pytest.mark.parametrize(
    ("encoder", "bpe", "match"),
    [
        ("[1, 2]", "#version: 0.2\n", "object of token"),
        ('{"a": -1}', "#version: 0.2\n", "object of token"),
        ('{"a": 0, "b": 0}', "#version: 0.2\n", "share an id"),
        ("{bad json", "#version: 0.2\n", "not JSON"),
        ('{"a": 0, "b": 1, "ab": 2}', "a b\n", "#version"),
        ('{"a": 0, "b": 1, "ab": 2}', "#version: 0.2\na b c\n", "two tokens"),
        ('{"a": 0, "b": 1, "ab": 2}', "#version: 0.2\na x\n", "not in the vocabulary"),
    ],
)
def test_malformed_pairs(encoder: str, bpe: str, match: str, tmp_path: Path) -> None:
    (tmp_path / "encoder.json").write_text(encoder)
    (tmp_path / "vocab.bpe").write_text(bpe)
    with pytest.raises(Exception, match=match) as info:
        gpt2.load(tmp_path)
    assert isinstance(info.value, FormatError | __import__("bpekit").errors.VocabError)


def test_what_the_pair_cannot_hold(tmp_path: Path) -> None:
    from bpekit.formats.hf import from_document

    byte_level = {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": True,
        "use_regex": True,
    }
    doc = {
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": byte_level,
        "decoder": byte_level,
        "model": {
            "type": "BPE",
            "vocab": {"a": 0, "b": 1, "ab": 2},
            "merges": [["a", "b"]],
        },
    }
    with pytest.raises(FormatError, match="normalize"):
        gpt2.save(from_document(doc), tmp_path)
    doc["normalizer"] = None
    doc["model"]["ignore_merges"] = True
    with pytest.raises(FormatError, match="ignore_merges"):
        gpt2.save(from_document(doc), tmp_path)
    assert not (tmp_path / "encoder.json").exists()
