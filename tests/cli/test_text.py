"""``bpekit encode``, ``count``, ``decode`` and ``truncate``: documents from arguments, files, lines
and standard input, plain and JSON output, the special-token switches, and their errors."""

from __future__ import annotations

import io
import json
import sys

import bpekit
import pytest

ENC = "cl100k_base"
TEXT = "hello world <|endoftext|> again"


@pytest.fixture
def enc() -> bpekit.Encoding:
    return bpekit.get_encoding(ENC)


def json_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


def test_encode_arguments_files_and_lines(cli, enc, tmp_path):
    r = cli("encode", "hello world", "hi", "-e", ENC)
    assert r.code == 0 and r.out.splitlines() == [" ".join(map(str, enc.encode(t))) for t in ("hello world", "hi")]
    doc = tmp_path / "doc.txt"
    doc.write_text("one two\nthree\n", encoding="utf-8")
    r = cli("encode", "-f", str(doc), "--lines", "--json", "-e", ENC)
    got = json_lines(r.out)
    assert [g["source"] for g in got] == [f"{doc}:1", f"{doc}:2"]
    assert [g["ids"] for g in got] == [enc.encode("one two"), enc.encode("three")]
    assert [g["count"] for g in got] == [len(g["ids"]) for g in got]


def test_encode_special_token_switches(cli, enc):
    r = cli("encode", TEXT, "-e", ENC)
    assert r.code == 1 and "disallowed special token" in r.error_line
    assert cli("encode", TEXT, "-e", ENC, "--allow-special").out.split() == list(map(str, enc.encode(TEXT, allowed_special="all")))
    assert cli("encode", TEXT, "-e", ENC, "--ordinary").out.split() == list(map(str, enc.encode_ordinary(TEXT)))
    r = cli("encode", TEXT, "-e", ENC, "--ordinary", "--allow-special")
    assert r.code == 1 and "exclude each other" in r.error_line


def test_encode_offsets(cli, enc, data_dir):
    """``--offsets``: each id's span of the document, as ``encode_with_offsets`` gives it, for an
    encoding and for a tokenizer.json pipeline, under the special-token switches."""
    text = "naïve café <|endoftext|>"
    r = cli("encode", text, "-e", ENC, "--offsets", "--allow-special")
    ids, offsets = enc.encode_with_offsets(text, allowed_special="all")
    assert r.code == 0 and r.out.split() == [f"{i}:{a}:{b}" for i, (a, b) in zip(ids, offsets)]
    got = json_lines(cli("encode", text, "-e", ENC, "--offsets", "--json", "--ordinary").out)
    assert got[0]["ids"] == enc.encode_ordinary(text) and len(got[0]["offsets"]) == got[0]["count"]
    assert cli("encode", text, "-e", ENC, "--offsets").code == 1  # (the special token is refused)
    from bpekit import Tokenizer

    neox_file = data_dir / "hf" / "gpt-neox-20b.tokenizer.json"
    tok = Tokenizer.from_file(neox_file)
    got = json_lines(cli("encode", "Hello  world", "-e", str(neox_file), "--offsets", "--json").out)
    assert (got[0]["ids"], [tuple(o) for o in got[0]["offsets"]]) == tok.encode_with_offsets("Hello  world")


def test_count_and_total(cli, enc, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("from standard input"))
    r = cli("count", "-e", ENC, "--json")
    assert json_lines(r.out) == [{"source": "<stdin>", "count": enc.count("from standard input"), "bytes": 19}]
    r = cli("count", "a b c", TEXT, "-e", ENC, "--ordinary", "--total")
    assert r.out.strip() == str(enc.count("a b c") + len(enc.encode_ordinary(TEXT)))
    assert cli("count", TEXT, "-e", ENC, "--allow-special").out.strip() == str(len(enc.encode(TEXT, allowed_special="all")))


def test_count_of_many_lines_in_batches(cli, enc, tmp_path, monkeypatch):
    """``--lines`` counts go through ``count_batch`` in batches: each line's count, in order,
    across batch edges; a refused special token in a later batch still stops the command."""
    from bpekit.cli import text as text_cli

    monkeypatch.setattr(text_cli, "_COUNT_BATCH_DOCS", 7)
    lines = [f"line {i} " + "word " * (i % 13) for i in range(50)]
    doc = tmp_path / "lines.txt"
    doc.write_text("\n".join(lines), encoding="utf-8")
    r = cli("count", "-f", str(doc), "-e", ENC, "--lines", "--json")
    got = json_lines(r.out)
    assert [g["count"] for g in got] == [enc.count(t) for t in lines]
    assert [g["source"] for g in got] == [f"{doc}:{i}" for i in range(1, 51)]
    assert cli("count", "-f", str(doc), "-e", ENC, "--lines", "--total").out.strip() == str(sum(enc.count(t) for t in lines))
    doc.write_text("\n".join(lines + ["x <|endoftext|>"]), encoding="utf-8")
    r = cli("count", "-f", str(doc), "-e", ENC, "--lines")
    assert r.code == 1 and "disallowed special token" in r.error_line


