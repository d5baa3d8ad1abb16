"""Which format a tokenizer file is in, and its loader: one table row per format.

Each row names a sniff function (first bytes of the file and its path -> bool) and a loader given
as ``"module:function"``, imported only when used. Rows are tried in order; the first whose sniff
accepts the file loads it. To add a format, add a row (the loader takes the path and the keyword
overrides passed to ``Tokenizer.from_file`` and returns a ``Tokenizer``).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from bpekit.errors import DataNotFoundError, FormatError, InputTypeError, UsageError

HEAD_BYTES = 4096
_JSON_KEY = re.compile(rb'\A\s*\{\s*"([A-Za-z_]+)"')
_HF_KEYS = {b"version", b"truncation", b"padding", b"added_tokens", b"normalizer", b"pre_tokenizer",
            b"post_processor", b"decoder", b"model"}
_TIKTOKEN_LINE = re.compile(rb"\A(?:[A-Za-z0-9+/]+={0,2} \d+\r?\n)+")


class Format(NamedTuple):
    name: str
    sniff: Callable[[bytes, str], bool]
    loader: str  # "module:function"


def _first_key(head: bytes) -> bytes | None:
    m = _JSON_KEY.match(head)
    return m.group(1) if m else None


def sniff_bpekit(head: bytes, path: str) -> bool:
    return _first_key(head) == b"format" and re.match(rb'\A\s*\{\s*"format"\s*:\s*"bpekit"', head) is not None


def sniff_hf(head: bytes, path: str) -> bool:
    return _first_key(head) in _HF_KEYS


def sniff_sentencepiece(head: bytes, path: str) -> bool:
    # ModelProto: field 1 (pieces, 0x0A) or 2 (trainer_spec, 0x12), length-delimited, then bytes
    # that are not text (a piece message starts with its own 0x0A tag)
    return len(head) > 2 and head[0] in (0x0A, 0x12) and (head[2] == 0x0A or path.endswith(".model"))


def sniff_tiktoken(head: bytes, path: str) -> bool:
    return _TIKTOKEN_LINE.match(head) is not None


def sniff_gguf(head: bytes, path: str) -> bool:
    return head.startswith(b"GGUF")


def sniff_minbpe(head: bytes, path: str) -> bool:
    return head.startswith(b"minbpe v1")


def sniff_gpt2(head: bytes, path: str) -> bool:
    name = os.path.basename(path)
    return name in ("encoder.json", "vocab.bpe") or head.startswith(b"#version") or (
        os.path.isdir(path) and os.path.isfile(os.path.join(path, "encoder.json"))
    )


FORMATS: list[Format] = [
    Format("bpekit", sniff_bpekit, "bpekit.tokenizer:Tokenizer.load"),
    Format("hf", sniff_hf, "bpekit.formats.hf:load"),
    Format("gguf", sniff_gguf, "bpekit.formats.gguf:load"),
    Format("minbpe", sniff_minbpe, "bpekit.formats.minbpe_file:load"),
    Format("gpt2", sniff_gpt2, "bpekit.formats.gpt2:load"),
    Format("sentencepiece", sniff_sentencepiece, "bpekit.formats.detect:load_sentencepiece"),
    Format("tiktoken", sniff_tiktoken, "bpekit.formats.tiktoken_file:load"),
]


def detect(path: str | os.PathLike[str]) -> Format:
    """The row of ``FORMATS`` that accepts the file; ``FormatError`` if none does."""
    name = os.fspath(path)
    if os.path.isdir(name):
        head = b""  # a folder: GPT-2's encoder.json + vocab.bpe
    else:
        with open(name, "rb") as f:
            head = f.read(HEAD_BYTES)
    for row in FORMATS:
        if row.sniff(head, name):
            return row
    raise FormatError(f"{name}: not a tokenizer file bpekit knows ({', '.join(r.name for r in FORMATS)})")


def _resolve(loader: str) -> Callable[..., Any]:
    module, _, attr = loader.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj  # type: ignore[no-any-return]


def load_file(path: str | os.PathLike[str], *, format: str | None = None, **overrides: Any) -> Any:
    """A ``Tokenizer`` from ``path``, in ``format`` or the detected one."""
    if not isinstance(path, str | os.PathLike):  # (a bytes path was sniffed, then read as a model)
        raise InputTypeError(f"a tokenizer file's path must be a str or os.PathLike, got {type(path).__name__}")
    if not os.path.exists(path):
        raise DataNotFoundError(f"{os.fspath(path)}: no such file or directory")
    if format is None:
        row = detect(path)
    else:
        rows = [r for r in FORMATS if r.name == format]
        if not rows:
            raise UsageError(f"unknown format {format!r} (one of {', '.join(r.name for r in FORMATS)})")
        row = rows[0]
    try:
        tok = _resolve(row.loader)(path, **overrides)
    except TypeError as exc:
        if overrides and "unexpected keyword" in str(exc):
            raise UsageError(f"the {row.name} loader does not take {sorted(overrides)}: {exc}") from None
        raise
    tok.source_format = row.name
    return tok


def load_sentencepiece(path: str | os.PathLike[str], **options: Any) -> Any:
    """A SentencePiece BPE ``.model`` as a ``Tokenizer`` (normalization and merging in the model)."""
    from bpekit.formats.sentencepiece import SentencePieceBPE
    from bpekit.pipeline.rank_model import SentencePieceDecoder, SentencePieceStage
    from bpekit.tokenizer import Tokenizer

    spm = SentencePieceBPE.load(path, **options)
    return Tokenizer(SentencePieceStage(spm), decoder=SentencePieceDecoder(spm))
