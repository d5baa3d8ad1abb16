"""Saving tokenizer.json: a file loaded and saved unchanged is byte-identical; what bpekit writes
loads in ``tokenizers`` (and ``transformers``) and encodes identically; tiktoken's cl100k_base and
o200k_base exported to tokenizer.json encode as tiktoken does inside ``tokenizers``."""

from __future__ import annotations

import json
import os

import pytest
from bpekit import Encoding, Tokenizer, get_encoding
from bpekit.pipeline import decoders
from datapaths import DATA
from peers import tiktoken_encoding

tokenizers = pytest.importorskip("tokenizers")
NEOX = DATA / "hf" / "gpt-neox-20b.tokenizer.json"
FULL = os.environ.get("BPEKIT_FULL_PARITY") == "1"
SAMPLES = [
    "hello world", "Hello <|endoftext|> world", "  leading and trailing  ", "1234567 digits 2024",
    "don't stop\n\n\nnew paragraphs\r\n", "日本語 한국어 العربية हिन्दी", "👍🏽 emoji", "x" * 300, "",
    "trailing newline\n", "tabs\t\tand  spaces   \n  x", "a1b22c333d4444",
]


@pytest.fixture(scope="module")
def neox_path():
    if not NEOX.is_file():
        pytest.skip(f"{NEOX} not found (set BPEKIT_TEST_DATA)")
    return NEOX


@pytest.fixture(scope="module")
def neox(neox_path):
    return Tokenizer.from_file(neox_path)


def lines(n: int) -> list[str]:
    path = DATA / "corpora" / "taylorswift.txt"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    text = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return SAMPLES + (text if FULL else text[:: max(1, len(text) // n)])


def test_load_save_is_byte_identical(neox, neox_path, tmp_path):
    tok = neox
    out = tmp_path / "tokenizer.json"
    tok.save(out)
    assert out.read_bytes() == neox_path.read_bytes()


def test_file_written_by_tokenizers_round_trips(neox_path, tmp_path):
    hf = tokenizers.Tokenizer.from_file(str(neox_path))
    path = tmp_path / "hf.json"
    hf.save(str(path))
    tok = Tokenizer.from_file(path)
    tok.save(tmp_path / "ours.json")
    assert (tmp_path / "ours.json").read_bytes() == path.read_bytes()


def test_changed_pipeline_saves_what_tokenizers_reads(neox, neox_path, tmp_path):
    tok = neox
    # (Strip with stop > 0 makes tokenizers 0.23 panic on an empty decode: start only)
    tok.decoder = decoders.Sequence([decoders.ByteLevel(add_prefix_space=False), decoders.Strip(" ", 1, 0)])
    tok.save(tmp_path / "changed.json", format="hf")
    doc = json.loads((tmp_path / "changed.json").read_text())
    source = json.loads(neox_path.read_text())
    assert doc["decoder"]["type"] == "Sequence" and doc["model"]["merges"] == source["model"]["merges"]
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "changed.json"))
    for s in lines(40):
        ids = hf.encode(s, add_special_tokens=False).ids
        assert tok.encode(s) == ids and tok.decode(ids) == hf.decode(ids, skip_special_tokens=False), repr(s)
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)


@pytest.mark.skipif(not FULL, reason="importing transformers takes ~8 s: run with BPEKIT_FULL_PARITY=1")
def test_transformers_loads_what_bpekit_writes(neox, tmp_path):
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    tok = neox
    tok.model.merges_as_pairs = True  # re-encoded merges: a part that changed, written anew
    tok.save(tmp_path / "tokenizer.json")
    assert json.loads((tmp_path / "tokenizer.json").read_text())["model"]["merges"][0] == ["Ġ", "Ġ"]
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "tokenizer.json"))
    for s in lines(40):
        assert fast.encode(s, add_special_tokens=False) == tok.encode(s), repr(s)
    tok.model.merges_as_pairs = False


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_tiktoken_exported_to_tokenizer_json(name, tmp_path):
    """In CI the vocabulary is cut to its first ranks (still a valid rank table: a token's parts
    rank below it), with the real pattern and specials; BPEKIT_FULL_PARITY=1 exports all of it."""
    full = get_encoding(name)
    keep = len(full._mergeable_ranks) if FULL else 3000
    ranks = {t: r for t, r in full._mergeable_ranks.items() if r < keep}
    specials = dict(full._special_tokens)
    ours = Encoding(name, pat_str=full._pat_str, mergeable_ranks=ranks, special_tokens=specials)
    reference = tiktoken_encoding(name)
    reference = type(reference)(name, pat_str=full._pat_str, mergeable_ranks=ranks, special_tokens=specials)
    tok = Tokenizer.from_encoding(ours)
    path = tmp_path / "tokenizer.json"
    tok.save(path, format="hf")
    hf = tokenizers.Tokenizer.from_file(str(path))
    texts = lines(300 if FULL else 120)
    for s in texts:
        expected = reference.encode(s, allowed_special="all")
        assert hf.encode(s, add_special_tokens=False).ids == expected, repr(s)
        assert tok.encode(s, allowed_special="all") == expected
    back = Tokenizer.from_file(path)  # bpekit reads it back: pair-rank merges over the Rust split
    assert back._splitter is not None
    for s in texts[:: 1 if FULL else 5]:
        assert back.encode(s) == reference.encode(s, allowed_special="all"), repr(s)
