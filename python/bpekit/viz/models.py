"""What the pictures are drawn for: a :class:`Model` (a label, the :class:`~bpekit.Encoding` that
encodes, and the :class:`~bpekit.Tokenizer` when there is one, which knows its merges and how it
was trained), loaded from an encoding name or a tokenizer file.

Files: a ``.tiktoken`` rank file with the JSON sidecar that ``Tokenizer.export_tiktoken`` writes
beside it (``<file>.json``: pattern and special tokens), or any file ``Tokenizer.from_file`` reads
(a bpekit tokenizer, ``tokenizer.json``, GGUF, a SentencePiece ``.model``...).

A pipeline tokenizer (``tokenizer.json``, GGUF, SentencePiece) has no ``Encoding``: it is drawn
through its ``Tokenizer`` (its ids, and the text each token spells), and what needs byte-level
ranks (the merge forest, the training curve) says so with a ``UsageError``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from bpekit.encoding import Encoding
from bpekit.errors import DataNotFoundError, FormatError, InputTypeError, UnknownEncodingError, UsageError
from bpekit.pipeline.byte_level import to_bytes
from bpekit.pipeline.decoders import ByteLevel
from bpekit.tokenizer import Tokenizer

RANK_KINDS = "an encoding name, a .tiktoken file, a bpekit tokenizer"
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")  # a byte-fallback token (SentencePiece, Llama)


@dataclass(frozen=True)
class Model:
    """A tokenizer to draw: ``encoding`` encodes (``None`` for a pipeline tokenizer: a
    ``tokenizer.json``, GGUF or SentencePiece file); ``tokenizer`` is set when a ``Tokenizer``
    was given or loaded (it knows its merges and how it was trained)."""

    label: str
    encoding: Encoding | None
    tokenizer: Tokenizer | None = None

    @property
    def kind(self) -> str:
        """What the tokenizer is, in words (for tables and error messages)."""
        if self.encoding is None:
            source = getattr(self.tokenizer, "source_format", None)
            return "pipeline tokenizer" + (f" (read from a {source} file)" if source else "")
        return "encoding" if self.tokenizer is None else "bpekit tokenizer"

    def need_ranks(self, what: str) -> Encoding:
        """The encoding, or a ``UsageError`` saying that ``what`` needs one."""
        if self.encoding is None:
            raise UsageError(f"{what} needs a rank-based tokenizer ({RANK_KINDS}); got {self.label!r}, a {self.kind}")
        return self.encoding

    @property
    def ranks(self) -> dict[bytes, int]:
        """``{token bytes: id}`` of the ordinary tokens (rank-based tokenizers only)."""
        enc = self.need_ranks("token ranks")
        if self.tokenizer is not None:
            return self.tokenizer.ranks
        return enc._mergeable_ranks

    @cached_property
    def special_ids(self) -> frozenset[int]:
        """The ids drawn as special tokens."""
        if self.encoding is not None:
            return frozenset(self.encoding._special_tokens.values())
        tok = self._pipeline
        ids = set(tok.special_tokens.values())
        spm = getattr(tok.model, "spm", None)  # a SentencePiece model: its UNKNOWN and CONTROL pieces
        if spm is not None:
            ids.update(i for i, p in enumerate(spm.model.pieces) if p.type in (2, 3))
        return frozenset(ids)

    @cached_property
    def vocab(self) -> list[bytes]:
        """The bytes of every ordinary token."""
        if self.encoding is not None:
            return list(self.ranks)
        tok = self._pipeline  # its ids: the model's and the added tokens' (not range(n_vocab): ids may be sparse)
        ids = {*tok.added_tokens.by_id, *getattr(tok.model, "vocab_r", range(tok.model.get_vocab_size()))}
        return [self.token_bytes(i) for i in sorted(ids - self.special_ids)]

    @property
    def _pipeline(self) -> Tokenizer:
        assert self.tokenizer is not None  # (a Model has an encoding or a tokenizer)
        return self.tokenizer

    def encode(self, text: str) -> list[int]:
        """The ids of ``text``, special (and added) tokens matched."""
        if self.encoding is not None:
            return self.encoding.encode(text, allowed_special="all")
        return self._pipeline.encode(text)

    def counts(self, texts: list[str]) -> list[int]:
        """The number of tokens of each text, special-token strings encoded as text."""
        if self.encoding is not None:
            return [len(ids) for ids in self.encoding.encode_ordinary_batch(texts, num_threads=0)]
        from bpekit.tokenizer import ordinary_pipeline

        return ordinary_pipeline(self._pipeline).count_batch(texts)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes a token spells (a pipeline's token string read back: the byte alphabet of
        a ByteLevel decoder, ``▁`` as a space, ``<0xNN>`` as that byte)."""
        if self.encoding is not None:
            return self.encoding.decode_single_token_bytes(token_id)
        tok = self._pipeline
        added = tok.added_tokens.strings.get(token_id)
        if added is not None:
            return added.encode("utf-8")
        token = str(tok.id_to_token(token_id))
        if isinstance(tok.decoder, ByteLevel) and (data := to_bytes(token)) is not None:
            return data
        if m := _BYTE_PIECE.fullmatch(token):
            return bytes([int(m.group(1), 16)])
        return token.replace("\u2581", " ").encode("utf-8")


