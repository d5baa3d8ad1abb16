"""Every kind of training source gives the counts of the text it holds: text files, directories,
globs, JSON lines, Parquet, gzip/zstd/bz2/xz files and iterators; bad sources are named in the
error."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from pathlib import Path

import pytest

from bpekit.errors import DataNotFoundError, FormatError
from bpekit.patterns import resolve_pattern
from bpekit.train import count

DOCS = [
    "Hello world.\nThe second line, with 123 numbers",
    "Ünïcödé text 中文 and العربية\n\n  indented /path\n",
    "x = f(y) + 2  # code\n\tdef g():\n\t\treturn 'it''s'",
]
PATTERN = resolve_pattern("o200k")


def counts_of(source, **kw) -> dict[bytes, int]:
    return count(source, pattern="o200k", show_progress=False, **kw).to_dict()


def file_text() -> str:
    return "\n".join(DOCS)


@pytest.fixture
def expected_file(count_in_python) -> dict[bytes, int]:
    return count_in_python([file_text()], PATTERN)


@pytest.fixture
def expected_docs(count_in_python) -> dict[bytes, int]:
    return count_in_python(DOCS, PATTERN)


def test_text_file_and_compressed_copies(tmp_path: Path, expected_file):
    data = file_text().encode()
    zstandard = pytest.importorskip("zstandard")
    zstd = zstandard.ZstdCompressor().compress
    writers = {
        "a.txt": lambda d: d,
        "a.txt.gz": gzip.compress,
        "a.txt.bz2": bz2.compress,
        "a.txt.xz": lzma.compress,
        "a.txt.zst": lambda d: zstd(d[:40]) + zstd(d[40:]),  # two frames
    }
    for name, write in writers.items():
        (tmp_path / name).write_bytes(write(data))
        assert counts_of(tmp_path / name) == expected_file, name
        assert counts_of(str(tmp_path / name)) == expected_file, name


def test_directories_and_globs(tmp_path: Path, count_in_python):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text(DOCS[0])
    (tmp_path / "sub" / "b.txt").write_text(DOCS[1])
    (tmp_path / ".hidden.txt").write_text("never read")
    (tmp_path / "c.md").write_text(DOCS[2])
    every = count_in_python(DOCS, PATTERN)  # each file is its own text
    assert counts_of(tmp_path) == every
    assert counts_of(str(tmp_path / "**" / "*.txt")) == count_in_python(DOCS[:2], PATTERN)
    assert counts_of([tmp_path / "a.txt", tmp_path / "c.md"]) == count_in_python([DOCS[0], DOCS[2]], PATTERN)


def test_jsonl_with_field_plain_and_compressed(tmp_path: Path, expected_docs):
    lines = "".join(json.dumps({"id": i, "body": d}) + "\n" for i, d in enumerate(DOCS)) + "\n"
    (tmp_path / "d.jsonl").write_text(lines)
    (tmp_path / "d.jsonl.gz").write_bytes(gzip.compress(lines.encode()))
    assert counts_of(tmp_path / "d.jsonl", field="body") == expected_docs
    assert counts_of(tmp_path / "d.jsonl.gz", field="body") == expected_docs
    with pytest.raises(FormatError, match=r"d.jsonl:1: the record has no field 'text'"):
        counts_of(tmp_path / "d.jsonl")
    (tmp_path / "bad.jsonl").write_text('{"text": "ok"}\n{not json\n')
    with pytest.raises(FormatError, match=r"bad.jsonl:2: not valid JSON"):
        counts_of(tmp_path / "bad.jsonl")


def test_parquet_column(tmp_path: Path, expected_docs):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"content": DOCS + [None], "n": [1, 2, 3, 4]}), path, row_group_size=2)
    assert counts_of(path, column="content") == expected_docs
    with pytest.raises(FormatError, match=r"no column 'text' \(columns: content, n\)"):
        counts_of(path)
    with pytest.raises(FormatError, match="not strings"):
        counts_of(path, column="n")


def test_iterators_of_strings_and_of_records(expected_docs):
    assert counts_of(iter(DOCS)) == expected_docs
    assert counts_of(d for d in DOCS) == expected_docs
    assert counts_of(iter([{"text": d} for d in DOCS])) == expected_docs
    with pytest.raises(FormatError, match="item 1 of the training iterator is a bytes"):
        counts_of(iter(["ok", b"bytes"]))


def test_iterator_errors_reach_the_caller():
    def broken():
        yield "fine"
        raise RuntimeError("the dataset failed")

    with pytest.raises(RuntimeError, match="the dataset failed"):
        counts_of(broken())


def test_lone_surrogates_are_replaced(count_in_python):
    docs = ["a\ud800b", "ok"]
    assert counts_of(iter(docs)) == count_in_python(["a\ufffdb", "ok"], PATTERN)


def test_missing_sources_are_named(tmp_path: Path):
    with pytest.raises(DataNotFoundError, match="not found: 'no such file'.*iter"):
        counts_of(["no such file"])
    with pytest.raises(DataNotFoundError, match="no files match"):
        counts_of(str(tmp_path / "*.nothing"))
    with pytest.raises(DataNotFoundError, match="no files"):
        counts_of(tmp_path)
    with pytest.raises(FormatError, match="not bytes"):
        counts_of(b"raw bytes")
