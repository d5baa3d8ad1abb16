"""Batch encoding on tensors gives exactly ``Encoding.encode_ordinary``'s ids: for a small trained
tokenizer (whose merges re-spell tokens and whose runs overlap) and for cl100k on real lines,
long pieces and random text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install bpekit[torch]); torch engine not tested")

import bpekit  # noqa: E402
import bpekit.torch  # noqa: E402
from bpekit.errors import InputTypeError  # noqa: E402

LONG = ["a" * 1000, " " * 500 + "x", "1234567890" * 50, "aaaa", "aaaaa", "", "\n\n\n  \t ", "é" * 300]


@pytest.fixture(scope="module")
def cl100k(data_dir):
    return bpekit.torch.encoder_for(bpekit.get_encoding("cl100k_base"), device="cpu")


@pytest.fixture(scope="module")
def small(shakespeare):
    docs = [shakespeare[:20_000], "aaaa aaaaa aaaaaaa abcabc " * 50]
    return bpekit.torch.train(iter(docs), 400, pattern="gpt2", min_frequency=1, device="cpu")


def test_cl100k_real_lines(cl100k, shakespeare, multilingual):
    lines = shakespeare.splitlines()[:300] + [d[:400] for d in multilingual] + LONG
    want = [cl100k.encoding.encode_ordinary(t) for t in lines]
    assert cl100k.encode_batch(lines) == want
    ids, offsets = bpekit.torch.encode_batch_tensors(cl100k, lines)
    assert offsets.tolist()[-1] == ids.numel() == sum(len(w) for w in want)
    assert ids[offsets[2] : offsets[3]].tolist() == want[2]


def test_small_trained_tokenizer(small, shakespeare):
    lines = shakespeare.splitlines()[:200] + LONG
    got = bpekit.torch.encode_batch(small, lines, device="cpu")
    assert got == [small.encode_ordinary(t) for t in lines]


@pytest.fixture(scope="module")
def small_encoder(small):
    return bpekit.torch.encoder_for(small, device="cpu")


@given(st.lists(st.text(alphabet="ab \u00e9\n1", max_size=40), max_size=8))
def test_random_text_small(small_encoder, texts):
    want = [small_encoder.encoding.encode_ordinary(t) for t in texts]
    assert small_encoder.encode_batch(texts) == want


def test_bad_input(cl100k):
    with pytest.raises(InputTypeError, match="texts must be strings"):
        cl100k.encode_batch(["ok", b"bytes"])
    with pytest.raises(InputTypeError, match="Encoding or Tokenizer"):
        bpekit.torch.encode_batch("cl100k_base", ["x"])
