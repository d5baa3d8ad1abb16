"""Decoding speed: bpekit against tiktoken (and Hugging Face tokenizers where installed).

For each encoding and corpus (``benches/corpora.py``, sampled to ``--max-mb`` as benches/speed.py
does), every document is encoded once with tiktoken; then, in interleaved rounds (each pass after
a full collection with the collector off, as benches/speed.py times), one call per document:
``decode(ids)`` (text, ``errors="replace"``) and ``decode_bytes(ids)``, and one
``decode_batch(all ids)`` call (bpekit and tiktoken with ``num_threads=2``; Hugging Face's
``decode_batch`` on its own thread pool, ``RAYON_NUM_THREADS=2``). Output checked first: every
library must give tiktoken's text (bytes) for every document, or the run stops.

Reported: MB of decoded text per second (median of the rounds) and the median of the per-round
ratios to tiktoken's ``decode``.

    python benches/decode.py [--rounds 5] [--max-mb 1] [--encodings cl100k_base o200k_base]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from harness.local import ENCODINGS, load_corpora, setup_env  # noqa: I001 (first: sets the env)

setup_env()
import bpekit  # noqa: E402
from corpora import size_mb  # noqa: E402
from harness.timing import print_rows  # noqa: E402


def decoders(name: str) -> dict[str, Callable[[list[list[int]]], object]]:
    """``label -> pass`` over a list of id lists, for every library installed."""
    import tiktoken

    bk, tk = bpekit.get_encoding(name), tiktoken.get_encoding(name)
    out: dict[str, Callable[[list[list[int]]], object]] = {
        "bpekit decode": lambda seqs: [bk.decode(s) for s in seqs],
        "tiktoken decode": lambda seqs: [tk.decode(s) for s in seqs],
        "bpekit decode_bytes": lambda seqs: [bk.decode_bytes(s) for s in seqs],
        "tiktoken decode_bytes": lambda seqs: [tk.decode_bytes(s) for s in seqs],
        "bpekit decode_batch(2)": lambda seqs: bk.decode_batch(seqs, num_threads=2),
        "tiktoken decode_batch(2)": lambda seqs: tk.decode_batch(seqs, num_threads=2),
    }
    try:
        from harness import hfjson  # the peers' tokenizer.json, as speed.py makes it
        from tokenizers import Tokenizer

        hf = Tokenizer.from_file(str(hfjson.path(name)))
        out["hf_tokenizers decode"] = lambda seqs: [hf.decode(s) for s in seqs]
        out["hf_tokenizers decode_batch"] = lambda seqs: hf.decode_batch(seqs)
    except Exception as e:  # noqa: BLE001 (an optional peer: say why it is absent)
        print(f"hf_tokenizers: not measured ({type(e).__name__}: {e})", file=sys.stderr)
    return out


def check(name: str, passes: dict[str, Callable[[list[list[int]]], object]], seqs: list[list[int]], want: list[str]) -> None:
    """Every pass must give tiktoken's output (bytes for ``decode_bytes``) on every document."""
    want_bytes = [w.encode("utf-8", "surrogatepass") for w in want]
    for label, run in passes.items():
        got = list(run(seqs))  # type: ignore[call-overload]
        ref = want_bytes if "bytes" in label else want
        bad = [i for i, (g, r) in enumerate(zip(got, ref, strict=True)) if g != r]
        if bad:
            sys.exit(f"{name}: {label} differs from tiktoken on {len(bad)} documents (first: {bad[0]})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--max-mb", type=float, default=1.0)
    ap.add_argument("--encodings", nargs="+", default=list(ENCODINGS))
    args = ap.parse_args()
    corpora = load_corpora(args.max_mb)
    print("| encoding | corpus (MB) | pass | MB/s | x tiktoken decode |")
    print("|---|---|---|---|---|")
    for name in args.encodings:
        import tiktoken

        tk = tiktoken.get_encoding(name)
        passes = decoders(name)
        for corpus, docs in corpora.items():
            seqs = [tk.encode_ordinary(d) for d in docs]
            want = [tk.decode(s) for s in seqs]
            check(name, passes, seqs, want)
            timed = {k: (lambda run=run: run(seqs)) for k, run in passes.items()}
            print_rows(name, corpus, size_mb(want), timed, "tiktoken decode", args.rounds)


if __name__ == "__main__":
    main()
