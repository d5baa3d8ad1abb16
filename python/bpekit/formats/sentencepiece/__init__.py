"""SentencePiece ``.model`` files (``ModelProto``): lossless load and save, and BPE models
encoded and decoded exactly as the ``sentencepiece`` package (0.2.3) does.

Modules, in pipeline order: ``proto`` (the message, built in code), ``charsmap`` (the
precompiled normalization trie), ``normalizer``, ``model`` (file checks, tables), ``bpe``
(merging), ``decoder``, ``tokenizer`` (the public class). See ``docs/formats/sentencepiece.md``.
"""

from __future__ import annotations

from bpekit.formats.sentencepiece.model import DEFAULT_MAX_BYTES, Piece, SentencePieceModel
from bpekit.formats.sentencepiece.proto import ModelProto
from bpekit.formats.sentencepiece.tokenizer import SentencePieceBPE

__all__ = ["DEFAULT_MAX_BYTES", "ModelProto", "Piece", "SentencePieceBPE", "SentencePieceModel"]
