"""``bpekit viz KIND``: pictures of a tokenizer, each a self-contained offline file.

Kinds: ``tokens`` (a text token by token: coloured in the terminal, or an HTML page), ``forest``
(the interactive merge forest page), ``languages`` (bytes per token per language or file, SVG),
``lengths`` (token-length histogram, SVG), ``training`` (training curve page), ``report`` (all of
them in a folder).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bpekit.atomicfile import atomic_write
from bpekit.cli.common import check_output, refuse_overwrite, tokenizer_inputs, writing
from bpekit.cli.compare import add_text_options, text_inputs, texts_from
from bpekit.errors import UsageError
from bpekit.viz.models import Model

KINDS = ("tokens", "forest", "languages", "lengths", "training", "report")
EXAMPLES = [
    'bpekit viz tokens -t o200k_base "Hello, world!"',
    "bpekit viz tokens -t tok.json -f notes.txt -o tokens.html",
    "bpekit viz forest -t tok.json -o forest.html   # open forest.html#q=hello",
    "bpekit viz languages -t o200k_base -t cl100k_base --corpora corpora/ -o languages.svg",
    "bpekit viz report -t tok.json -t o200k_base --corpora corpora/ -o report/",
]


HELP = {
    "tokens": "a text token by token: terminal colours, or an HTML page with -o",
    "forest": "the interactive merge forest page (HTML)",
    "languages": "bytes per token per language or file (SVG)",
    "lengths": "token-length histogram (SVG)",
    "training": "training curve of a trained tokenizer (HTML page of SVG plots)",
    "report": "all of them, in a folder",
}


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("viz", help="pictures of a tokenizer (HTML, SVG, terminal colours)",
                       description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="examples:\n" + "\n".join(f"  {e}" for e in EXAMPLES))
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True, parser_class=type(p))
    for kind in KINDS:
        k = kinds.add_parser(kind, help=HELP[kind], description=HELP[kind])
        many = kind in ("tokens", "languages", "lengths", "report")
        k.add_argument("-t", "--tokenizer", action="append" if many else "store", default=[] if many else None,
                       metavar="TOKENIZER", required=kind in ("forest", "training"),
                       help="encoding name or tokenizer file" + ("; repeatable (default: o200k_base)" if many else ""))
        k.add_argument("-o", "--output", metavar="PATH", required=kind != "tokens",
                       help="the folder to write" if kind == "report" else "the file to write")
        if kind == "tokens":
            k.add_argument("words", nargs="*", metavar="TEXT", help="text to draw (default: -f files or stdin)")
            k.add_argument("--plain", action="store_true", help="separate tokens with | instead of colours")
        if kind in ("tokens", "languages", "training", "report"):
            add_text_options(k)
        k.set_defaults(run=run)


# The files `viz report` writes into its folder.
REPORT_FILES = ("report.html", "tokens.html", "forest.html", "bytes-per-token.svg", "token-lengths.svg",
                "training-1.svg", "training-2.svg")


def _write(path: str, text: str) -> None:
    with writing(path):
        atomic_write(path, text.encode("utf-8"))
    print(f"wrote {path}", file=sys.stderr)


def _check_output(args: argparse.Namespace, specs: list[str]) -> None:
    """Before any work: an output that can be written and is not an input."""
    if args.output is None:
        return
    if args.kind == "report":
        check_output(args.output, folder=True)
        outputs = [str(Path(args.output) / name) for name in REPORT_FILES]
    else:
        check_output(args.output)
        outputs = [args.output]
    inputs = tokenizer_inputs(specs) + (text_inputs(args) if hasattr(args, "file") else [])
    refuse_overwrite(outputs, inputs)


def run(args: argparse.Namespace) -> int:
    from bpekit import viz

    specs = args.tokenizer if isinstance(args.tokenizer, list) else [args.tokenizer]
    _check_output(args, specs)
    models = [viz.load_model(s) for s in specs or ["o200k_base"]]
    if args.kind == "tokens":
        return _tokens(args, models)
    if args.kind == "forest":
        _write(args.output, viz.forest_html(_one(models, "forest")))
    elif args.kind == "lengths":
        _write(args.output, viz.lengths_svg(models))
    elif args.kind == "languages":
        _write(args.output, viz.languages_svg(models, texts_from(args, stdin=False)))
    elif args.kind == "training":
        _training(args, _one(models, "training"))
    else:
        texts = texts_from(args, stdin=False)
        with writing(args.output):
            report = viz.write_report(args.output, models, texts, heldout=None)
        print(f"wrote {report}", file=sys.stderr)
    return 0


def _one(models: list[Model], kind: str) -> Model:
    if len(models) != 1:
        raise UsageError(f"viz {kind} draws one tokenizer, got {len(models)}")
    return models[0]


def _tokens(args: argparse.Namespace, models: list[Model]) -> int:
    from bpekit import viz

    if args.words:
        text = " ".join(args.words)
    else:
        texts = texts_from(args)
        text = "\n".join(texts.values())
    if args.output:
        _write(args.output, viz.tokens_html(_one(models, "tokens -o"), text))
        return 0
    colour = not args.plain and sys.stdout.isatty()
    for m in models:
        if len(models) > 1:
            print(f"== {m.label}")
        print(viz.ansi(m, text) if colour else viz.plain(m, text))
    return 0


def _training(args: argparse.Namespace, model: Model) -> None:
    from bpekit.viz.page import esc, page
    from bpekit.viz.plots import training_curves
    from bpekit.viz.samples import stdlib_sample

    out = args.output
    if Path(out).suffix != ".html":
        raise UsageError(f"viz training writes an HTML page with its curves: -o must end in .html, got {out}")
    heldout = texts_from(args, stdin=False) if (args.file or args.text or args.corpora) else stdlib_sample(400_000)[1]
    figures = training_curves(model, heldout)
    note = "" if len(figures) == 2 else "<p class=\"note\">pair counts at training time: unknown</p>"
    _write(out, page(f"Training of {model.label}", f"<h1>Training of {esc(model.label)}</h1>{note}" + "".join(figures)))
