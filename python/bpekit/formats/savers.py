"""Every format a ``Tokenizer`` can be written in, one saver per format: the table that both
``Tokenizer.save(path, format=...)`` and ``bpekit convert --to`` use."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from bpekit.atomicfile import atomic_write
from bpekit.errors import FormatError, UsageError

Saver = Callable[[Any, "str | os.PathLike[str]"], Any]


def model_kind(tok: Any) -> str:
    """What kind of model a tokenizer holds, in words (for messages and ``inspect``)."""
    from bpekit.pipeline.models import BPE
    from bpekit.pipeline.rank_model import SentencePieceStage

    if getattr(tok, "encoding", None) is not None:
        return "byte-level BPE (rank model, tiktoken-style)"
    if isinstance(tok.model, SentencePieceStage):
        return "SentencePiece BPE"
    if isinstance(tok.model, BPE):
        return "BPE merge list (Hugging Face pipeline)"
    return type(tok.model).__name__


def save_bpekit(tok: Any, path: str | os.PathLike[str]) -> None:
    atomic_write(path, (json.dumps(tok.to_dict(), ensure_ascii=False, indent=1) + "\n").encode())


def save_hf(tok: Any, path: str | os.PathLike[str]) -> None:
    from bpekit.formats.hf import dumps

    atomic_write(path, dumps(tok))


def save_sentencepiece(tok: Any, path: str | os.PathLike[str]) -> None:
    from bpekit.pipeline.rank_model import SentencePieceStage

    if not isinstance(getattr(tok, "model", None), SentencePieceStage):
        raise FormatError(
            "SentencePiece models hold SentencePiece BPE (pieces with scores over raw text); this tokenizer is "
            f"{model_kind(tok)}, which a .model file cannot represent"
        )
    tok.model.spm.save(path)


def savers() -> dict[str, Saver]:
    """Format name -> saver (imported lazily: each format module pulls in its own readers)."""
    from bpekit.formats import gguf, gpt2, minbpe_file, tiktoken_file

    return {
        "hf": save_hf,
        "bpekit": save_bpekit,
        "tiktoken": tiktoken_file.save,
        "gguf": gguf.save,
        "minbpe": minbpe_file.save,
        "gpt2": gpt2.save,
        "sentencepiece": save_sentencepiece,
    }


TARGETS = ("hf", "tiktoken", "sentencepiece", "gguf", "minbpe", "gpt2", "bpekit")


def save(tok: Any, path: str | os.PathLike[str], format: str) -> None:
    """Writes ``tok`` to ``path`` as ``format`` (one of ``TARGETS``)."""
    table = savers()
    if format not in table:
        raise UsageError(f"cannot save a tokenizer as {format!r} (one of {', '.join(TARGETS)})")
    table[format](tok, path)
