"""The Ray engine: finishing a run the local engine began (inside its first input), it ends with
shards and a manifest byte-identical to a local run's; so does a run with Llama 3's GGUF pipeline
(rebuilt from its path on the workers); Ray counting equals local counting. One local Ray cluster
(2 CPUs, small object store, no dashboard) in a child process group that is killed on timeout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from bpekit.datasets import read_manifest, tokenize
from bpekit.datasets import writer as writer_module

pytest.importorskip("ray", reason="Ray is not installed (pip install 'bpekit[ray]')")
pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install 'bpekit[ray]')")

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = int(os.environ.get("BPEKIT_RAY_TEST_TIMEOUT", "180"))
SETTINGS = {"format": "llmc", "bos": True, "shard_size": 900, "show_progress": False}

CHILD = """
    import json, sys
    from bpekit.datasets import tokenize, ray_count
    from bpekit.datasets.ray_engine import ray_session
    resumed, tok, pipeline, *inputs = sys.argv[1:]
    settings = json.loads(sys.stdin.read())
    with ray_session(num_cpus=2):
        tokenize(inputs, resumed, tok, engine="ray", **settings)
        if pipeline != "-":  # a GGUF pipeline, rebuilt from its path on the workers
            tokenize(inputs, resumed + "-pipeline", pipeline, engine="ray", **settings)
        counts = ray_count(inputs, special_tokens=["<|endoftext|>"])
    print(json.dumps({"counts": counts.to_bytes().hex()}))
"""


@pytest.mark.slow
def test_ray_engine_matches_local(tmp_path, h, docs, tokenizer_file, monkeypatch) -> None:
    from bpekit.train import WordCounts, count

    inputs = [
        h.write_jsonl(tmp_path / "a.jsonl", docs[:100]),
        h.write_parquet(tmp_path / "b.parquet", docs[100:200]),
        h.write_texts(tmp_path / "c", docs[200:230]),
    ]
    tokenize(inputs, tmp_path / "local", tokenizer_file, **SETTINGS)
    # a local run interrupted after two shards, for the Ray engine to finish
    real, closed = writer_module.ShardWriter.close_shard, []

    def interrupting(self):
        if len(closed) == 2:
            raise KeyboardInterrupt
        closed.append(1)
        real(self)

    monkeypatch.setattr(writer_module.ShardWriter, "close_shard", interrupting)
    with pytest.raises(KeyboardInterrupt):
        tokenize(inputs, tmp_path / "resumed", tokenizer_file, **SETTINGS)
    monkeypatch.undo()
    shards_before = len(read_manifest(tmp_path / "resumed")["shards"])
    assert read_manifest(tmp_path / "resumed")["position"][:1] == [0]  # stopped inside the first input

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")]),
        "RAY_memory_monitor_refresh_ms": "0",  # Ray's OOM killer reacts to other processes' memory
    }
    files = [str(p) for p in inputs]
    from datapaths import DATA

    gguf = DATA / "gguf" / "ggml-vocab-llama-bpe.gguf"
    pipeline = str(gguf) if gguf.is_file() else "-"
    cmd = [sys.executable, "-c", textwrap.dedent(CHILD), str(tmp_path / "resumed"), str(tokenizer_file), pipeline, *files]
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(json.dumps(SETTINGS), timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"the Ray run did not finish in {TIMEOUT} s")
    assert proc.returncode == 0, err[-3000:]
    reference = h.tree_bytes(tmp_path / "local")
    assert h.tree_bytes(tmp_path / "resumed") == reference
    assert len(read_manifest(tmp_path / "resumed")["shards"]) > 2 * shards_before  # most of it written from Ray
    if pipeline != "-":
        tokenize(inputs, tmp_path / "local-pipeline", pipeline, **SETTINGS)
        assert h.tree_bytes(tmp_path / "resumed-pipeline") == h.tree_bytes(tmp_path / "local-pipeline")
    ray_counts = WordCounts.from_bytes(bytes.fromhex(json.loads(out.splitlines()[-1])["counts"]))
    local = count(files, special_tokens=["<|endoftext|>"], show_progress=False)
    assert ray_counts == local and ray_counts.stats == local.stats