def test_decode_ids_and_json_arrays(cli, enc, monkeypatch):
    ids = enc.encode("hello world")
    assert cli("decode", *map(str, ids), "-e", ENC).out == "hello world\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(ids) + "\n" + ",".join(map(str, enc.encode("hi"))) + "\n"))
    assert json_lines(cli("decode", "-e", ENC, "--json").out) == [{"text": "hello world"}, {"text": "hi"}]
    r = cli("decode", "12", "x", "-e", ENC)
    assert r.code == 1 and "token ids must be integers" in r.error_line


def test_truncate(cli, enc, tmp_path):
    doc = tmp_path / "doc.txt"
    long_text = "The quick brown fox jumps over the lazy dog. " * 200
    doc.write_text(long_text, encoding="utf-8")
    r = cli("truncate", "-f", str(doc), "--max-tokens", "25", "-e", ENC)
    assert r.code == 0 and r.out == enc.truncate(long_text, 25) and len(enc.encode(r.out)) == 25
    got = json_lines(cli("truncate", "a b c d e f", "hi", "-n", "3", "-e", ENC, "--json").out)
    assert [(g["text"], g["count"]) for g in got] == [("a b c", 3), ("hi", 1)]
    doc.write_text("one two three\nfour five six\n", encoding="utf-8")
    assert cli("truncate", "-f", str(doc), "--lines", "-n", "2", "-e", ENC).out == "one two\nfour five\n"
    # the special-token switches: refused inside the budget, allowed or ordinary on request
    assert cli("truncate", TEXT, "-n", "2", "-e", ENC).out == "hello world"
    r = cli("truncate", TEXT, "-n", "20", "-e", ENC)
    assert r.code == 1 and "disallowed special token" in r.error_line
    assert cli("truncate", TEXT, "-n", "4", "-e", ENC, "--allow-special").out == "hello world <|endoftext|>"
    assert cli("truncate", TEXT, "-n", "4", "-e", ENC, "--ordinary").out == enc.truncate(TEXT, 4, disallowed_special=())
    assert cli("truncate", "a b c d e f", "-n", "2", "--side", "left", "-e", ENC).out == " e f"
    r = cli("truncate", "x", "-n", "-1", "-e", ENC)
    assert r.code == 1 and "--max-tokens must be >= 0" in r.error_line
    r = cli("truncate", "x", "-e", ENC)
    assert r.code == 2 and "--max-tokens" in r.error_line


def test_a_tokenizer_file_as_the_encoding(cli, tmp_path):
    """``-e FILE``: a GGUF pipeline (Llama 3) with the same switches as an encoding (special-token
    text refused by default, matched with --allow-special, text with --ordinary), and a bpekit
    file (its Encoding)."""
    from datapaths import DATA

    gguf = DATA / "gguf" / "ggml-vocab-llama-bpe.gguf"
    if not gguf.is_file():
        pytest.skip(f"{gguf} not found")
    tok = bpekit.Tokenizer.from_file(gguf)
    text = "hi <|begin_of_text|> x"
    r = cli("encode", text, "-e", str(gguf))
    assert r.code == 1 and "disallowed special token '<|begin_of_text|>'" in r.error_line
    allowed = list(map(int, cli("encode", text, "-e", str(gguf), "--allow-special").out.split()))
    assert allowed == tok.encode(text) and tok.token_to_id("<|begin_of_text|>") in allowed
    ordinary = list(map(int, cli("encode", text, "-e", str(gguf), "--ordinary").out.split()))
    assert tok.token_to_id("<|begin_of_text|>") not in ordinary
    assert tok.decode(ordinary) == text
    assert cli("count", "hello world", "-e", str(gguf)).out.split() == [str(len(tok.encode("hello world")))]
    assert cli("count", "hello world", "a b", "-e", str(gguf)).out.split() == [str(len(tok.encode(t))) for t in ("hello world", "a b")]
    assert cli("truncate", "-n", "2", "hello there my friend", "-e", str(gguf)).out == "hello there"
    assert cli("decode", *map(str, tok.encode("hello world")), "-e", str(gguf)).out == "hello world\n"
    trained = tmp_path / "tok.json"
    from bpekit.train import train

    train(iter(["hello world " * 30]), vocab_size=260, show_progress=False).save(trained)
    enc = bpekit.Tokenizer.load(trained).encoding
    assert cli("encode", "hello world", "-e", str(trained)).out.split() == list(map(str, enc.encode("hello world")))


def test_a_tokenizer_file_refuses_special_text_in_one_pass(cli, tmp_path):
    """The first special token of the text is named (Llama 3 has 256), also in a file read with
    lone surrogates (``surrogateescape``)."""
    from datapaths import DATA

    gguf = DATA / "gguf" / "ggml-vocab-llama-bpe.gguf"
    if not gguf.is_file():
        pytest.skip(f"{gguf} not found")
    doc = tmp_path / "doc.txt"
    doc.write_bytes(b"a \xff b <|reserved_special_token_7|> c <|begin_of_text|>")
    r = cli("count", "-f", str(doc), "-e", str(gguf))
    warning, error = r.err.splitlines()
    assert r.code == 1 and "'<|reserved_special_token_7|>'" in error
    assert warning.endswith("doc.txt: 1 invalid UTF-8 byte replaced with U+FFFD")
    r = cli("count", "-f", str(doc), "-e", str(gguf), "--ordinary")
    assert r.code == 0 and int(r.out) > 10
