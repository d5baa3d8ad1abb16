"""Bad settings and empty corpora raise typed errors that say what was wrong; an interrupt (Ctrl-C,
simulated by raising KeyboardInterrupt from the progress callback) stops training cleanly and
leaves no file behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import bpekit.atomicfile
from bpekit.errors import DataNotFoundError, FormatError, InputTypeError, PatternError, VocabError
from bpekit.train import Trainer, TrainProgress, WordCounts, count, train, train_from_counts

TEXT = ["the quick brown fox jumps over the lazy dog " * 50, "pack my box with five dozen liquor jugs " * 50]


def test_empty_corpora(tmp_path: Path):
    (tmp_path / "empty.txt").write_text("")
    for source in [tmp_path / "empty.txt", iter([]), iter(["", ""]), iter(["<s><s>"])]:
        with pytest.raises(DataNotFoundError, match="corpus is empty"):
            train(source, vocab_size=300, special_tokens=["<s>"], show_progress=False)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"vocab_size": 255}, VocabError, "vocab_size must be an integer >= 256"),
        ({"vocab_size": 257, "special_tokens": ["<a>", "<b>"]}, VocabError, ">= 258"),
        ({"vocab_size": "1000"}, VocabError, "vocab_size"),
        ({"vocab_size": 300, "special_tokens": "<s>"}, InputTypeError, "not one str"),
        ({"vocab_size": 300, "special_tokens": ["<s>", "<s>"]}, VocabError, "distinct"),
        ({"vocab_size": 300, "special_tokens": [""]}, VocabError, "empty string"),
        ({"vocab_size": 300, "min_frequency": 0}, VocabError, "min_frequency"),
        ({"vocab_size": 300, "max_token_length": 1}, VocabError, "max_token_length"),
        ({"vocab_size": 300, "threads": -1}, VocabError, "threads"),
        ({"vocab_size": 2**70}, VocabError, "vocab_size must be an integer <= 4294967296"),
        ({"vocab_size": 300, "min_frequency": 2**64}, VocabError, "min_frequency must be an integer <="),
        ({"vocab_size": 300, "threads": 10**5}, VocabError, "threads must be an integer <= 4096"),
        ({"vocab_size": 300, "pattern": "(unclosed"}, PatternError, "unclosed"),
        ({"vocab_size": 300, "pattern": 5}, PatternError, "pattern"),
        # a misspelt name was a regex that matched nothing: "the training corpus is empty"
        ({"vocab_size": 300, "pattern": "o300k"}, PatternError, "unknown pattern name 'o300k'"),
        ({"vocab_size": 300, "callback": 5}, InputTypeError, "callback must be callable"),
    ],
)
def test_bad_settings(kwargs, error, message):
    with pytest.raises(error, match=message):
        train(iter(TEXT), show_progress=False, **kwargs)


def test_counts_must_match_the_trainer():
    counts = count(iter(TEXT), pattern="gpt2", show_progress=False)
    with pytest.raises(PatternError):
        Trainer(300, pattern="cl100k", show_progress=False).train_from_counts(counts)
    with pytest.raises(VocabError):
        train_from_counts({"a": 1}, vocab_size=300)  # type: ignore[arg-type]


def test_word_counts_by_pattern_name_train():
    # from_dict kept the name "o200k" while train_from_counts' trainer resolved it to the regex:
    # "the word counts were made with another pattern"
    counts = WordCounts.from_dict({"hello": 5, " world": 3}, "o200k")
    assert counts == WordCounts.from_dict({"hello": 5, " world": 3}, "o200k_base")
    tok = train_from_counts(counts, vocab_size=260, show_progress=False)
    assert tok.encode("hello") == [259] and tok.decode(tok.encode(" world")) == " world"
    assert counts + count(iter(["hello"]), pattern="o200k", show_progress=False) is not None


def test_word_counts_refuse_what_is_not_a_word_or_a_count():
    counts = WordCounts.from_dict({b"ab": 2, "cd": 1}, "gpt2")
    assert counts["ab"] == counts[b"ab"] == 2 and counts[bytearray(b"cd")] == counts[memoryview(b"cd")] == 1
    for bad in ({5: 1}, {None: 1}):  # bytes(5) counted five NUL bytes
        with pytest.raises(InputTypeError, match="a word is a str or bytes"):
            WordCounts.from_dict(bad, "gpt2")
    with pytest.raises(InputTypeError):
        counts[5]
    for n in (2**64, True, 1.0):
        with pytest.raises(FormatError, match="must be an integer"):
            WordCounts.from_dict({"a": n}, "gpt2")
    assert counts.most_common(1) == [(b"ab", 2)] and len(counts.most_common()) == 2
    for n in (-1, 1.5, "2"):
        with pytest.raises(InputTypeError, match="most_common"):
            counts.most_common(n)


def _interrupt_at(phase: str):
    def callback(p: TrainProgress) -> None:
        if p.phase == phase:
            raise KeyboardInterrupt

    return callback


@pytest.mark.parametrize("phase", ["count", "merge"])
def test_interrupt_stops_training(phase, tmp_path: Path):
    source = tmp_path / "corpus.txt"
    source.write_text("".join(TEXT))
    with pytest.raises(KeyboardInterrupt):
        train(source, vocab_size=400, callback=_interrupt_at(phase), show_progress=False)
    assert os.listdir(tmp_path) == ["corpus.txt"]


def test_interrupt_while_saving_leaves_no_file(tmp_path: Path, monkeypatch):
    tok = train(iter(TEXT), vocab_size=300, show_progress=False)

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(bpekit.atomicfile.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        tok.save(tmp_path / "tok.json")
    with pytest.raises(KeyboardInterrupt):
        tok.export_hf(tmp_path / "tokenizer.json")
    assert os.listdir(tmp_path) == []


def test_callback_reports_both_phases():
    seen: list[TrainProgress] = []
    train(iter(TEXT), vocab_size=300, callback=seen.append, show_progress=False)
    phases = [p.phase for p in seen]
    assert phases[0] == "count" and phases[-1] == "merge"
    last = seen[-1]
    assert last.done == last.total == 300 and last.merges >= 44
