"""Ids identical to tiktoken's: every output mode of every library on every benchmark document.

The reference is tiktoken's ``encode_ordinary``. A difference in bpekit is fatal to a run
(:func:`require_identical`); a peer that differs is timed anyway and reported as differing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.libs import Lib

MODES = ("list", "numpy", "batch", "batch_numpy")


@dataclass
class Mismatch:
    lib: str
    mode: str
    doc: int  # index of the first differing document (-1: the batch's length differs)
    n_docs: int  # how many documents differ
    preview: str

    def __str__(self) -> str:
        return f"{self.lib} [{self.mode}] differs from tiktoken on {self.n_docs} document(s), first #{self.doc}: {self.preview}"


def as_list(ids: Any) -> list[int]:
    return ids.tolist() if hasattr(ids, "tolist") else list(ids)


def digest(ids: Sequence[int] | Any) -> str:
    """A short fingerprint of an id sequence (compared across processes)."""
    return hashlib.sha1(np.asarray(ids, dtype=np.uint32).tobytes()).hexdigest()[:16]


def outputs(lib: Lib, mode: str, docs: list[str]) -> list[list[int]] | None:
    """``lib``'s ids for every document in one mode (``None`` if the library lacks the mode)."""
    if mode == "list":
        return [as_list(lib.encode(d)) for d in docs]
    if mode == "numpy":
        return None if lib.numpy is None else [as_list(lib.numpy(d)) for d in docs]
    if mode == "batch":
        return None if lib.batch is None else [as_list(x) for x in lib.batch(docs)]
    if lib.batch_numpy is None:
        return None
    flat, offsets = lib.batch_numpy(docs)
    return [as_list(flat[offsets[i] : offsets[i + 1]]) for i in range(len(offsets) - 1)]


def compare(lib: Lib, docs: list[str], reference: list[list[int]]) -> list[Mismatch]:
    """Every mode of ``lib`` against the reference ids; one :class:`Mismatch` per differing mode."""
    found = []
    for mode in MODES:
        lib.prepare()
        try:
            got = outputs(lib, mode, docs)
        except Exception as e:  # noqa: BLE001 (a peer failing on an input is a result)
            found.append(Mismatch(lib.name, mode, -1, len(docs), f"raised {type(e).__name__}: {str(e)[:120]}"))
            continue
        if got is None:
            continue
        if len(got) != len(reference):
            found.append(Mismatch(lib.name, mode, -1, len(docs), f"{len(got)} outputs for {len(docs)} inputs"))
            continue
        bad = [i for i, (a, b) in enumerate(zip(got, reference, strict=True)) if a != b]
        if bad:
            found.append(Mismatch(lib.name, mode, bad[0], len(bad), repr(docs[bad[0]][:60])))
    return found


def require_identical(mismatches: list[Mismatch], lib: str = "bpekit") -> None:
    """Stops the run (exit status 1) if ``lib`` (bpekit, with or without its cache) differs."""
    mine = [m for m in mismatches if m.lib.split("(")[0] == lib]
    if mine:
        raise SystemExit("MISMATCH (bpekit must equal tiktoken):\n" + "\n".join(f"  {m}" for m in mine))
