"""The PyTorch engine (``bpekit.torch``) against the Rust engine, side by side, on each device
torch has here (the CPU, and CUDA when there is a GPU).

    python benches/torch_engine.py                          # every device found, default sizes
    python benches/torch_engine.py --devices cuda --vocab 1000 2000 8000 --big 4000

Training (merges alone: both engines start from the same Rust word counts): the 2.24 MB mix of
docs/torch.md (tinyshakespeare + taylorswift + the Swahili New Testament, o200k pattern) to each
``--vocab``; with ``--big N``, every Bible file of the shared data (58.7 MB, 46 languages) to
vocab ``N``, on the GPU only (the CPU tensor engine would take hours there).

Encoding with cl100k: 10,000 tinyshakespeare lines, ``--ml-docs`` documents of the multilingual
corpus and, with ``--big``, every Bible in 20-line documents. Rust is ``encode_ordinary_batch``
on one thread and on every core; torch is ``TorchEncoder.encode_batch`` with its pair table built
beforehand (that build is timed apart), its split on the Rust core's threads, one per core.

Every pair of results is compared (merges; ids) and the script exits 1 on any difference. Torch
on the CPU uses ``--torch-threads`` threads (1 by default: on a busy machine more threads spin and
run slower, see docs/torch.md). Each timing is the best of ``--rounds`` runs (one run for the
Bible training, and for training on the CPU) after one warm-up of each device (CUDA's context and
kernels load on first use). Results go to stdout as a Markdown table and to ``--json`` if given.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import corpora

import bpekit
import bpekit.torch
from bpekit.train import count, train_from_counts

DATA = corpora.DATA


def best_of(rounds: int, fn: Any) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(rounds):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def train_mix() -> list[str]:
    c = DATA / "corpora"
    paths = [c / "tinyshakespeare.txt", c / "taylorswift.txt", c / "bible" / "Swahili-NT.txt"]
    return [p.read_text(encoding="utf-8") for p in paths]


def every_bible() -> list[str]:
    return [p.read_text(encoding="utf-8") for p in sorted((DATA / "corpora" / "bible").glob("*.txt"))]


def mb(docs: list[str]) -> float:
    return sum(len(d.encode("utf-8")) for d in docs) / 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", nargs="*", help="torch devices (default: cpu, and cuda if available)")
    ap.add_argument("--vocab", nargs="*", type=int, default=[1_000, 2_000], help="vocab sizes on the 2.24 MB mix")
    ap.add_argument("--cpu-max-vocab", type=int, default=2_000, help="skip larger vocab sizes on the CPU")
    ap.add_argument("--big", type=int, default=0, help="vocab size on every Bible file (GPU only; 0: skip)")
    ap.add_argument("--ml-docs", type=int, default=2_000, help="multilingual documents to encode")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--torch-threads", type=int, default=1)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.torch_threads)
    devices = args.devices or (["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"])
    env = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cpus": os.cpu_count(),
        "torch_threads": args.torch_threads,
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
    }
    print(f"# {env}", flush=True)
    rows: list[dict[str, Any]] = []
    failed = False

    def report(row: dict[str, Any]) -> None:
        rows.append(row)
        print(json.dumps(row), flush=True)

    for dev in devices:  # warm-up: context, kernels, allocator
        bpekit.torch.train(count(iter(["warm up warm up " * 50]), show_progress=False), 270, device=dev)

    # ---- training ----
    jobs = [("mix 2.24 MB (o200k)", train_mix, v, devices, args.rounds) for v in args.vocab]
    if args.big:
        jobs.append(("every Bible, 57 MB (o200k)", every_bible, args.big, [d for d in devices if d != "cpu"], 1))
    for name, docs_of, vocab, devs, rounds in jobs:
        docs = docs_of()
        counts = count(iter(docs), pattern="o200k", show_progress=False)
        rust_s, rust = best_of(rounds, lambda: train_from_counts(counts, vocab_size=vocab, show_progress=False))
        for dev in devs:
            if dev == "cpu" and vocab > args.cpu_max_vocab:
                continue
            s, tok = best_of(1 if dev == "cpu" else rounds, lambda: bpekit.torch.train(counts, vocab, device=dev))
            same = tok.merges == rust.merges and tok.ranks == rust.ranks
            failed |= not same
            report({"task": "train", "corpus": name, "mb": round(mb(docs), 2), "words": len(counts),
                    "vocab": vocab, "device": dev, "rust_s": round(rust_s, 3), "torch_s": round(s, 3),
                    "ratio": round(s / rust_s, 1), "same": same})

    # ---- encoding ----
    enc = bpekit.get_encoding("cl100k_base")
    shakespeare = (DATA / "corpora" / "tinyshakespeare.txt").read_text(encoding="utf-8").splitlines()[:10_000]
    sets = [("10,000 tinyshakespeare lines", shakespeare), (f"{args.ml_docs} multilingual documents",
                                                            corpora.multilingual()[: args.ml_docs])]
    if args.big:
        sets.append(("every Bible in 20-line documents", [
            "".join(lines[i : i + 20]) for doc in every_bible() for lines in [doc.splitlines(keepends=True)]
            for i in range(0, len(lines), 20)]))
    for dev in devices:
        build_s, encoder = best_of(1, lambda: bpekit.torch.encoder_for(enc, device=dev))
        for name, texts in sets:
            rust_s, want = best_of(args.rounds, lambda: enc.encode_ordinary_batch(texts, num_threads=1))
            rust_all_s, _ = best_of(args.rounds, lambda: enc.encode_ordinary_batch(texts, num_threads=0))
            s, got = best_of(args.rounds, lambda: encoder.encode_batch(texts))
            split_s, _ = best_of(args.rounds, lambda: [enc.split(t) for t in texts])
            same = got == want
            failed |= not same
            report({"task": "encode", "corpus": name, "mb": round(mb(texts), 2), "device": dev,
                    "rust_s": round(rust_s, 4), "rust_all_threads_s": round(rust_all_s, 4),
                    "torch_s": round(s, 4), "ratio": round(s / rust_s, 2),
                    "table_build_s": round(build_s, 2), "python_split_s": round(split_s, 4), "same": same})

    print("\n| task | corpus | device | Rust, 1 thread | Rust, every core | PyTorch | PyTorch / Rust 1 thread | same |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        what = f"vocab {r['vocab']:,}, {r['words']:,} words" if r["task"] == "train" else f"{r['mb']} MB"
        every = f"{r['rust_all_threads_s']} s" if "rust_all_threads_s" in r else "-"
        print(f"| {r['task']} | {r['corpus']}, {what} | {r['device']} | {r['rust_s']} s | {every} | {r['torch_s']} s "
              f"| {r['ratio']}x | {'yes' if r['same'] else 'NO'} |")
    if args.json:
        args.json.write_text(json.dumps({"env": env, "rows": rows}, indent=1))
    if failed:
        print("FAILED: the engines disagree (see 'same' above)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
