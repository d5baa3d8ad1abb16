""".tiktoken files as Tokenizers: OpenAI's files identified by content, the sidecar bpekit writes,
byte-identical re-saves, pipelines converted to ranks only when rank BPE reproduces them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from bpekit import Tokenizer, patterns
from bpekit.errors import FormatError, NoSidecarError, UsageError
from bpekit.formats import gguf, tiktoken_file
from bpekit.formats.hf import from_document
from datapaths import DATA
from formats.test_gguf_support import corpus_sample, loaded

RANKS = DATA / "ranks"
BYTE_LEVEL = {
    "type": "ByteLevel",
    "add_prefix_space": False,
    "trim_offsets": True,
    "use_regex": True,
}
TRAINED = Tokenizer(
    pattern=patterns.CL100K,
    merges=[(b"h", b"e"), (b"l", b"l"), (b"he", b"ll"), (b" ", b"w"), (b"hell", b"o")],
    special_tokens=["<|endoftext|>", "<|pad|>"],
)
TEXTS = ["hello world", "hellohello  wow\n\n", "<|endoftext|> x", "1234567 ſ", ""]


def _r50k() -> Path:
    p = RANKS / "r50k_base.tiktoken"
    if not p.is_file():
        pytest.skip(f"{p} not found")
    return p


def test_openai_file_is_recognised_by_content(tmp_path: Path) -> None:
    from peers import tiktoken_encoding

    copy = tmp_path / "ranks.tiktoken"  # a name that says nothing
    shutil.copyfile(_r50k(), copy)
    tok = tiktoken_file.load(copy)
    ref = tiktoken_encoding("r50k_base")
    assert tok.special_tokens == {"<|endoftext|>": 50256}
    for line in corpus_sample(stride=10, per_file=6) + TEXTS:
        assert tok.encode(line, allowed_special="all") == ref.encode(
            line, allowed_special="all"
        )
    tiktoken_file.save(tok, tmp_path / "again.tiktoken")
    assert (tmp_path / "again.tiktoken").read_bytes() == _r50k().read_bytes()


def test_sidecar_round_trip(tmp_path: Path) -> None:
    side = tiktoken_file.save(TRAINED, tmp_path / "t.tiktoken")
    doc = json.loads(Path(side).read_text())
    assert (
        doc["pat_str"] == patterns.CL100K
        and doc["special_tokens"] == TRAINED.special_tokens
    )
    tok = Tokenizer.from_file(tmp_path / "t.tiktoken")
    assert [tok.encode(t, allowed_special="all") for t in TEXTS] == [
        TRAINED.encode(t, allowed_special="all") for t in TEXTS
    ]
    tiktoken_file.save(tok, tmp_path / "u.tiktoken")
    assert (tmp_path / "u.tiktoken").read_bytes() == (
        tmp_path / "t.tiktoken"
    ).read_bytes()
    assert (tmp_path / "u.tiktoken.json").read_bytes() == (
        tmp_path / "t.tiktoken.json"
    ).read_bytes()


def test_gguf_vocabularies_convert_to_ranks(tmp_path: Path) -> None:
    # classic merge list: the gpt-2 GGUF is r50k_base, byte for byte
    _r50k()
    tiktoken_file.save(loaded("gpt-2"), tmp_path / "g.tiktoken")
    assert (tmp_path / "g.tiktoken").read_bytes() == _r50k().read_bytes()
    # tiktoken-derived merge list (every split, ignore_merges): a rank model through GGUF and back
    gguf.save(TRAINED, tmp_path / "t.gguf")
    back = tiktoken_file.rank_model(gguf.load(tmp_path / "t.gguf"))
    assert back.ranks == TRAINED.ranks and back.special_tokens == TRAINED.special_tokens
    assert back.pattern == TRAINED.pattern


def _doc(**over: object) -> dict:
    doc = {
        "pre_tokenizer": BYTE_LEVEL,
        "decoder": BYTE_LEVEL,
        "model": {
            "type": "BPE",
            "vocab": {"a": 0, "b": 1, "ab": 2},
            "merges": [["a", "b"]],
        },
    }
    doc.update(over)  # type: ignore[arg-type]
    return doc


@pytest.mark.parametrize(
    ("over", "match"),
    [
        ({"normalizer": {"type": "NFC"}}, "normalize"),
        (
            {
                "pre_tokenizer": {
                    "type": "Sequence",
                    "pretokenizers": [
                        {"type": "Digits", "individual_digits": True},
                        BYTE_LEVEL,
                    ],
                }
            },
            "one regex",
        ),
        (
            {
                "added_tokens": [
                    {
                        "id": 3,
                        "content": "x",
                        "single_word": False,
                        "lstrip": False,
                        "rstrip": False,
                        "normalized": True,
                        "special": False,
                    }
                ]
            },
            "non-special",
        ),
        (
            {
                "model": {
                    "type": "BPE",
                    "vocab": {"a": 0, "b": 1, "ab": 2, "ba": 3},
                    "merges": [["b", "a"], ["a", "b"]],
                }
            },
            "growing id",
        ),
        (
            {
                "model": {
                    "type": "BPE",
                    "vocab": {"a": 0, "b": 1},
                    "merges": [],
                    "byte_fallback": True,
                }
            },
            "byte fallback",
        ),
        (
            {
                "post_processor": {
                    "type": "TemplateProcessing",
                    "single": [
                        {"SpecialToken": {"id": "a", "type_id": 0}},
                        {"Sequence": {"id": "A", "type_id": 0}},
                    ],
                    "pair": [{"Sequence": {"id": "A", "type_id": 0}}],
                    "special_tokens": {"a": {"id": "a", "ids": [0], "tokens": ["a"]}},
                }
            },
            "BOS",
        ),
    ],
)
def test_pipelines_rank_files_cannot_hold(
    over: dict, match: str, tmp_path: Path
) -> None:
    tok = from_document(_doc(**over))
    with pytest.raises(FormatError, match=match):
        tiktoken_file.save(tok, tmp_path / "x.tiktoken")
    assert not (tmp_path / "x.tiktoken").exists()


def test_a_plain_pipeline_converts() -> None:
    tok = tiktoken_file.rank_model(from_document(_doc()))
    assert tok.ranks == {b"a": 0, b"b": 1, b"ab": 2} and tok.pattern == patterns.GPT2


def test_bad_files(tmp_path: Path) -> None:
    (tmp_path / "x.tiktoken").write_bytes(b"YQ== 0\nYg== 1\n")
    with pytest.raises(NoSidecarError, match="pattern=") as raised:  # (the CLI gives its own advice on it)
        tiktoken_file.load(tmp_path / "x.tiktoken")
    assert isinstance(raised.value, UsageError)
    assert tiktoken_file.load(
        tmp_path / "x.tiktoken", pattern="gpt2", special_tokens={}
    ).encode("ab") == [0, 1]
    (tmp_path / "x.tiktoken.json").write_text('{"format": "other"}')
    with pytest.raises(FormatError, match="sidecar"):
        tiktoken_file.load(tmp_path / "x.tiktoken")
    side = {
        "format": "bpekit-tiktoken-sidecar",
        "pat_str": "\\w+",
        "special_tokens": {},
        "explicit_n_vocab": 7,
    }
    (tmp_path / "x.tiktoken.json").write_text(json.dumps(side))
    with pytest.raises(FormatError, match="sidecar says 7"):
        tiktoken_file.load(tmp_path / "x.tiktoken")
    (tmp_path / "y.tiktoken").write_bytes(b"YQ== 0\nnot a line\n")
    with pytest.raises(FormatError):
        tiktoken_file.load(tmp_path / "y.tiktoken", pattern="gpt2", special_tokens={})
