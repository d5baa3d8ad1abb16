"""``SentencePieceBPE``: a SentencePiece BPE model with ``SentencePieceProcessor``'s results.

The stages compose as in sentencepiece: normalize (``normalizer.py``), BPE (``bpe.py``), then
the extra options (unk piece, reverse, bos, eos, applied in the Python wrapper's order), and
``decoder.py`` for the way back. Normalizing and merging run in Rust (``fast.py``); the Python
stages are the reference and do BPE-dropout (``alpha > 0``) and text with lone surrogates (which
they refuse with EncodeError).
"""

from __future__ import annotations

import functools
import math
import os
import random
from collections.abc import Iterable, Sequence
from typing import Any, overload

from bpekit.encoding import cache_budget
from bpekit.errors import EncodeError, FormatError, InputTypeError, InvalidTokenError
from bpekit.formats.sentencepiece.bpe import BpeEncoder
from bpekit.formats.sentencepiece.decoder import decode_ids, decode_pieces
from bpekit.formats.sentencepiece.fast import core_encoder
from bpekit.formats.sentencepiece.model import BYTE, CONTROL, DEFAULT_MAX_BYTES, UNKNOWN, UNUSED, Piece, SentencePieceModel
from bpekit.formats.sentencepiece.normalizer import _utf8


