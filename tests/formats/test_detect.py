"""``Tokenizer.from_file`` picks the format from the file's first bytes (bpekit JSON, tokenizer.json,
SentencePiece protobuf, tiktoken rank text), passes overrides to that format's loader, and saves
back in the format it came from (or the one asked for)."""

from __future__ import annotations

import pytest
from bpekit import Tokenizer
from bpekit.errors import FormatError, UsageError
from bpekit.formats.detect import FORMATS, detect
from bpekit.train import train
from datapaths import DATA

TEXT = ["the cat sat on the mat. " * 20, "low lower lowest newer wider " * 20]


def need(path):
    if not path.is_file():
        pytest.skip(f"{path} not found (set BPEKIT_TEST_DATA)")
    return path


@pytest.fixture(scope="module")
def trained():
    return train(iter(TEXT), vocab_size=300, pattern="gpt2", special_tokens=["<|endoftext|>"], show_progress=False)


def test_every_format_is_detected_and_loads(tmp_path, trained):
    spm = need(DATA / "spm" / "bpe_identity_raw_600.model")
    neox = need(DATA / "hf" / "gpt-neox-20b.tokenizer.json")
    trained.save(tmp_path / "tok.json")
    trained.export_tiktoken(tmp_path / "tok.tiktoken")
    expected = {tmp_path / "tok.json": "bpekit", neox: "hf", spm: "sentencepiece", tmp_path / "tok.tiktoken": "tiktoken"}
    for path, name in expected.items():
        assert detect(path).name == name
        tok = Tokenizer.from_file(path)
        assert tok.source_format == name
        text = "the lowest cat"
        assert tok.decode(tok.encode(text)) == text, name
    names = [r.name for r in FORMATS]
    assert [n for n in names if n in expected.values()] == ["bpekit", "hf", "sentencepiece", "tiktoken"]


def test_saves_in_the_format_it_came_from(tmp_path, trained):
    spm = need(DATA / "spm" / "bpe_identity_raw_600.model")
    tok = Tokenizer.from_file(spm)
    tok.save(tmp_path / "copy.model")
    assert (tmp_path / "copy.model").read_bytes() == spm.read_bytes()
    trained.save(tmp_path / "a.json")
    again = Tokenizer.from_file(tmp_path / "a.json")
    again.save(tmp_path / "b.json")
    assert (tmp_path / "b.json").read_bytes() == (tmp_path / "a.json").read_bytes()
    trained.save(tmp_path / "hf.json", format="hf")
    assert detect(tmp_path / "hf.json").name == "hf"
    from_hf = Tokenizer.from_file(tmp_path / "hf.json")
    sample = "the lower mat <|endoftext|> newer"
    assert from_hf.encode(sample) == trained.encode(sample, allowed_special="all")
    with pytest.raises(UsageError):
        from_hf.save(tmp_path / "x.json", format="bpekit")
    with pytest.raises(UsageError):
        tok.save(tmp_path / "x.json", format="hf")


def test_tiktoken_rank_file_overrides(tmp_path):
    ranks = need(DATA / "ranks" / "r50k_base.tiktoken")
    tok = Tokenizer.from_file(ranks, pattern="gpt2", special_tokens={"<|endoftext|>": 50256})
    assert tok.encode("hello world") == [31373, 995]
    plain = tmp_path / "mine.tiktoken"
    plain.write_bytes(ranks.read_bytes()[:20_000])
    with pytest.raises(UsageError, match="pattern"):
        Tokenizer.from_file(plain)


def test_unknown_files_and_bad_overrides(tmp_path):
    for name, data in {"empty": b"", "text": b"just some text\n", "json": b'{"foo": 1}'}.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(FormatError):
            Tokenizer.from_file(tmp_path / name)
    (tmp_path / "json").write_bytes(b'{"format": "bpekit", "version": 1}')
    with pytest.raises(UsageError):
        Tokenizer.from_file(tmp_path / "json", format="gguf-someday")
    with pytest.raises(UsageError):
        Tokenizer.from_file(tmp_path / "json", seed=3)


def test_paths_and_rank_file_specials_are_checked(tmp_path):
    from bpekit.errors import DataNotFoundError, InputTypeError, VocabError

    for path in (None, 5, b"/tmp/x.model"):  # a bytes path was sniffed, then read as the model itself
        with pytest.raises(InputTypeError, match="path"):
            Tokenizer.from_file(path)
    with pytest.raises(DataNotFoundError, match="no-such.json"):
        Tokenizer.from_file(tmp_path / "no-such.json")
    ranks = need(DATA / "ranks" / "r50k_base.tiktoken")
    for specials in ("<|x|>", ["<|x|>"], {"<|x|>": 1.5}, {5: 50257}):
        with pytest.raises(InputTypeError, match="special_tokens"):
            Tokenizer.from_file(ranks, pattern="gpt2", special_tokens=specials)
    for specials in ({"<|x|>": -1}, {"<|x|>": 2**32}, {"": 50257}):
        with pytest.raises(VocabError, match="r50k_base.tiktoken: special_tokens"):
            Tokenizer.from_file(ranks, pattern="gpt2", special_tokens=specials)
