"""``bpekit train SOURCES... --vocab-size N -o OUT``: train a byte-level BPE tokenizer.

Sources are text files, directories, globs, ``.jsonl`` (``--field``), ``.parquet``
(``--column``), compressed files (``.gz``, ``.zst``, ``.bz2``, ``.xz``) and saved word counts
(``.counts``, from ``--save-counts``), which are added to what the other sources give. Every file
is written atomically and the tokenizer only once training has finished, so Ctrl-C never leaves a
partial file behind.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from bpekit.cli.common import (
    MAX_COUNT, MAX_VOCAB, check_at_most, check_output, check_threads, refuse_overwrite, writing,
)
from bpekit.errors import BpekitError, DataNotFoundError, PatternError
from bpekit.train.counts import WordCounts
from bpekit.train.progress import human_bytes
from bpekit.train.trainer import Trainer

FORMATS = ("bpekit", "tiktoken", "hf")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Adds the ``train`` subcommand to an ``argparse`` subparsers object."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "train",
        help="train a byte-level BPE tokenizer",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    p.add_argument("sources", nargs="+", help="files, directories, globs, .jsonl/.parquet/.gz/.zst, .counts")
    p.add_argument("--vocab-size", type=int, required=True, help="tokens in all: 256 bytes + merges + special tokens")
    p.add_argument("-o", "--output", required=True, help="where to write the tokenizer")
    p.add_argument(
        "--format",
        choices=FORMATS,
        help="output format (default: from the name: *.tiktoken -> tiktoken, *tokenizer.json -> hf, else bpekit)",
    )
    p.add_argument("--pattern", default=None, help="o200k (default), cl100k, gpt2, llama3, qwen2, or a regex")
    p.add_argument("--special-token", action="append", default=[], dest="special_tokens", metavar="TOKEN")
    p.add_argument("--min-frequency", type=int, default=2, help="stop when the best pair is rarer (default 2)")
    p.add_argument("--max-token-length", type=int, default=None, help="longest token in bytes (default: no limit)")
    p.add_argument("--threads", type=int, default=0, help="0 = every core (default)")
    p.add_argument("--field", default="text", help="JSON-lines field holding the text (default: text)")
    p.add_argument("--column", default="text", help="Parquet column holding the text (default: text)")
    p.add_argument("--save-counts", metavar="PATH", help="also save the word counts (to add up or retrain later)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p


def output_format(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    name = Path(args.output).name.lower()
    if name.endswith(".tiktoken"):
        return "tiktoken"
    if name.endswith("tokenizer.json"):
        return "hf"
    return "bpekit"


def _check(args: argparse.Namespace, counts_files: list[str], others: list[str]) -> None:
    """The arguments, before any work: numbers in range, a pattern, output paths that can be
    written and are not among the sources."""
    from bpekit.train.sources import expand_path

    check_at_most("--vocab-size", args.vocab_size, MAX_VOCAB)
    check_at_most("--min-frequency", args.min_frequency, MAX_COUNT)
    check_at_most("--max-token-length", args.max_token_length, MAX_COUNT)
    check_threads(args.threads)
    if args.pattern == "":
        raise PatternError("--pattern is empty: give a pattern name (o200k, cl100k, gpt2, llama3, qwen2) or a regex")
    outputs = [args.output]
    if output_format(args) == "tiktoken":
        outputs.append(args.output + ".json")  # (the sidecar)
    if args.save_counts is not None:
        outputs.append(args.save_counts)
    for out in outputs:
        check_output(out)
    inputs: list[str | Path] = list(counts_files)
    for source in others:
        if not Path(source).exists() and not any(c in source for c in "*?["):
            raise DataNotFoundError(f"training source not found: {source!r}")
        inputs += expand_path(source)
    refuse_overwrite(outputs, inputs)


def _train(args: argparse.Namespace, written: list[str]) -> str:
    counts_files = [s for s in args.sources if s.endswith(".counts")]
    others = [s for s in args.sources if not s.endswith(".counts")]
    _check(args, counts_files, others)
    loaded = [WordCounts.load(p) for p in counts_files]
    pattern = args.pattern
    specials = list(args.special_tokens)
    if loaded:
        first = loaded[0]
        if pattern is not None and Trainer(256 + len(specials), pattern=pattern).pattern != first.pattern:
            raise PatternError(f"{counts_files[0]} was counted with another pattern than --pattern {pattern}")
        if args.special_tokens and tuple(specials) != first.special_tokens:
            raise PatternError(f"{counts_files[0]} was counted with other special tokens")
        pattern, specials = first.pattern, list(first.special_tokens)
    trainer = Trainer(
        args.vocab_size,
        pattern="o200k" if pattern is None else pattern,
        special_tokens=specials,
        min_frequency=args.min_frequency,
        max_token_length=args.max_token_length,
        threads=args.threads,
        show_progress=not args.no_progress,
        field=args.field,
        column=args.column,
    )
    if others:
        trainer.count(others)
    counts = trainer.counts
    for extra in loaded:
        counts += extra
    if args.save_counts is not None:
        with writing(args.save_counts):
            counts.save(args.save_counts)
        written.append(args.save_counts)
    distinct, stats = len(counts), dict(counts.stats)
    tok = trainer.train_from_counts(counts, consume=True)
    fmt = output_format(args)
    with writing(args.output):
        if fmt == "tiktoken":
            tok.export_tiktoken(args.output)
        elif fmt == "hf":
            tok.export_hf(args.output)
        else:
            tok.save(args.output)
    return (
        f"trained {tok.vocab_size:,} tokens ({len(tok.merges):,} merges) on {human_bytes(stats['bytes'])}, "
        f"{distinct:,} distinct pre-tokens, in {trainer.timings['count'] + trainer.timings['merge']:.1f} s "
        f"-> {args.output} ({fmt})"
    )


def run(args: argparse.Namespace) -> int:
    """Runs ``bpekit train``; returns the exit status (0 ok, 1 error, 130 interrupted)."""
    start = time.perf_counter()
    written: list[str] = []
    try:
        message = _train(args, written)
    except KeyboardInterrupt:
        done = f"wrote the word counts ({', '.join(written)}) but not the tokenizer" if written else "nothing was written"
        print(f"\nbpekit train: interrupted; {done}", file=sys.stderr)
        return 130
    except (BpekitError, OSError) as exc:
        from bpekit.cli import _one_line

        print(f"bpekit train: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    if not args.no_progress:
        print(f"{message} [{time.perf_counter() - start:.1f} s]", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Runs the subcommand alone (``python -m bpekit.cli.train ...``)."""
    parser = argparse.ArgumentParser(prog="bpekit")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