class SentencePieceBPE:
    """Encode and decode with a SentencePiece model of type BPE, exactly as sentencepiece does."""

    def __init__(self, model: SentencePieceModel) -> None:
        if not isinstance(model, SentencePieceModel):
            raise InputTypeError(f"SentencePieceBPE needs a SentencePieceModel, not {type(model).__name__}")
        if model.model_type != "BPE":
            raise FormatError(
                f"this SentencePiece model is of type {model.model_type}; bpekit encodes only BPE models "
                "(it can still load and save the file with SentencePieceModel)"
            )
        self.model = model
        self._normalizer = model.normalizer
        self._core = core_encoder(model)

    @functools.cached_property
    def _bpe(self) -> BpeEncoder:
        """The Python merge (BPE-dropout, and the reference the Rust one is tested against)."""
        return BpeEncoder(self.model)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_core", None)  # the Rust encoder is rebuilt from the model
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._core = core_encoder(self.model)
        if state.get("_cache_bytes") is not None:
            self._core.set_cache_capacity(state["_cache_bytes"])

    @property
    def pretoken_cache_bytes(self) -> int:
        """Byte budget of the per-thread cache of merged chunks (a word and its leading ``▁``):
        8 MiB per thread by default, emptied when it fills; 0 turns it off. The budget belongs to
        the model (SentencePieceBPE objects of one model share it); setting it empties the cache
        on every thread. The cache never changes results, only speed."""
        return int(self._core.cache_capacity())

    @pretoken_cache_bytes.setter
    def pretoken_cache_bytes(self, value: int) -> None:
        self._cache_bytes = cache_budget(value)
        self._core.set_cache_capacity(self._cache_bytes)

    @classmethod
    def load(cls, source: str | os.PathLike[str] | bytes, *, max_bytes: int = DEFAULT_MAX_BYTES) -> SentencePieceBPE:
        """Reads a ``.model`` file (a path, or its bytes)."""
        return cls(SentencePieceModel.load(source, max_bytes=max_bytes))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the model file back, byte for byte as it was read."""
        self.model.save(path)

    # sentencepiece's accessors are methods: ``sp.vocab_size()``, ``sp.bos_id()``

    def vocab_size(self) -> int:
        return len(self.model.pieces)

    def get_piece_size(self) -> int:
        return len(self.model.pieces)

    piece_size = get_piece_size

    def unk_id(self) -> int:
        return self.model.unk_id

    def bos_id(self) -> int:
        """The id of the bos piece when it is a CONTROL piece, else -1 (as sentencepiece)."""
        return self.model.special_id(self.model.bos_piece)

    def eos_id(self) -> int:
        return self.model.special_id(self.model.eos_piece)

    def pad_id(self) -> int:
        return self.model.special_id(self.model.pad_piece)

    def _piece(self, token_id: Any) -> Piece:
        if isinstance(token_id, bool) or not isinstance(token_id, int):
            raise InvalidTokenError(f"token ids must be ints, got {type(token_id).__name__} {token_id!r}")
        if not 0 <= token_id < len(self.model.pieces):
            raise InvalidTokenError(f"token id {token_id} is out of range (vocabulary size {len(self.model.pieces)})")
        return self.model.pieces[token_id]

    @overload
    def id_to_piece(self, token_id: int) -> str: ...
    @overload
    def id_to_piece(self, token_id: list[int] | tuple[int, ...]) -> list[str]: ...
    def id_to_piece(self, token_id: int | list[int] | tuple[int, ...]) -> str | list[str]:
        """The piece of an id (a list of them for a list of ids, as sentencepiece)."""
        if isinstance(token_id, (list, tuple)):
            return [self._piece(i).piece for i in token_id]
        return self._piece(token_id).piece

    @overload
    def piece_to_id(self, piece: str) -> int: ...
    @overload
    def piece_to_id(self, piece: list[str] | tuple[str, ...]) -> list[int]: ...
    def piece_to_id(self, piece: str | list[str] | tuple[str, ...]) -> int | list[int]:
        """The id of ``piece``; the unk id when the vocabulary does not have it (a list of ids for
        a list of pieces)."""
        if isinstance(piece, (list, tuple)):
            return [self.piece_to_id(p) for p in piece]
        if not isinstance(piece, str):
            raise InputTypeError(f"a piece is a str, not {type(piece).__name__}")
        return self.model.piece_to_id(piece)

    def get_score(self, token_id: int) -> float:
        return self._piece(token_id).score

    def is_unknown(self, token_id: int) -> bool:
        return self._piece(token_id).type == UNKNOWN

    def is_control(self, token_id: int) -> bool:
        return self._piece(token_id).type == CONTROL

    def is_unused(self, token_id: int) -> bool:
        return self._piece(token_id).type == UNUSED

    def is_byte(self, token_id: int) -> bool:
        return self._piece(token_id).type == BYTE

    def normalize(self, text: str | bytes) -> str:
        """The normalized text the BPE stage sees (sentencepiece's ``normalize``)."""
        text = _text(text)
        try:
            return self._core.normalize(text)  # type: ignore[no-any-return]
        except UnicodeEncodeError:  # lone surrogates: the reference raises EncodeError
            return self._normalizer.normalize(text)

    @overload
    def encode(
        self,
        text: str | bytes,
        out_type: type[int] = ...,
        *,
        add_bos: bool = ...,
        add_eos: bool = ...,
        reverse: bool = ...,
        emit_unk_piece: bool = ...,
        alpha: float = ...,
        seed: int | None = ...,
        num_threads: int = ...,
    ) -> list[int]: ...
    @overload
    def encode(
        self,
        text: str | bytes,
        out_type: type[str],
        *,
        add_bos: bool = ...,
        add_eos: bool = ...,
        reverse: bool = ...,
        emit_unk_piece: bool = ...,
        alpha: float = ...,
        seed: int | None = ...,
        num_threads: int = ...,
    ) -> list[str]: ...
    @overload
    def encode(
        self,
        text: list[str | bytes] | tuple[str | bytes, ...],
        out_type: type[int] | type[str] = ...,
        *,
        add_bos: bool = ...,
        add_eos: bool = ...,
        reverse: bool = ...,
        emit_unk_piece: bool = ...,
        alpha: float = ...,
        seed: int | None = ...,
        num_threads: int = ...,
    ) -> list[list[int]] | list[list[str]]: ...

    def encode(
        self,
        text: str | bytes | Sequence[str | bytes],
        out_type: type[int | str] = int,
        *,
        add_bos: bool = False,
        add_eos: bool = False,
        reverse: bool = False,
        emit_unk_piece: bool = False,
        alpha: float = 0.0,
        seed: int | None = None,
        num_threads: int = 0,
    ) -> Any:
        """Ids (``out_type=int``) or pieces (``out_type=str``) of ``text``.

        ``alpha > 0`` turns on BPE-dropout: each merge is skipped with that probability, drawn
        from ``random.Random(seed)`` (fresh per call, so a seed gives the same pieces each time).
        ``bytes`` input may be malformed UTF-8; each bad byte becomes U+FFFD. A list (or tuple)
        of texts gives a list of results, as sentencepiece's ``encode`` does; its ids are encoded
        in parallel (``num_threads`` 0, or sentencepiece's default -1: one thread per core).
        """
        if type(text) is str and out_type is int and type(alpha) is float and alpha <= 0.0:
            if add_bos is False and add_eos is False and reverse is False and emit_unk_piece.__class__ is bool:
                try:
                    return self._core.encode(text)
                except UnicodeEncodeError:
                    pass  # lone surrogates: the reference raises EncodeError below
        for name, flag in (("add_bos", add_bos), ("add_eos", add_eos), ("reverse", reverse),
                           ("emit_unk_piece", emit_unk_piece)):
            if not isinstance(flag, bool):  # reverse="no" reversed the ids (sentencepiece: TypeError)
                raise InputTypeError(f"{name} must be True or False, not {flag!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise InputTypeError(f"seed must be an int or None, not {seed!r}")
        options = {
            "add_bos": add_bos,
            "add_eos": add_eos,
            "reverse": reverse,
            "emit_unk_piece": emit_unk_piece,
            "alpha": alpha,
            "seed": seed,
        }
        if isinstance(text, list | tuple):
            if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < -1:
                raise InputTypeError(f"num_threads must be an int >= -1 (-1 or 0: one per core), not {num_threads!r}")
            texts = [_text(t) for t in text]
            if out_type is int and _no_dropout(alpha) and not (add_bos or add_eos or reverse):
                try:
                    return self._core.encode_batch(texts, max(num_threads, 0))
                except UnicodeEncodeError:
                    pass  # a lone surrogate somewhere: each text below, the reference refuses it
            return [self.encode(t, out_type, **options) for t in texts]  # type: ignore[call-overload]
        if out_type is int and _no_dropout(alpha):
            out: list[Any] = self._fast_ids(_text(text))
        elif out_type is int or out_type is str:
            pieces, ids = self.encode_pieces_and_ids(text, alpha=alpha, seed=seed)
            out = ids if out_type is int else pieces
            if out_type is str and emit_unk_piece:
                unk = self.model.pieces[self.model.unk_id].piece
                out = [unk if self.model.piece_to_id(p) == self.model.unk_id else p for p in out]
        else:
            raise InputTypeError(f"out_type must be int or str, not {out_type!r}")
        if reverse:
            out.reverse()
        for flag, piece, name in ((add_bos, self.model.bos_piece, "BOS"), (add_eos, self.model.eos_piece, "EOS")):
            if flag and self.model.special_id(piece) < 0:
                raise EncodeError(f"{name} token {piece!r} is not defined as a control symbol in this model")
        if add_bos:
            out.insert(0, self.bos_id() if out_type is int else self.model.pieces[self.bos_id()].piece)
        if add_eos:
            out.append(self.eos_id() if out_type is int else self.model.pieces[self.eos_id()].piece)
        return out

    def encode_pieces_and_ids(
        self, text: str | bytes, *, alpha: float = 0.0, seed: int | None = None
    ) -> tuple[list[str], list[int]]:
        """Pieces and ids of ``text`` in one pass (no bos/eos)."""
        if isinstance(alpha, bool) or not isinstance(alpha, int | float) or math.isnan(alpha):
            raise InputTypeError(f"alpha must be a number, not {alpha!r}")
        text = _text(text)
        if alpha <= 0.0:
            try:
                return self._core.encode_pieces(text)  # type: ignore[no-any-return]
            except UnicodeEncodeError:
                pass  # lone surrogates: the reference raises EncodeError
        normalized = self._normalizer.normalize(text)
        rng = random.Random(seed) if alpha > 0.0 else None
        return self._bpe.encode(normalized, float(alpha), rng)

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """The ids of ``text`` and each id's span of it, in characters, as sentencepiece's
        ``encode(text, return_type="proto")`` gives each piece's ``begin`` / ``end`` (there in
        bytes): a piece spans the input its normalized chars came from; of the byte pieces of
        one char, all but the last are empty at its start and the last spans the char. The
        normalizer's origins and the spans come from Rust (``src/sentencepiece``);
        :meth:`encode_with_offsets_reference` is the same in Python. Lone surrogates raise
        :class:`EncodeError`, as in :meth:`encode` (``Tokenizer`` fixes them first)."""
        text = _text(text)
        if not isinstance(text, str):
            raise InputTypeError(f"text must be a str, not {type(text).__name__}")
        try:
            return self._core.encode_offsets(text)  # type: ignore[no-any-return]
        except UnicodeEncodeError:
            _utf8(text)  # (raises the EncodeError that names the surrogate)
            raise

    def encode_with_offsets_reference(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """:meth:`encode_with_offsets` from the Python normalizer's origins (the reference the
        tests hold the Rust path to)."""
        text = _text(text)
        if not isinstance(text, str):
            raise InputTypeError(f"text must be a str, not {type(text).__name__}")
        _utf8(text)  # (lone surrogates: the EncodeError of encode)
        normalized, origins = self._normalizer.normalize_with_origins(text)
        ids = self._fast_ids(text) if normalized else []  # (the Rust encoder: the same ids)
        spans: list[tuple[int, int]] = []
        pos = 0  # normalized chars consumed
        partial = 0  # bytes of the char at `pos` that byte pieces consumed
        model = self.model
        for i in ids:
            piece = model.pieces[i]
            if piece.type == BYTE:
                partial += 1
                begin = end = origins[pos]
                if partial == len(normalized[pos].encode("utf-8")):
                    pos, partial = pos + 1, 0
                    end = origins[pos]
                spans.append((begin, end))
                continue
            if piece.type == UNKNOWN:  # (one id for a run of unknown chars, as sentencepiece joins them)
                n = 1
                while pos + n < len(normalized) and not self._known_char(normalized[pos + n]):
                    n += 1
            else:
                n = len(piece.piece)
            if piece.type != UNKNOWN and normalized[pos : pos + n] != piece.piece:
                raise EncodeError(f"piece {piece.piece!r} does not spell the normalized text at {pos}: no offsets")
            spans.append((origins[pos], origins[pos + n]))
            pos += n
        return ids, spans

    def _known_char(self, c: str) -> bool:
        """Whether the char ``c`` is a piece of its own that encoding keeps (not unknown)."""
        model = self.model
        return model.has_piece(c) and model.pieces[model.piece_to_id(c)].type not in (UNKNOWN, UNUSED)

    def _fast_ids(self, text: str | bytes) -> list[int]:
        try:
            return self._core.encode(text)  # type: ignore[no-any-return]
        except UnicodeEncodeError:
            return self._bpe.encode(self._normalizer.normalize(text))[1]

    def decode(self, tokens: Iterable[int] | Iterable[str]) -> str:
        """The text of a list of ids, or of a list of pieces (like sentencepiece's ``decode``,
        which also takes one id or one piece)."""
        if isinstance(tokens, int | str):
            tokens = [tokens]  # type: ignore[list-item]
        elif isinstance(tokens, bytes | bytearray) or not isinstance(tokens, Iterable):
            raise InputTypeError(f"decode takes ids or pieces, not {type(tokens).__name__}")
        items: list[Any] = list(tokens)
        if items and isinstance(items[0], str):
            return decode_pieces(self.model, items)
        return decode_ids(self.model, items)

    # sentencepiece's other names for the same calls
    decode_ids = decode
    decode_pieces = decode

    def encode_as_ids(self, text: Any, **options: Any) -> Any:
        """``encode(text, out_type=int, **options)``."""
        return self.encode(text, out_type=int, **options)

    def encode_as_pieces(self, text: Any, **options: Any) -> Any:
        """``encode(text, out_type=str, **options)``."""
        return self.encode(text, out_type=str, **options)


def _text(text: Any) -> str | bytes:
    if isinstance(text, str | bytes | bytearray | memoryview):
        return text if isinstance(text, str) else bytes(text)
    raise InputTypeError(f"text to encode must be str or bytes, not {type(text).__name__}")


def _no_dropout(alpha: Any) -> bool:
    """``alpha`` is a plain number that turns BPE-dropout off (validation is the slow path's)."""
    return type(alpha) in (int, float) and alpha <= 0.0
