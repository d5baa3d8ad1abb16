"""Shared pieces of the viz tests: a tiny tokenizer whose merges are worked out by hand, a small
tokenizer trained on the standard library, and encodings read from the shared rank files."""

from __future__ import annotations

import pytest

from bpekit import Tokenizer
from bpekit.viz.models import Model, load_model


@pytest.fixture(scope="session")
def tiny() -> Tokenizer:
    """Ids by hand: 256 = "a"+"b", 257 = "ab"+"ab" = "abab", 258 = " "+"c", 259 = "ab"+"c" = "abc",
    260 = "abab"+"ab" = "ababab"; special "<|end|>" = 261. Pattern: an optional space and a run of
    non-spaces, or a run of spaces."""
    merges = [(b"a", b"b"), (b"ab", b"ab"), (b" ", b"c"), (b"ab", b"c"), (b"abab", b"ab")]
    return Tokenizer(pattern=r" ?[^ ]+| +", merges=merges, special_tokens=["<|end|>"],
                     training={"merge_counts": [50, 20, 9, 7, 3]}, pattern_name=None)


@pytest.fixture(scope="session")
def trained() -> Tokenizer:
    """600 tokens trained on ~150 kB of the standard library (the demo's sample)."""
    from bpekit.train import Trainer
    from bpekit.viz.samples import stdlib_sample

    docs, _ = stdlib_sample(100_000)
    return Trainer(600, show_progress=False).train(iter(docs[:30]))


@pytest.fixture(scope="session")
def encoding(data_dir) -> Model:  # noqa: ANN001 (data_dir: the shared data, else skip)
    if not (data_dir / "ranks" / "cl100k_base.tiktoken").is_file():
        pytest.skip(f"cl100k_base.tiktoken not in {data_dir / 'ranks'}")
    return load_model("cl100k_base")
