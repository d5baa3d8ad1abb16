"""bpekit ships its annotations (PEP 561 ``py.typed``): a user's program that calls the public API
type-checks under ``mypy --strict`` without stubs, and a wrong use of a result is reported, which
shows that mypy read bpekit's annotations rather than treating the package as ``Any``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from datapaths import ROOT

USER = '''\
from __future__ import annotations

import numpy as np

import bpekit
from bpekit import Tokenizer
from bpekit.errors import BpekitError, DisallowedSpecialError
from bpekit.train import WordCounts, count, train_from_counts

enc: bpekit.Encoding = bpekit.get_encoding("o200k_base")
ids: list[int] = enc.encode("hello world")
text: str = enc.decode(ids)
n: int = enc.count("some text")
counts: list[int] = enc.count_batch(["a", "b c"])
cut: str = enc.truncate("some long text", 3)
arr: np.ndarray = enc.encode_to_numpy("text")
flat, offsets = enc.encode_batch_to_numpy(["a", "b c"], num_threads=0)
batch: list[list[int]] = enc.encode_batch(["a", "b"], allowed_special={"<|endoftext|>"})
special: list[int] = enc.encode("<|endoftext|>", allowed_special="all")
raw: bytes = enc.decode_bytes(ids)
names: list[str] = bpekit.list_encoding_names()
try:
    enc.encode("<|endoftext|>")
except DisallowedSpecialError as exc:
    print(exc.token)
except BpekitError:
    pass
tok: Tokenizer = bpekit.train(iter(["ab ab ab"]), vocab_size=258, show_progress=False)
loaded = Tokenizer.from_file("my.tiktoken")
t_ids: list[int] = loaded.encode("hello")
t_text: str = loaded.decode(t_ids)
wc: WordCounts = count(iter(["ab ab"]))
trained: Tokenizer = train_from_counts(wc, vocab_size=300)
trained.save("x.json")
total: int = wc.total()
vocab: dict[str, int] = loaded.get_vocab()
size: int = loaded.get_vocab_size(with_added_tokens=False)
same: Tokenizer = Tokenizer.from_str(loaded.to_str(pretty=True))
'''


def _mypy(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[dev]')")
    (tmp_path / "user.py").write_text(code, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"), "user.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )


def test_the_package_is_marked_typed():
    assert (ROOT / "python" / "bpekit" / "py.typed").is_file()


def test_a_user_program_type_checks_strictly(tmp_path):
    r = _mypy(tmp_path, USER)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_wrong_use_is_reported(tmp_path):
    r = _mypy(tmp_path, USER + 'wrong: str = enc.encode("x")\n')
    assert r.returncode == 1 and 'expression has type "list[int]", variable has type "str"' in r.stdout, r.stdout
