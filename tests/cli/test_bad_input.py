"""Bad input to every command is one clear line and a non-zero exit, refused before any work:
an output that is also an input, numbers out of range, corrupt compressed inputs, ids that are
not integers, options that do not apply, outputs that cannot be written; invalid UTF-8 is
counted as the bytes it is, with a warning."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import sys
from pathlib import Path

import pytest

from bpekit import Tokenizer
from bpekit.train.sources import open_binary

HUGE = "99999999999999999999"
CORPUS = "the cat sat on the mat, the cat ate the rat\n" * 50


@pytest.fixture(autouse=True)
def _ranks(ranks, monkeypatch):  # noqa: ANN001
    monkeypatch.setenv("BPEKIT_DATA_DIR", str(ranks))


@pytest.fixture
def corpus(tmp_path) -> Path:
    path = tmp_path / "small.txt"
    path.write_text(CORPUS)
    return path


def train(cli, *argv: str):  # noqa: ANN001, ANN201
    return cli("train", *argv, "--no-progress")


# 1. an output that is also an input is refused before any work, the input left as it was


def test_train_output_is_an_input(cli, corpus, tmp_path):
    r = train(cli, str(corpus), "--vocab-size", "260", "-o", str(corpus))
    assert r.code == 1 and f"{corpus} is also an input ({corpus}); choose another output path" in r.error_line
    r = train(cli, str(corpus), "--vocab-size", "260", "-o", str(tmp_path / "c.json"), "--save-counts", str(corpus))
    assert r.code == 1 and "is also an input" in r.error_line
    (tmp_path / "link.txt").symlink_to(corpus)
    r = train(cli, str(tmp_path), "--vocab-size", "260", "-o", str(tmp_path / "link.txt"))  # a folder's file, by a link
    assert r.code == 1 and "is also an input" in r.error_line
    r = train(cli, str(tmp_path / "*.txt"), "--vocab-size", "260", "-o", f"{tmp_path}/../{tmp_path.name}/small.txt")
    assert r.code == 1 and "is also an input" in r.error_line
    r = train(cli, str(corpus), "--vocab-size", "260", "-o", str(tmp_path / "t.json"), "--save-counts", str(tmp_path / "t.json"))
    assert r.code == 1 and "written twice" in r.error_line
    assert corpus.read_text() == CORPUS and sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "small.txt"]


def test_convert_compare_viz_output_is_an_input(cli, tiny_file, corpus, tmp_path):
    tok = tmp_path / "tok.json"
    tok.write_bytes(tiny_file.read_bytes())
    r = cli("convert", str(tok), str(tok), "--to", "hf")
    assert r.code == 1 and f"{tok} is also an input ({tok})" in r.error_line
    Tokenizer.load(tiny_file).export_tiktoken(tmp_path / "t.tiktoken")
    r = cli("convert", str(tmp_path / "t.tiktoken"), str(tmp_path / "t.tiktoken.json"), "--to", "hf")  # its sidecar
    assert r.code == 1 and "is also an input" in r.error_line
    r = cli("compare", "o200k_base", "-f", str(corpus), "--svg", str(corpus))
    assert r.code == 1 and "is also an input" in r.error_line
    r = cli("viz", "forest", "-t", str(tok), "-o", str(tok))
    assert r.code == 1 and "is also an input" in r.error_line
    assert tok.read_bytes() == tiny_file.read_bytes() and corpus.read_text() == CORPUS


# 2. numbers out of range name the option


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--vocab-size", HUGE, "--vocab-size must be at most 4294967296"),
        ("--min-frequency", HUGE, "--min-frequency must be at most"),
        ("--max-token-length", HUGE, "--max-token-length must be at most"),
        ("--threads", HUGE, "--threads must be from 0 to 4096"),
        ("--threads", "5000", "--threads must be from 0 to 4096"),
    ],
)
def test_train_numbers_out_of_range(cli, corpus, tmp_path, option, value, message):
    argv = ["--vocab-size", "260", option, value] if option != "--vocab-size" else [option, value]
    r = train(cli, str(corpus), *argv, "-o", str(tmp_path / "x.json"))
    assert r.code == 1 and message in r.error_line and not (tmp_path / "x.json").exists()


def test_other_numbers_out_of_range(cli, corpus, tmp_path):
    r = cli("demo", "--vocab-size", HUGE, "-o", str(tmp_path / "d"))
    assert r.code == 1 and "--vocab-size must be at most" in r.error_line
    r = cli("demo", "--threads", "5000", "-o", str(tmp_path / "d"))
    assert r.code == 1 and "--threads must be from 0 to 4096" in r.error_line
    r = cli("tokenize", str(corpus), "-o", str(tmp_path / "t"), "-t", "o200k_base", "--threads", HUGE)
    assert r.code == 1 and "--threads must be from 0 to 4096" in r.error_line
    assert not (tmp_path / "d").exists() and not (tmp_path / "t").exists()
    r = cli("truncate", "-n", str(2**64), "hello world")  # a budget past any text: all of it
    assert r.code == 0 and r.out == "hello world"


# 3. Ctrl-C after the word counts were saved says so


def test_train_interrupted_after_saving_counts(cli, corpus, tmp_path, monkeypatch):
    from bpekit.train.trainer import Trainer

    def interrupt(self, counts, consume=False):  # noqa: ANN001, ANN202
        raise KeyboardInterrupt

    monkeypatch.setattr(Trainer, "train_from_counts", interrupt)
    counts = tmp_path / "big.counts"
    r = train(cli, str(corpus), "--vocab-size", "260", "-o", str(tmp_path / "t.json"), "--save-counts", str(counts))
    assert r.code == 130 and f"interrupted; wrote the word counts ({counts}) but not the tokenizer" in r.err
    assert counts.is_file() and not (tmp_path / "t.json").exists()


# 4. demo checks its arguments before training


def test_demo_checks_arguments_first(cli, tmp_path):
    out = tmp_path / "d4"
    r = cli("demo", "--corpora", str(tmp_path / "nope"), "--sample-kb", "50", "-o", str(out))
    assert r.code == 1 and "corpora folder" in r.error_line and "1. training" not in r.out
    assert not out.exists()


# 5. corrupt compressed inputs: a FormatError naming the file and its format


def _corrupt_inputs(tmp_path: Path) -> dict[str, str]:
    zstandard = pytest.importorskip("zstandard")
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    data = "".join(f"word{i} other{i * 7} " for i in range(20000)).encode()
    full = {"gz": gzip.compress(data), "bz2": bz2.compress(data), "xz": lzma.compress(data),
            "zst": zstandard.ZstdCompressor().compress(data)}
    kinds = {"gz": "gzip", "bz2": "bz2", "xz": "xz", "zst": "zstd"}
    cases = {}
    for ext, blob in full.items():
        (tmp_path / f"cut.txt.{ext}").write_bytes(blob[: len(blob) // 2])
        (tmp_path / f"junk.txt.{ext}").write_bytes(b"not compressed at all\n" * 10)
        cases[f"cut.txt.{ext}"] = cases[f"junk.txt.{ext}"] = kinds[ext]
    (tmp_path / "junk.jsonl.gz").write_bytes(b"garbage")
    cases["junk.jsonl.gz"] = "gzip"
    (tmp_path / "junk.parquet").write_bytes(b"not parquet\n" * 10)
    pq.write_table(pa.table({"text": [f"row {i}" for i in range(5000)]}), tmp_path / "ok.parquet")
    blob = (tmp_path / "ok.parquet").read_bytes()
    (tmp_path / "cut.parquet").write_bytes(blob[: len(blob) // 2] + blob[-1000:])
    cases["junk.parquet"] = cases["cut.parquet"] = "parquet"
    return cases


def test_corrupt_compressed_training_inputs(cli, tmp_path):
    for name, kind in _corrupt_inputs(tmp_path).items():
        path = tmp_path / name
        r = train(cli, str(path), "--vocab-size", "260", "-o", str(tmp_path / "o.json"))
        assert r.code == 1 and f"bpekit train: error: {path}: not a valid {kind} file (" in r.error_line, name
        assert "internal error" not in r.err
    assert not (tmp_path / "o.json").exists()


def test_corrupt_compressed_tokenize_inputs(cli, tmp_path):
    _corrupt_inputs(tmp_path)
    for name, kind in (("cut.txt.gz", "gzip"), ("junk.txt.zst", "zstd"), ("cut.txt.zst", "zstd")):
        r = cli("tokenize", str(tmp_path / name), "-o", str(tmp_path / "out"), "-t", "o200k_base", "--no-progress")
        assert r.code == 1 and f"{tmp_path / name}: not a valid {kind} file" in r.error_line, name


def test_zstd_reader_streams_every_frame(tmp_path):
    zstandard = pytest.importorskip("zstandard")
    one, two = os.urandom(200_000).hex().encode(), b"second frame " * 50_000
    c = zstandard.ZstdCompressor()
    (tmp_path / "m.zst").write_bytes(c.compress(one) + c.compress(two))
    with open_binary(tmp_path / "m.zst") as f:
        assert b"".join(iter(lambda: f.read(1 << 16), b"")) == one + two
    with open(tmp_path / "s.zst", "wb") as raw, c.stream_writer(raw, closefd=False) as w:  # no content size
        w.write(two)
    with open_binary(tmp_path / "s.zst") as f:
        assert f.readline() == b"second frame " * 50_000 and f.read() == b""
    (tmp_path / "e.zst").write_bytes(b"")
    with open_binary(tmp_path / "e.zst") as f:
        assert f.read() == b""


# 6. decode: ids must be integers; -f as documented


@pytest.mark.parametrize("ids", ["[1.5]", "[true, 2]", '["7"]', "1.5", "[[1]]"])
def test_decode_refuses_ids_that_are_not_integers(cli, ids):
    r = cli("decode", ids)
    assert r.code == 1 and "token ids must be integers" in r.error_line


def test_decode_from_files(cli, tmp_path):
    from bpekit import get_encoding

    enc = get_encoding("o200k_base")
    ids = tmp_path / "ids.txt"
    ids.write_text(json.dumps(enc.encode("hello")) + "\n" + " ".join(map(str, enc.encode("world"))) + "\n")
    r = cli("decode", "-f", str(ids), "--json")
    assert r.code == 0 and [json.loads(x)["text"] for x in r.out.splitlines()] == ["hello", "world"]


# 7. --pattern where it does not apply, or empty


def test_pattern_refused_where_it_does_not_apply(cli, tiny_file, corpus, tmp_path):
    r = cli("convert", str(tiny_file), str(tmp_path / "x.tiktoken"), "--to", "tiktoken", "--pattern", "(")
    assert r.code == 1 and "--pattern applies to a .tiktoken rank file" in r.error_line and "bpekit file" in r.error_line
    r = cli("convert", str(tiny_file), str(tmp_path / "x.json"), "--to", "hf", "--pattern", "")
    assert r.code == 1 and "--pattern is empty" in r.error_line
    r = train(cli, str(corpus), "--vocab-size", "260", "-o", str(tmp_path / "t.json"), "--pattern", "")
    assert r.code == 1 and "--pattern is empty" in r.error_line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.txt"]


# 8. clear messages: outputs that cannot be written, CLI advice, directories


def test_outputs_that_cannot_be_written(cli, corpus, tiny_file, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir").mkdir()
    for out, message in ((str(tmp_path / "adir"), "it is a directory"), (".", "cannot write .: it is a directory"),
                         ("", "cannot write '': the output path is empty"),
                         (f"{corpus}/x.json", f"{corpus} is not a folder")):
        r = train(cli, str(corpus), "--vocab-size", "260", "-o", out)
        assert r.code == 1 and message in r.error_line and ".tmp" not in r.err, out
    r = cli("compare", "o200k_base", "--text", "x", "--svg", "")
    assert r.code == 1 and "the output path is empty" in r.error_line
    r = cli("viz", "forest", "-t", str(tiny_file), "-o", str(tmp_path / "adir"))
    assert r.code == 1 and "it is a directory" in r.error_line
    r = cli("convert", str(tiny_file), str(tmp_path / "adir"), "--to", "hf")
    assert r.code == 1 and "it is a directory" in r.error_line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "small.txt"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_a_write_that_fails_names_the_output(cli, corpus, tiny_file):
    r = train(cli, str(corpus), "--vocab-size", "260", "-o", "/proc/x.json")
    assert r.code == 1 and r.error_line.startswith("bpekit train: error: cannot write /proc/x.json: ")
    r = cli("viz", "forest", "-t", str(tiny_file), "-o", "/proc/f.html")
    assert r.code == 1 and r.error_line.startswith("bpekit viz: error: cannot write /proc/f.html: ")
    r = cli("convert", str(tiny_file), "/proc/x.json", "--to", "hf")
    assert r.code == 1 and "cannot write /proc/x.json: " in r.error_line and ".tmp" not in r.err


def test_advice_in_command_line_terms(cli, tiny_file, tmp_path):
    r = cli("encode", "hi <|endoftext|>")
    assert r.code == 1 and "disallowed special token '<|endoftext|>'" in r.error_line
    assert "--allow-special" in r.error_line and "--ordinary" in r.error_line and "allowed_special" not in r.err
    Tokenizer.load(tiny_file).export_tiktoken(tmp_path / "lone.tiktoken")
    (tmp_path / "lone.tiktoken.json").unlink()
    r = cli("encode", "-e", str(tmp_path / "lone.tiktoken"), "hi")
    assert r.code == 1 and "sidecar is missing" in r.error_line and "--pattern PATTERN" in r.error_line
    assert "pattern=" not in r.err
    r = cli("convert", str(tmp_path / "lone.tiktoken"), str(tmp_path / "x.json"), "--to", "hf")
    assert r.code == 1 and "give --pattern PATTERN" in r.error_line and "pattern=" not in r.err
    r = cli("compare", "o200k_base", "-f", str(tmp_path))
    assert r.code == 1 and f"{tmp_path} is a directory, not a text file" in r.error_line
    r = cli("encode", "-e", str(tmp_path), "hi")
    assert r.code == 1 and f"{tmp_path} is a directory, not an encoding name or a tokenizer file" in r.error_line


# 9. invalid UTF-8: the bytes as read, and a warning


def test_invalid_utf8_counts_the_bytes_read(cli, tmp_path, monkeypatch):
    doc = tmp_path / "nonutf8.txt"
    doc.write_bytes(b"hello \xff\xfe world\n")  # 15 bytes
    warning = f"{doc}: 2 invalid UTF-8 bytes replaced with U+FFFD"
    r = cli("count", "-f", str(doc), "--json")
    assert r.code == 0 and json.loads(r.out)["bytes"] == 15
    assert r.err.strip() == f"bpekit count: warning: {warning}"
    r = cli("encode", "-f", str(doc))
    assert r.code == 0 and r.err.strip() == f"bpekit encode: warning: {warning}"
    r = cli("truncate", "-f", str(doc), "-n", "2")
    assert r.code == 0 and r.out.startswith("hello \ufffd") and r.err.strip() == f"bpekit truncate: warning: {warning}"

    class Stdin(io.StringIO):
        buffer = io.BytesIO(b"a\xffb")

    monkeypatch.setattr(sys, "stdin", Stdin())
    r = cli("count", "--json")
    assert json.loads(r.out)["bytes"] == 3 and "<stdin>: 1 invalid UTF-8 byte replaced" in r.err
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(b"one\r\ntwo\r\n")
    assert json.loads(cli("count", "-f", str(crlf), "--json").out)["bytes"] == 10


def test_compare_counts_the_bytes_read(cli, tmp_path):
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 4)
    r = cli("compare", "o200k_base", "-f", str(garbage), "--json")
    assert r.code == 0 and json.loads(r.out)["results"][0]["bytes"] == 1024
    assert r.err.strip() == "bpekit compare: warning: garbage.bin: 512 invalid UTF-8 bytes replaced with U+FFFD"
