"""tiktoken encodings built from the shared rank files (never the network)."""

from __future__ import annotations

import functools

import pytest

from bpekit import patterns, registry

from datapaths import DATA

ENCODINGS = ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]


@functools.cache
def tiktoken_encoding(name: str):  # noqa: ANN201
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks, load_tiktoken_bpe

    ranks_dir = DATA / "ranks"
    if not ranks_dir.is_dir():
        pytest.skip(f"rank files not found in {ranks_dir}")
    specials = {
        "gpt2": {"<|endoftext|>": 50256},
        "r50k_base": {"<|endoftext|>": 50256},
        "p50k_base": {"<|endoftext|>": 50256},
    }
    if name == "gpt2":
        ranks = data_gym_to_mergeable_bpe_ranks(str(ranks_dir / "vocab.bpe"), str(ranks_dir / "encoder.json"))
        pat = patterns.GPT2
    else:
        file = {"p50k_edit": "p50k_base", "o200k_harmony": "o200k_base"}.get(name, name)
        ranks = load_tiktoken_bpe(str(ranks_dir / f"{file}.tiktoken"))
        pat = {"cl100k_base": patterns.CL100K}.get(name, patterns.O200K if "o200k" in name else patterns.GPT2)
    ours = registry.get_encoding(name)
    special_tokens = specials.get(name, ours._special_tokens)
    return tiktoken.Encoding(name, pat_str=pat, mergeable_ranks=ranks, special_tokens=special_tokens)
