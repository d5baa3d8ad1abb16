"""Work that must run in a fresh process: worst-case inputs (a peer may crash or take minutes),
load time, and peak memory.

The parent side (:func:`worst_cases`, :func:`load_time`, :func:`peak_rss`) starts this file as a
child (``python benches/harness/isolated.py MODE LIB ENCODING ...``) that prints one JSON line per
result; a case that passes its timeout is recorded as TIMEOUT and one that kills the child as
CRASH, and the remaining cases continue in a new child.
"""

from __future__ import annotations

import json
import os
import random
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, cast

HERE = Path(__file__).resolve().parent
if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))

WORST = ("'a'*N", "random letters", "digits", "spaces", "emoji")


def worst_input(case: str, n_bytes: int) -> str:
    """``n_bytes`` of UTF-8 text of one worst-case kind (deterministic)."""
    rng = random.Random(0)
    if case == "'a'*N":
        return "a" * n_bytes
    if case == "random letters":
        return "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=n_bytes))
    if case == "digits":
        return "".join(rng.choices("0123456789", k=n_bytes))
    if case == "spaces":
        return " " * n_bytes
    if case == "emoji":  # 4 UTF-8 bytes each, from the main emoji blocks
        return "".join(chr(rng.randrange(0x1F300, 0x1F650)) for _ in range(n_bytes // 4))
    if case == "english":
        from corpora import english

        text = "".join(english())
        while len(text.encode()) < n_bytes:
            text += text
        return text.encode()[:n_bytes].decode("utf-8", errors="ignore")
    raise ValueError(f"unknown worst case {case!r}")


def _vm_hwm_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _emit(obj: dict[str, object]) -> None:
    print(json.dumps(obj), flush=True)


def child(mode: str, lib_name: str, enc: str, args: list[str]) -> None:
    from harness.local import load_corpora, setup_env

    setup_env()
    if mode == "rss" and lib_name == "none":  # the baseline: interpreter + corpora
        load_corpora(float(args[0]))
        _emit({"peak_mb": _vm_hwm_mb()})
        return
    import importlib

    from harness import libs

    if not lib_name.startswith("bpekit"):
        import bpekit.patterns  # noqa: F401 (the harness's own, for peers' patterns: not timed)
    t0 = time.perf_counter()
    importlib.import_module(libs.MODULES.get(lib_name, lib_name))
    t1 = time.perf_counter()
    lib = libs.build(lib_name, enc)
    t2 = time.perf_counter()
    if mode == "load":
        _emit({"import_s": t1 - t0, "load_s": t2 - t1, "rss_mb": _vm_hwm_mb()})
    elif mode == "rss":
        for docs in load_corpora(float(args[0])).values():
            for d in docs:
                lib.encode(d)
        _emit({"peak_mb": _vm_hwm_mb()})
    elif mode == "worst":
        from harness.check import digest

        n_bytes, repeats, cases = int(args[0]), int(args[1]), args[2:]
        lib.encode("warm up")
        for case in cases:
            text = worst_input(case, n_bytes)
            best, ids = float("inf"), []
            for _ in range(repeats):
                t = time.perf_counter()
                ids = lib.encode(text)
                best = min(best, time.perf_counter() - t)
            _emit({"case": case, "seconds": best, "digest": digest(ids), "n_ids": len(ids)})


def _run_child(argv: list[str], timeouts: list[float], env: dict[str, str] | None = None) -> tuple[list[dict], str | None]:
    """Runs a child; returns its JSON lines and, if it stopped early, TIMEOUT or CRASH (...)."""
    argv = [sys.executable, str(Path(__file__)), *argv]
    with tempfile.TemporaryFile() as err, subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True, env=env) as proc:
        return _collect(proc, err, timeouts)


def _collect(proc: subprocess.Popen[str], err: IO[bytes],
             timeouts: list[float]) -> tuple[list[dict], str | None]:
    """The child's JSON lines, one per timeout in ``timeouts``, until it stops or is too slow."""
    stdout = cast(IO[str], proc.stdout)  # a pipe: stdout=PIPE above
    out: list[dict] = []
    for limit in timeouts:
        ready, _, _ = select.select([stdout], [], [], limit)
        line = stdout.readline() if ready else None
        if line:
            out.append(json.loads(line))
            continue
        if line is None:  # timed out
            proc.kill()
            proc.wait()
            return out, "TIMEOUT"
        rc = proc.wait()
        err.seek(0)
        return out, f"CRASH (exit {rc}: {_why(err.read().decode(errors='replace'))})"
    proc.wait()
    return out, None


def _why(stderr: str) -> str:
    """The telling line of a crashed child's stderr: a Rust panic's message, else the last line."""
    lines = [x.strip() for x in stderr.splitlines() if x.strip()]
    for i, x in enumerate(lines):
        if "panicked at" in x:
            return " ".join(lines[i : i + 2])[:200]
    return lines[-1][:200] if lines else "no message"


def worst_cases(lib: str, enc: str, n_bytes: int, timeout: float, repeats: int = 1,
                load_timeout: float = 120) -> dict[str, dict]:
    """``{case: {"seconds", "digest", "n_ids"} or {"status": "TIMEOUT" | "CRASH ..."}}`` for
    English and every worst case, each case limited to ``timeout`` seconds."""
    todo = ["english", *WORST]
    results: dict[str, dict] = {}
    while todo:
        limits = [load_timeout + timeout * repeats] + [timeout * repeats] * (len(todo) - 1)
        out, stop = _run_child(["worst", lib, enc, str(n_bytes), str(repeats), *todo], limits)
        for r in out:
            results[r.pop("case")] = r
        todo = todo[len(out):]
        if stop and todo:
            results[todo.pop(0)] = {"status": stop}
    return results


def load_time(lib: str, enc: str, runs: int, timeout: float = 120) -> dict[str, float] | str:
    """Median import and load seconds over ``runs`` fresh processes (or why it failed), every
    library imported from bytecode caches, as an installed package is: the children may write
    them (`PYTHONDONTWRITEBYTECODE` is dropped) and an untimed first run does. Without this an
    editable install (bpekit here) compiled its modules at every import while the peers' wheels
    came with theirs: 51 ms against 12 ms for `import bpekit` (session 12)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    _run_child(["load", lib, enc], [timeout], env)
    got = []
    for _ in range(runs):
        out, stop = _run_child(["load", lib, enc], [timeout], env)
        if stop or not out:
            return stop or "no output"
        got.append(out[0])
    return {k: statistics.median(g[k] for g in got) for k in got[0]}


def peak_rss(lib: str, enc: str, max_mb: float, timeout: float = 600) -> float | str:
    """Peak RSS (MB) of a fresh process that loads ``lib`` and encodes every corpus, sampled to
    ``max_mb`` each (0: whole); "none": the interpreter and the corpora alone."""
    out, stop = _run_child(["rss", lib, enc, str(max_mb)], [timeout])
    return out[0]["peak_mb"] if out else (stop or "no output")


if __name__ == "__main__":
    child(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
