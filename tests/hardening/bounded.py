"""The time and memory bound every hostile-file test holds a parser to."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any


def bounded(fn: Callable[[], Any], size: int, what: str) -> Any:
    """Runs ``fn``; its Python allocations must stay under 64 x ``size`` + 1 MB and 2 s."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        return fn()
    finally:
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak <= 64 * size + (1 << 20), f"{what}: {peak:,} bytes allocated for a {size:,}-byte file"
        assert elapsed < 2.0, f"{what}: {elapsed:.1f} s"
