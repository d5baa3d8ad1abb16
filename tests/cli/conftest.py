"""Running the ``bpekit`` command in-process (``cli.main``) and as a real process, and small
tokenizer files to run it on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import bpekit
from bpekit import Tokenizer
from bpekit.cli import main


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    @property
    def error_line(self) -> str:
        """The error, checked to be one line with no traceback."""
        lines = self.err.strip().splitlines()
        assert len(lines) == 1, self.err
        assert "Traceback" not in self.err
        return lines[0]


@pytest.fixture
def cli(capsys):  # noqa: ANN001, ANN201
    def run(*argv: str) -> Result:
        try:
            code = main(list(argv))
        except SystemExit as e:  # argparse: --help, --version, usage errors
            code = int(e.code or 0)
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return run


@pytest.fixture
def process():  # noqa: ANN201
    """``python -m bpekit ...`` in a fresh interpreter, using this tree's bpekit."""
    python_dir = str(Path(bpekit.__file__).resolve().parents[1])

    def run(*argv: str, stdin: str = "", env: dict[str, str] | None = None) -> Result:
        full = {**os.environ, "PYTHONPATH": python_dir, **(env or {})}
        done = subprocess.run([sys.executable, "-m", "bpekit", *argv], input=stdin, capture_output=True,
                              text=True, env=full, timeout=120, check=False)
        return Result(done.returncode, done.stdout, done.stderr)

    return run


@pytest.fixture(scope="session")
def tiny_file(tmp_path_factory) -> Path:
    """A bpekit tokenizer file: merges ab, abab, " c", abc, ababab (ids 256..260), pair counts known."""
    tok = Tokenizer(pattern=r" ?[^ ]+| +", merges=[(b"a", b"b"), (b"ab", b"ab"), (b" ", b"c"), (b"ab", b"c"),
                                                   (b"abab", b"ab")],
                    special_tokens=["<|end|>"], training={"merge_counts": [50, 20, 9, 7, 3]})
    path = tmp_path_factory.mktemp("tok") / "tiny.json"
    tok.save(path)
    return path


@pytest.fixture(scope="session")
def ranks(data_dir) -> Path:  # noqa: ANN001 (data_dir: the shared data, else skip)
    path = data_dir / "ranks"
    if not (path / "o200k_base.tiktoken").is_file():
        pytest.skip(f"rank files not found in {path}")
    return path
