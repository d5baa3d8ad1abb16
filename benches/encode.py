"""Single-thread encode speed, bpekit vs tiktoken (and other peers that are installed), side by side.

Per-document ``encode_ordinary`` calls returning a list, as an application would make them.
Each round times every library once on the whole corpus, in rotating order; the table reports the
median MB/s and the median of the per-round speed ratios to tiktoken (machines here are noisy:
ratios from the same round are what to trust). Ids are checked identical to tiktoken first; any
difference aborts the run.

    python benches/encode.py [--rounds 5] [--encodings cl100k_base o200k_base] [--numpy] [--cpu]
        [--no-cache | --cold-cache] [--against OLD.so ...] [--chunk 40]

``--cpu`` times each library by the CPU time of the calling thread (every library here encodes on
that thread) instead of the wall clock, which keeps ratios usable on a machine busy with other
jobs; ``--no-cache`` turns bpekit's pre-token cache off. The cache lives on between rounds, so
from the second round on a corpus whose merged pieces fit in the budget (english) is mostly cache
hits; ``--cold-cache`` empties it before every round, so each round is a first pass.

``--against`` is the same-process A/B of ``src/PERFORMANCE.md``: each path is another build of
``_core`` (e.g. ``target/release/libbpekit.so`` copied before a change), and the table gains a
``core:this`` column (this tree's ``_core``) and one per path, all called as the raw
``CoreBPE.encode_ordinary_str``; compare those columns with each other. ``--chunk N`` times every
library on each run of N documents in turn (rotating the order) instead of on the whole corpus,
so a change in the machine's load hits all of them alike (ratios between builds then repeat
within a few percent on a busy machine; absolute speeds are lower, each build's tables colder).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpora import CORPORA, DATA, size_mb  # noqa: E402

os.environ.setdefault("BPEKIT_DATA_DIR", str(DATA / "ranks"))

import bpekit  # noqa: E402

PATTERNS = {"cl100k_base": bpekit.patterns.CL100K, "o200k_base": bpekit.patterns.O200K}
SPECIALS = {
    "cl100k_base": {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                    "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276},
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}


_ENCODINGS: dict[str, bpekit.Encoding] = {}


_CORES: list = []


def empty_cache(name: str) -> None:
    """Empties this thread's pre-token caches of bpekit's `name` and of the A/B cores (setting the
    budget forgets the cache)."""
    enc = _ENCODINGS[name]
    enc.pretoken_cache_bytes = enc.pretoken_cache_bytes
    for core in _CORES:
        core.set_cache_capacity(core.cache_capacity())


def core_builds(name: str, paths: list[str], cache: bool) -> dict[str, Callable[[str], object]]:
    """`CoreBPE.encode_ordinary_str` of this tree's `_core` and of each `_core` build in `paths`."""
    from bpekit import _core
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(DATA / "ranks" / f"{name}.tiktoken"))
    modules = {"core:this": _core}
    for path in paths:
        # The module's init function is PyInit__core, so the spec keeps the name `_core`.
        spec = importlib.util.spec_from_file_location("bpekit._core", path)
        if spec is None or spec.loader is None:
            raise SystemExit(f"cannot load {path} as a _core build")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules[f"core:{Path(path).name}"] = module
    libs: dict[str, Callable[[str], object]] = {}
    _CORES.clear()
    for label, module in modules.items():
        core = module.CoreBPE(ranks, list(SPECIALS[name].items()), PATTERNS[name])
        if not cache:
            core.set_cache_capacity(0)
        _CORES.append(core)
        libs[label] = core.encode_ordinary_str
    return libs


def tiktoken_encoding(name: str):  # noqa: ANN201
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(DATA / "ranks" / f"{name}.tiktoken"))
    return tiktoken.Encoding(name, pat_str=PATTERNS[name], mergeable_ranks=ranks, special_tokens=SPECIALS[name])


def libraries(name: str, numpy: bool, cache: bool = True) -> dict[str, Callable[[str], object]]:
    libs: dict[str, Callable[[str], object]] = {}
    enc = bpekit.get_encoding(name)
    if not cache:
        enc.pretoken_cache_bytes = 0
    _ENCODINGS[name] = enc
    tk = tiktoken_encoding(name)
    libs["tiktoken"] = tk.encode_ordinary
    libs["bpekit"] = enc.encode_ordinary
    if numpy:
        libs["tiktoken(numpy)"] = lambda t: tk.encode_to_numpy(t, disallowed_special=())
        libs["bpekit(numpy)"] = lambda t: enc.encode_to_numpy(t, disallowed_special=())
    return libs


