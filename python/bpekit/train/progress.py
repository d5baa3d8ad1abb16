"""Training progress: a one-line terminal bar (bytes/s while counting, merges/s while merging) and
the events passed to a user callback.

The bar is drawn only when asked for and when the stream is a terminal, at most ten times a
second, on one line rewritten with ``\\r``; :meth:`ProgressBar.close` ends the line.
"""

from __future__ import annotations

import sys
import time
from typing import NamedTuple, TextIO

REFRESH = 0.1  # seconds between redraws


class TrainProgress(NamedTuple):
    """One progress report.

    ``phase`` is ``"count"`` (``done`` = input bytes read, ``total`` = total bytes when known) or
    ``"merge"`` (``done`` = tokens so far, ``total`` = the target number of ordinary tokens).
    ``merges`` counts merges learned (it can exceed new tokens: see docs/training.md).
    """

    phase: str
    done: int
    total: int | None
    elapsed: float
    documents: int = 0
    merges: int = 0


def human_bytes(n: float) -> str:
    """``1234567`` -> ``"1.2 MB"`` (decimal units)."""
    if abs(n) < 1000:
        return f"{n:.0f} B"
    for unit in ("KB", "MB", "GB"):
        n /= 1000
        if abs(n) < 1000:
            return f"{n:.1f} {unit}"
    return f"{n / 1000:.1f} TB"


class ProgressBar:
    """Draws :class:`TrainProgress` reports on a terminal."""

    def __init__(self, enabled: bool = True, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = bool(enabled and isatty is not None and isatty())
        self._last = 0.0
        self._drawn = False

    def update(self, p: TrainProgress, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < REFRESH:
            return
        self._last = now
        self.stream.write("\r" + self.render(p) + "\x1b[K")
        self.stream.flush()
        self._drawn = True

    @staticmethod
    def render(p: TrainProgress) -> str:
        rate = p.done / p.elapsed if p.elapsed > 0 else 0.0
        if p.phase == "count":
            size = human_bytes(p.done)
            if p.total:
                size += f" / {human_bytes(p.total)} ({100 * p.done / p.total:.0f}%)"
            return f"counting  {size}  {human_bytes(rate)}/s  {p.documents:,} documents"
        total = p.total or 0
        width = 30
        filled = int(width * p.done / total) if total else width
        bar = "#" * filled + "." * (width - filled)
        merges_rate = p.merges / p.elapsed if p.elapsed > 0 else 0.0
        return f"merging   [{bar}] {p.done:,}/{total:,} tokens  {merges_rate:,.0f} merges/s"

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
