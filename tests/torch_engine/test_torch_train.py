"""The tensor trainer learns exactly the Rust trainer's merges and ids: on real text (English and
multilingual) with two patterns, on overlapping runs, with min_frequency, max_token_length and
special tokens; and it rejects bad input with typed errors."""

from __future__ import annotations

import random
import sys

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install bpekit[torch]); torch engine not tested")

import bpekit.train  # noqa: E402,F401
import bpekit.torch  # noqa: E402
from bpekit.errors import DataNotFoundError, PatternError, VocabError  # noqa: E402
from bpekit.patterns import resolve_pattern  # noqa: E402
from bpekit.torch.device import BpekitDeviceError  # noqa: E402
from bpekit.train import WordCounts, count, train_from_counts  # noqa: E402

rust_train = sys.modules["bpekit.train"].train


def table(words: dict[bytes, int]) -> WordCounts:
    return WordCounts.from_dict(words, resolve_pattern("o200k"))


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        # (a, a) occurs 3 times in "aaaa" (counted), merged at 0 and 2 -> "aa aa"; then (aa, aa)
        ({b"aaaa": 3}, [(b"a", b"a"), (b"aa", b"aa")]),
        # "aaaaa" -> "aa aa a": (aa, aa) and (aa, a) both count 2; b"aa" + b"a" < b"aa" + b"aa"
        ({b"aaaaa": 2}, [(b"a", b"a"), (b"aa", b"a"), (b"aa", b"aaa")]),
    ],
)
def test_overlapping_runs_by_hand(words, expected, device):
    tok = bpekit.torch.train(table(words), 256 + len(expected), min_frequency=1, device=device)
    assert tok.merges == expected
    assert tok.merges == train_from_counts(table(words), vocab_size=256 + len(expected), min_frequency=1,
                                           show_progress=False).merges


def test_respelled_token_keeps_its_id(device):
    # "abc" is made as ab + c, later also as a + bc: the second merge adds no token
    words = {b"abc": 5, b"ab": 4, b"bc": 4, b"xbc": 3, b"a": 1}
    rust = train_from_counts(table(words), vocab_size=300, min_frequency=1, show_progress=False)
    tok = bpekit.torch.train(table(words), 300, min_frequency=1, device=device)
    assert tok.merges == rust.merges and tok.ranks == rust.ranks


@pytest.mark.parametrize("pattern", ["o200k", "gpt2"])
def test_real_text_same_as_rust(pattern, shakespeare, multilingual, device):
    docs = [shakespeare, *multilingual]
    assert sum(len(d.encode()) for d in docs) > 200_000
    counts = count(iter(docs), pattern=pattern, show_progress=False)
    rust = train_from_counts(counts, vocab_size=600, show_progress=False)
    tok = bpekit.torch.train(counts, 600, device=device)
    assert len(rust.merges) >= 344
    assert tok.merges == rust.merges
    assert tok.ranks == rust.ranks
    assert tok.training["reached_vocab_size"] and tok.training["last_merge_count"] == rust.training["last_merge_count"]


def test_sources_specials_and_limits(shakespeare, device):
    docs = [shakespeare[:15_000], shakespeare[15_000:25_000]]
    options = dict(pattern="cl100k", special_tokens=["<|endoftext|>"], max_token_length=4, min_frequency=3)
    rust = rust_train(iter(docs), vocab_size=2_000, show_progress=False, **options)
    tok = bpekit.torch.train(iter(docs), 2_000, device=device, **options)
    assert tok.merges == rust.merges
    assert tok.special_tokens == rust.special_tokens
    assert max(len(t) for t in tok.ranks) == 4
    assert not tok.training["reached_vocab_size"]  # stopped by min_frequency
    text = "First Citizen:<|endoftext|> Speak."
    assert tok.encode(text, allowed_special="all") == rust.encode(text, allowed_special="all")


def test_hostile_texts_train_as_rust(device):
    from hardening.hostile import HOSTILE

    for name, make in HOSTILE.items():
        docs = [make(20_000)]
        rust = rust_train(iter(docs), vocab_size=400, min_frequency=1, show_progress=False)
        assert bpekit.torch.train(iter(docs), 400, min_frequency=1, device=device).merges == rust.merges, name


def test_bad_input():
    with pytest.raises(VocabError, match="vocab_size"):
        bpekit.torch.train(iter(["abc"]), 10)
    with pytest.raises(PatternError, match="another pattern"):
        bpekit.torch.train(table({b"ab": 2}), 300, pattern="gpt2")
    with pytest.raises(DataNotFoundError, match="empty"):
        bpekit.torch.train(iter([""]), 300)
    with pytest.raises(BpekitDeviceError, match="not a torch device"):
        bpekit.torch.train(table({b"ab": 2}), 300, device="no-such-device")


def test_pair_counts_against_a_counter(device):
    from collections import Counter

    from bpekit.torch.trainer import pair_counts

    rng = random.Random(3)
    for n in [1, 2, 7, 500]:
        keys = [rng.choice([0, 1, 5, 5, 5, 2**40, 99]) for _ in range(n)]
        weights = [rng.randint(1, 2**33) for _ in range(n)]
        want: Counter[int] = Counter()
        for k, w in zip(keys, weights):
            want[k] += w
        distinct, sums = pair_counts(torch.tensor(keys, device=device), torch.tensor(weights, device=device))
        assert dict(zip(distinct.tolist(), sums.tolist())) == dict(want)
        assert distinct.tolist() == sorted(want)


def test_default_device_is_cuda_when_there_is_one():
    from bpekit.torch.device import resolve_device

    assert resolve_device(None).type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert bpekit.torch.train(table({b"abab": 2}), 257).training["engine"].startswith(
        f"bpekit.torch ({resolve_device(None).type}"
    )
    if not torch.cuda.is_available():
        with pytest.raises(BpekitDeviceError, match="CUDA is not available"):
            resolve_device("cuda")


def test_missing_torch_is_a_typed_error(monkeypatch):
    from bpekit.torch.device import TorchMissingError, require_torch

    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` fail
    with pytest.raises(TorchMissingError, match=r"install bpekit\[torch\]"):
        require_torch()
