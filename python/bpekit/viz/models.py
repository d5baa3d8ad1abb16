"""What the pictures are drawn for: a :class:`Model` (a label, the :class:`~bpekit.Encoding` that
encodes, and the :class:`~bpekit.Tokenizer` when there is one, which knows its merges and how it
was trained), loaded from an encoding name or a tokenizer file.

Files: a bpekit tokenizer (JSON), or a ``.tiktoken`` rank file with the JSON sidecar that
``Tokenizer.export_tiktoken`` writes beside it (``<file>.json``: pattern and special tokens).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from bpekit.encoding import Encoding
from bpekit.errors import DataNotFoundError, FormatError, UnknownEncodingError
from bpekit.tokenizer import Tokenizer



@dataclass(frozen=True)
class Model:
    """A tokenizer to draw: ``encoding`` encodes; ``tokenizer`` is set for trained tokenizers."""

    label: str
    encoding: Encoding
    tokenizer: Tokenizer | None = None

    @property
    def ranks(self) -> dict[bytes, int]:
        """``{token bytes: id}`` of the ordinary tokens."""
        if self.tokenizer is not None:
            return self.tokenizer.ranks
        return self.encoding._mergeable_ranks


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


def load_model(spec: str | os.PathLike[str], label: str | None = None) -> Model:
    """An encoding name (``o200k_base``) or a tokenizer file (bpekit JSON, ``.tiktoken``)."""
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
    return Model(name, (tok := Tokenizer.load(path)).encoding, tok)


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
