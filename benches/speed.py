"""Encoding speed, worst cases, load time and memory: bpekit vs tiktoken and every installed peer.

For cl100k_base and o200k_base, one run measures (each library on the same corpora, side by side):
single-thread per-document MB/s (list output, and numpy output where offered; bpekit also with its
pre-token cache off); 2-thread batch MB/s and its ratio to the library's own single-thread figure;
worst-case inputs (1 MB of 'a', random letters, digits, spaces, emoji) in a fresh process with a
timeout; load time and peak RSS in fresh processes. Ids are checked identical to tiktoken's on
every input first: a bpekit difference stops the run (exit 1), a peer's is reported.

Rounds interleave the libraries (order rotated every round) and ratios are medians of same-round
ratios, because the machine is shared. Results: a markdown table on stdout, the raw numbers in
``bench-results/speed.json``; ``--write-docs`` also updates ``docs/benchmarks.md``.

    python benches/speed.py                   # everything (tens of minutes on a busy 2-core box)
    python benches/speed.py --quick           # smoke run, < 2 min: bpekit + tiktoken, small samples
    python benches/speed.py --libs bpekit tiktoken rs_bpe --sections speed worst
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from harness.local import RESULTS, ROOT, load_corpora, setup_env

setup_env()  # before any tokenizer library is imported

from corpora import size_mb
from harness import check, isolated, libs, report
from harness.timing import run_rounds

SECTIONS = ("speed", "worst", "load")
QUICK_LIBS = ["bpekit", "bpekit(no cache)", "tiktoken"]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: small samples, 1 round, bpekit + tiktoken")
    ap.add_argument("--rounds", type=int, default=None, help="timing rounds (default 3; quick 1)")
    ap.add_argument("--encodings", nargs="+", default=["cl100k_base", "o200k_base"])
    ap.add_argument("--libs", nargs="+", default=None, help=f"default: all ({', '.join(libs.BUILDERS)})")
    ap.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    ap.add_argument("--max-mb", type=float, default=None, help="sample each corpus to ~this many MB (0 = whole)")
    ap.add_argument("--worst-bytes", type=int, default=None, help="worst-case input size (default 1,000,000)")
    ap.add_argument("--worst-timeout", type=float, default=None, help="seconds per worst case (default 30)")
    ap.add_argument("--load-runs", type=int, default=None, help="fresh processes per load time (default 5)")
    ap.add_argument("--cold", action="store_true",
                    help="no untimed pass before each timed one (the tables before session 13)")
    ap.add_argument("--json", type=Path, default=RESULTS / "speed.json")
    ap.add_argument("--write-docs", action="store_true", help="update the generated tables in docs/benchmarks.md")
    ap.add_argument("--render", type=Path, nargs="+", metavar="JSON",
                    help="measure nothing: merge these saved results (e.g. one run per encoding) into the tables")
    a = ap.parse_args(argv)
    quick = a.quick
    a.rounds = a.rounds or (1 if quick else 3)
    a.libs = a.libs or (QUICK_LIBS if quick else list(libs.BUILDERS))
    a.max_mb = a.max_mb if a.max_mb is not None else (0.15 if quick else 0)
    a.worst_bytes = a.worst_bytes or (100_000 if quick else 1_000_000)
    a.worst_timeout = a.worst_timeout or (10 if quick else 30)
    a.load_runs = a.load_runs or (1 if quick else 5)
    if a.rounds < 1 or a.load_runs < 1 or a.worst_bytes < 1:
        ap.error("--rounds, --load-runs and --worst-bytes must be >= 1")
    if "tiktoken" not in a.libs:
        a.libs.insert(0, "tiktoken")  # the reference for ids and ratios
    return a


def timed_passes(lib: libs.Lib, docs: list[str]) -> dict[str, Any]:
    """The timed pass of every mode ``lib`` offers, over ``docs``."""
    def per_doc(attr: str) -> Any:
        # The method is looked up when the pass runs, not now: a `prepare` that makes a fresh
        # instance (gigatoken's cold cache) replaces it, and a pass bound here would keep calling
        # the first instance, its cache warm from the id check and every earlier round.
        def run() -> list[Any]:
            fn = getattr(lib, attr)
            return [fn(d) for d in docs]

        return run

    passes = {"list": per_doc("encode")}
    if lib.numpy:
        passes["numpy"] = per_doc("numpy")
    if lib.batch:
        passes["batch"] = lambda: lib.batch(docs)  # type: ignore[misc]
    if lib.batch_numpy:
        passes["batch_numpy"] = lambda: lib.batch_numpy(docs)  # type: ignore[misc]
    return passes


def measure_encoding(enc: str, corpora: dict[str, list[str]], a: argparse.Namespace, res: dict[str, Any]) -> None:
    built: dict[str, libs.Lib] = {}
    for name in a.libs:
        try:
            built[name] = libs.build(name, enc)
        except libs.Unavailable as e:
            res["unavailable"][name] = str(e)
            if name == "tiktoken" or name.startswith("bpekit"):
                raise SystemExit(f"cannot run without {name}: {e}") from e
            continue
        res["versions"][name] = built[name].version
        if built[name].note:
            res["notes"][name] = built[name].note
    out: dict[str, Any] = {"corpora": {}, "mismatches": []}
    res["encodings"][enc] = out
    for corpus, docs in corpora.items():
        reference = check.outputs(built["tiktoken"], "list", docs) or []
        found = [m for lib in built.values() for m in check.compare(lib, docs, reference)]
        out["mismatches"] += [{"lib": m.lib, "mode": m.mode, "corpus": corpus, "text": str(m)} for m in found]
        check.require_identical(found)
        print(f"{enc} {corpus}: ids checked ({len(docs)} documents); {len(found)} peer mismatch(es)", file=sys.stderr)
        if "speed" not in a.sections:
            continue
        passes, prepare = {}, {}
        for name, lib in built.items():
            for mode, fn in timed_passes(lib, docs).items():
                passes[f"{name}|{mode}"] = fn
                prepare[f"{name}|{mode}"] = lib.prepare
        secs = run_rounds(passes, a.rounds, prepare, warm=not a.cold)
        out["corpora"][corpus] = {"mb": size_mb(docs), "docs": len(docs), "seconds": secs}
    separate = [n for n in built if n != "bpekit(no cache)"]  # the cache plays no part below
    if "worst" in a.sections:
        worst: dict[str, dict] = {}
        for name in separate:
            worst[name] = isolated.worst_cases(name, enc, a.worst_bytes, a.worst_timeout)
            print(f"{enc} worst cases: {name} done", file=sys.stderr)
        ref = worst["tiktoken"]
        for name, cases in worst.items():
            for case, r in cases.items():
                if "digest" in r and "digest" in ref.get(case, {}):
                    r["differs"] = r["digest"] != ref[case]["digest"]
                    if r["differs"] and name.startswith("bpekit"):
                        raise SystemExit(f"MISMATCH: {name} differs from tiktoken on {enc} worst case {case}")
        out["worst"] = worst
    if "load" in a.sections:
        out["load"] = {name: isolated.load_time(name, enc, a.load_runs) for name in separate}
        out["rss"] = {name: isolated.peak_rss(name, enc, a.max_mb) for name in ["none", *separate]}
        print(f"{enc} load and memory done", file=sys.stderr)


def merged(paths: list[Path]) -> dict[str, Any]:
    """Saved results of several runs as one (encodings side by side; settings of the first run,
    with every run's command)."""
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    res = runs[0]
    for r in runs[1:]:
        res["encodings"].update(r["encodings"])
        for key in ("versions", "unavailable", "notes"):
            res[key].update(r[key])
        res["libs"] += [lib for lib in r["libs"] if lib not in res["libs"]]
        res["settings"]["command"] += "` and `" + r["settings"]["command"]
    return res


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    if a.render:
        table = report.markdown(merged(a.render))
        print(table)
        if a.write_docs:
            report.update_docs(ROOT / "docs" / "benchmarks.md", table)
        return 0
    corpora = load_corpora(a.max_mb)
    res: dict[str, Any] = {
        "settings": {
            "command": "python benches/speed.py " + " ".join(sys.argv[1:] if argv is None else argv),
            "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "load": " ".join(f"{x:.1f}" for x in os.getloadavg()),
            "rounds": a.rounds, "warm": not a.cold, "max_mb": a.max_mb, "worst_bytes": a.worst_bytes,
            "worst_timeout": a.worst_timeout, "load_runs": a.load_runs, "cpus": os.cpu_count(),
        },
        "libs": a.libs, "versions": {}, "unavailable": {}, "notes": {}, "encodings": {},
    }
    for enc in a.encodings:  # results are saved after each encoding: a long run can be cut short
        measure_encoding(enc, corpora, a, res)
        table = save(res, a)
    print(table)
    return 0


def save(res: dict[str, Any], a: argparse.Namespace) -> str:
    """Writes the JSON results (and the docs' tables if asked); returns the markdown."""
    from bpekit.atomicfile import atomic_write

    res["libs"] = [lib for lib in a.libs if lib not in res["unavailable"]]
    table = report.markdown(res)
    atomic_write(a.json, json.dumps(res, indent=1).encode())
    if a.write_docs:
        report.update_docs(ROOT / "docs" / "benchmarks.md", table)
    return table


if __name__ == "__main__":
    sys.exit(main())
