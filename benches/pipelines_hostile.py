"""Hostile text through tokenizers loaded from files: one megabyte of English, of one letter, of
random letters, of spaces and of random digits, each as one ``encode`` call, through a
``tokenizer.json`` (bpekit's ``Tokenizer`` and Hugging Face ``tokenizers``, ids compared) and
through llama.cpp GGUF vocabularies (bpekit only).

    python benches/pipelines_hostile.py [--mb 1] [--rounds 3] [FILE ...]

Default files: GPT-NeoX's ``tokenizer.json`` and the byte-level GGUF vocabularies of the shared
data (``$BPEKIT_DATA``, default ``../shared/data``). Process CPU seconds, best of ``--rounds``,
each timed call after the caches of encoded pieces were emptied (bpekit: by setting
``Tokenizer.pretoken_cache_bytes``; ``tokenizers``: ``model._clear_cache()``), so that English is
encoded as text never seen before, as the hostile inputs are (before session 15 English was
answered from the cache from the second round on); the linear merge's tables, once built, stay.
Each input's ratio to the same library's English. Issue #7 asks every hostile input within 2x of
benign text of the same size.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from corpora import DATA


def inputs(n: int) -> dict[str, str]:
    rng = random.Random(0)
    english = (DATA / "corpora" / "tinyshakespeare.txt").read_text(encoding="utf-8")
    return {
        "English": (english * (n // len(english) + 1))[:n],
        "one letter": "a" * n,
        "random letters": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n)),
        "spaces": " " * n,
        "digits": "".join(rng.choice("0123456789") for _ in range(n)),
    }


def best(fn, text: str, rounds: int, empty) -> tuple[float, list[int]]:
    out, t_best = [], float("inf")
    for _ in range(rounds):
        empty()
        t = time.process_time()
        out = fn(text)
        t_best = min(t_best, time.process_time() - t)
    return t_best, out


def empty_ours(tok) -> None:
    """Empties the tokenizer's piece caches (setting the budget does)."""
    tok.pretoken_cache_bytes = tok.pretoken_cache_bytes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    from bpekit.tokenizer import Tokenizer

    files = a.files or [DATA / "hf" / "gpt-neox-20b.tokenizer.json",
                        *(DATA / "gguf" / f"ggml-vocab-{n}.gguf" for n in ("llama-bpe", "qwen2", "gpt-2"))]
    texts = inputs(int(a.mb * 1_000_000))
    print("| file | input | bpekit ms | x own English | tokenizers ms | x own English | same ids |")
    print("|---|---|---|---|---|---|---|")
    for path in files:
        if not path.is_file():
            print(f"| {path.name} | not found | | | | | |")
            continue
        ours = Tokenizer.from_file(path)
        hf = None
        if path.suffix == ".json":
            try:
                import tokenizers

                hf = tokenizers.Tokenizer.from_file(str(path))
            except ImportError:
                pass
        base: dict[str, float] = {}
        for name, text in texts.items():
            t, ids = best(lambda s: ours.encode(s), text, a.rounds, lambda: empty_ours(ours))
            row = [f"{t * 1e3:.1f}", f"{t / base.setdefault('bpekit', t):.2f}x"]
            if hf is not None:
                th, hids = best(lambda s: hf.encode(s, add_special_tokens=False).ids, text, a.rounds,
                                hf.model._clear_cache)
                row += [f"{th * 1e3:.1f}", f"{th / base.setdefault('hf', th):.2f}x", str(list(ids) == hids)]
            else:
                row += ["", "", ""]
            print(f"| {path.name} | {name} | " + " | ".join(row) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
