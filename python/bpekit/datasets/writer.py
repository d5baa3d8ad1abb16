"""Cuts the stream of tokenized documents into shards and writes each one atomically.

A shard holds whole documents and at most ``shard_size`` tokens (a longer document gets a shard of
its own). Shard ``k`` is ``shard_{k:06d}.bin`` (and ``.idx`` for Megatron). Where shards end
depends only on the documents' token counts, never on batch sizes or threads, so every engine and
every resumed run cuts the same shards. A shard is built in memory (``shard_size`` x the dtype's
width) and written with :func:`bpekit.atomicfile.atomic_write`; then the manifest records it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from bpekit.atomicfile import atomic_write
from bpekit.datasets import manifest as manifest_file
from bpekit.datasets.formats import shard_bytes, shard_files


class ShardWriter:
    """Receives tokenized documents in input order and writes shards plus the manifest."""

    def __init__(self, out_dir: Path, manifest: dict[str, Any]) -> None:
        self.out_dir = out_dir
        self.manifest = manifest
        settings = manifest["settings"]
        self.fmt: str = settings["format"]
        self.dtype: str = settings["dtype"]
        self.shard_size: int = settings["shard_size"]
        self.parts: list[np.ndarray] = []
        self.lengths: list[np.ndarray] = []
        self.tokens = 0
        self.start: list[int] = list(manifest["position"])
        self.end: list[int] = list(manifest["position"])

    def add(self, index: int, first: int, ids: np.ndarray, lengths: np.ndarray) -> None:
        """Documents ``first, first + 1, ...`` of input ``index``: their ids, concatenated, and the
        number of ids of each."""
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        i = 0
        while i < len(lengths):
            fits = int(np.searchsorted(offsets[i + 1 :] - offsets[i], self.shard_size - self.tokens, side="right"))
            if fits == 0 and self.tokens:
                self.close_shard()
                continue
            j = i + max(fits, 1)  # a document longer than a shard gets a shard of its own
            self.parts.append(ids[offsets[i] : offsets[j]].astype(self.dtype))
            self.lengths.append(lengths[i:j])
            self.tokens += int(offsets[j] - offsets[i])
            self.end = [index, first + j]
            i = j
            if i < len(lengths):
                self.close_shard()

    def close_shard(self) -> None:
        """Writes the open shard (if it has documents) and records it in the manifest."""
        if not self.parts:
            return
        ids = np.concatenate(self.parts)
        lengths = np.concatenate(self.lengths)
        stem = f"shard_{len(self.manifest['shards']):06d}"
        files = []
        for name, data in zip(shard_files(self.fmt, stem), shard_bytes(self.fmt, self.dtype, ids, lengths)):
            atomic_write(self.out_dir / name, data)
            files.append({"name": name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
        m = self.manifest
        m["shards"].append(
            {"files": files, "documents": len(lengths), "tokens": len(ids), "start": self.start, "end": self.end}
        )
        m["documents"] += len(lengths)
        m["tokens"] += len(ids)
        m["position"] = self.end
        manifest_file.save(self.out_dir, m)
        self.parts, self.lengths, self.tokens = [], [], 0
        self.start = list(self.end)

    def finish(self) -> dict[str, Any]:
        """Writes the last shard and marks the run complete."""
        self.close_shard()
        self.manifest["complete"] = True
        manifest_file.save(self.out_dir, self.manifest)
        return self.manifest
