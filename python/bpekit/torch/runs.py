"""Vectorized helpers shared by the trainer and the encoder: choosing non-overlapping merge
positions in runs, and segment minima.

Overlapping matches only occur in runs of consecutive positions (``a a a a`` matches ``(a, a)`` at
0, 1 and 2). Merging left to right takes the 1st, 3rd, 5th... position of each run, so a position
is kept iff its offset from the start of its run is even. The start of each position's run is a
running maximum over "run starts here" markers (``torch.cummax``), so no Python loop is needed::

    positions      0 1 2   5 6   9
    run starts     1 0 0   1 0   1
    run start idx  0 0 0   3 3   5      (cummax of index-where-start)
    offset         0 1 2   0 1   0  -> keep 0, 2, 5, 9
"""

from __future__ import annotations

from typing import Any

from bpekit.torch.device import require_torch

torch = require_torch()


def leftmost_nonoverlapping(positions: Any) -> Any:
    """From sorted match positions (each match covers ``p`` and ``p + 1``), the ones a left-to-right
    scan merges: in each run of consecutive positions, every other one starting with the first."""
    n = positions.numel()
    if n < 2:
        return positions
    idx = torch.arange(n, device=positions.device)
    starts = torch.ones(n, dtype=torch.bool, device=positions.device)
    starts[1:] = positions[1:] != positions[:-1] + 1
    run_start = torch.cummax(torch.where(starts, idx, torch.zeros_like(idx)), dim=0).values
    return positions[(idx - run_start) % 2 == 0]


def leftmost_nonoverlapping_mask(match: Any) -> Any:
    """:func:`leftmost_nonoverlapping` on a mask of match positions rather than a list: the same
    positions, found without a device sync (a list's length is known only on the host)."""
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
