"""``bpekit tokenize INPUT... -o OUT --tokenizer T``: tokenize a dataset for pretraining.

Inputs are text files (one document per file, or per line with --lines), .jsonl (--field),
.parquet (--column), compressed files, directories and globs, or a Hugging Face dataset saved on
disk (--hf-dataset PATH --split train). OUT is a directory of shards (flat .bin in nanoGPT style,
llm.c shards with their 1024-byte header, or Megatron-LM .bin/.idx pairs) and manifest.json.
Every shard is written atomically and recorded in the manifest; after Ctrl-C or a kill, run the
same command again and it continues where it stopped, ending with the same bytes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from bpekit.cli.common import check_threads
from bpekit.datasets.formats import DTYPES, FORMATS
from bpekit.datasets.plan import DEFAULT_SHARD_SIZE
from bpekit.train.progress import human_bytes


EXAMPLES = [
    "bpekit tokenize data/*.jsonl -o shards/ -t o200k_base --eos",
    "bpekit tokenize web.parquet -o shards/ -t tok.json --format megatron --eos",
]


def _positive_int(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds the ``tokenize`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        "tokenize",
        help="tokenize a dataset into training shards",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="files, directories, globs (.txt, .jsonl, .parquet, compressed)")
    p.add_argument("-o", "--output", required=True, help="output directory (shards + manifest.json)")
    p.add_argument("-t", "--tokenizer", required=True, help="an encoding name (o200k_base) or a tokenizer file (bpekit, .tiktoken, tokenizer.json, GGUF, SentencePiece .model)")
    p.add_argument("--field", default="text", help="JSON-lines field holding the text (default: text)")
    p.add_argument("--column", default="text", help="Parquet / dataset column holding the text (default: text)")
    p.add_argument("--lines", action="store_true", help="text files hold one document per line")
    p.add_argument("--hf-dataset", metavar="PATH", help="a Hugging Face dataset saved on disk (or a folder of its data files)")
    p.add_argument("--split", default="train", help="split of --hf-dataset (default: train)")
    p.add_argument("--bos", action="store_true", help="put a BOS token before every document")
    p.add_argument("--eos", action="store_true", help="put an EOS token after every document")
    p.add_argument("--bos-token", metavar="TEXT", help="the special token to use as BOS (implies --bos)")
    p.add_argument("--eos-token", metavar="TEXT", help="the special token to use as EOS (implies --eos)")
    p.add_argument("--format", choices=FORMATS, default="bin", help="bin (nanoGPT), llmc (llm.c header) or megatron (default: bin)")
    p.add_argument("--dtype", choices=DTYPES, default="auto", help="id type (default: the narrowest that fits)")
    p.add_argument("--shard-size", type=_positive_int, default=DEFAULT_SHARD_SIZE, metavar="TOKENS", help=f"most tokens per shard (default: {DEFAULT_SHARD_SIZE:,})")
    p.add_argument("--threads", type=int, default=0, help="encoding threads (Ray: CPUs of a local cluster); 0 = every core")
    p.add_argument("--engine", choices=("local", "ray"), default="local", help="local threads (default) or Ray Data")
    p.add_argument("--ray-address", metavar="ADDR", help="Ray cluster to use (auto, ray://host:port); implies --engine ray")
    p.add_argument("--json", action="store_true", help="print the manifest as JSON on stdout")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Runs ``bpekit tokenize``; returns the exit status (0 ok, 1 error, 130 interrupted)."""
    from bpekit.datasets import tokenize

    check_threads(args.threads)
    start = time.perf_counter()
    try:
        manifest = tokenize(
            args.inputs, args.output, args.tokenizer, format=args.format, dtype=args.dtype,
            shard_size=args.shard_size, bos=args.bos, eos=args.eos, bos_token=args.bos_token,
            eos_token=args.eos_token, field=args.field, column=args.column, lines=args.lines,
            hf_dataset=args.hf_dataset, split=args.split, threads=args.threads, engine=args.engine,
            ray_address=args.ray_address, show_progress=not args.no_progress,
        )  # fmt: skip
    except KeyboardInterrupt:
        print(
            "bpekit tokenize: interrupted; the finished shards are kept, run the same command to continue",
            file=sys.stderr,
        )
        return 130
    if args.json:
        print(json.dumps(manifest, indent=1, ensure_ascii=False))
    if not args.no_progress:
        seconds = time.perf_counter() - start
        size = sum(f["bytes"] for s in manifest["shards"] for f in s["files"])
        print(
            f"tokenized {manifest['documents']:,} documents into {manifest['tokens']:,} tokens, "
            f"{len(manifest['shards'])} shard{'' if len(manifest['shards']) == 1 else 's'} ({human_bytes(size)}, {manifest['settings']['dtype']}) "
            f"-> {args.output} [{seconds:.1f} s]",
            file=sys.stderr,
        )
    return 0
