"""``bpekit compare``: several tokenizers (encoding names or tokenizer files) on the same texts:
tokens, bytes per token and fertility (tokens per word) per text file or language, as a table or
JSON, optionally also as an SVG plot."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from bpekit.atomicfile import atomic_write
from bpekit.cli.common import (
    check_output, decode, folder_files, invalid_bytes, read_stdin, refuse_overwrite, tokenizer_inputs, warn_invalid, writing,
)
from bpekit.errors import DataNotFoundError, UsageError

EXAMPLES = [
    "bpekit compare o200k_base cl100k_base my-tokenizer.json -f README.md -f src/main.py",
    "bpekit compare o200k_base cl100k_base --corpora corpora/ --json",
]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("compare", help="compare tokenizers on the same texts",
                       description=__doc__.split(": ", 1)[1] if __doc__ else None)
    p.add_argument("tokenizers", nargs="+", metavar="TOKENIZER", help="encoding name or tokenizer file")
    add_text_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    p.add_argument("--svg", metavar="PATH", help="also write the bytes-per-token plot as SVG")
    p.set_defaults(run=run)


def add_text_options(p: argparse.ArgumentParser) -> None:
    """``-f FILE``, ``--text``, ``--corpora DIR``, ``--sample-bytes`` (shared with ``bpekit viz``)."""
    p.add_argument("-f", "--file", action="append", default=[], metavar="PATH", help="a text file ('-' = stdin); repeatable")
    p.add_argument("--text", action="append", default=[], help="a text given inline; repeatable")
    p.add_argument("--corpora", metavar="DIR", help="a folder of text files, one language per file")
    p.add_argument("--sample-bytes", type=int, default=16_000, metavar="N",
                   help="bytes sampled from each corpora file (default 16000; 0 = whole files)")


def text_inputs(args: argparse.Namespace) -> list[str | Path]:
    """The files ``-f`` and ``--corpora`` read (what an output must not be)."""
    return [*args.file, *folder_files(args.corpora)]


def _replaced(args: argparse.Namespace, label: str, text: str, sizes: dict[str, int] | None) -> str:
    """``text`` (read with ``surrogateescape``) with its invalid bytes as U+FFFD, a warning, and
    its size in bytes as read in ``sizes``."""
    if not invalid_bytes(text):
        return text
    warn_invalid(getattr(args, "command", None), label, text)
    data = text.encode("utf-8", "surrogateescape")
    if sizes is not None:
        sizes[label] = len(data)
    return data.decode("utf-8", "replace")


def texts_from(args: argparse.Namespace, *, stdin: bool = True, sizes: dict[str, int] | None = None) -> dict[str, str]:
    """``{label: text}`` from ``--text``, ``-f`` and ``--corpora`` (else standard input); the size
    as read of each text with invalid UTF-8 (replaced by U+FFFD, with a warning) goes into ``sizes``."""
    from bpekit.viz.samples import corpus_samples

    if args.sample_bytes < 0:
        raise UsageError(f"--sample-bytes must be >= 0, got {args.sample_bytes}")
    texts = {f"text {n + 1}": _replaced(args, f"text {n + 1}", t, sizes) for n, t in enumerate(args.text)}
    for name in args.file:
        if name == "-":
            texts["<stdin>"] = _replaced(args, "<stdin>", read_stdin(), sizes)
            continue
        path = Path(name)
        if path.is_dir():
            raise UsageError(f"{name} is a directory, not a text file")
        if not path.is_file():
            raise DataNotFoundError(f"{name}: no such file")
        label = path.name if path.name not in texts else name
        texts[label] = _replaced(args, label, decode(path.read_bytes()), sizes)
    if args.corpora:
        texts.update(corpus_samples(args.corpora, args.sample_bytes or 1 << 62))
    if not texts and stdin:
        if sys.stdin.isatty():
            raise UsageError("no texts: give -f FILE, --text TEXT, --corpora DIR, or pipe text in")
        texts["<stdin>"] = _replaced(args, "<stdin>", read_stdin(), sizes)
    if not texts:
        raise UsageError("no texts: give -f FILE, --text TEXT or --corpora DIR")
    return texts


def run(args: argparse.Namespace) -> int:
    from bpekit.viz.measure import format_table, measure, totals
    from bpekit.viz.models import load_model
    from bpekit.viz.plots import bytes_per_token

    if args.svg is not None:
        check_output(args.svg)
        refuse_overwrite([args.svg], [*tokenizer_inputs(args.tokenizers), *text_inputs(args)])
    models = [load_model(spec) for spec in args.tokenizers]
    labels = [m.label for m in models]
    if len(set(labels)) != len(labels):
        raise UsageError(f"the same tokenizer is given twice: {labels}")
    sizes: dict[str, int] = {}
    rows = measure(models, texts_from(args, sizes=sizes))
    rows = [dataclasses.replace(r, bytes=sizes.get(r.text, r.bytes)) for r in rows]  # (the bytes as read)
    if args.svg is not None:
        with writing(args.svg):
            atomic_write(args.svg, bytes_per_token(rows).encode())
    if args.json:
        doc = {"tokenizers": labels, "results": [r.to_dict() for r in rows],
               "totals": [r.to_dict() for r in totals(rows)]}
        print(json.dumps(doc, ensure_ascii=False, indent=1))
    else:
        print(format_table(rows))
    return 0
