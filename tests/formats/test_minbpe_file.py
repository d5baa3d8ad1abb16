"""minbpe ``.model`` files as Tokenizers: the same ids as bpekit.minbpe's tokenizers (which match
karpathy/minbpe), byte-identical re-saves, and typed errors for what the format cannot hold."""

from __future__ import annotations

from pathlib import Path

import pytest
from bpekit import Tokenizer
from bpekit.errors import FormatError
from bpekit.formats import minbpe_file
from bpekit.minbpe import BasicTokenizer, RegexTokenizer
from formats.test_gguf_support import corpus_sample

TEXT = (
    "hello world, hello there! The quick brown fox jumps over the lazy dog 12345. "
    "Ünïcödé text and ümlauts, 北京 and more hello hello world world\n\n  indented   spaces"
) * 3
SPECIALS = {"<|endoftext|>": 400, "<|fim|>": 401}


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[object, Path]]:
    out = {}
    base = tmp_path_factory.mktemp("minbpe")
    regex_tok = RegexTokenizer()
    regex_tok.train(TEXT, 320)
    regex_tok.register_special_tokens(SPECIALS)
    regex_tok.save(str(base / "regex"))
    basic = BasicTokenizer()
    basic.train(TEXT, 300)
    basic.save(str(base / "basic"))
    out["regex"] = (regex_tok, base / "regex.model")
    out["basic"] = (basic, base / "basic.model")
    return out


def _lines() -> list[str]:
    return corpus_sample(stride=10, per_file=10) + [
        TEXT,
        "",
        " ",
        "hello<|endoftext|>world <|fim|>",
    ]


def test_regex_model_loads_with_minbpe_ids(trained: dict) -> None:
    ref, path = trained["regex"]
    tok = minbpe_file.load(path)
    assert isinstance(tok, Tokenizer)
    for line in _lines():
        assert tok.encode(line, allowed_special="all") == ref.encode(
            line, allowed_special="all"
        ), line
        assert tok.decode(tok.encode(line, allowed_special="all")) == line


def test_basic_model_does_not_split(trained: dict) -> None:
    ref, path = trained["basic"]
    tok = minbpe_file.load(path)
    assert tok.pattern == minbpe_file.WHOLE_TEXT
    for line in _lines():
        assert tok.encode_ordinary(line) == ref.encode(line), line


@pytest.mark.parametrize("kind", ["regex", "basic"])
def test_save_is_byte_identical(kind: str, trained: dict, tmp_path: Path) -> None:
    _, path = trained[kind]
    tok = minbpe_file.load(path)
    minbpe_file.save(tok, tmp_path / "again.model")
    assert (tmp_path / "again.model").read_bytes() == path.read_bytes()
    assert (tmp_path / "again.vocab").read_bytes() == path.with_suffix(
        ".vocab"
    ).read_bytes()
    again = minbpe_file.load(tmp_path / "again.model")
    assert [again.encode(x, allowed_special="all") for x in _lines()] == [
        tok.encode(x, allowed_special="all") for x in _lines()
    ]


def test_tokenizers_minbpe_cannot_hold(tmp_path: Path) -> None:
    import bpekit

    with pytest.raises(FormatError, match="byte b to id b"):
        minbpe_file.minbpe_parts(
            Tokenizer.from_encoding(bpekit.get_encoding("r50k_base"))
        )
    with pytest.raises(FormatError, match="whitespace"):
        minbpe_file.save(
            Tokenizer(pattern=r"\w+", merges=[], special_tokens={"<a b>": 256}),
            tmp_path / "x.model",
        )
    with pytest.raises(FormatError, match=".model"):
        minbpe_file.save(Tokenizer(pattern=r"\w+", merges=[]), tmp_path / "x.bin")
    assert not (tmp_path / "x.model").exists()


@pytest.mark.parametrize(
    "body",
    [
        "minbpe v2\n\n0\n",
        "minbpe v1\n\nx\n",
        "minbpe v1\n\n0\n97 98\n97 98\n",  # a pair merged twice
        "minbpe v1\n\n0\n97 256\n",  # a merge using its own id (a cycle)
        "minbpe v1\n\n0\n97 98\n300 1\n",  # a merge using an id not made yet
    ],
)
def test_malformed_models_raise_format_error(body: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.model"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(FormatError):
        minbpe_file.load(path)
