"""``bpekit demo``: the whole library in one command, offline. Trains a tokenizer on a fixed sample
of the running interpreter's standard library (code, and the prose of ``pydoc_data``), saves it,
shows a sample token by token, compares compression with the encodings whose rank files are
available locally (``$BPEKIT_DATA_DIR`` or the cache; the others are skipped with a note), and
writes the visual report (report.html, forest.html, plots) into a folder."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from bpekit.cli.common import (
    MAX_VOCAB, check_at_most, check_output, check_threads, folder_files, refuse_overwrite, writing,
)
from bpekit.errors import DataNotFoundError, UsageError

if TYPE_CHECKING:
    from bpekit.viz.models import Model

EXAMPLES = ["bpekit demo                      # writes ./bpekit-demo/report.html",
            "bpekit demo -o out --vocab-size 4096 --corpora corpora/"]
ENCODINGS = ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")
SAMPLE = 'The quick brown fox: def fox(x: int) -> str:\n    return f"{x:,} jumps"  # naïve café, 東京 👍\n'


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("demo", help="train, encode, compare and draw, offline, in one go",
                       description=__doc__.split(": ", 1)[1] if __doc__ else None)
    p.add_argument("-o", "--output", default="bpekit-demo", metavar="DIR",
                   help="folder to write (default ./bpekit-demo)")
    p.add_argument("--vocab-size", type=int, default=8192, help="tokens to train (default 8192)")
    p.add_argument("--sample-kb", type=int, default=4000, help="kB of standard-library code to train on (default 4000)")
    p.add_argument("--corpora", metavar="DIR", help="also measure on a folder of texts, one language per file")
    p.add_argument("--threads", type=int, default=0, help="0 = every core (default)")
    p.set_defaults(run=run)


@contextlib.contextmanager
def _offline() -> Iterator[None]:
    saved = os.environ.get("BPEKIT_OFFLINE")
    os.environ["BPEKIT_OFFLINE"] = "1"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("BPEKIT_OFFLINE", None)
        else:
            os.environ["BPEKIT_OFFLINE"] = saved


def local_encodings(names: tuple[str, ...] = ENCODINGS) -> tuple[list[Model], list[str]]:
    """(the encodings whose rank files are found without the network, the names of the others)."""
    from bpekit.viz.models import load_model

    found: list[Model] = []
    skipped: list[str] = []
    with _offline():
        for name in names:
            try:
                found.append(load_model(name))
            except DataNotFoundError:
                skipped.append(name)
    return found, skipped


def _say(message: str) -> None:
    print(message, flush=True)


def run(args: argparse.Namespace) -> int:
    from bpekit.cli.viz import REPORT_FILES
    from bpekit.train import Trainer
    from bpekit.viz import ansi, format_table, measure, plain, write_report
    from bpekit.viz.models import Model
    from bpekit.viz.samples import corpus_samples, stdlib_dir, stdlib_sample

    # Every argument is checked before the training: the numbers, the corpora, the folder.
    if args.sample_kb < 1:
        raise UsageError(f"--sample-kb must be >= 1, got {args.sample_kb}")
    check_at_most("--vocab-size", args.vocab_size, MAX_VOCAB)
    check_threads(args.threads)
    trainer = Trainer(args.vocab_size, special_tokens=["<|endoftext|>"], threads=args.threads,
                      show_progress=sys.stderr.isatty())
    corpora = corpus_samples(args.corpora) if args.corpora else {}
    out = Path(args.output)
    check_output(args.output, folder=True)
    refuse_overwrite([out / name for name in ("demo.bpekit.json", *REPORT_FILES)], folder_files(args.corpora))
    with writing(out):
        out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    docs, heldout = stdlib_sample(args.sample_kb * 1000)
    size = sum(len(d.encode("utf-8", "surrogatepass")) for d in docs)
    _say(f"1. training a {args.vocab_size:,}-token tokenizer on {size / 1e6:.1f} MB of {stdlib_dir()} "
         "(code and pydoc topics)")
    tok = trainer.train(iter(docs))
    _say(f"   {len(tok.merges):,} merges in {trainer.timings['count'] + trainer.timings['merge']:.2f} s")
    saved = out / "demo.bpekit.json"
    with writing(saved):
        tok.save(saved)
    _say(f"2. saved {saved}")
    demo = Model("demo (trained now)", tok.encoding, tok)
    ids = tok.encode(SAMPLE)
    _say(f"3. a sample, {len(ids)} tokens: {ids[:12]}...")
    print(ansi(demo, SAMPLE) if sys.stdout.isatty() else plain(demo, SAMPLE), end="\n" if sys.stdout.isatty() else "")
    encodings, skipped = local_encodings()
    texts = {**heldout, **corpora}
    models = [demo, *encodings]
    _say("4. compression (higher bytes/tok = fewer tokens)")
    _say(format_table(measure(models, texts), compact=True))
    if skipped:
        _say(f"   skipped {', '.join(skipped)}: rank files not found offline "
             "(set BPEKIT_DATA_DIR to a folder holding them, or run get_encoding once online)")
    with writing(out):
        report = write_report(out, models, texts, sample=SAMPLE, heldout=heldout, title="bpekit demo")
    _say(f"5. wrote {report} (and forest.html, tokens.html, *.svg beside it) "
         f"[{time.perf_counter() - start:.1f} s]")
    return 0
