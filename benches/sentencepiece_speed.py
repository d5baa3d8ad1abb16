"""SentencePiece BPE encoding: bpekit's ``SentencePieceBPE`` against the ``sentencepiece`` package.

Models: the shared ``.model`` files (``$BPEKIT_SPM_DIR``, default ``../shared/data/spm``) named
on the command line, and the Llama (SentencePiece) vocabulary of ``ggml-vocab-llama-spm.gguf``
as bpekit reads it, handed to sentencepiece as the ``.model`` bytes bpekit converts it to (32,000
pieces, byte fallback, no character map). Corpora: ``benches/corpora.py``, sampled to
``--max-mb`` as benches/speed.py does.

Passes, interleaved in rounds (each after a full collection with the collector off, as
benches/speed.py times): one ``encode(doc)`` call per document, for bpekit and sentencepiece;
bpekit again with a model made just before the pass (``new model``: its chunk cache empty, every
word merged once); and one call on the whole list with two threads (``encode(docs,
num_threads=2)`` in both libraries). Output checked first: bpekit must give sentencepiece's ids
for every document, or the run stops.

Reported: MB of input text per second (median of the rounds) and the median of the per-round
ratios to sentencepiece's per-document ``encode``.

``--hostile``: instead, one ``encode`` of 1 MB inputs with no ``▁`` for the merge to cut at (one
letter repeated, random letters, spaces, digits, CJK, emoji) and of 1 MB of English, process CPU
time, best of the rounds, for both libraries, bpekit with a new model (an empty chunk cache) for
each call; each library's time is also given as a multiple of its own English time.

    python benches/sentencepiece_speed.py [--rounds 5] [--max-mb 1] [--models bpe_multi_bytefb_3000 ...]
    python benches/sentencepiece_speed.py --hostile [--rounds 3] [--models ...]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from harness.local import load_corpora, setup_env  # noqa: I001 (first: sets the env)

setup_env()
from bpekit.formats.sentencepiece import SentencePieceBPE  # noqa: E402
from bpekit.tokenizer import Tokenizer  # noqa: E402
from corpora import size_mb  # noqa: E402
from harness.timing import print_rows  # noqa: E402

DATA = Path(os.environ.get("BPEKIT_TEST_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
SPM_DIR = Path(os.environ.get("BPEKIT_SPM_DIR", DATA / "spm"))
LLAMA_GGUF = DATA / "gguf" / "ggml-vocab-llama-spm.gguf"


def models(names: list[str]) -> dict[str, bytes]:
    """``label -> .model bytes`` of each model found."""
    out = {}
    for name in names:
        path = SPM_DIR / f"{name}.model"
        if path.is_file():
            out[name] = path.read_bytes()
        else:
            print(f"{name}: not measured ({path} not found)", file=sys.stderr)
    if LLAMA_GGUF.is_file():
        out["llama-spm (GGUF)"] = Tokenizer.from_file(LLAMA_GGUF).model.spm.model.serialize()
    return out


def passes(data: bytes) -> tuple[dict[str, Callable[[list[str]], object]], dict[str, Callable[[], None]]]:
    import sentencepiece

    ours = SentencePieceBPE.load(data)
    theirs = sentencepiece.SentencePieceProcessor(model_proto=data)
    fresh = [ours]

    def renew() -> None:
        fresh[0] = SentencePieceBPE.load(data)

    out: dict[str, Callable[[list[str]], object]] = {
        "bpekit encode": lambda docs: [ours.encode(d) for d in docs],
        "bpekit encode (new model)": lambda docs: [fresh[0].encode(d) for d in docs],
        "sentencepiece encode": lambda docs: [theirs.encode(d) for d in docs],
        "bpekit encode(docs, 2 threads)": lambda docs: ours.encode(docs, num_threads=2),
        "sentencepiece encode(docs, 2 threads)": lambda docs: theirs.encode(docs, num_threads=2),
    }
    return out, {"bpekit encode (new model)": renew}


def hostile_inputs() -> dict[str, str]:
    """1 MB (UTF-8) each: English, and inputs with no ``▁`` inside for chunks to be cut at."""
    rng = random.Random(0)
    english = (DATA / "corpora" / "tinyshakespeare.txt").read_text(encoding="utf-8")[:1_000_000]
    return {
        "English": english,
        "one letter": "a" * 1_000_000,
        "random letters": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(1_000_000)),
        "spaces": " " * 1_000_000,
        "digits": "".join(rng.choice("0123456789") for _ in range(1_000_000)),
        "CJK": "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(333_333)),
        "emoji": "\U0001f600" * 250_000,
    }


def hostile(models_: dict[str, bytes], rounds: int) -> None:
    import sentencepiece

    inputs = hostile_inputs()
    print("| model | input | bpekit ms | x own English | sentencepiece ms | x own English |")
    print("|---|---|---|---|---|---|")
    for label, data in models_.items():
        ours = SentencePieceBPE.load(data)
        theirs = sentencepiece.SentencePieceProcessor(model_proto=data)
        best: dict[tuple[str, str], float] = {}
        for name, text in inputs.items():
            if ours.encode(text) != theirs.encode(text):
                sys.exit(f"{label}: bpekit differs from sentencepiece on {name}")
            for lib in ("bpekit", "sentencepiece"):
                times = []
                for _ in range(rounds):
                    # a fresh bpekit model each time: its chunk cache empty, the text seen once
                    run = SentencePieceBPE.load(data).encode if lib == "bpekit" else theirs.encode
                    start = time.process_time()
                    run(text)
                    times.append(time.process_time() - start)
                best[lib, name] = min(times) * 1000
        for name in inputs:
            b, s = best["bpekit", name], best["sentencepiece", name]
            eb, es = best["bpekit", "English"], best["sentencepiece", "English"]
            print(f"| {label} | {name} | {b:.1f} | {b / eb:.2f}x | {s:.1f} | {s / es:.2f}x |")
        sys.stdout.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--max-mb", type=float, default=1.0)
    ap.add_argument("--models", nargs="+", default=["bpe_shakes_1000", "bpe_multi_bytefb_3000"])
    ap.add_argument("--hostile", action="store_true", help="1 MB inputs without a split point (see above)")
    args = ap.parse_args()
    if args.hostile:
        hostile(models(args.models), args.rounds)
        return
    corpora = load_corpora(args.max_mb)
    print("| model | corpus (MB) | pass | MB/s | x sentencepiece encode |")
    print("|---|---|---|---|---|")
    for label, data in models(args.models).items():
        runs, prepare = passes(data)
        for corpus, docs in corpora.items():
            want = runs["sentencepiece encode"](docs)
            for name, run in runs.items():
                if run(docs) != want:
                    sys.exit(f"{label}: {name} differs from sentencepiece on {corpus}")
            timed = {k: (lambda run=run: run(docs)) for k, run in runs.items()}
            print_rows(label, corpus, size_mb(docs), timed, "sentencepiece encode", args.rounds, prepare)


if __name__ == "__main__":
    main()
