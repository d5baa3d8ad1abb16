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
from bpekit.formats.sentencepiece.model import CONTROL
from bpekit.pipeline.rank_model import SentencePieceStage
from bpekit.tokenizer import Tokenizer, ordinary_pipeline
from bpekit.train.sources import ReadOptions

DEFAULT_SHARD_SIZE = 100_000_000  # tokens, as llm.c's FineWeb shards
BOS_NAMES = ("<|begin_of_text|>", "<|startoftext|>", "<s>", "<|bos|>", "<|endoftext|>")
EOS_NAMES = ("<|endoftext|>", "<|end_of_text|>", "</s>", "<|eos|>")


@dataclass
class Plan:
    """A checked tokenize run."""

    sources: list[Source]
    encoder: Encoding | Tokenizer  # an Encoding, or a pipeline as `ordinary_pipeline` makes it
    tokenizer_spec: Any  # what each worker rebuilds the encoder from (a name, a path or an object)
    bos: int | None
    eos: int | None
    options: ReadOptions
    manifest: dict[str, Any] = field(default_factory=dict)


ORDINARY = "ordinary (special-token text is plain text)"
PIPELINE = "ordinary: special-token text is plain text, other added tokens matched (Hugging Face's encode_special_tokens)"


def load_tokenizer(spec: Any) -> tuple[Encoding | Tokenizer, dict[str, Any]]:
    """The encoder of a tokenize run and the manifest's description of it, from an encoding name,
    a tokenizer file, an :class:`~bpekit.Encoding` or a :class:`~bpekit.Tokenizer`: the
    ``Encoding`` of a rank model, else the pipeline (``tokenizer.json``, GGUF, SentencePiece)
    made ordinary by :func:`ordinary_pipeline`."""
    description: dict[str, Any] = {}
    if isinstance(spec, (str, os.PathLike)) and Path(spec).is_file():
        description = {"name": os.fspath(spec), "sha256": sha256_file(Path(spec))}
        spec = Tokenizer.from_file(spec)
    elif isinstance(spec, (str, os.PathLike)):
        from bpekit.registry import get_encoding

        spec = get_encoding(os.fspath(spec))
    if isinstance(spec, Tokenizer):
        spec = spec.encoding if spec.encoding is not None else ordinary_pipeline(spec)
    if not isinstance(spec, (Encoding, Tokenizer)):
        raise UsageError(f"a tokenizer must be an encoding name, a file, an Encoding or a Tokenizer, got {type(spec).__name__}")
    name = spec.name if isinstance(spec, Encoding) else "<Tokenizer>"
    return spec, {"name": name, **description, "n_vocab": spec.n_vocab}


def special_tokens(encoder: Encoding | Tokenizer) -> dict[str, int]:
    """The special tokens an encoder's BOS/EOS can be chosen from: a pipeline's special added
    tokens, and a SentencePiece model's CONTROL pieces (``<s>``, ``</s>``: the model's own)."""
    if isinstance(encoder, Encoding):
        return dict(encoder._special_tokens)
    found = dict(encoder.special_tokens)
    if isinstance(encoder.model, SentencePieceStage):
        for i, piece in enumerate(encoder.model.spm.model.pieces):
            if piece.type == CONTROL:
                found.setdefault(piece.piece, i)
    return found


def special_id(enc: Encoding | Tokenizer, wanted: str | None, names: tuple[str, ...], what: str, label: str) -> int:
    specials = special_tokens(enc)
    if wanted is not None:
        if wanted not in specials:
            raise UsageError(f"{wanted!r} is not a special token of {label} (it has: {', '.join(sorted(specials)) or 'none'})")
        return int(specials[wanted])
    for name in names:
        if name in specials:
            return int(specials[name])
    raise UsageError(f"{label} has no {what} special token; name one with --{what.lower()}-token")


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
    label = description["name"]
    bos_id = special_id(enc, bos_token, BOS_NAMES, "BOS", label) if bos or bos_token is not None else None
    eos_id = special_id(enc, eos_token, EOS_NAMES, "EOS", label) if eos or eos_token is not None else None
    sources = resolve_sources([] if inputs is None else inputs, lines=lines, hf_dataset=hf_dataset, split=split)
    settings = {
        "format": fmt,
        "dtype": chosen,
        "shard_size": shard_size,
        "bos": bos_id,
        "eos": eos_id,
        "field": field,
        "column": column,
        "encode": ORDINARY if isinstance(enc, Encoding) else PIPELINE,
    }
    spec = tokenizer if isinstance(tokenizer, (str, os.PathLike)) else enc
    plan = Plan(sources, enc, spec, bos_id, eos_id, ReadOptions(field=field, column=column))
    plan.manifest = new_manifest(description, settings, [s.describe() for s in sources])
    return plan
