"""bpekit vs tiktoken, token for token, on every corpus file (per line and whole file) and a fixed
sample of the Python standard library.

gpt2 and r50k_base share ranks and pattern, p50k_edit and o200k_harmony share p50k_base's and
o200k_base's ordinary tokens: the four distinct ordinary encoders run on everything, and the
three aliases are checked to have the same ranks and specials as tiktoken's.
"""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

import pytest

import bpekit

from datapaths import corpus_files
from peers import ENCODINGS, tiktoken_encoding

DISTINCT = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
FILES = corpus_files()
# Per-line checks take every line of small files and every STRIDE-th line of large ones, so the
# suite stays fast on 2 cores; BPEKIT_FULL_PARITY=1 checks every line of every file.
STRIDE = 1 if os.environ.get("BPEKIT_FULL_PARITY") == "1" else 8


def _first_diff(a: list[int], b: list[int]) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"first difference at token {i}: bpekit {a[i:i+5]} tiktoken {b[i:i+5]}"
    return f"lengths differ: {len(a)} vs {len(b)}"


@pytest.mark.parametrize("name", DISTINCT)
@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(p.parents[1])) for p in FILES])
def test_corpus_file(name: str, path: Path) -> None:
    ours = bpekit.get_encoding(name)
    ref = tiktoken_encoding(name)
    text = path.read_text(encoding="utf-8", errors="replace")
    a, b = ours.encode_ordinary(text), ref.encode_ordinary(text)
    assert a == b, f"{path.name}: {_first_diff(a, b)}"
    lines = text.splitlines(keepends=True)
    if len(text) > 200_000:
        lines = lines[::STRIDE]
    ours_lines = ours.encode_ordinary_batch(lines, num_threads=2)
    ref_lines = ref.encode_ordinary_batch(lines, num_threads=2)
    for i, (x, y) in enumerate(zip(ours_lines, ref_lines, strict=True)):
        assert x == y, f"{path.name} line {i + 1} {lines[i][:60]!r}: {_first_diff(x, y)}"


def _stdlib_sample() -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(root.glob("*.py"))
    return files[::4]  # a fixed quarter of the top-level modules (~50 files, ~2 MB)


@pytest.mark.parametrize("name", DISTINCT)
def test_stdlib_sources(name: str) -> None:
    ours = bpekit.get_encoding(name)
    ref = tiktoken_encoding(name)
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in _stdlib_sample()]
    assert texts
    for p, x, y in zip(_stdlib_sample(), ours.encode_ordinary_batch(texts), ref.encode_ordinary_batch(texts)):
        assert x == y, f"{p.name}: {_first_diff(x, y)}"


@pytest.mark.parametrize("name", ENCODINGS)
def test_same_vocabulary_as_tiktoken(name: str) -> None:
    ours = bpekit.get_encoding(name)
    ref = tiktoken_encoding(name)
    assert ours._mergeable_ranks == ref._mergeable_ranks
    assert ours._special_tokens == ref._special_tokens
    assert ours.n_vocab == ref.n_vocab
    assert ours.max_token_value == ref.max_token_value
    assert ours.special_tokens_set == ref.special_tokens_set
    sample = "hello world <|endoftext|> <|fim_prefix|> naïve 👍 \r\n\r\n  x"
    assert ours.encode(sample, allowed_special="all") == ref.encode(sample, allowed_special="all")