def check_identical(libs: dict[str, Callable[[str], object]], docs: list[str]) -> None:
    ref = libs["tiktoken"]
    for lib, fn in libs.items():
        for i, d in enumerate(docs):
            a, b = fn(d), ref(d)
            a = a.tolist() if hasattr(a, "tolist") else a  # type: ignore[union-attr]
            if a != b:
                raise SystemExit(f"MISMATCH: {lib} differs from tiktoken on document {i}: {d[:80]!r}")


def run(
    docs: list[str],
    libs: dict[str, Callable[[str], object]],
    rounds: int,
    clock: Callable[[], float] = time.perf_counter,
    before_round: Callable[[], None] | None = None,
    chunk: int = 0,
) -> dict[str, tuple[float, float]]:
    mb = size_mb(docs)
    speeds: dict[str, list[float]] = {k: [] for k in libs}
    ratios: dict[str, list[float]] = {k: [] for k in libs}
    names = list(libs)
    step = chunk if chunk > 0 else len(docs)
    for r in range(rounds):
        spent = dict.fromkeys(names, 0.0)
        if before_round is not None:
            before_round()
        for k, at in enumerate(range(0, len(docs), step)):
            part = docs[at:at + step]
            shift = (r + k) % len(names)
            for lib in names[shift:] + names[:shift]:
                fn = libs[lib]
                t0 = clock()
                for d in part:
                    fn(d)
                spent[lib] += clock() - t0
        this = {lib: mb / spent[lib] for lib in names}
        for lib in names:
            speeds[lib].append(this[lib])
            ratios[lib].append(this[lib] / this["tiktoken"])
    return {lib: (statistics.median(speeds[lib]), statistics.median(ratios[lib])) for lib in names}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--encodings", nargs="+", default=["cl100k_base", "o200k_base"])
    ap.add_argument("--corpora", nargs="+", default=list(CORPORA))
    ap.add_argument("--numpy", action="store_true", help="also time encode_to_numpy")
    ap.add_argument("--cpu", action="store_true", help="time by this thread's CPU time, not wall time")
    cache = ap.add_mutually_exclusive_group()
    cache.add_argument("--no-cache", action="store_true", help="turn bpekit's pre-token cache off")
    cache.add_argument("--cold-cache", action="store_true", help="empty bpekit's pre-token cache before each round")
    ap.add_argument("--against", nargs="+", default=[], metavar="SO",
                    help="other _core builds to compare with this tree's, same process (A/B)")
    ap.add_argument("--chunk", type=int, default=0, metavar="N",
                    help="time the libraries in turn on runs of N documents (0: whole corpus)")
    args = ap.parse_args()
    if args.chunk < 0 or args.rounds < 1:
        raise SystemExit("--chunk must be >= 0 and --rounds >= 1")
    clock = time.thread_time if args.cpu else time.perf_counter
    corpora = {c: CORPORA[c]() for c in args.corpora}
    header = None
    for name in args.encodings:
        libs = libraries(name, args.numpy, cache=not args.no_cache)
        if args.against:
            libs.update(core_builds(name, args.against, cache=not args.no_cache))
        if header is None:
            header = "| encoding | corpus (MB) | " + " | ".join(libs) + " |"
            print(header)
            print("|" + "---|" * (2 + len(libs)))
        for corpus, docs in corpora.items():
            check_identical(libs, docs)
            reset = (lambda n=name: empty_cache(n)) if args.cold_cache else None
            res = run(docs, libs, args.rounds, clock, reset, args.chunk)
            cells = [f"{s:.1f} ({r:.2f}x)" for s, r in res.values()]
            print(f"| {name} | {corpus} ({size_mb(docs):.2f}) | " + " | ".join(cells) + " |", flush=True)
    print(f"\nMB/s of input, median of {args.rounds} rounds (median per-round ratio to tiktoken); "
          f"bpekit {bpekit.__version__}, single thread, per-document calls, "
          f"{'CPU' if args.cpu else 'wall'} time{', pre-token cache off' if args.no_cache else ''}"
          f"{', pre-token cache emptied before each round' if args.cold_cache else ''}.")


if __name__ == "__main__":
    main()
