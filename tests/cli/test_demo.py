"""``bpekit demo``: trains, saves, encodes, compares with the encodings found offline and writes
the report; encodings whose rank files are missing are skipped with a note."""

from __future__ import annotations

import pytest

from bpekit import Tokenizer, registry
from bpekit.cli.demo import local_encodings


def test_demo_end_to_end(cli, tmp_path, ranks, monkeypatch):
    monkeypatch.setenv("BPEKIT_DATA_DIR", str(ranks))
    out = tmp_path / "demo"
    r = cli("demo", "-o", str(out), "--vocab-size", "400", "--sample-kb", "60")
    assert r.code == 0, r.err
    steps = [ln[:2] for ln in r.out.splitlines() if ln[:1].isdigit()]
    assert steps == ["1.", "2.", "3.", "4.", "5."]
    header = next(ln for ln in r.out.splitlines() if ln.startswith("bytes per token"))
    assert header.split()[3:] == ["demo", "(trained", "now)", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
    assert "skipped" not in r.out
    tok = Tokenizer.load(out / "demo.bpekit.json")
    assert tok.vocab_size == 400 and tok.special_tokens == {"<|endoftext|>": 399}
    assert {p.name for p in out.iterdir()} >= {"report.html", "forest.html", "tokens.html", "bytes-per-token.svg"}


def test_encodings_missing_offline_are_skipped(tmp_path, monkeypatch):
    monkeypatch.setenv("BPEKIT_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("BPEKIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(registry, "ENCODINGS", {})  # forget encodings loaded by other tests
    found, skipped = local_encodings()
    assert found == [] and skipped == ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--sample-kb", "0"], "--sample-kb must be >= 1"), (["-o", "{file}"], "exists and is not a folder"),
     (["--vocab-size", "10"], "vocab_size must be an integer >= 257")],
)
def test_bad_arguments(cli, tmp_path, args, message):
    (tmp_path / "f").write_text("")
    r = cli("demo", *[a.replace("{file}", str(tmp_path / "f")) for a in args])
    assert r.code == 1 and message in r.error_line
