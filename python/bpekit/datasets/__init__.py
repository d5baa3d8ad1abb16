"""Tokenizing datasets for pretraining: text, JSON lines, Parquet or a saved Hugging Face dataset
in; nanoGPT ``.bin``, llm.c or Megatron-LM shards and a JSON manifest out; multi-core, resumable,
and the same bytes on Ray Data (see docs/datasets.md).

``tokenize(inputs, out_dir, "o200k_base", eos=True)`` runs it; ``read_manifest(out_dir)`` and
``read_shard`` read the result back; ``ray_count``/``ray_train`` run training's counting phase
as Ray tasks.
"""

from __future__ import annotations

from bpekit.datasets.formats import FORMATS, read_shard
from bpekit.datasets.manifest import load as read_manifest
from bpekit.datasets.pipeline import tokenize

__all__ = ["FORMATS", "ray_count", "ray_train", "read_manifest", "read_shard", "tokenize"]


def __getattr__(name: str) -> object:  # Ray helpers load (and import ray) only when asked for
    if name in ("ray_count", "ray_train"):
        from bpekit.datasets import ray_engine

        return getattr(ray_engine, name)
    raise AttributeError(f"module 'bpekit.datasets' has no attribute {name!r}")
