"""Shared data for the minbpe tests: the golden vectors, corpus texts, and two oracles.

The vectors were made by running karpathy/minbpe (commit 1acefe8) and tiktoken 0.14's
``_educational``; they are read in place from ``$BPEKIT_TEST_DATA/minbpe/vectors.json``.
``naive_merges`` is minbpe's training loop written out literally (recount every pair, ``max``
over an insertion-ordered dict) and ``naive_encode`` its encode loop: the slow oracles that the
fast trainer and encoder must agree with.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("BPEKIT_TEST_DATA", ROOT.parent / "shared" / "data")).resolve()
VECTORS_PATH = DATA / "minbpe" / "vectors.json"


def load_vectors() -> dict[str, Any]:
    """The vectors, or ``{}`` when the shared data is absent (tests then skip)."""
    if not VECTORS_PATH.is_file():
        return {}
    return json.loads(VECTORS_PATH.read_text(encoding="utf-8"))


VECTORS = load_vectors()
needs_vectors = pytest.mark.skipif(not VECTORS, reason=f"minbpe vectors not found at {VECTORS_PATH}")


def corpus(relative: str) -> str:
    """A corpus file's text (skips the test when it is absent)."""
    path = DATA / "corpora" / relative
    if not path.is_file():
        pytest.skip(f"corpus file not found: {path}")
    return path.read_text(encoding="utf-8")


def corpus_files(sub: str) -> list[Path]:
    """The files of one corpus folder, sorted (empty when absent)."""
    base = DATA / "corpora" / sub
    return sorted(p for p in base.iterdir() if p.is_file()) if base.is_dir() else []


def vector_text(case: dict[str, Any]) -> str:
    """The training text of a vector: given inline, or named by ``text_id`` / ``data_id``."""
    text = case.get("text", case.get("data"))
    if text:
        return str(text)
    name = case.get("text_id") or case.get("data_id")
    prefix = "taylorswift_first_"
    if not (isinstance(name, str) and name.startswith(prefix) and name.endswith("_chars")):
        raise AssertionError(f"vector with unknown text reference {name!r}")
    return corpus("taylorswift.txt")[: int(name[len(prefix) : -len("_chars")])]


@functools.cache
def tiktoken_cl100k() -> Any:
    """tiktoken's own cl100k_base (pattern and specials from tiktoken_ext), ranks from the shared file."""
    tiktoken = pytest.importorskip("tiktoken")
    from unittest import mock

    import tiktoken_ext.openai_public as openai_public
    from tiktoken.load import load_tiktoken_bpe

    path = DATA / "ranks" / "cl100k_base.tiktoken"
    if not path.is_file():
        pytest.skip(f"rank file not found: {path}")
    with mock.patch.object(openai_public, "load_tiktoken_bpe", lambda *_a, **_k: load_tiktoken_bpe(str(path))):
        spec = openai_public.cl100k_base()
    return tiktoken.Encoding(
        spec["name"],
        pat_str=spec["pat_str"],
        mergeable_ranks=spec["mergeable_ranks"],
        special_tokens=spec["special_tokens"],
    )


def _stats(ids: list[int], counts: dict[tuple[int, int], int]) -> None:
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1


def _merge(ids: list[int], pair: tuple[int, int], idx: int) -> list[int]:
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def naive_merges(chunks: list[bytes], num_merges: int) -> list[tuple[int, int]] | None:
    """minbpe's training loop over ``chunks``; None where minbpe fails (no pairs left)."""
    ids = [list(c) for c in chunks]
    merges = []
    for i in range(num_merges):
        stats: dict[tuple[int, int], int] = {}
        for chunk in ids:
            _stats(chunk, stats)
        if not stats:
            return None
        pair = max(stats, key=stats.__getitem__)
        ids = [_merge(chunk, pair, 256 + i) for chunk in ids]
        merges.append(pair)
    return merges


def naive_encode(ids: list[int], merges: dict[tuple[int, int], int]) -> list[int]:
    """minbpe's encode loop: merge every occurrence of the lowest-id mergeable pair, repeat."""
    while len(ids) >= 2:
        stats: dict[tuple[int, int], int] = {}
        _stats(ids, stats)
        pair = min(stats, key=lambda p: merges.get(p, float("inf")))
        if pair not in merges:
            break
        ids = _merge(ids, pair, merges[pair])
    return ids
