"""The Rust encoder of a SentencePiece BPE model (``src/sentencepiece/``), made once per model.

It normalizes and merges exactly as ``normalizer.py`` and ``bpe.py`` do (the tests compare the
two on random text for every shared model); BPE-dropout (``alpha > 0``) stays in Python.
"""

from __future__ import annotations

import weakref

from bpekit import _core
from bpekit.formats.sentencepiece.bpe import score_rank
from bpekit.formats.sentencepiece.model import MERGEABLE, SentencePieceModel, byte_piece

# Beside each live model, not in it: models stay picklable.
_CORES: weakref.WeakKeyDictionary[SentencePieceModel, _core.SentencePieceCore] = weakref.WeakKeyDictionary()


def core_encoder(model: SentencePieceModel) -> _core.SentencePieceCore:
    """The model's Rust encoder (``normalize``, ``encode``, ``encode_pieces``, ``encode_batch``)."""
    found = _CORES.get(model)
    if found is None:
        pieces = [(p.piece, i, score_rank(p.score), p.type) for i, p in enumerate(model.pieces) if p.type in MERGEABLE]
        byte_ids = [model.piece_to_id(byte_piece(b)) for b in range(256)] if model.byte_fallback else []
        found = _CORES[model] = _core.SentencePieceCore(
            pieces,
            model.unk_id,
            byte_ids,
            model.precompiled_charsmap,
            model.add_dummy_prefix,
            model.remove_extra_whitespaces,
            model.escape_whitespaces,
            model.treat_whitespace_as_suffix,
            len(model.pieces),
        )
    return found
