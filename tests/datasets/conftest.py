"""Fixtures for the dataset tests: a tiny trained tokenizer (no shared data needed), a set of
small documents, and writers for every input format."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

WORDS = ["the", "cat", "sat", "on", "a", "mat", "and", "ran", "far", "away", "über", "naïve", "東京", "שלום", "мир", "data", "tokens", "12345", "!?", "<|endoftext|>"]


def make_docs(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    docs = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 40))]
        text = " ".join(words)
        if rng.random() < 0.3:
            text += "\n  indented line\r\nand more\n"
        docs.append(text)
    return docs


@pytest.fixture(scope="session")
def docs() -> list[str]:
    return make_docs(300)


@pytest.fixture(scope="session")
def tokenizer_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A byte-level BPE tokenizer of 320 tokens with <|endoftext|> and <s> as special tokens."""
    from bpekit.train import train

    tok = train(iter(make_docs(500, seed=1)), vocab_size=320, special_tokens=["<|endoftext|>", "<s>"], show_progress=False)
    path = tmp_path_factory.mktemp("tok") / "tiny.bpekit.json"
    tok.save(path)
    return path


@pytest.fixture(scope="session")
def encoding(tokenizer_file: Path):
    from bpekit.tokenizer import Tokenizer

    return Tokenizer.load(tokenizer_file).encoding


def write_jsonl(path: Path, docs: list[str], field: str = "text") -> Path:
    path.write_text("".join(json.dumps({field: d, "id": i}) + "\n" for i, d in enumerate(docs)), encoding="utf-8")
    return path


def write_parquet(path: Path, docs: list[str], column: str = "text") -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({column: docs, "n": list(range(len(docs)))}), path, row_group_size=50)
    return path


def write_texts(folder: Path, docs: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, d in enumerate(docs):
        (folder / f"doc{i:04d}.txt").write_text(d, encoding="utf-8", newline="")
    return folder


def expected_stream(encoding, docs: list[str], bos: int | None = None, eos: int | None = None) -> list[int]:
    """What a tokenize run must produce: each non-empty document encoded alone, BOS/EOS around."""
    out: list[int] = []
    for d in docs:
        if not d:
            continue
        out += ([bos] if bos is not None else []) + encoding.encode_ordinary(d) + ([eos] if eos is not None else [])
    return out


def read_all(out: Path) -> list[int]:
    """Every id of a run, shard after shard, read back through the manifest."""
    from bpekit.datasets import read_manifest, read_shard

    m = read_manifest(out)
    ids: list[int] = []
    for shard in m["shards"]:
        ids += read_shard(str(out / shard["files"][0]["name"]), m["settings"]["format"], m["settings"]["dtype"]).tolist()
    return ids


def tree_bytes(out: Path) -> dict[str, bytes]:
    """Every file of an output directory (names and contents)."""
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


@pytest.fixture(scope="session")
def h():
    """The helpers above, for the test modules (which cannot import this file)."""
    from types import SimpleNamespace

    return SimpleNamespace(
        make_docs=make_docs,
        write_jsonl=write_jsonl,
        write_parquet=write_parquet,
        write_texts=write_texts,
        expected_stream=expected_stream,
        read_all=read_all,
        tree_bytes=tree_bytes,
    )
