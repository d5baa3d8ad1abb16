"""Atomic file writes: write a temporary file beside the target, flush it to disk, rename it over
the target. A reader (or a crash, or Ctrl-C) never leaves a half-written file behind."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write(path: str | os.PathLike[str], data: bytes) -> None:
    """Writes ``data`` to ``path`` atomically; on any error the target is untouched."""
    atomic_write_all([(path, data)])


def atomic_write_all(files: list[tuple[str | os.PathLike[str], bytes]]) -> None:
    """Writes several files that belong together (a rank file and its sidecar, ``encoder.json``
    and ``vocab.bpe``): every temporary file is written and flushed before the first rename, so
    a failure while writing (a full disk, a directory where a file should go, Ctrl-C) leaves
    every target as it was, never one new file beside an old or missing partner."""
    targets = [Path(p) for p, _ in files]
    for target in targets:
        if target.is_dir():
            raise IsADirectoryError(f"{target} is a directory; nothing was written")
        target.parent.mkdir(parents=True, exist_ok=True)
    written: list[tuple[str, Path]] = []
    try:
        for target, (_, data) in zip(targets, files):
            mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
            written.append((tmp, target))
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, mode)
        for tmp, target in written:
            os.replace(tmp, target)
    except BaseException:
        for tmp, _ in written:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
