"""SentencePiece decoding (``SentencePieceProcessor::Decode``): pieces back to text.

Per piece: CONTROL gives nothing; the unknown piece itself gives ``unk_surface`` (" ⁇ " unless
the file sets it), any other unknown string is copied as is; runs of BYTE pieces are decoded as
UTF-8 with U+FFFD for each invalid byte; other pieces turn ``▁`` into a space. At the start of the
text one leading ``▁`` is dropped (with ``add_dummy_prefix``), or every leading one while nothing
has been written yet (with ``remove_extra_whitespaces``). The ``denormalizer_spec`` comes last.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Collection, Iterable

from bpekit import _core
from bpekit.errors import InputTypeError, InvalidTokenError
from bpekit.formats.sentencepiece.model import BYTE, CONTROL, UNKNOWN, SentencePieceModel
from bpekit.formats.sentencepiece.normalizer import SPACE_SYMBOL

_BYTE_VALUES = {f"<0x{b:02X}>": b for b in range(256)}
# The decode tables of each live model (``ids_table``), by set of special ids.
_TABLES: weakref.WeakKeyDictionary[SentencePieceModel, dict[frozenset[int], _core.SentencePieceIds]] = (
    weakref.WeakKeyDictionary()
)


def ids_table(model: SentencePieceModel, special: Collection[int] = ()) -> _core.SentencePieceIds | None:
    """This decoding of ``model``'s ids in one Rust call (``decode(ids, skip)``, ids in
    ``special`` dropped when ``skip``), or ``None`` for a model with a denormalizer. Made once per
    model and set of special ids."""
    if model.denormalizer is not None:
        return None
    key = frozenset(special)
    cached = _TABLES.setdefault(model, {})  # beside the model, not in it: models stay picklable
    if key not in cached:
        kinds = {UNKNOWN: 1, CONTROL: 2, BYTE: 3}
        pieces = [(p.piece, kinds.get(p.type, 0)) for p in model.pieces]
        flags = [i in key for i in range(len(pieces))]
        strip_first = model.add_dummy_prefix or model.remove_extra_whitespaces
        cached[key] = _core.SentencePieceIds(pieces, flags, model.unk_surface, strip_first, model.remove_extra_whitespaces)
    return cached[key]  # type: ignore[no-any-return]


def decode_ids(model: SentencePieceModel, ids: Iterable[int]) -> str:
    """The text of a list of ids; an id outside the vocabulary raises InvalidTokenError."""
    if (table := ids_table(model)) is not None and (text := table.decode(ids, False)) is not None:
        return text  # type: ignore[no-any-return]
    pieces = model.pieces
    names: list[str] = []
    for i in ids:
        try:
            i = operator.index(i)  # numpy ids too, as encode_to_numpy gives them
        except TypeError:
            raise InputTypeError(f"token ids must be ints, got {type(i).__name__} {i!r}") from None
        if not 0 <= i < len(pieces):
            raise InvalidTokenError(f"token id {i} is out of range (vocabulary size {len(pieces)})")
        names.append(pieces[i].piece)
    return decode_pieces(model, names)


def decode_pieces(model: SentencePieceModel, names: Iterable[str]) -> str:
    """The text of a list of piece strings (strings not in the vocabulary are copied as is)."""
    pieces = model.pieces
    strip_first = model.add_dummy_prefix or model.remove_extra_whitespaces
    out: list[str] = []
    pending = bytearray()  # the current run of byte pieces
    at_start = True  # sentencepiece's is_bos_ws: nothing written yet, and no ▁ dropped yet

    def flush() -> None:
        nonlocal at_start
        if pending:
            text = decode_byte_run(bytes(pending))
            out.append(text)
            at_start = at_start and not text
            pending.clear()

    for name in names:
        if not isinstance(name, str):
            raise InvalidTokenError(f"pieces must be str, got {type(name).__name__} {name!r}")
        i = model.piece_to_id(name)
        kind = pieces[i].type
        if kind == BYTE:
            pending.append(_BYTE_VALUES[pieces[i].piece])
            continue
        flush()
        if kind == CONTROL:
            continue
        if kind == UNKNOWN:
            text = model.unk_surface if name == pieces[i].piece else name
        else:
            if at_start and strip_first and name.startswith(SPACE_SYMBOL):
                name = name[1:]
                # with add_dummy_prefix alone only one marker is dropped
                at_start = model.remove_extra_whitespaces
            text = name.replace(SPACE_SYMBOL, " ")
        out.append(text)
        at_start = at_start and not text
    flush()
    text = "".join(out)
    if model.denormalizer is not None:
        text = model.denormalizer.normalize(text)
    return text


def decode_byte_run(data: bytes) -> str:
    """UTF-8 decoding with one U+FFFD per byte that does not begin a valid character."""
    parts: list[str] = []
    while data:
        try:
            parts.append(data.decode("utf-8"))
            break
        except UnicodeDecodeError as e:
            parts.append(data[: e.start].decode("utf-8"))
            parts.append("\ufffd" * (e.end - e.start))
            data = data[e.end :]
    return "".join(parts)
