"""Hostile vs benign text of the same size: encode time and peak memory, bpekit (and tiktoken).

For every hostile text of ``tests/hardening/hostile.py`` (one character repeated, no split point,
NUL, lone surrogates, special-token look-alikes, ...) at ``--mb`` megabytes, times
``encode(text, disallowed_special=())`` (best of ``--rounds``) and divides by the time for benign
prose of the same size: a ratio near 1 means linear time. Peak RSS growth during one call is
read from ``/proc/self/status`` (VmHWM, reset through ``/proc/self/clear_refs``). Every timed
call starts with an empty pre-token cache. With
``--tiktoken`` tiktoken 0.14 is timed on the same inputs (ids are compared).

    python benches/hostile.py [--mb 10] [--rounds 3] [--encodings cl100k_base o200k_base] [--tiktoken]

The benign baseline is English prose: the 1.1 MB of Shakespeare repeated to the size, which
bpekit's pre-token cache answers almost entirely after the first copy. A second baseline,
``natural``, is text that does not repeat (blocks of the 46 bible translations in turn, as a
service sees many different documents); its time and each input's ratio to it are shown too.

``--sizes 1 2 5 10`` instead times each ``--kinds`` text at those sizes (MB) in process CPU time
(less sensitive to other processes on a shared machine than wall time) and prints ns per byte:
a constant column means linear time.

    python benches/hostile.py --sizes 1 2 5 10 --kinds no_split_letters --encodings cl100k_base o200k_base
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from datapaths import DATA  # noqa: E402
from hardening.hostile import HOSTILE, benign, natural  # noqa: E402

os.environ.setdefault("BPEKIT_DATA_DIR", str(DATA / "ranks"))

import bpekit  # noqa: E402


def best_time(
    fn: Callable[[], object],
    rounds: int,
    clock: Callable[[], float] = time.perf_counter,
    before: Callable[[], object] | None = None,
) -> float:
    """Best of ``rounds`` calls of ``fn``; ``before`` (untimed) runs before each call."""
    best = float("inf")
    for _ in range(rounds):
        if before is not None:
            before()
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best


def cold(enc: bpekit.Encoding) -> Callable[[], None]:
    """Empties ``enc``'s pre-token cache on this thread (setting the budget forgets the cache), so
    every timed call starts cold and no input is helped by the call before it."""

    def empty() -> None:
        enc.pretoken_cache_bytes = enc.pretoken_cache_bytes

    return empty


def scaling(encodings: list[str], kinds: list[str], sizes_mb: list[float], rounds: int) -> None:
    """CPU seconds and ns per byte of each kind at each size: is the time linear in the size?"""
    print(f"process CPU time, best of {rounds}\n")
    print("| encoding | input | MB | CPU s | ns / byte |")
    print("|---|---|---|---|---|")
    for name in encodings:
        enc = bpekit.get_encoding(name)
        enc.encode(HOSTILE["one_char_a"](300 << 10))  # build lazy tables once
        for kind in kinds:
            for mb in sizes_mb:
                size = int(mb * (1 << 20))
                text = benign(size) if kind == "benign" else natural(size) if kind == "natural" else HOSTILE[kind](size)
                n = len(text.encode("utf-8", "surrogatepass"))
                t = best_time(lambda: enc.encode(text, disallowed_special=()), rounds, time.process_time, cold(enc))
                print(f"| {name} | {kind} | {n / (1 << 20):.1f} | {t:.3f} | {t / n * 1e9:.0f} |", flush=True)


def peak_growth(fn: Callable[[], object]) -> int | None:
    """Peak RSS growth in bytes while ``fn`` runs (None where it cannot be measured)."""
    status = Path("/proc/self/status")
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return None

    def read(key: str) -> int:
        line = next(x for x in status.read_text().splitlines() if x.startswith(key))
        return int(line.split()[1]) * 1024

    before = read("VmRSS:")
    fn()
    return read("VmHWM:") - before


def tiktoken_encoding(name: str):  # noqa: ANN201
    from peers import tiktoken_encoding as build

    return build(name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--encodings", nargs="+", default=["cl100k_base", "o200k_base"])
    parser.add_argument("--kinds", nargs="+", default=sorted(HOSTILE))
    parser.add_argument("--tiktoken", action="store_true")
    parser.add_argument("--cpu", action="store_true", help="time in process CPU seconds, not wall")
    parser.add_argument("--sizes", nargs="+", type=float, help="MB; time each kind at these sizes")
    args = parser.parse_args()
    size = int(args.mb * (1 << 20))
    bpekit.set_limits(max_input_bytes=0)
    if args.sizes:
        scaling(args.encodings, args.kinds, args.sizes, args.rounds)
        return 0
    prose = benign(size)
    clock = time.process_time if args.cpu else time.perf_counter
    unit = "CPU s" if args.cpu else "s"
    mixed = natural(size)
    print(
        f"{args.mb:g} MB per input, best of {args.rounds}; ratio = time / time of benign prose "
        "(English, repeated); vs natural = time / time of natural text that does not repeat\n"
    )
    header = f"| encoding | input | bpekit {unit} | ratio | vs natural | peak RSS / input |"
    if args.tiktoken:
        header += f" tiktoken {unit} | tiktoken ratio |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for name in args.encodings:
        enc = bpekit.get_encoding(name)
        enc.encode(HOSTILE["one_char_a"](300 << 10) + prose[:10000])  # build lazy tables once
        enc.encode(prose + mixed, disallowed_special=())  # the process's memory grown once, untimed
        tk = tiktoken_encoding(name) if args.tiktoken else None
        base = best_time(lambda: enc.encode(prose, disallowed_special=()), args.rounds, clock, cold(enc))
        tk_base = best_time(lambda: tk.encode(prose, disallowed_special=()), args.rounds, clock) if tk else 0.0
        base_natural = best_time(lambda: enc.encode(mixed, disallowed_special=()), args.rounds, clock, cold(enc))
        base_natural *= size / len(mixed.encode("utf-8"))
        for kind in ["benign", "natural"] + args.kinds:
            text = {"benign": prose, "natural": mixed}.get(kind) or HOSTILE[kind](size)
            n = len(text.encode("utf-8", "surrogatepass"))
            t = best_time(lambda: enc.encode(text, disallowed_special=()), args.rounds, clock, cold(enc)) * size / n
            peak = peak_growth(lambda: enc.encode(text, disallowed_special=()))
            shown = f"{peak / n:.1f}" if peak is not None else "n/a"
            row = f"| {name} | {kind} | {t:.3f} | {t / base:.2f} | {t / base_natural:.2f} | {shown} |"
            if tk is not None:
                if tk.encode(text, disallowed_special=()) != enc.encode(text, disallowed_special=()):
                    print(f"ids differ from tiktoken: {name} {kind}", file=sys.stderr)
                    return 1
                tt = best_time(lambda: tk.encode(text, disallowed_special=()), 1, clock) * size / n
                row += f" {tt:.3f} | {tt / tk_base:.2f} |"
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
