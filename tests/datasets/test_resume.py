"""Interrupted runs -- Ctrl-C, an exception, SIGKILL in the middle of a shard write or between a
shard and its manifest entry, a corrupted shard -- continue on re-run and end byte-identical to a
run that was never interrupted; the thread count changes nothing either."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from bpekit.datasets import read_manifest, tokenize
from bpekit.datasets import writer as writer_module
from bpekit.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = {"format": "megatron", "eos": True, "shard_size": 700, "show_progress": False}


@pytest.fixture()
def corpus(tmp_path, h, docs) -> list[Path]:
    return [h.write_jsonl(tmp_path / "a.jsonl", docs[:150]), h.write_parquet(tmp_path / "b.parquet", docs[150:])]


@pytest.fixture()
def reference(tmp_path, h, corpus, tokenizer_file) -> dict[str, bytes]:
    tokenize(corpus, tmp_path / "ref", tokenizer_file, threads=1, **SETTINGS)
    files = h.tree_bytes(tmp_path / "ref")
    assert len(files) > 8  # several shards, so interruptions fall in the middle
    return files


def _child(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], check=False, env=env, capture_output=True, text=True, timeout=60)


KILL_DURING_WRITE = """
    import os, signal, sys
    from bpekit.datasets import tokenize, writer
    from bpekit import atomicfile
    calls = 0
    def dying_write(path, data):
        global calls
        calls += 1
        if calls == int(sys.argv[3]):  # a half-written temporary file, then SIGKILL: no cleanup runs
            with open(os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".x.tmp"), "wb") as f:
                f.write(data[: len(data) // 2])
            os.kill(os.getpid(), signal.SIGKILL)
        atomicfile.atomic_write(path, data)
    writer.atomic_write = dying_write
    tokenize(sys.argv[4:], sys.argv[1], sys.argv[2], format="megatron", eos=True, shard_size=700, show_progress=False)
"""

KILL_BEFORE_MANIFEST = """
    import os, signal, sys
    from bpekit.datasets import tokenize, manifest
    real, calls = manifest.save, 0
    def dying_save(out_dir, m):
        global calls
        calls += 1
        if calls == int(sys.argv[3]):  # the shard files are renamed into place, the manifest is not updated
            os.kill(os.getpid(), signal.SIGKILL)
        real(out_dir, m)
    manifest.save = dying_save
    tokenize(sys.argv[4:], sys.argv[1], sys.argv[2], format="megatron", eos=True, shard_size=700, show_progress=False)
"""


@pytest.mark.parametrize("script, at", [(KILL_DURING_WRITE, 5), (KILL_BEFORE_MANIFEST, 3)], ids=["mid-write", "before-manifest"])
def test_sigkill_then_rerun_is_identical(tmp_path, h, corpus, tokenizer_file, reference, script, at) -> None:
    out = tmp_path / "out"
    proc = _child(script, str(out), str(tokenizer_file), str(at), *map(str, corpus))
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    before = read_manifest(out)
    assert not before["complete"] and 0 < len(before["shards"]) < len(reference) // 2
    tokenize(corpus, out, tokenizer_file, threads=2, **SETTINGS)
    assert h.tree_bytes(out) == reference


def test_keyboard_interrupt_then_rerun_is_identical(tmp_path, h, corpus, tokenizer_file, reference, monkeypatch) -> None:
    out = tmp_path / "out"
    real = writer_module.ShardWriter.close_shard
    closed = []

    def interrupting(self):
        if len(closed) == 3:
            raise KeyboardInterrupt
        closed.append(1)
        real(self)

    monkeypatch.setattr(writer_module.ShardWriter, "close_shard", interrupting)
    with pytest.raises(KeyboardInterrupt):
        tokenize(corpus, out, tokenizer_file, **SETTINGS)
    monkeypatch.undo()
    assert len(read_manifest(out)["shards"]) == 3
    tokenize(corpus, out, tokenizer_file, threads=0, **SETTINGS)
    assert h.tree_bytes(out) == reference


def test_ctrl_c_on_the_command_line(tmp_path, h, corpus, tokenizer_file, reference) -> None:
    out = tmp_path / "out"
    slow = """
        import sys, time
        from bpekit.datasets import inputs, writer
        from bpekit.cli import main
        inputs.BATCH_DOCS = 5
        real = writer.ShardWriter.add
        def slow_add(self, *a):
            time.sleep(0.03)
            real(self, *a)
        writer.ShardWriter.add = slow_add
        sys.exit(main(sys.argv[1:]))
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")])}
    args = ["tokenize", *map(str, corpus), "-o", str(out), "-t", str(tokenizer_file), "--format", "megatron", "--eos", "--shard-size", "700"]
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(slow), *args], env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        if (out / "manifest.json").exists() and len(read_manifest(out)["shards"]) >= 2:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert err.strip().count("\n") == 0 and "run the same command to continue" in err
    assert not read_manifest(out)["complete"]
    tokenize(corpus, out, tokenizer_file, **SETTINGS)
    assert h.tree_bytes(out) == reference


def test_a_corrupted_shard_is_rewritten(tmp_path, h, corpus, tokenizer_file, reference) -> None:
    out = tmp_path / "out"
    tokenize(corpus, out, tokenizer_file, **SETTINGS)
    victim = out / "shard_000002.bin"
    data = bytearray(victim.read_bytes())
    data[10] ^= 0xFF
    victim.write_bytes(bytes(data))
    (out / "shard_000004.idx").unlink()
    tokenize(corpus, out, tokenizer_file, **SETTINGS)
    assert h.tree_bytes(out) == reference


def test_a_finished_run_is_not_redone_and_other_settings_are_refused(tmp_path, corpus, tokenizer_file, reference) -> None:
    out = tmp_path / "ref"
    stamp = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    again = tokenize(corpus, out, tokenizer_file, **SETTINGS)
    assert again == read_manifest(out) and {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == stamp
    with pytest.raises(UsageError, match=r"settings.shard_size differ"):
        tokenize(corpus, out, tokenizer_file, **{**SETTINGS, "shard_size": 800})
    with pytest.raises(UsageError, match=r"inputs differ"):
        tokenize(corpus[:1], out, tokenizer_file, **SETTINGS)
