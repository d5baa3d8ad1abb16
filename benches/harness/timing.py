"""Interleaved timing rounds and paired ratios.

The machine is shared and noisy, so absolute speeds drift from minute to minute. Each round runs
every pass once, in an order rotated round by round; ratios are taken between two passes of the
*same* round and the median of those per-round ratios is reported (with the median speed). Each
timed pass follows an untimed one of the same library (``warm=True``), as ``timeit``'s repeats do.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections.abc import Callable


def run_rounds(
    passes: dict[str, Callable[[], object]],
    rounds: int,
    prepare: dict[str, Callable[[], None]] | None = None,
    warm: bool = True,
) -> dict[str, list[float]]:
    """Seconds of every pass in every round (``{key: [s_round0, s_round1, ...]}``); ``prepare[key]``
    runs untimed before each pass.

    With ``warm`` (the default) each timed pass follows an untimed run of the same pass (then
    ``prepare`` again, so a library's own caches still start empty): the timed pass finds the
    library's tables in the CPU caches, as every pass after the first of a long job does. Without
    it a pass started right after the full collection below, whose walk over the harness's heap
    (every library's vocabulary dicts and reference outputs, millions of objects), and the other
    libraries' passes before it, had evicted them: a few ms of misses that cost a 9 ms pass 25%
    and a 75 ms pass 3% (bpekit cl100k English, list output, 108.8 MB/s cold vs 153.0 warm;
    tiktoken 17.2 vs 17.9).

    Each pass runs with Python's cyclic garbage collector off after a full collection, as
    ``timeit`` runs: the harness holds every library's reference outputs (millions of objects),
    and a full collection that a list-making pass happened to trigger walked them all inside
    that pass: bpekit's cl100k English list pass read 69–78 MB/s with the collector on and 89
    with it off (bpekit-only runs of the harness; ~110 in a bare loop), and "no cache" beat the
    cache by the chance of which pass paid."""
    keys = list(passes)
    seconds: dict[str, list[float]] = {k: [] for k in keys}
    for r in range(rounds):
        shift = r % len(keys) if keys else 0
        for key in keys[shift:] + keys[:shift]:
            gc.collect()
            gc.disable()
            try:
                if warm:
                    if prepare and key in prepare:
                        prepare[key]()
                    passes[key]()
                if prepare and key in prepare:
                    prepare[key]()
                t0 = time.perf_counter()
                passes[key]()
                seconds[key].append(time.perf_counter() - t0)
            finally:
                gc.enable()
    return seconds


def median_mbps(mb: float, secs: list[float]) -> float:
    return statistics.median(mb / s for s in secs)


def paired_ratio(secs: list[float], base: list[float]) -> float:
    """Median over rounds of ``speed / base speed`` (= ``base time / time``) in the same round."""
    return statistics.median(b / s for s, b in zip(secs, base, strict=True))


def print_rows(first: str, corpus: str, mb: float, passes: dict[str, Callable[[], object]], base: str,
               rounds: int, prepare: dict[str, Callable[[], None]] | None = None) -> None:
    """Times ``passes`` in interleaved rounds and prints one Markdown row per pass:
    ``| first | corpus (MB) | pass | MB/s | x base |`` (median MB/s, median per-round ratio)."""
    secs = run_rounds(passes, rounds, prepare)
    for name, s in secs.items():
        print(f"| {first} | {corpus} ({mb:.2f}) | {name} | {median_mbps(mb, s):.1f} | {paired_ratio(s, secs[base]):.2f}x |")
    sys.stdout.flush()
