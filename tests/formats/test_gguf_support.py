"""Helpers for the GGUF and conversion tests (no tests here): where the shared vocab files are,
a tiny hand-built vocabulary, raw GGUF byte builders for hostile files, a corpus sample."""

from __future__ import annotations

import functools
import struct
from pathlib import Path
from typing import Any

import pytest
from bpekit.formats.gguf import container as c
from bpekit.formats.gguf.vocab import GGUFVocab
from datapaths import DATA, corpus_files

GGUF_DIR = DATA / "gguf"
NAMES = ("gpt-2", "llama-bpe", "qwen2", "deepseek-llm", "llama-spm", "phi-3")
BPE_NAMES = ("gpt-2", "llama-bpe", "qwen2", "deepseek-llm")
SPM_NAMES = ("llama-spm", "phi-3")


def gguf_path(name: str) -> Path:
    p = GGUF_DIR / f"ggml-vocab-{name}.gguf"
    if not p.is_file():
        pytest.skip(f"shared GGUF file {p} not found (set BPEKIT_TEST_DATA)")
    return p


@functools.cache
def vocab(name: str) -> GGUFVocab:
    return GGUFVocab.read(gguf_path(name))


@functools.cache
def loaded(name: str) -> Any:
    """The bpekit Tokenizer of a shared GGUF file, loaded once per test session (read-only use)."""
    from bpekit.formats import gguf

    return gguf.load(gguf_path(name))


def tiny_bpe() -> GGUFVocab:
    """A byte-level vocabulary small enough to check by hand: bytes 'a', 'b', 'Ġ', merges
    a+b -> ab, Ġ+ab -> Ġab, and one control token."""
    tokens = ["a", "b", "Ġ", "ab", "Ġab", "<|eot|>"]
    v = GGUFVocab(
        model="gpt2",
        pre="gpt-2",
        tokens=tokens,
        token_types=[1, 1, 1, 1, 1, 3],
        merges=[("a", "b"), ("Ġ", "ab")],
        special_ids={"bos_token_id": 5, "eos_token_id": 5},
    )
    v.file = c.GGUFFile(kv={"general.architecture": c.Value(c.STRING, "gpt2")})
    return v


def kv_bytes(key: str, vtype: int, payload: bytes) -> bytes:
    k = key.encode()
    return struct.pack("<Q", len(k)) + k + struct.pack("<I", vtype) + payload


def gguf_bytes(
    *kvs: bytes, version: int = 3, tensors: int = 0, kv_count: int | None = None
) -> bytes:
    n = len(kvs) if kv_count is None else kv_count
    return b"GGUF" + struct.pack("<IQQ", version, tensors, n) + b"".join(kvs)


def gstr(s: str) -> bytes:
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def corpus_sample(stride: int, per_file: int = 40) -> list[str]:
    """A few lines of every corpus file (every ``stride``-th file, ``per_file`` lines each)."""
    out: list[str] = []
    for p in corpus_files()[::stride]:
        lines = p.read_text(encoding="utf-8", errors="replace").splitlines()
        step = max(1, len(lines) // per_file)
        out.extend(lines[::step][:per_file])
    return out


def test_a_vocab_built_in_python_is_checked() -> None:
    # a str of tokens was iterated as characters, flags "no" were true, a short token_types an
    # IndexError at the first lookup
    from bpekit.errors import InputTypeError

    good: dict[str, Any] = {"model": "gpt2", "tokens": ["a", "b", "ab"], "token_types": [1, 1, 1],
                            "merges": [("a", "b")], "special_ids": {"eos_token_id": 2}, "flags": {"add_bos_token": False}}
    GGUFVocab(**good)
    for key, value in (("model", "nope"), ("tokens", "abĠ"), ("tokens", ["a", 5]), ("token_types", [1]),
                       ("token_types", [1, 1, "1"]), ("scores", [0.0, None, 1.0]), ("merges", "a b"),
                       ("merges", [("a", "b", "c")]), ("pre", 5), ("special_ids", {"eos_token_id": "5"}),
                       ("flags", {"add_eos_token": "no"})):
        with pytest.raises(InputTypeError, match=key if key != "tokens" else "tokens"):
            GGUFVocab(**{**good, key: value})
