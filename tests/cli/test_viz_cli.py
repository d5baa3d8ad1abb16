"""``bpekit viz KIND``: every kind end to end, and its errors."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET

import pytest

from bpekit import Tokenizer


@pytest.fixture(autouse=True)
def _ranks(ranks, monkeypatch):  # noqa: ANN001
    monkeypatch.setenv("BPEKIT_DATA_DIR", str(ranks))


def test_tokens_plain_and_several_tokenizers(cli, tiny_file, monkeypatch):
    r = cli("viz", "tokens", "-t", str(tiny_file), "ababab", "abc")
    assert r.code == 0 and r.out == "ababab| |abc\n"
    r = cli("viz", "tokens", "-t", str(tiny_file), "-t", "o200k_base", "--text", "ab c")
    assert r.out.splitlines() == ["== tiny.json", "ab| c", "== o200k_base", "ab| c"]
    monkeypatch.setattr("sys.stdin", io.StringIO("abab"))
    assert cli("viz", "tokens", "-t", str(tiny_file)).out == "abab\n"


def test_tokens_colour_on_a_terminal(cli, tiny_file, monkeypatch):
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    r = cli("viz", "tokens", "-t", str(tiny_file), "ab c")
    assert "\x1b[48;5;" in r.out and re.sub(r"\x1b\[[0-9;]*m", "", r.out) == "ab c\n"


def test_tokens_html(cli, tiny_file, tmp_path):
    out = tmp_path / "t.html"
    r = cli("viz", "tokens", "-t", str(tiny_file), "ababab <x>", "-o", str(out))
    assert r.code == 0 and f"wrote {out}" in r.err
    page = out.read_text()
    assert 'data-ids="260"' in page and ">&lt;</span>" in page and "<x>" not in page


def test_forest(cli, tiny_file, tmp_path):
    out = tmp_path / "f.html"
    assert cli("viz", "forest", "-t", str(tiny_file), "-o", str(out)).code == 0
    data = re.search(r'id="forest-data">(.*?)</script>', out.read_text(), re.S)
    assert data is not None and json.loads(data.group(1))["c"][256:261] == [50, 20, 9, 7, 3]


def test_plots_and_report(cli, tiny_file, tmp_path):
    lengths = tmp_path / "l.svg"
    assert cli("viz", "lengths", "-t", str(tiny_file), "-t", "r50k_base", "-o", str(lengths)).code == 0
    assert "r50k_base" in lengths.read_text() and ET.fromstring(lengths.read_text()) is not None
    langs = tmp_path / "langs.svg"
    r = cli("viz", "languages", "-t", "o200k_base", "--text", "hello", "--text", "hallo", "-o", str(langs))
    assert r.code == 0 and "text 2 · o200k_base" in langs.read_text()
    page = tmp_path / "train.html"
    r = cli("viz", "training", "-t", str(tiny_file), "--text", "ababab abc " * 20, "-o", str(page))
    assert r.code == 0 and page.read_text().count("<svg") == 2
    report = tmp_path / "report"
    r = cli("viz", "report", "-t", str(tiny_file), "-t", "o200k_base", "--text", "ab abc", "-o", str(report))
    assert r.code == 0 and (report / "report.html").is_file() and (report / "forest.html").is_file()


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["forest", "-o", "{tmp}/f.html"], 2, "required: -t/--tokenizer"),
        (["lengths", "-t", "o200k_base"], 2, "required: -o/--output"),
        (["forest", "-t", "{tmp}/none.json", "-o", "{tmp}/f.html"], 1, "none.json' is neither an encoding"),
        (["training", "-t", "o200k_base", "-o", "{tmp}/t.html", "--text", "x"], 1, "not a trained tokenizer"),
        (["training", "-t", "{tiny}", "-o", "{tmp}/t.svg"], 1, "-o must end in .html"),
        (["languages", "-t", "o200k_base", "-o", "{tmp}/l.svg"], 1, "no texts"),
        (["tokens", "-t", "o200k_base", "-t", "{tiny}", "x", "-o", "{tmp}/t.html"], 1, "draws one tokenizer"),
        (["tokens", "-f", "{tmp}/none.txt"], 1, "none.txt: no such file"),
    ],
)
def test_errors(cli, tmp_path, tiny_file, args, code, message):
    argv = [a.replace("{tmp}", str(tmp_path)).replace("{tiny}", str(tiny_file)) for a in args]
    r = cli("viz", *argv)
    assert r.code == code and message in r.error_line
    assert not list(tmp_path.iterdir())  # nothing written


def test_forest_of_ranks_only(cli, tmp_path, tiny_file):
    Tokenizer.load(tiny_file).export_tiktoken(tmp_path / "tiny.tiktoken")  # ranks, no merge list
    r = cli("viz", "forest", "-t", str(tmp_path / "tiny.tiktoken"), "-o", str(tmp_path / "f.html"))
    try:
        import bpekit.formats.recover  # noqa: F401
    except ModuleNotFoundError:
        assert r.code == 1 and "no merge list" in r.error_line
    else:
        assert r.code == 0 and "pair counts at training time unknown" in (tmp_path / "f.html").read_text()
