"""bpekit's own file: the trained byte-level model (pattern, merges, special tokens, how it was
trained), self-describing and versioned.

Ids: byte ``b`` is token ``b``; merge ``i`` makes the next new token (``256 + i`` unless an
earlier merge already spelled the same bytes, see docs/training.md); special tokens come after.
Because ids follow merge order, the ids are tiktoken-style ranks and rank-order BPE (``CoreBPE``)
encodes exactly with them.

File format (JSON, UTF-8), version 1::

    {"format": "bpekit", "version": 1, "model": "byte-level-bpe",
     "pattern": ..., "pattern_name": "o200k" | null,
     "special_tokens": {"<|endoftext|>": 2047, ...},
     "vocab_size": 2048,
     "merges": [[left id, right id], ...],
     "training": {...settings and corpus statistics...}}
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from bpekit.errors import BpekitError, FormatError, UsageError

FORMAT = "bpekit"
VERSION = 1


def to_dict(tok: Any) -> dict[str, Any]:
    """The bpekit file (v1) document of a rank model whose ids follow its merges."""
    from bpekit.tokenizer import ranks_from_merges

    if tok.encoding is None or ranks_from_merges(tok.merges) != tok.ranks:
        raise UsageError("the bpekit file holds byte-level BPE models whose ids follow merge order; "
                         "save this tokenizer with format='hf' (or 'tiktoken' for rank models)")
    return {
        "format": FORMAT,
        "version": VERSION,
        "model": "byte-level-bpe",
        "pattern": tok.pattern,
        "pattern_name": tok.pattern_name,
        "special_tokens": tok.special_tokens,
        "vocab_size": tok.vocab_size,
        "merges": [[tok.ranks[a], tok.ranks[b]] for a, b in tok.merges],
        "training": tok.training,
    }


def from_dict(cls: Any, doc: Mapping[str, Any], source: str = "<dict>") -> Any:
    """A ``cls`` (``Tokenizer``) from a bpekit file document."""
    if not isinstance(doc, Mapping) or doc.get("format") != FORMAT:
        raise FormatError(f"{source} is not a bpekit tokenizer file")
    if doc.get("version") != VERSION:
        raise FormatError(f"{source}: unsupported bpekit file version {doc.get('version')!r}")
    try:
        tokens = [bytes([i]) for i in range(256)]
        known = set(tokens)
        merges: list[tuple[bytes, bytes]] = []
        for left, right in doc["merges"]:
            if not all(isinstance(x, int) and 0 <= x < len(tokens) for x in (left, right)):
                raise FormatError(f"{source}: merge {len(merges)} refers to unknown ids {[left, right]}")
            pair = (tokens[left], tokens[right])
            merges.append(pair)
            if pair[0] + pair[1] not in known:
                known.add(pair[0] + pair[1])
                tokens.append(pair[0] + pair[1])
        tok = cls(
            pattern=doc["pattern"],
            merges=merges,
            special_tokens=doc.get("special_tokens", {}),
            training=doc.get("training"),
            pattern_name=doc.get("pattern_name"),
        )
    except BpekitError:
        raise
    except (KeyError, TypeError, ValueError, OverflowError) as exc:  # OverflowError: int(Infinity)
        raise FormatError(f"{source}: malformed bpekit tokenizer file ({exc!r})") from None
    if doc.get("vocab_size") not in (None, tok.vocab_size):
        raise FormatError(f"{source}: vocab_size is {doc['vocab_size']}, the merges give {tok.vocab_size}")
    return tok


def load(cls: Any, path: str | os.PathLike[str]) -> Any:
    """A ``cls`` (``Tokenizer``) from a bpekit file."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deep
        raise FormatError(f"{os.fspath(path)} is not JSON ({exc})") from None
    return from_dict(cls, doc, os.fspath(path))
