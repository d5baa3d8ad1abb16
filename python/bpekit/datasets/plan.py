"""Everything a tokenize run is decided by, checked before any work: the tokenizer (an encoding
name, a tokenizer file, or an object), BOS/EOS ids, format, dtype, shard size and the inputs.

The same :class:`Plan` drives both engines; its ``manifest`` fields (tokenizer, settings, inputs)
are what a re-run must match to continue an interrupted one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bpekit.datasets.formats import choose_dtype
from bpekit.datasets.inputs import Source, resolve_sources
from bpekit.datasets.manifest import new_manifest, sha256_file
from bpekit.encoding import Encoding
from bpekit.errors import UsageError
from bpekit.train.sources import ReadOptions

DEFAULT_SHARD_SIZE = 100_000_000  # tokens, as llm.c's FineWeb shards
BOS_NAMES = ("<|begin_of_text|>", "<|startoftext|>", "<s>", "<|bos|>", "<|endoftext|>")
EOS_NAMES = ("<|endoftext|>", "<|end_of_text|>", "</s>", "<|eos|>")


@dataclass
class Plan:
    """A checked tokenize run."""

    sources: list[Source]
    encoding: Encoding
    tokenizer_spec: Any  # what each worker rebuilds the encoding from (a name, a path or an Encoding)
    bos: int | None
    eos: int | None
    options: ReadOptions
    manifest: dict[str, Any] = field(default_factory=dict)


def load_tokenizer(spec: Any) -> tuple[Encoding, dict[str, Any]]:
    """An encoding and the manifest's description of it, from an encoding name, a tokenizer file,
    an :class:`~bpekit.Encoding` or a :class:`~bpekit.Tokenizer`."""
    from bpekit.tokenizer import Tokenizer

    if isinstance(spec, Tokenizer):
        spec = spec.encoding
    if isinstance(spec, Encoding):
        return spec, {"name": spec.name, "n_vocab": spec.n_vocab}
    if not isinstance(spec, (str, os.PathLike)):
        raise UsageError(f"a tokenizer must be an encoding name, a file or an Encoding, got {type(spec).__name__}")
    if Path(spec).is_file():
        loader = getattr(Tokenizer, "from_file", None) or Tokenizer.load
        tok = loader(spec)
        enc = tok.encoding if isinstance(tok, Tokenizer) else tok
        return enc, {"name": os.fspath(spec), "sha256": sha256_file(Path(spec)), "n_vocab": enc.n_vocab}
    from bpekit.registry import get_encoding

    enc = get_encoding(os.fspath(spec))
    return enc, {"name": enc.name, "n_vocab": enc.n_vocab}


def special_id(enc: Encoding, wanted: str | None, names: tuple[str, ...], what: str) -> int:
    specials = enc._special_tokens
    if wanted is not None:
        if wanted not in specials:
            raise UsageError(f"{wanted!r} is not a special token of {enc.name} (it has: {', '.join(sorted(specials)) or 'none'})")
        return int(specials[wanted])
    for name in names:
        if name in specials:
            return int(specials[name])
    raise UsageError(f"{enc.name} has no {what} special token; name one with --{what.lower()}-token")


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{name} must be a positive integer, got {value!r}")
    return value


def make_plan(
    inputs: Any,
    tokenizer: Any,
    *,
    fmt: str = "bin",
    dtype: str = "auto",
    shard_size: int = DEFAULT_SHARD_SIZE,
    bos: bool = False,
    eos: bool = False,
    bos_token: str | None = None,
    eos_token: str | None = None,
    field: str = "text",
    column: str = "text",
    lines: bool = False,
    hf_dataset: str | None = None,
    split: str = "train",
) -> Plan:
    _positive("shard_size", shard_size)
    enc, description = load_tokenizer(tokenizer)
    chosen = choose_dtype(fmt, dtype, enc.n_vocab)
    bos_id = special_id(enc, bos_token, BOS_NAMES, "BOS") if bos or bos_token else None
    eos_id = special_id(enc, eos_token, EOS_NAMES, "EOS") if eos or eos_token else None
    sources = resolve_sources(inputs or [], lines=lines, hf_dataset=hf_dataset, split=split)
    settings = {
        "format": fmt,
        "dtype": chosen,
        "shard_size": shard_size,
        "bos": bos_id,
        "eos": eos_id,
        "field": field,
        "column": column,
        "encode": "ordinary (special-token text is plain text)",
    }
    spec = tokenizer if isinstance(tokenizer, (str, os.PathLike)) else enc
    plan = Plan(sources, enc, spec, bos_id, eos_id, ReadOptions(field=field, column=column))
    plan.manifest = new_manifest(description, settings, [s.describe() for s in sources])
    return plan
