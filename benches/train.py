"""Training benchmark: bpekit against Hugging Face tokenizers, SentencePiece (BPE) and the other
BPE trainers that are installed (bpeasy, rustbpe, youtokentome), on a fixed mix of English, code
and multilingual text, to a fixed vocabulary size.

    python benches/train.py                      # 50 MB mix, vocab 32,768, every trainer found
    python benches/train.py --size-mb 5 --only bpekit hf

The mix is built deterministically from the shared data (``$BPEKIT_TEST_DATA``, default
``../shared/data``) and the Python standard library sources: all the English prose, 40% code,
the rest Bible and Tatoeba text in 150+ languages; a held-out sample of each domain is kept apart
for measuring compression. Each trainer runs in its own subprocess, which reports the wall time of
training alone, its peak RSS when training ends (the whole process, interpreter included: VmHWM)
and bytes per token on the held-out lines. bpekit also reports its two phases (counting, merging)
and, as ``bpekit-from-counts``, training from word counts saved beforehand (loading included).
Results go to ``<out>/results.json`` and a Markdown table to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BPEKIT_TEST_DATA", ROOT.parent / "shared" / "data"))
TRAINERS = [
    "bpekit",
    "bpekit-1-thread",
    "bpekit-from-counts",
    "hf",
    "sentencepiece",
    "bpeasy",
    "rustbpe",
    "youtokentome",
]


# ---- the mix ----


def _head(text: str, size: int) -> str:
    """At most ``size`` UTF-8 bytes of ``text``, cut after a line break."""
    data = text.encode("utf-8")[:size]
    cut = data.rfind(b"\n") + 1
    return data[: cut or len(data)].decode("utf-8", "ignore")


def build_mix(out: Path, size_mb: float) -> tuple[Path, Path]:
    """Writes ``mix.txt`` (training) and ``heldout.txt`` (evaluation); returns their paths."""
    budget = int(size_mb * 1_000_000)
    corpora = DATA / "corpora"
    train_parts: list[str] = []
    held: list[str] = []
    for name in ["tinyshakespeare.txt", "taylorswift.txt", "tatoeba/tatoeba.eng"]:  # English: all of it
        text = (corpora / name).read_text(encoding="utf-8")
        cut = len(_head(text, int(len(text.encode()) * 0.9)))
        train_parts.append(text[:cut])
        held.append(text[cut:])
    english = sum(len(t.encode()) for t in train_parts)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    code_budget, code, code_held = int(budget * 0.4), 0, 0
    py_files = sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts)
    for i, path in enumerate(py_files):
        text = path.read_text(encoding="utf-8", errors="replace")
        if i % 25 == 24:  # every 25th file is held out, up to 1 MB
            if code_held < 1_000_000:
                held.append(text)
                code_held += len(text.encode())
            continue
        if code >= code_budget:
            break
        train_parts.append(text)
        code += len(text.encode())
    tatoeba = sorted(p for p in (corpora / "tatoeba").iterdir() if not p.name.endswith(".eng"))
    multi = [p.read_text(encoding="utf-8") for p in tatoeba]
    train_parts.extend(multi)
    left = budget - english - code - sum(len(t.encode()) for t in multi)
    bibles = sorted((corpora / "bible").iterdir(), key=lambda p: (p.stat().st_size, p.name))
    for i, path in enumerate(bibles):  # smallest first, each takes an equal share of what is left
        text = path.read_text(encoding="utf-8")
        head = _head(text, max(0, left // (len(bibles) - i)))
        left -= len(head.encode()) + 1
        train_parts.append(head)
        held.append(_head(text[len(head) :], 30_000))
    out.mkdir(parents=True, exist_ok=True)
    mix, heldout = out / "mix.txt", out / "heldout.txt"
    mix.write_text("\n".join(train_parts), encoding="utf-8")
    heldout.write_text("\n".join(held), encoding="utf-8")
    return mix, heldout


# ---- one trainer per subprocess ----


def peak_rss_mb() -> float:
    """This process's peak resident memory. (Not getrusage: on Linux its ru_maxrss survives exec,
    so a child would report the benchmark driver's peak.)"""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def run_worker(name: str, mix: Path, heldout: Path, vocab_size: int, result: Path) -> None:
    from bpekit.patterns import O200K

    lines = [line for line in heldout.read_text(encoding="utf-8").split("\n") if line]
    phases: dict[str, float] = {}
    start = time.perf_counter()
    if name.startswith("bpekit"):
        from bpekit.train.counts import WordCounts
        from bpekit.train.trainer import Trainer

        trainer = Trainer(vocab_size, pattern="o200k", show_progress=False, threads=1 if "1-thread" in name else 0)
        if name == "bpekit-from-counts":
            counts = WordCounts.load(result.parent / "mix.counts")
            phases["load"] = time.perf_counter() - start
        else:
            trainer.count(mix)
            counts = trainer.counts
        tok = trainer.train_from_counts(counts, consume=True)
        seconds, peak = time.perf_counter() - start, peak_rss_mb()
        phases.update(trainer.timings)
        n_tokens = sum(len(ids) for ids in tok.encode_batch(lines, disallowed_special=()))
    elif name == "hf":
        from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

        from bpekit.tokenizer_export import onig_pattern

        hf = Tokenizer(models.BPE())
        hf.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(onig_pattern(O200K)), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            min_frequency=2,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        hf.train([str(mix)], trainer)
        seconds, peak = time.perf_counter() - start, peak_rss_mb()
        n_tokens = sum(len(e.ids) for e in hf.encode_batch(lines))
    elif name == "sentencepiece":
        import sentencepiece as spm

        prefix = str(result.with_suffix(""))
        spm.SentencePieceTrainer.train(
            input=str(mix),
            model_prefix=prefix,
            model_type="bpe",
            vocab_size=vocab_size,
            byte_fallback=True,
            character_coverage=0.9995,
            num_threads=os.cpu_count() or 1,
            minloglevel=2,
        )
        seconds, peak = time.perf_counter() - start, peak_rss_mb()
        sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
        n_tokens = sum(len(ids) for ids in sp.encode(lines))
    elif name == "youtokentome":
        import youtokentome as yttm

        model = str(result.with_suffix(".yttm"))
        yttm.BPE.train(data=str(mix), model=model, vocab_size=vocab_size, n_threads=-1)
        seconds, peak = time.perf_counter() - start, peak_rss_mb()
        n_tokens = sum(len(ids) for ids in yttm.BPE(model=model).encode(lines))
    else:
        import tiktoken

        def docs():
            with open(mix, encoding="utf-8") as f:
                yield from f

        if name == "bpeasy":
            import bpeasy

            ranks = bpeasy.train_bpe(docs(), O200K, 128, vocab_size)
        elif name == "rustbpe":
            import rustbpe

            rb = rustbpe.Tokenizer()
            rb.train_from_iterator(docs(), vocab_size, pattern=O200K)
            ranks = {bytes(t): r for t, r in rb.get_mergeable_ranks()}
        else:
            raise SystemExit(f"unknown trainer {name!r}")
        seconds, peak = time.perf_counter() - start, peak_rss_mb()
        enc = tiktoken.Encoding(name, pat_str=O200K, mergeable_ranks=ranks, special_tokens={})
        n_tokens = sum(len(ids) for ids in enc.encode_ordinary_batch(lines))
    n_bytes = sum(len(line.encode()) for line in lines)
    result.write_text(
        json.dumps(
            {
                "name": name,
                "seconds": seconds,
                "peak_rss_mb": peak,
                "bytes_per_token": n_bytes / n_tokens,
                "phases": phases,
            }
        )
    )


