"""Vectorized helpers shared by the trainer and the encoder: choosing non-overlapping merge
positions in runs, and segment minima.

Overlapping matches only occur in runs of consecutive positions (``a a a a`` matches ``(a, a)`` at
0, 1 and 2). Merging left to right takes the 1st, 3rd, 5th... position of each run, so a position
is kept iff its offset from the start of its run is even. The start of each position's run is a
running maximum over "run starts here" markers (``torch.cummax``), so no Python loop is needed::

    position       0 1 2 3 4 5 6 7 8 9
    match          1 1 1 0 0 1 1 0 0 1
    run starts     1 0 0 0 0 1 0 0 0 1
    run start      0 0 0 0 0 5 5 5 5 9      (cummax of position-where-start)
    offset         0 1 2 . . 0 1 . . 0  -> keep 0, 2, 5, 9
"""

from __future__ import annotations

from typing import Any

from bpekit.torch.device import require_torch

torch = require_torch()


def leftmost_nonoverlapping(match: Any) -> Any:
    """From a mask of match positions (each match covers ``p`` and ``p + 1``), the ones a
    left-to-right scan merges: in each run of consecutive positions, every other one starting with
    the first. On a mask, not a list of positions, so that the trainer needs no device sync (a
    list's length is known only on the host)."""
    n = match.numel()
    if n < 2:
        return match
    idx = torch.arange(n, device=match.device)
    starts = match.clone()
    starts[1:] &= ~match[:-1]
    run_start = torch.cummax(torch.where(starts, idx, torch.zeros_like(idx)), dim=0).values
    return match & ((idx - run_start) % 2 == 0)


def segment_min(values: Any, segments: Any, n_segments: int, empty: int) -> Any:
    """Minimum of ``values`` per segment id (``empty`` where a segment has no value)."""
    out = torch.full((n_segments,), empty, dtype=values.dtype, device=values.device)
    return out.scatter_reduce_(0, segments, values, reduce="amin", include_self=True)
