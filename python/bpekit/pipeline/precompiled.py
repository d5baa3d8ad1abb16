"""Hugging Face's ``Precompiled`` normalizer: a SentencePiece ``precompiled_charsmap`` applied as
``tokenizers`` applies it (``{"type": "Precompiled", "precompiled_charsmap": <base64>}``).

``transformers`` writes one first in the normalizer of every SentencePiece model it converts
that has a character map (``Sequence[Precompiled, Strip, Replace]`` and the like). The work is
done in Rust (``_core.Precompiled``, ``src/precompiled.rs``): the text is cut into extended
grapheme clusters, a cluster of fewer than 6 bytes is replaced whole by the string of the first
(shortest) rule that prefixes it, and any other cluster a character at a time. That is not what
SentencePiece does (the longest rule at each position, ``bpekit.formats.sentencepiece``), and
gives other text on a few inputs (``Ａ`` + U+0301 is ``A`` here, ``Á`` there).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

from bpekit import _core
from bpekit.errors import FormatError
from bpekit.pipeline.aligned import Aligned
from bpekit.pipeline.base import get
from bpekit.pipeline.normalizers import (
    _SURROGATES,
    Normalizer,
    _between_surrogates,
    _register,
)


@_register
class Precompiled(Normalizer):
    """The normalizer of a ``precompiled_charsmap`` blob (the bytes, base64 decoded);
    ``FormatError`` for a corrupt one."""

    def __init__(self, precompiled_charsmap: bytes) -> None:
        self.precompiled_charsmap = bytes(precompiled_charsmap)
        self._core = _core.Precompiled(self.precompiled_charsmap)
        self.ascii_invariant = self._core.ascii_invariant  # (no rule starts with an ASCII character)

    def normalize(self, text: str) -> str:
        return _between_surrogates(self._core.normalize, text)

    def align(self, text: Aligned) -> Aligned:
        if not self._own(Precompiled):
            return super().align(text)
        if self.ascii_invariant and text.text.isascii():
            return text
        normalized, changes = self._changes(text.text)
        return text if normalized is text.text else text.map_chars(zip(normalized, changes))

    def core_steps(self) -> list[tuple[Any, ...]] | None:
        return [("precompiled", self._core)] if self._own(Precompiled) else None

    def _changes(self, text: str) -> tuple[str, list[int]]:
        """``_core.Precompiled.changes``; a lone surrogate (a cluster of its own, which no rule
        matches) is kept with change 0, the runs between them normalized one by one."""
        try:
            return self._core.changes(text)  # type: ignore[no-any-return]
        except UnicodeEncodeError:
            pieces: list[str] = []
            changes: list[int] = []
            for part in _SURROGATES.split(text):
                done, moved = (part, []) if _SURROGATES.fullmatch(part) else self._core.changes(part)
                pieces.append(done)
                changes += moved if done is not part else [0] * len(part)
            return "".join(pieces), changes

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Precompiled:
        encoded = get(doc, "precompiled_charsmap", str, where)
        field = f"{where}.precompiled_charsmap"
        blob = _decode(encoded, field)
        try:
            return cls(blob)
        except FormatError as exc:
            raise FormatError(f"{field}: {exc}") from None

    def to_json(self) -> dict[str, Any]:
        return {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(self.precompiled_charsmap).decode("ascii")}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.precompiled_charsmap == self.precompiled_charsmap  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"Precompiled(<{len(self.precompiled_charsmap)}-byte precompiled_charsmap>)"


_BASE64 = re.compile("[A-Za-z0-9+/]*")


def _decode(encoded: str, field: str) -> bytes:
    """The bytes of ``encoded`` where Hugging Face's base64 decoder takes it (the standard
    alphabet, no whitespace, no stray bits after the last byte; the ``=`` padding optional, or
    part of it, but never more than it), else ``FormatError`` naming ``field``."""
    body = encoded.rstrip("=")
    if not _BASE64.fullmatch(body):
        raise FormatError(f"{field}: not base64 (a character outside the standard alphabet, or = inside it)")
    if len(body) % 4 == 1 or len(encoded) - len(body) > -len(body) % 4:
        raise FormatError(f"{field}: not base64 (its length {len(encoded)} leaves a partial byte or too much padding)")
    blob = base64.b64decode(body + "=" * (-len(body) % 4))
    if base64.b64encode(blob).decode("ascii").rstrip("=") != body:
        raise FormatError(f"{field}: not base64 (bits set after its last byte)")
    return blob