def available(name: str) -> bool:
    module = "bpekit" if name.startswith("bpekit") else {"hf": "tokenizers"}.get(name, name)
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vocab-size", type=int, default=32_768)
    ap.add_argument("--size-mb", type=float, default=50)
    ap.add_argument("--out", type=Path, default=ROOT / "bench-results" / "train")
    ap.add_argument("--only", nargs="*", choices=TRAINERS)
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per trainer")
    ap.add_argument("--repeat", type=int, default=1, help="runs per trainer; the fastest is kept")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    mix, heldout = args.out / "mix.txt", args.out / "heldout.txt"
    if args.worker:
        run_worker(args.worker, mix, heldout, args.vocab_size, args.out / f"{args.worker}.json")
        return
    mix, heldout = build_mix(args.out, args.size_mb)
    print(f"mix: {mix.stat().st_size / 1e6:.1f} MB, held-out: {heldout.stat().st_size / 1e6:.1f} MB, "
          f"vocab {args.vocab_size:,}, {os.cpu_count()} cores", file=sys.stderr)
    names = args.only or TRAINERS
    if "bpekit-from-counts" in names:  # the saved counts it starts from (not timed)
        from bpekit.train import count

        count(mix, pattern="o200k", show_progress=False).save(args.out / "mix.counts")
    results = []
    for name in names:
        if not available(name):
            print(f"{name}: not installed, skipped", file=sys.stderr)
            continue
        cmd = [sys.executable, __file__, "--worker", name, "--out", str(args.out), "--vocab-size", str(args.vocab_size)]
        runs = []
        for _ in range(args.repeat):
            try:
                subprocess.run(cmd, check=True, timeout=args.timeout)
                runs.append(json.loads((args.out / f"{name}.json").read_text()))
            except subprocess.TimeoutExpired:
                runs.append({"name": name, "seconds": None, "peak_rss_mb": None, "bytes_per_token": None})
                break
            except subprocess.CalledProcessError as exc:
                print(f"{name}: failed ({exc})", file=sys.stderr)
                break
            print(f"{name}: {runs[-1]} (load average {os.getloadavg()[0]:.1f})", file=sys.stderr)
        if runs:
            results.append(min(runs, key=lambda r: r["seconds"] if r["seconds"] is not None else float("inf")))
    (args.out / "results.json").write_text(json.dumps(results, indent=2))
    print(table(results, args.timeout))


def table(results: list[dict], timeout: float) -> str:
    base = next((r for r in results if r["name"] == "hf" and r["seconds"]), None)
    rows = ["| trainer | wall time (s) | vs HF | peak RSS (MB) | vs HF | bytes/token (held-out) |", "|---|---:|---:|---:|---:|---:|"]
    for r in results:
        if r["seconds"] is None:
            rows.append(f"| {r['name']} | > {timeout:.0f} | | | | |")
            continue
        speed = f"{base['seconds'] / r['seconds']:.1f}x" if base else ""
        mem = f"{100 * r['peak_rss_mb'] / base['peak_rss_mb']:.0f}%" if base else ""
        rows.append(
            f"| {r['name']} | {r['seconds']:.1f} | {speed} | {r['peak_rss_mb']:.0f} | {mem} | {r['bytes_per_token']:.3f} |"
        )
    phases = [f"{r['name']}: " + ", ".join(f"{k} {v:.2f} s" for k, v in r["phases"].items()) for r in results if r.get("phases")]
    return "\n".join(rows + [""] + phases)


if __name__ == "__main__":
    main()
