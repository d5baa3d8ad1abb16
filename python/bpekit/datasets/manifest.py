"""The run's manifest (``manifest.json`` in the output directory): what was tokenized with what,
the finished shards with their sizes and sha256, and the input position after the last one.

It is rewritten atomically after every shard, so it always describes shards that are complete on
disk. A re-run with the same tokenizer, settings and inputs verifies the recorded shards and
continues after the last good one; nothing in it depends on the thread count, the engine or the
clock, so an interrupted and resumed run ends with the same bytes as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from bpekit.atomicfile import atomic_write
from bpekit.errors import DataNotFoundError, FormatError, InputTypeError, UsageError

NAME = "manifest.json"
FORMAT = "bpekit-tokenized"
VERSION = 1
IDENTITY = ("tokenizer", "settings", "inputs")  # a re-run must match these to continue


def new_manifest(tokenizer: dict[str, Any], settings: dict[str, Any], inputs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "complete": False,
        "tokenizer": tokenizer,
        "settings": settings,
        "inputs": inputs,
        "documents": 0,
        "tokens": 0,
        "position": [0, 0],
        "shards": [],
    }


def save(out_dir: Path, manifest: dict[str, Any]) -> None:
    atomic_write(out_dir / NAME, (json.dumps(manifest, indent=1, ensure_ascii=False) + "\n").encode())


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A manifest from a file (or from the output directory that holds it)."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise InputTypeError(f"a manifest path must be a path (str or os.PathLike), got {type(path).__name__}")
    path = Path(os.fsdecode(path))
    if path.is_dir():
        path = path / NAME
    if not path.is_file():
        raise DataNotFoundError(f"manifest not found: {str(path)!r}")
    try:
        doc = json.loads(path.read_bytes())
    except ValueError as exc:
        raise FormatError(f"{path} is not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise FormatError(f"{path} is not a bpekit tokenized-dataset manifest")
    if doc.get("version") != VERSION:
        raise FormatError(f"{path}: unsupported manifest version {doc.get('version')!r}")
    return doc


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest()


def _shard_ok(out_dir: Path, shard: dict[str, Any]) -> bool:
    for entry in shard["files"]:
        path = out_dir / entry["name"]
        if not path.is_file() or path.stat().st_size != entry["bytes"] or sha256_file(path) != entry["sha256"]:
            return False
    return True


def _differences(old: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    """The identity fields (``settings.shard_size``, ``inputs``...) in which two runs differ."""
    out = []
    for key in IDENTITY:
        a, b = old.get(key), fresh[key]
        if isinstance(a, dict) and isinstance(b, dict):
            out += [f"{key}.{k}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        elif a != b:
            out.append(key)
    return out


def resume(out_dir: Path, fresh: dict[str, Any]) -> dict[str, Any]:
    """The manifest to continue from: ``fresh`` when ``out_dir`` holds no run, else the recorded
    run cut after its last shard that is intact on disk. A run with other settings is refused."""
    path = out_dir / NAME
    if not path.exists():
        return fresh
    old = load(path)
    differ = _differences(old, fresh)
    if differ:
        raise UsageError(
            f"{out_dir} holds a tokenized dataset made with other settings ({', '.join(differ)} differ); "
            "use another output directory or delete this one"
        )
    for tmp in out_dir.glob(".*.tmp"):  # left by a killed run (atomic writes never finished)
        tmp.unlink(missing_ok=True)
    shards = old.get("shards", [])
    good = 0
    while good < len(shards) and _shard_ok(out_dir, shards[good]):
        good += 1
    run = dict(fresh)
    run["shards"] = shards[:good]
    run["documents"] = sum(s["documents"] for s in run["shards"])
    run["tokens"] = sum(s["tokens"] for s in run["shards"])
    run["position"] = run["shards"][-1]["end"] if good else [0, 0]
    run["complete"] = bool(old.get("complete")) and good == len(shards)
    return run
