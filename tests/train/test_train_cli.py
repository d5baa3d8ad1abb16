"""``bpekit train``: outputs in each format, word counts saved and reused, errors and Ctrl-C."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from bpekit.train import progress as train_progress
from bpekit.cli import train as cli
from bpekit.tokenizer import Tokenizer
from bpekit.train import WordCounts

def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="bpekit")
    cli.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["train", *argv])
    return int(args.func(args))


@pytest.fixture
def corpus(tmp_path: Path, english_docs) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text(english_docs[1][:30_000] + "<|endoftext|>" + english_docs[0][:30_000])
    return path


def test_bpekit_output_and_counts(corpus: Path, tmp_path: Path, count_in_python):
    out, counts = tmp_path / "tok.json", tmp_path / "c.counts"
    status = run(str(corpus), "--vocab-size", "300", "-o", str(out), "--pattern", "gpt2",
                 "--special-token", "<|endoftext|>", "--save-counts", str(counts), "--no-progress")
    assert status == 0
    tok = Tokenizer.load(out)
    assert tok.vocab_size == 300 and tok.special_tokens == {"<|endoftext|>": 299} and tok.pattern_name == "gpt2"
    saved = WordCounts.load(counts)
    assert saved.special_tokens == ("<|endoftext|>",) and saved.stats["specials"] == 1
    assert saved.to_dict() == count_in_python([corpus.read_text()], tok.pattern, ["<|endoftext|>"])
    # retrain from the counts alone, and from counts plus text
    out2 = tmp_path / "again.json"
    assert run(str(counts), "--vocab-size", "300", "-o", str(out2), "--no-progress") == 0
    assert Tokenizer.load(out2).merges == tok.merges
    out3 = tmp_path / "both.json"
    assert run(str(counts), str(corpus), "--vocab-size", "300", "-o", str(out3), "--no-progress") == 0
    assert Tokenizer.load(out3).training["corpus"]["pre_tokens"] == 2 * saved.total()


def test_export_formats(corpus: Path, tmp_path: Path):
    assert run(str(corpus), "--vocab-size", "280", "-o", str(tmp_path / "m.tiktoken"), "--no-progress") == 0
    sidecar = json.loads((tmp_path / "m.tiktoken.json").read_text())
    assert sidecar["explicit_n_vocab"] == 280
    assert len((tmp_path / "m.tiktoken").read_text().splitlines()) == 280
    assert run(str(corpus), "--vocab-size", "280", "-o", str(tmp_path / "tokenizer.json"), "--no-progress") == 0
    assert json.loads((tmp_path / "tokenizer.json").read_text())["model"]["type"] == "BPE"
    out = tmp_path / "x.out"
    assert run(str(corpus), "--vocab-size", "280", "-o", str(out), "--format", "hf", "--no-progress") == 0
    assert "model" in json.loads(out.read_text())


def test_errors_exit_1(corpus: Path, tmp_path: Path, capsys):
    assert run(str(tmp_path / "missing.txt"), "--vocab-size", "300", "-o", str(tmp_path / "o.json")) == 1
    assert "training source not found" in capsys.readouterr().err
    assert run(str(corpus), "--vocab-size", "100", "-o", str(tmp_path / "o.json")) == 1
    assert "vocab_size must be" in capsys.readouterr().err
    assert not (tmp_path / "o.json").exists()


def test_ctrl_c_leaves_no_file(corpus: Path, tmp_path: Path, monkeypatch, capsys):
    def interrupt(self, p, force=False):
        raise KeyboardInterrupt

    monkeypatch.setattr(train_progress.ProgressBar, "update", interrupt)
    out = tmp_path / "tok.json"
    assert run(str(corpus), "--vocab-size", "300", "-o", str(out), "--save-counts", str(tmp_path / "c.counts")) == 130
    assert "interrupted" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["corpus.txt"]
