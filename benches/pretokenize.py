"""Pre-tokenizer speed by family: how bpekit splits each of llama.cpp's pre-tokenizers (a
hand-written splitter, the compiled matcher, or fancy-regex: the ``engine`` column) against the
same ``Split`` stages on fancy-regex alone.

For every llama.cpp pre-tokenizer name whose stages the Rust core splits (the stage list of Llama
3's GGUF vocabulary under that name, as ``bpekit.pipeline.fast.isolated_config`` reads it; one row
per distinct list), the number of pieces of each English and multilingual document is counted
(``_core.IsolatedSplit.count``: no Python strings made) both ways, pieces checked equal first;
MB/s of input, CPU time of the calling thread, best of ``--rounds``. ``--encode`` adds, per row,
per-document ``Tokenizer.encode`` of that vocabulary against ``tokenizers`` on the
``tokenizer.json`` bpekit converts it to (ids checked equal first), English and multilingual.

    PYTHONPATH=benches BPEKIT_TEST_DATA=../shared/data python benches/pretokenize.py [--encode] [--rounds 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import corpora  # noqa: I001 (first: importing bpekit resets sys.path)
from harness.local import load_corpora

import bpekit
from bpekit import _core
from bpekit.formats import llamacpp
from bpekit.formats.gguf import to_tokenizer
from bpekit.formats.gguf.to_hf import tokenizer_json
from bpekit.formats.gguf.vocab import GGUFVocab
from bpekit.pipeline.fast import isolated_config, split_config


def families(vocab: GGUFVocab) -> list[tuple[str, list[str], object]]:
    """(names sharing the list, the stage patterns, a tokenizer) per distinct stage list."""
    rows: dict[tuple[str, ...], tuple[list[str], object]] = {}
    for name in llamacpp.PRE_TOKENIZERS:
        try:
            tok = to_tokenizer(dataclasses.replace(vocab, pre=name))
        except bpekit.errors.BpekitError:
            continue  # not byte-level, or a splitter with no regex (AFMoE)
        single = split_config(tok.pre_tokenizer)
        stages = [single[0]] if single else (isolated_config(tok.pre_tokenizer) or (None,))[0]
        if stages:
            rows.setdefault(tuple(stages), ([], tok))[0].append(name)
    return [(", ".join(names), list(stages), tok) for stages, (names, tok) in rows.items()]


def best_mbps(fn, docs: list[str], rounds: int) -> float:
    mb = sum(len(d.encode()) for d in docs) / 1e6
    best = float("inf")
    for _ in range(rounds):
        t0 = time.thread_time()
        for d in docs:
            fn(d)
        best = min(best, time.thread_time() - t0)
    return mb / best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--encode", action="store_true", help="also Tokenizer.encode against tokenizers")
    ap.add_argument("--only", nargs="*", help="llama.cpp names to measure (default: every one)")
    args = ap.parse_args()
    docs = load_corpora(1)
    corpus_names = ("english", "multilingual")
    vocab = GGUFVocab.read(corpora.DATA / "gguf" / "ggml-vocab-llama-bpe.gguf")
    print(f"bpekit {bpekit.__version__}; MB/s of input, CPU time, best of {args.rounds}; 1 MB samples of each corpus")
    head = "| names | stages | engine | " + " | ".join(f"{c} split, bpekit | {c} split, regex | x" for c in corpus_names)
    if args.encode:
        head += " | " + " | ".join(f"{c} encode, bpekit | {c} encode, tokenizers | x" for c in corpus_names)
    print(head + " |")
    print("|" + "---|" * (head.count("|") - 1))
    for names, stages, tok in families(vocab):
        if args.only and not any(n in names.split(", ") for n in args.only):
            continue
        ours, regex = _core.IsolatedSplit(stages), _core.IsolatedSplit(stages, regex_only=True)
        engines = ",".join(ours.engines)
        cells = []
        for c in corpus_names:
            for d in docs[c]:
                assert ours.split(d) == regex.split(d), (names, d[:80])
            a, b = best_mbps(ours.count, docs[c], args.rounds), best_mbps(regex.count, docs[c], args.rounds)
            cells += [f"{a:.1f}", f"{b:.1f}", f"{a / b:.2f}x"]
        if args.encode:
            import tokenizers

            peer = tokenizers.Tokenizer.from_str(json.dumps(tokenizer_json(dataclasses.replace(vocab, pre=names.split(", ")[0]))))
            for c in corpus_names:
                for d in docs[c]:
                    assert tok.encode(d) == peer.encode(d, add_special_tokens=False).ids, (names, d[:80])
                a = best_mbps(tok.encode, docs[c], args.rounds)
                b = best_mbps(lambda d: peer.encode(d, add_special_tokens=False), docs[c], args.rounds)
                cells += [f"{a:.1f}", f"{b:.1f}", f"{a / b:.1f}x"]
        shown = " / ".join(s if len(s) <= 40 else s[:37] + "..." for s in stages).replace("|", "\\|").replace("\n", "\\n").replace("\r", "\\r")
        print(f"| {names} | `{shown}` | {engines} | {' | '.join(cells)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
