"""GPT-2's byte <-> character alphabet and its pre-tokenizer regex, shared by the ByteLevel
pre-tokenizer and decoder (formats.md §2.1)."""

from __future__ import annotations

from bpekit.pipeline.onig import compile_onig
from bpekit.tokenizer_export import bytes_to_unicode

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT2_REGEX = compile_onig(GPT2_PATTERN)
BYTE_TO_CHAR: tuple[str, ...] = bytes_to_unicode()
CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in enumerate(BYTE_TO_CHAR)}


def to_chars(data: bytes) -> str:
    return "".join(BYTE_TO_CHAR[b] for b in data)


def to_bytes(token: str) -> bytes | None:
    """The bytes a ByteLevel token spells, or ``None`` if a character is outside the alphabet."""
    try:
        return bytes(CHAR_TO_BYTE[c] for c in token)
    except KeyError:
        return None
