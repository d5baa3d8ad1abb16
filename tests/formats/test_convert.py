"""``bpekit convert`` and ``bpekit inspect``: every target from a trained tokenizer and back with
the same ids and byte-identical re-saves; real files across formats; one-line errors (exit 1,
nothing written) when a target cannot hold a tokenizer or an input is bad."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from bpekit import Tokenizer, patterns
from bpekit.cli import main
from bpekit.formats.gguf import container as c
from datapaths import DATA
from formats.test_gguf_support import gguf_bytes, gguf_path, gstr, kv_bytes

TRAINED = Tokenizer(
    pattern=patterns.O200K,
    merges=[
        (b"h", b"e"),
        (b"l", b"l"),
        (b"he", b"ll"),
        (b" ", b"w"),
        (b"hell", b"o"),
        (b"o", b"r"),
    ],
    special_tokens=["<|endoftext|>"],
)
TEXTS = ["hello world", "hellohello  wow\n\n", "Ünïcödé 北京 123456", "", "  "]
NAMES = {
    "hf": "t.json",
    "tiktoken": "t.tiktoken",
    "gguf": "t.gguf",
    "minbpe": "t.model",
    "gpt2": "pair",
    "bpekit": "t.bpekit.json",
}


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "src.json"
    TRAINED.save(path)
    return path


@pytest.mark.parametrize("target", sorted(NAMES))
def test_convert_round_trip(
    target: str, source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / NAMES[target]
    rc, stdout, err = run(capsys, "convert", source, out, "--to", target)
    assert rc == 0, err
    assert f"({target})" in stdout
    loaded = Tokenizer.from_file(out / "encoder.json" if target == "gpt2" else out)
    assert [loaded.encode_ordinary(t) for t in TEXTS] == [
        TRAINED.encode_ordinary(t) for t in TEXTS
    ]
    again = tmp_path / ("again" if target == "gpt2" else "again" + NAMES[target])
    rc, _, err = run(
        capsys,
        "convert",
        out / "vocab.bpe" if target == "gpt2" else out,
        again,
        "--to",
        target,
    )
    assert rc == 0, err
    if target == "gpt2":
        for name in ("encoder.json", "vocab.bpe"):
            assert (again / name).read_bytes() == (out / name).read_bytes()
    else:
        assert again.read_bytes() == out.read_bytes()


def test_hf_output_loads_in_tokenizers(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    assert run(capsys, "convert", source, tmp_path / "t.json", "--to", "hf")[0] == 0
    ref = tokenizers.Tokenizer.from_file(str(tmp_path / "t.json"))
    assert [ref.encode(t).ids for t in TEXTS] == [
        TRAINED.encode_ordinary(t) for t in TEXTS
    ]


def test_gguf_llama_to_sentencepiece_and_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spm = pytest.importorskip("sentencepiece")
    rc, _, err = run(
        capsys,
        "convert",
        gguf_path("llama-spm"),
        tmp_path / "l.model",
        "--to",
        "sentencepiece",
    )
    assert rc == 0, err
    ref = spm.SentencePieceProcessor(model_file=str(tmp_path / "l.model"))
    tok = Tokenizer.from_file(gguf_path("llama-spm"))
    assert [tok.encode(t) for t in TEXTS] == [ref.encode(t) for t in TEXTS]
    rc, _, err = run(
        capsys, "convert", tmp_path / "l.model", tmp_path / "l.gguf", "--to", "gguf"
    )
    assert rc == 0, err
    back = Tokenizer.from_file(tmp_path / "l.gguf")
    assert [back.encode(t) for t in TEXTS] == [ref.encode(t) for t in TEXTS]


@pytest.mark.parametrize(
    ("target", "match"),
    [("sentencepiece", "cannot represent"), ("minbpe", "byte b to id b")],
)
def test_targets_that_cannot_hold_the_tokenizer(
    target: str, match: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a rank file whose byte tokens are numbered backwards (minbpe fixes byte b to id b)
    src = tmp_path / "rev.tiktoken"
    src.write_bytes(
        b"".join(
            base64.b64encode(bytes([b])) + b" %d\n" % (255 - b) for b in range(256)
        )
    )
    out = tmp_path / "out.model"
    rc, _, err = run(capsys, "convert", src, out, "--to", target, "--pattern", "gpt2")
    assert rc == 1 and match in err and err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


def test_bad_inputs_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = tmp_path / "h.gguf"
    hostile.write_bytes(
        gguf_bytes(
            kv_bytes(
                "tokenizer.ggml.tokens",
                c.ARRAY,
                b"\x08\x00\x00\x00" + (2**60).to_bytes(8, "little") + gstr("a"),
            )
        )
    )
    (tmp_path / "junk.bin").write_bytes(b"\x00\x01junk")
    for path in (tmp_path / "absent.json", hostile, tmp_path / "junk.bin"):
        rc, _, err = run(capsys, "inspect", path)
        assert (
            rc == 1
            and err.startswith("bpekit inspect: error:")
            and err.count("\n") == 1
        ), err
    rc, _, err = run(capsys, "convert", hostile, tmp_path / "o.json", "--to", "hf")
    assert rc == 1 and "truncated" in err and not (tmp_path / "o.json").exists()


@pytest.mark.parametrize("kind", ["gguf-bpe", "gguf-spm", "tiktoken", "bpekit"])
def test_inspect(kind: str, source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = {
        "gguf-bpe": lambda: gguf_path("gpt-2"),
        "gguf-spm": lambda: gguf_path("phi-3"),
        "tiktoken": lambda: DATA / "ranks" / "r50k_base.tiktoken",
        "bpekit": lambda: source,
    }[kind]()
    if not Path(path).is_file():
        pytest.skip(f"{path} not found")
    rc, out, err = run(capsys, "inspect", path, "--json", "--top", "3")
    assert rc == 0, err
    info = json.loads(out)
    assert info["vocab_size"] > 256 and len(info["longest_tokens"]) == 3
    assert info["sample"]["decoded"] == info["sample"]["text"] or kind == "gguf-spm"
    assert all(
        info["longest_tokens"][i]["bytes"] >= info["longest_tokens"][i + 1]["bytes"]
        for i in range(2)
    )
    if kind in ("gguf-spm", "bpekit"):
        rc, text, _ = run(capsys, "inspect", path)
        assert rc == 0 and "vocab size:" in text and "longest:" in text
