"""A SentencePiece ``.model`` file: load with checks, keep the exact bytes, save atomically.

Loading applies sentencepiece's own checks (``ModelInterface::InitializePieces`` of the
sentencepiece 0.2.3 wheel, see ``docs/formats/sentencepiece.md``) and refuses what it cannot
read: files over a size limit (checked before reading), protobuf that does not parse, strings
that are not UTF-8 and broken character maps raise FormatError; inconsistent vocabularies raise
VocabError. A model keeps the bytes it was read from, so ``save`` writes them back unchanged.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

from bpekit.errors import DataNotFoundError, FormatError, VocabError
from bpekit.formats.sentencepiece.charsmap import CharsMap
from bpekit.formats.sentencepiece.normalizer import Normalizer
from bpekit.formats.sentencepiece.proto import MODEL_TYPES, PIECE_TYPES, ModelProto, parse_model_proto
from bpekit.atomicfile import atomic_write

DEFAULT_MAX_BYTES = 2 * 1024**3
MAX_PIECE_BYTES = 8000  # sentencepiece refuses pieces of this many bytes or more

NORMAL, UNKNOWN, CONTROL = PIECE_TYPES["NORMAL"], PIECE_TYPES["UNKNOWN"], PIECE_TYPES["CONTROL"]
USER_DEFINED, UNUSED, BYTE = PIECE_TYPES["USER_DEFINED"], PIECE_TYPES["UNUSED"], PIECE_TYPES["BYTE"]
MERGEABLE = frozenset({NORMAL, USER_DEFINED, UNUSED})  # the types BPE may merge into
_TYPE_NAMES = {v: k for k, v in PIECE_TYPES.items()}
_MODEL_TYPE_NAMES = {v: k for k, v in MODEL_TYPES.items()}
_BYTE_PIECE = re.compile(r"<0x([0-9A-F]{2})>\Z")


class Piece(NamedTuple):
    """One vocabulary entry; its id is its index."""

    piece: str
    score: float
    type: int

    @property
    def type_name(self) -> str:
        return _TYPE_NAMES.get(self.type, str(self.type))


def byte_piece(b: int) -> str:
    """The piece that stands for byte ``b`` under byte fallback: ``<0x%02X>``."""
    return f"<0x{b:02X}>"


class SentencePieceModel:
    """A parsed, checked ``ModelProto``. Build one with :meth:`load` or :meth:`from_proto`."""

    def __init__(self, proto: Any, raw: bytes) -> None:
        self._proto = proto
        self._raw = raw
        trainer, norm = proto.trainer_spec, proto.normalizer_spec
        self.model_type = _MODEL_TYPE_NAMES.get(trainer.model_type, str(trainer.model_type))
        self.byte_fallback = bool(trainer.byte_fallback)
        self.treat_whitespace_as_suffix = bool(trainer.treat_whitespace_as_suffix)
        self.add_dummy_prefix = bool(norm.add_dummy_prefix)
        self.remove_extra_whitespaces = bool(norm.remove_extra_whitespaces)
        self.escape_whitespaces = bool(norm.escape_whitespaces)
        self.unk_surface = _text(trainer.unk_surface, "trainer_spec.unk_surface")
        self.pieces = tuple(Piece(_text(p.piece, f"piece {i}"), p.score, p.type) for i, p in enumerate(proto.pieces))
        self._ids, self.unk_id = _check_pieces(self.pieces, self.byte_fallback, self.model_type == "BPE")
        self._charsmap = CharsMap(norm.precompiled_charsmap) if norm.precompiled_charsmap else None
        self._denormalizer: Normalizer | None = None
        if proto.HasField("denormalizer_spec") and proto.denormalizer_spec.precompiled_charsmap:
            spec = proto.denormalizer_spec
            self._denormalizer = Normalizer(
                charsmap=CharsMap(spec.precompiled_charsmap),
                add_dummy_prefix=spec.add_dummy_prefix,
                remove_extra_whitespaces=spec.remove_extra_whitespaces,
                escape_whitespaces=spec.escape_whitespaces,
            )
        self.unk_piece = self._special_piece(trainer.unk_piece, "unk_piece", "<unk>")
        self.bos_piece = self._special_piece(trainer.bos_piece, "bos_piece", "<s>")
        self.eos_piece = self._special_piece(trainer.eos_piece, "eos_piece", "</s>")
        self.pad_piece = self._special_piece(trainer.pad_piece, "pad_piece", "<pad>")

    @classmethod
    def load(
        cls, source: str | os.PathLike[str] | bytes | bytearray | memoryview, *, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> SentencePieceModel:
        """Reads a model from a path or from the serialized bytes themselves."""
        if isinstance(source, bytes | bytearray | memoryview):
            data = bytes(source)
            if len(data) > max_bytes:
                raise FormatError(f"SentencePiece model is {len(data)} bytes, over the limit of {max_bytes}")
        elif isinstance(source, str | os.PathLike):
            data = _read_limited(Path(source), max_bytes)
        else:
            raise FormatError(f"a model is loaded from a path or bytes, not {type(source).__name__}")
        return cls(parse_model_proto(data), data)

    @classmethod
    def from_proto(cls, proto: Any) -> SentencePieceModel:
        """A model from a ``ModelProto`` message (this module's class, or any with the same fields)."""
        if not hasattr(proto, "SerializeToString"):
            raise FormatError(f"from_proto needs a protobuf message, not {type(proto).__name__}")
        data = proto.SerializeToString()
        return cls(parse_model_proto(data), data)

    def to_proto(self) -> Any:
        """A copy of the message, free to change (build a new model from it with ``from_proto``)."""
        copy = ModelProto()
        copy.CopyFrom(self._proto)
        return copy

    def serialize(self) -> bytes:
        """The file's bytes: exactly the bytes the model was loaded from."""
        return self._raw

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the model atomically (a temporary file, then a rename)."""
        atomic_write(path, self._raw)

    def piece_to_id(self, piece: str) -> int:
        """The id of ``piece``, or the unk id when the vocabulary does not have it."""
        return self._ids.get(piece, self.unk_id)

    def has_piece(self, piece: str) -> bool:
        return piece in self._ids

    def special_id(self, piece: str) -> int:
        """sentencepiece's ``bos_id()``/``eos_id()``/``pad_id()``: the id when it is CONTROL, else -1."""
        i = self.piece_to_id(piece)
        return i if self.pieces[i].type == CONTROL else -1

    @functools.cached_property
    def normalizer(self) -> Normalizer:
        """The model's normalizer, with its user-defined pieces passed through unchanged."""
        return Normalizer(
            charsmap=self._charsmap,
            add_dummy_prefix=self.add_dummy_prefix,
            remove_extra_whitespaces=self.remove_extra_whitespaces,
            escape_whitespaces=self.escape_whitespaces,
            treat_whitespace_as_suffix=self.treat_whitespace_as_suffix,
            user_defined=[p.piece for p in self.pieces if p.type == USER_DEFINED],
        )

    @property
    def precompiled_charsmap(self) -> bytes | None:
        """The normalizer's character map blob (``None`` for the identity map)."""
        return bytes(self._proto.normalizer_spec.precompiled_charsmap) or None

    @property
    def denormalizer(self) -> Normalizer | None:
        """The ``denormalizer_spec`` applied to decoded text, when the file has a charsmap for it."""
        return self._denormalizer

    def _special_piece(self, value: Any, field: str, default: str) -> str:
        text = _text(value, f"trainer_spec.{field}")
        return text or default  # sentencepiece: an empty name means the default


def _text(value: Any, what: str) -> str:
    if isinstance(value, bytes):  # python-protobuf (upb) hands back proto2 strings that are not UTF-8 as bytes
        raise FormatError(f"{what} is not valid UTF-8: {value[:40]!r}")
    return str(value)


def _read_limited(path: Path, max_bytes: int) -> bytes:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise FormatError(f"{path} is {size} bytes, over the SentencePiece model limit of {max_bytes}")
        with path.open("rb") as f:
            data = f.read(max_bytes + 1)
    except FileNotFoundError as e:
        raise DataNotFoundError(f"SentencePiece model not found: {path}") from e
    except IsADirectoryError as e:
        raise FormatError(f"{path} is a directory, not a SentencePiece model") from e
    if len(data) > max_bytes:
        raise FormatError(f"{path} grew past the SentencePiece model limit of {max_bytes} bytes while read")
    return data


def _check_pieces(pieces: tuple[Piece, ...], byte_fallback: bool, one_map: bool) -> tuple[dict[str, int], int]:
    """sentencepiece's load-time checks; returns piece -> id and the unk id.

    BPE models keep every piece in one map, so a string may appear once; the other model types
    keep CONTROL, UNKNOWN and BYTE pieces in a second map and allow a string once in each.
    """
    for i, p in enumerate(pieces):
        if len(p.piece.encode("utf-8")) >= MAX_PIECE_BYTES:
            raise VocabError(
                f"piece {i} is too long ({len(p.piece.encode('utf-8'))} bytes, limit {MAX_PIECE_BYTES - 1})"
            )
    ids: dict[str, int] = {}
    reserved: dict[str, int] = {}
    unk_id = -1
    found_bytes = set()
    for i, p in enumerate(pieces):
        if not p.piece:
            raise VocabError(f"piece {i} is empty")
        if "\0" in p.piece:
            raise VocabError(f"piece {i} ({p.piece!r}) contains a NUL character")
        target = ids if one_map or p.type in MERGEABLE else reserved
        if p.piece in target:
            raise VocabError(f"piece {p.piece!r} is defined twice (ids {target[p.piece]} and {i})")
        target[p.piece] = i
        if p.type == UNKNOWN:
            if unk_id >= 0:
                raise VocabError(f"two UNKNOWN pieces: ids {unk_id} and {i}")
            unk_id = i
        elif p.type == BYTE:
            if not byte_fallback:
                raise VocabError(f"byte piece {p.piece!r} (id {i}) although trainer_spec.byte_fallback is false")
            m = _BYTE_PIECE.match(p.piece)
            if m is None:
                raise VocabError(f"byte piece {p.piece!r} (id {i}) is not of the form <0xHH> (upper-case hex)")
            found_bytes.add(int(m.group(1), 16))
    if unk_id < 0:
        raise VocabError("the model has no UNKNOWN piece")
    if byte_fallback and len(found_bytes) != 256:
        missing = sorted(set(range(256)) - found_bytes)
        raise VocabError(
            f"byte_fallback is true but {len(missing)} of the 256 byte pieces are missing "
            f"(first: {byte_piece(missing[0])})"
        )
    ids.update(reserved)  # PieceToId looks in the reserved map first
    return ids, unk_id
