"""The ``bpekit`` command line: one module per command group, each with ``add_parser`` and ``run``.

Errors are one clear line on stderr and a non-zero exit (2 for bad usage, 1 otherwise), never a
traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from bpekit import __version__
from bpekit.errors import BpekitError

# (module, command names it adds) — modules are imported lazily so `bpekit --help` stays fast.
COMMANDS = ["bpekit.cli.text", "bpekit.cli.tokenize"]
_OPTIONAL = ["bpekit.cli.train"]

EPILOG = """examples:
  bpekit encode "hello world" --encoding o200k_base
  echo "hello world" | bpekit count --encoding cl100k_base
  bpekit encode -f README.md --json
  bpekit decode 24912 2375 --encoding o200k_base
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bpekit",
        description="Fast, exact byte-pair-encoding tokenizers: encode, decode, count, train.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"bpekit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS + _OPTIONAL:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if name in _OPTIONAL and e.name == name:
                continue
            raise
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print("bpekit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except (BpekitError, OSError, ValueError, KeyError) as e:
        lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
        msg = " ".join(lines) if lines else type(e).__name__
        print(f"bpekit: error: {msg}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
