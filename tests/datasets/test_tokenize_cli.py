"""``bpekit tokenize``: a run end to end, its --json manifest, and one-line errors (non-zero exit,
no traceback) for bad arguments and missing files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from bpekit.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_cli_run_and_json(tmp_path, h, docs, encoding, tokenizer_file, capsys) -> None:
    src = h.write_jsonl(tmp_path / "in.jsonl", docs)
    out = tmp_path / "out"
    rc = main(["tokenize", str(src), "-o", str(out), "-t", str(tokenizer_file), "--eos", "--bos-token", "<s>",
               "--shard-size", "1_000", "--threads", "2", "--json"])  # fmt: skip
    captured = capsys.readouterr()
    assert rc == 0
    manifest = json.loads(captured.out)
    assert manifest == json.loads((out / "manifest.json").read_text())
    s = manifest["settings"]
    assert (s["bos"], s["eos"], s["shard_size"]) == (encoding._special_tokens["<s>"], encoding._special_tokens["<|endoftext|>"], 1000)
    assert h.read_all(out) == h.expected_stream(encoding, docs, bos=s["bos"], eos=s["eos"])
    assert manifest["tokenizer"]["name"] == str(tokenizer_file) and len(manifest["tokenizer"]["sha256"]) == 64
    assert f"tokenized {len(docs):,} documents" in captured.err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["MISSING.jsonl"], "input not found"),
        (["IN", "-t", "no_such_encoding"], "Unknown encoding"),
        (["IN", "--format", "megatron", "--dtype", "uint32"], "cannot hold uint32"),
        (["IN", "--field", "body"], "has no field 'body'"),
        (["IN", "--eos-token", "<nope>"], "is not a special token"),
    ],
)
def test_cli_errors_are_one_line(tmp_path, h, tokenizer_file, capsys, extra, message) -> None:
    src = h.write_jsonl(tmp_path / "in.jsonl", ["some text"])
    args = [str(src) if a == "IN" else str(tmp_path / a) if a.endswith(".jsonl") else a for a in extra]
    if "-t" not in args:
        args += ["-t", str(tokenizer_file)]
    rc = main(["tokenize", *args, "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 1 and message in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("extra", [["--shard-size", "0"], ["--format", "parquet"]])
def test_cli_usage_errors_exit_2(tmp_path, tokenizer_file, capsys, extra) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["tokenize", "x.txt", "-o", str(tmp_path / "o"), "-t", str(tokenizer_file), *extra])
    assert exc.value.code == 2 and "Traceback" not in capsys.readouterr().err


def test_cli_as_a_process(tmp_path, tokenizer_file) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-m", "bpekit", "tokenize", str(tmp_path / "none.txt"), "-o", str(tmp_path / "o"), "-t", str(tokenizer_file)],
        check=False, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"bpekit tokenize: error: input not found (or an empty directory or glob): {str(tmp_path / 'none.txt')!r}"


def test_ray_engine_without_ray_names_the_extra(tmp_path, h, tokenizer_file, monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError, as when it is not installed
    src = h.write_jsonl(tmp_path / "in.jsonl", ["some text"])
    rc = main(["tokenize", str(src), "-o", str(tmp_path / "out"), "-t", str(tokenizer_file), "--engine", "ray"])
    err = capsys.readouterr().err
    assert rc == 1 and "pip install 'bpekit[ray]'" in err and err.count("\n") == 1
