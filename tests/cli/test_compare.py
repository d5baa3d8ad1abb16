"""``bpekit compare``: the numbers match the encoders, every input kind, JSON, SVG and errors."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

import pytest

import bpekit
from bpekit import Tokenizer


@pytest.fixture(autouse=True)
def _ranks(ranks, monkeypatch):  # noqa: ANN001
    monkeypatch.setenv("BPEKIT_DATA_DIR", str(ranks))


def test_table_matches_the_encoders(cli, tmp_path, tiny_file):
    doc = tmp_path / "doc.txt"
    doc.write_text("ababab abc c\n" * 10)
    r = cli("compare", "cl100k_base", str(tiny_file), "-f", str(doc), "--text", "hello world")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0].split()[:4] == ["text", "bytes", "cl100k_base", "tokens"]
    cl100k = bpekit.get_encoding("cl100k_base")
    tiny = Tokenizer.load(tiny_file)
    row = dict(zip(["text", "bytes", "a", "a_bpt", "a_fert", "b", "b_bpt", "b_fert"], lines[3].split(), strict=True))
    assert row["text"] == "doc.txt" and row["bytes"] == "130"
    assert int(row["a"].replace(",", "")) == len(cl100k.encode(doc.read_text()))
    # per line: ababab (260), " " (32), abc (259), " c" (258), "\n" (10)
    assert int(row["b"]) == len(tiny.encode(doc.read_text())) == 50
    assert lines[-1].startswith("(all)")


def test_json_and_svg(cli, tmp_path):
    out = tmp_path / "bpt.svg"
    r = cli("compare", "o200k_base", "r50k_base", "--text", "Größe 日本語", "--text", "a b c", "--json",
            "--svg", str(out))
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["tokenizers"] == ["o200k_base", "r50k_base"]
    first = doc["results"][0]
    assert first["text"] == "text 1" and first["bytes"] == len("Größe 日本語".encode()) and first["words"] == 2
    assert first["tokens"] == len(bpekit.get_encoding("o200k_base").encode("Größe 日本語"))
    assert first["bytes_per_token"] == round(first["bytes"] / first["tokens"], 4)
    assert [t["tokens"] for t in doc["totals"]] == [
        sum(x["tokens"] for x in doc["results"] if x["tokenizer"] == n) for n in doc["tokenizers"]
    ]
    ET.fromstring(out.read_text())


def test_corpora_and_stdin(cli, tmp_path, monkeypatch):
    corpora = tmp_path / "corpora"
    (corpora / "tatoeba").mkdir(parents=True)
    (corpora / "tatoeba" / "tatoeba.fra-eng.fra").write_text("Bonjour le monde.\n")
    (corpora / "tatoeba" / "tatoeba.eng").write_text("Hello world.\n")
    r = cli("compare", "o200k_base", "--corpora", str(corpora))
    assert r.code == 0 and [ln.split()[0] for ln in r.out.splitlines()[2:]] == ["eng", "fra", "(all)"]
    monkeypatch.setattr("sys.stdin", io.StringIO("piped text"))
    r = cli("compare", "o200k_base", "--json")
    assert json.loads(r.out)["results"][0]["text"] == "<stdin>"
    monkeypatch.setattr("sys.stdin", io.StringIO("piped text"))
    r = cli("compare", "o200k_base", "--json", "-f", "-", "--text", "more")
    assert [x["text"] for x in json.loads(r.out)["results"]] == ["text 1", "<stdin>"]


def test_tiktoken_file_with_sidecar(cli, tmp_path, tiny_file):
    Tokenizer.load(tiny_file).export_tiktoken(tmp_path / "tiny.tiktoken")
    r = cli("compare", str(tmp_path / "tiny.tiktoken"), str(tiny_file), "--text", "ababab abc", "--json")
    assert r.code == 0, r.err
    assert [x["tokens"] for x in json.loads(r.out)["results"]] == [3, 3]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["o200k_base", "-f", "{tmp}/missing.txt"], "missing.txt: no such file"),
        (["{tmp}/missing.json", "--text", "x"], "is neither an encoding name"),
        (["o200k_base", "o200k_base", "--text", "x"], "the same tokenizer is given twice"),
        (["o200k_base", "--text", "x", "--sample-bytes", "-1"], "--sample-bytes must be >= 0"),
        (["o200k_base", "--corpora", "{tmp}/none"], "corpora folder"),
        (["{tmp}", "--text", "x"], "is a directory, not a tokenizer file"),
        (["{tmp}/bad.json", "--text", "x"], "is not JSON"),
        (["{tmp}/lone.tiktoken", "--text", "x"], "has no sidecar"),
    ],
)
def test_errors(cli, tmp_path, args, message):
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "lone.tiktoken").write_text("YQ== 0\n")
    r = cli("compare", *[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert r.code == 1 and message in r.error_line


def test_no_texts_on_a_terminal(cli, monkeypatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Tty())
    r = cli("compare", "o200k_base")
    assert r.code == 1 and "no texts: give -f FILE" in r.error_line