def as_model(obj: object, label: str | None = None) -> Model:
    """A :class:`Model` from a ``Model``, ``Tokenizer``, ``Encoding``, encoding name or file path."""
    if isinstance(obj, Model):
        return obj if label is None else Model(label, obj.encoding, obj.tokenizer)
    if isinstance(obj, Tokenizer):
        return Model(label or "tokenizer", obj.encoding, obj)
    if isinstance(obj, Encoding):
        return Model(label or obj.name, obj)
    if isinstance(obj, (str, os.PathLike)):
        return load_model(obj, label)
    raise UnknownEncodingError(f"expected an encoding name, a tokenizer file or a Tokenizer, got {type(obj).__name__}")


def as_models(objs: object) -> list[Model]:
    """:func:`as_model` of each item of a list of tokenizers; one tokenizer (a name, a path, an
    ``Encoding``, a ``Tokenizer``, a ``Model``) is a list of one."""
    if isinstance(objs, (str, os.PathLike, Encoding, Tokenizer, Model)):
        return [as_model(objs)]
    if isinstance(objs, (bytes, Mapping)) or not isinstance(objs, Iterable):
        raise InputTypeError(f"expected a tokenizer or a list of tokenizers, got {type(objs).__name__}")
    return [as_model(m) for m in objs]


def check_texts(texts: object, what: str = "texts") -> dict[str, str]:
    """``texts`` as a dict, or an ``InputTypeError`` unless it maps str labels to str texts."""
    if not isinstance(texts, Mapping):
        raise InputTypeError(f"{what} must be a mapping {{label: text}}, got {type(texts).__name__}")
    for label, text in texts.items():
        if not isinstance(label, str) or not isinstance(text, str):
            raise InputTypeError(f"{what} must map str labels to str texts, got {type(label).__name__} "
                                 f"{label!r} -> {type(text).__name__}")
    return dict(texts)


def load_model(spec: str | os.PathLike[str], label: str | None = None) -> Model:
    """An encoding name (``o200k_base``) or a tokenizer file (``.tiktoken`` with its sidecar, or
    any file ``Tokenizer.from_file`` reads: bpekit JSON, ``tokenizer.json``, GGUF, SentencePiece)."""
    from bpekit.registry import get_encoding, list_encoding_names

    text = os.fspath(spec)
    if text in list_encoding_names():
        return Model(label or text, get_encoding(text))
    path = Path(text)
    if not path.exists():
        raise DataNotFoundError(
            f"{text!r} is neither an encoding name ({', '.join(list_encoding_names())}) nor an existing file"
        )
    if path.is_dir():
        raise FormatError(f"{text} is a directory, not a tokenizer file")
    name = label or path.name
    if path.suffix == ".tiktoken":
        return Model(name, _tiktoken_file(path))
    from bpekit.formats.detect import detect

    try:
        detect(path)
    except FormatError:  # no known format: the bpekit loader says what is wrong (e.g. not JSON)
        tok = Tokenizer.load(path)
    else:
        tok = Tokenizer.from_file(path)
    return Model(name, tok.encoding, tok)


def _tiktoken_file(path: Path) -> Encoding:
    from bpekit.load import load_tiktoken_bpe

    sidecar = Path(str(path) + ".json")
    if not sidecar.is_file():
        raise DataNotFoundError(f"{path} has no sidecar {sidecar.name} (pattern and special tokens)")
    try:
        doc = json.loads(sidecar.read_text(encoding="utf-8"))
        pattern, specials = doc["pat_str"], dict(doc.get("special_tokens", {}))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise FormatError(f"{sidecar} is not a tiktoken sidecar ({exc!r})") from None
    return Encoding(path.stem, pat_str=pattern, mergeable_ranks=load_tiktoken_bpe(path), special_tokens=specials)
