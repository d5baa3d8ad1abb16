"""Compression numbers, corpus sampling and language labels, and the standard-library sample."""

from __future__ import annotations

from pathlib import Path

import pytest

from bpekit.errors import DataNotFoundError, InputTypeError, UsageError
from bpekit.viz import corpus_samples, format_table, measure, stdlib_sample
from bpekit.viz.measure import totals
from bpekit.viz.models import Model
from bpekit.viz.samples import language_of, read_slices


def test_measure_by_hand(tiny):
    m = Model("tiny", tiny.encoding, tiny)
    rows = measure([m], {"one": "ababab abc", "two": "x y"})
    assert [(r.text, r.tokens, r.bytes, r.words) for r in rows] == [("one", 3, 10, 2), ("two", 3, 3, 2)]
    assert rows[0].bytes_per_token == 10 / 3 and rows[0].fertility == 1.5
    (total,) = totals(rows)
    assert (total.tokens, total.bytes, total.words) == (6, 13, 4)
    table = format_table(rows)
    assert table.splitlines()[0].split()[:3] == ["text", "bytes", "tiny"]
    assert table.splitlines()[-1].split() == ["(all)", "13", "6", "2.17", "1.50"]
    assert format_table(rows, compact=True).splitlines()[2].split() == ["one", "3.33"]


def test_language_labels():
    assert language_of(Path("c/tatoeba/tatoeba.fra-eng.fra")) == "fra"
    assert language_of(Path("c/tatoeba/tatoeba.eng")) == "eng"
    assert language_of(Path("c/bible/Zulu-NT.txt")) == "Zulu (bible)"
    assert language_of(Path("c/bible/K'iche'-NT-SIL.txt")) == "K'iche' SIL (bible)"
    assert language_of(Path("c/tinyshakespeare.txt")) == "tinyshakespeare"


def test_read_slices_keeps_whole_lines(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("".join(f"line {i:04d}\n" for i in range(2000)))
    got = read_slices(path, 2000, slices=4)
    lines = got.splitlines()
    assert all(len(x) == 9 and x.startswith("line ") for x in lines)
    assert "line 0000" in lines and "line 1999" in lines and 100 < len(lines) < 230


def test_corpus_samples_errors(tmp_path):
    with pytest.raises(DataNotFoundError, match="not found"):
        corpus_samples(tmp_path / "none")
    with pytest.raises(DataNotFoundError, match="no text files"):
        corpus_samples(tmp_path)


def test_real_corpora_have_over_100_languages(data_dir):
    samples = corpus_samples(data_dir / "corpora", 2_000)
    assert len(samples) >= 150, sorted(samples)
    assert {"eng", "cmn", "jpn", "Zulu (bible)", "Cherokee (bible)"} <= set(samples)
    assert all(0 < len(t.encode()) <= 2_100 for t in samples.values() if t)


def test_stdlib_sample_is_deterministic():
    a_train, a_held = stdlib_sample(60_000)
    b_train, b_held = stdlib_sample(60_000)
    assert a_train == b_train and a_held == b_held
    assert set(a_held) == {"python code (held out)", "python docs (held out)"}
    assert not set(a_train) & {a_held["python code (held out)"]}
    assert sum(map(len, a_train)) > 60_000


def test_measure_takes_any_tokenizer(tiny, encoding):
    # names, Encodings and Tokenizers failed with AttributeError (only a Model was measured)
    for models in (["cl100k_base"], [encoding.encoding], "cl100k_base", encoding.encoding):
        (row,) = measure(models, {"x": "hello world"})
        assert (row.tokenizer, row.tokens, row.bytes) == ("cl100k_base", 2, 11)
    (row,) = measure([tiny], {"x": "ababab abc"})
    assert (row.tokenizer, row.tokens) == ("tokenizer", 3)
    assert [r.tokens for r in measure(tiny, {"x": "ababab abc"})] == [3]


def test_measure_texts_must_map_str_to_str(tiny):
    for texts, message in ((["ab"], "texts must be a mapping"), ("ab", "texts must be a mapping"),
                           ({"x": None}, "str texts, got str 'x' -> NoneType"),
                           ({"x": b"ab"}, "str texts, got str 'x' -> bytes"), ({1: "ab"}, "got int 1")):
        with pytest.raises(InputTypeError, match=message):
            measure([tiny], texts)
    with pytest.raises(InputTypeError, match="a tokenizer or a list of tokenizers"):
        measure(None, {"x": "ab"})


def test_format_table_takes_measures(tiny):
    for rows in (["x"], "x", [None], 5):
        with pytest.raises(InputTypeError, match="expected a list of Measure"):
            format_table(rows)
    assert format_table(measure([tiny], {"x": "ab"})[0]).splitlines()[-1].split() == ["x", "2", "1", "2.00", "1.00"]


def test_corpus_samples_arguments(tmp_path):
    (tmp_path / "a.txt").write_text("hello world\n" * 100)
    for bad in ("100", None, 1.5, True):
        with pytest.raises(InputTypeError, match="sample_bytes must be an int >= 1"):
            corpus_samples(tmp_path, sample_bytes=bad)
    for bad in (0, -5):
        with pytest.raises(UsageError, match="sample_bytes must be an int >= 1"):
            corpus_samples(tmp_path, sample_bytes=bad)
    with pytest.raises(InputTypeError, match="root must be a path"):
        corpus_samples(None)
    assert corpus_samples(tmp_path, 3) == {"a": "hel"}  # was empty: 8 slices of 0 bytes
    assert corpus_samples(tmp_path, 100) == {"a": "hello world\n" * 8}  # one run of whole lines
    assert corpus_samples(tmp_path, 1 << 62) == {"a": "hello world\n" * 100}


def test_stdlib_sample_arguments():
    for kwargs, error in (({"heldout_every": 0}, UsageError), ({"heldout_every": 1}, UsageError),
                          ({"heldout_every": 2.0}, InputTypeError)):
        with pytest.raises(error, match="heldout_every must be an int >= 2"):
            stdlib_sample(1000, **kwargs)
    with pytest.raises(InputTypeError, match="code_bytes must be an int >= 1"):
        stdlib_sample("1000")
    with pytest.raises(UsageError, match="code_bytes must be an int >= 1"):
        stdlib_sample(-1)
