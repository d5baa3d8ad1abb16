"""Batch encoding on tensors gives exactly ``Encoding.encode_ordinary``'s ids: for a small trained
tokenizer (whose merges re-spell tokens and whose runs overlap) and for cl100k on real lines,
long pieces and random text."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install bpekit[torch]); torch engine not tested")

import bpekit  # noqa: E402
import bpekit.torch  # noqa: E402
import bpekit.torch.encoder  # noqa: E402
from bpekit.errors import EncodeError, InputTypeError  # noqa: E402

LONG = ["a" * 1000, " " * 500 + "x", "1234567890" * 50, "aaaa", "aaaaa", "", "\n\n\n  \t ", "é" * 300]


@pytest.fixture(scope="module")
def cl100k(data_dir, device):
    return bpekit.torch.encoder_for(bpekit.get_encoding("cl100k_base"), device=device)


@pytest.fixture(scope="module")
def small(shakespeare, device):
    docs = [shakespeare[:20_000], "aaaa aaaaa aaaaaaa abcabc " * 50]
    return bpekit.torch.train(iter(docs), 400, pattern="gpt2", min_frequency=1, device=device)


def test_cl100k_real_lines(cl100k, shakespeare, multilingual):
    lines = shakespeare.splitlines()[:300] + [d[:400] for d in multilingual] + LONG
    want = [cl100k.encoding.encode_ordinary(t) for t in lines]
    assert cl100k.encode_batch(lines) == want
    ids, offsets = bpekit.torch.encode_batch_tensors(cl100k, lines)
    assert ids.device.type == cl100k.device.type and offsets.device.type == "cpu"
    assert offsets.tolist()[-1] == ids.numel() == sum(len(w) for w in want)
    assert ids[offsets[2] : offsets[3]].tolist() == want[2]


def test_small_trained_tokenizer(small, shakespeare, device):
    lines = shakespeare.splitlines()[:200] + LONG
    got = bpekit.torch.encode_batch(small, lines, device=device)
    assert got == [small.encode_ordinary(t) for t in lines]


@pytest.fixture(scope="module")
def small_encoder(small, device):
    return bpekit.torch.encoder_for(small, device=device)


@given(st.lists(st.text(alphabet="ab \u00e9\n1", max_size=40), max_size=8))
def test_random_text_small(small_encoder, texts):
    want = [small_encoder.encoding.encode_ordinary(t) for t in texts]
    assert small_encoder.encode_batch(texts) == want


def test_a_long_piece_of_many_merges_leaves_the_device_in_time(cl100k, monkeypatch):
    # one piece of 30,000 random lowercase letters: one rank per round would take ~2,000 rounds
    rng = random.Random(5)
    text = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(30_000))
    rounds = []
    merge_round = cl100k._merge_round
    monkeypatch.setattr(cl100k, "_merge_round", lambda *a: rounds.append(1) or merge_round(*a))
    assert cl100k.encode_batch(["short text", text, "more"]) == [
        cl100k.encoding.encode_ordinary(t) for t in ["short text", text, "more"]
    ]
    assert 1 <= len(rounds) <= 2 * bpekit.torch.encoder.WORK_BUDGET


@pytest.mark.parametrize("budget", [0, 0.5, 2])
def test_any_work_budget_gives_the_same_ids(cl100k, shakespeare, multilingual, budget):
    enc = bpekit.torch.encoder_for(cl100k.encoding, device=cl100k.device, work_budget=budget)
    lines = shakespeare.splitlines()[:100] + [d[:400] for d in multilingual] + LONG
    assert enc.encode_batch(lines) == [cl100k.encoding.encode_ordinary(t) for t in lines]


def test_hostile_texts(cl100k):
    from hardening.hostile import HOSTILE

    texts = [make(20_000) for make in HOSTILE.values()]
    assert cl100k.encode_batch(texts) == [cl100k.encoding.encode_ordinary(t) for t in texts]


def test_surrogates_empty_texts_and_empty_batches(cl100k):
    texts = ["a\ud800b", "x\udc00\ud83d\ude00 y", "", "  "]  # lone surrogates become U+FFFD
    assert cl100k.encode_batch(texts) == [cl100k.encoding.encode_ordinary(t) for t in texts]
    assert cl100k.encode_batch([]) == []
    ids, offsets = cl100k.encode_tensors(["", ""])
    assert ids.numel() == 0 and offsets.tolist() == [0, 0, 0]


def test_a_byte_without_a_token_is_an_encode_error(device):
    ranks = {bytes([b]): i for i, b in enumerate(x for x in range(256) if x != ord("k"))}
    no_k = bpekit.Encoding("no-k", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    with pytest.raises(EncodeError, match='no token for the bytes "k"'):
        bpekit.torch.encode_batch(no_k, ["fine", "ok"], device=device)


def test_bad_input(cl100k):
    with pytest.raises(InputTypeError, match="batch item 1 must be a str"):
        cl100k.encode_batch(["ok", b"bytes"])
    with pytest.raises(InputTypeError, match="a batch must be a list of str"):
        cl100k.encode_batch("one text")
    with pytest.raises(InputTypeError, match="num_threads"):
        bpekit.torch.encoder_for(cl100k.encoding, device=cl100k.device, threads=-1)
    for bad in [-1, float("nan"), "8", True]:
        with pytest.raises(InputTypeError, match="work_budget"):
            bpekit.torch.encoder_for(cl100k.encoding, device=cl100k.device, work_budget=bad)
    with pytest.raises(InputTypeError, match="Encoding or Tokenizer"):
        bpekit.torch.encode_batch("cl100k_base", ["x"])
