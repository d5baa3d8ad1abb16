"""``bpekit`` itself: --version, --help listing every command with examples, one-line errors."""

from __future__ import annotations

import re

import pytest

import bpekit
from bpekit import cli as cli_module

NEW = ("compare", "viz", "demo")


def test_version(cli):
    r = cli("--version")
    assert r.code == 0 and r.out.strip() == f"bpekit {bpekit.__version__}"


def test_help_lists_every_command_with_examples(cli):
    r = cli("--help")
    assert r.code == 0
    commands = set(re.findall(r"^    (\w+) ", r.out, re.M))
    assert {"encode", "count", "decode", "train", *NEW} <= commands
    examples = re.findall(r"^  bpekit (\w+)", r.out.split("examples:")[1], re.M)
    assert set(examples) <= commands and set(NEW) <= set(examples)


def test_no_command_prints_help_and_fails(cli):
    r = cli()
    assert r.code == 2 and "usage: bpekit" in r.err


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["nope"], 2, "invalid choice: 'nope'"),
        (["compare"], 2, "the following arguments are required: TOKENIZER"),
        (["viz", "tokens", "--bogus"], 2, "unrecognized arguments: --bogus"),
        (["demo", "--vocab-size", "many"], 2, "invalid int value: 'many'"),
        (["encode", "hi", "-e", "nope"], 1, "Unknown encoding nope"),
    ],
)
def test_errors_are_one_line(cli, argv, code, message):
    r = cli(*argv)
    assert r.code == code
    line = r.error_line
    assert line.startswith("bpekit") and message in line


def test_unexpected_error_is_one_line_unless_debugging(cli, monkeypatch, ranks):
    monkeypatch.setenv("BPEKIT_DATA_DIR", str(ranks))
    from bpekit.cli import compare

    def boom(args):  # noqa: ANN001, ANN202
        raise RuntimeError("a bug\nwith two lines")

    monkeypatch.setattr(compare, "run", boom)
    r = cli("compare", "o200k_base", "--text", "x")
    assert r.code == 1 and r.error_line == (
        "bpekit compare: internal error: RuntimeError: a bug with two lines (BPEKIT_DEBUG=1 shows the traceback)"
    )
    monkeypatch.setenv("BPEKIT_DEBUG", "1")
    with pytest.raises(RuntimeError, match="a bug"):
        cli_module.main(["compare", "o200k_base", "--text", "x"])


def test_commands_not_in_this_version_are_skipped(monkeypatch, cli):
    monkeypatch.setattr(cli_module, "COMMANDS", [*cli_module.COMMANDS, "bpekit.cli.not_written_yet"])
    assert cli("--help").code == 0


def test_train_runs_through_main(cli, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat, the cat ate the rat\n" * 50)
    r = cli("train", str(corpus), "--vocab-size", "270", "-o", str(tmp_path / "t.json"), "--no-progress")
    assert r.code == 0 and bpekit.Tokenizer.load(tmp_path / "t.json").vocab_size == 270


def test_real_process_errors(process, tmp_path):
    r = process("compare", str(tmp_path / "missing.json"), "o200k_base", "--text", "x")
    assert r.code == 1 and "missing.json' is neither an encoding name" in r.error_line
