"""The ``bpekit`` command line: one module per command group, each with ``add_parser`` (and,
optionally, ``EXAMPLES``, shown by ``bpekit --help``).

To add a command, add its module to :data:`COMMANDS`; a listed module that is not in this version
is skipped. A command's function is ``args.run`` (or ``args.func``) and returns the exit status.

Errors are one clear line on stderr and a non-zero exit (2 for bad usage, 1 otherwise), never a
traceback (``BPEKIT_DEBUG=1`` shows one for unexpected errors).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from bpekit import __version__
from bpekit.errors import BpekitError

COMMANDS = [
    "bpekit.cli.text",
    "bpekit.cli.train",
    "bpekit.cli.tokenize",
    "bpekit.cli.compare",
    "bpekit.cli.viz",
    "bpekit.cli.demo",
    "bpekit.cli.convert",
    "bpekit.cli.inspect",
]

# Examples of modules that do not define EXAMPLES themselves.
EXAMPLES = {
    "bpekit.cli.text": [
        'bpekit encode "hello world" --encoding o200k_base',
        "echo 'hello world' | bpekit count --encoding cl100k_base",
        "bpekit encode -f README.md --json",
        "bpekit decode 24912 2375 --encoding o200k_base",
        "bpekit truncate -f report.txt --max-tokens 8000 > prompt.txt",
    ],
    "bpekit.cli.train": ["bpekit train corpus/ --vocab-size 32000 -o tok.json"],
}


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``bpekit CMD: error: ... (see bpekit CMD --help)``."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _modules() -> list[ModuleType]:
    found: list[ModuleType] = []
    for name in COMMANDS:
        try:
            found.append(importlib.import_module(name))
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
    return found


def build_parser() -> argparse.ArgumentParser:
    modules = _modules()
    lines = ["examples:"]
    for module in modules:
        lines += [f"  {ex}" for ex in getattr(module, "EXAMPLES", EXAMPLES.get(module.__name__, []))]
    parser = Parser(
        prog="bpekit",
        description="Fast, exact byte-pair-encoding tokenizers: encode, train, compare and explain.",
        epilog="\n".join(lines) + "\n\n'bpekit COMMAND --help' describes each command.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"bpekit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for module in modules:
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    run = getattr(args, "run", None) or getattr(args, "func", None)
    if run is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(run(args) or 0)
    except KeyboardInterrupt:
        print("bpekit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except (BpekitError, OSError, ValueError, KeyError) as e:
        print(f"bpekit {args.command}: error: {_one_line(e)}", file=sys.stderr)
        return 1
    except Exception as e:  # a bug: still one line, unless asked for the traceback
        if os.environ.get("BPEKIT_DEBUG"):
            raise
        print(f"bpekit {args.command}: internal error: {type(e).__name__}: {_one_line(e)} "
              "(BPEKIT_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1


def _one_line(e: BaseException) -> str:
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    if isinstance(e, OSError) and e.filename is not None and e.strerror:
        return f"{e.filename}: {e.strerror}"
    return " ".join(lines) if lines else type(e).__name__


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
