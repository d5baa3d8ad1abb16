"""``Tokenizer``: a byte-level BPE model (pattern, merges, special tokens, how it was trained) that
encodes with the Rust core and saves to a self-describing, versioned file.

Ids: byte ``b`` is token ``b``; merge ``i`` makes the next new token (``256 + i`` unless an earlier
merge already spelled the same bytes, see docs/training.md); special tokens come after. Because
ids follow merge order, the ids are tiktoken-style ranks and rank-order BPE (``CoreBPE``) encodes
exactly with them.

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
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Literal


from bpekit.encoding import Encoding
from bpekit.atomicfile import atomic_write
from bpekit.errors import BpekitError, FormatError, InvalidTokenError, VocabError
from bpekit.tokenizer_export import hf_text, tiktoken_sidecar, tiktoken_text

FORMAT = "bpekit"
VERSION = 1

Pair = tuple[bytes, bytes]
Specials = Literal["all"] | Collection[str]


def ranks_from_merges(merges: Iterable[Pair]) -> dict[bytes, int]:
    """Byte tokens 0..255, then each merge's bytes in order (a repeated spelling keeps its id)."""
    ranks = {bytes([i]): i for i in range(256)}
    for n, (left, right) in enumerate(merges):
        if left not in ranks or right not in ranks:
            raise VocabError(f"merge {n} ({left!r}, {right!r}) uses a token that no earlier merge made")
        ranks.setdefault(left + right, len(ranks))
    return ranks


class Tokenizer:
    """A trained byte-level BPE tokenizer."""

    def __init__(
        self,
        *,
        pattern: str,
        merges: Sequence[Pair],
        special_tokens: Mapping[str, int] | Sequence[str] = (),
        training: Mapping[str, Any] | None = None,
        pattern_name: str | None = None,
    ) -> None:
        if not isinstance(pattern, str):
            raise FormatError(f"pattern must be a str, got {type(pattern).__name__}")
        self.pattern = pattern
        self.pattern_name = pattern_name
        self.merges: list[Pair] = [(bytes(a), bytes(b)) for a, b in merges]
        self.ranks = ranks_from_merges(self.merges)
        if isinstance(special_tokens, Mapping):
            specials = {str(s): int(i) for s, i in special_tokens.items()}
        else:
            if isinstance(special_tokens, str):
                raise VocabError("special_tokens must be a sequence of strings, not one string")
            specials = {s: len(self.ranks) + i for i, s in enumerate(special_tokens)}
            if len(specials) != len(special_tokens):
                raise VocabError(f"special tokens must be distinct: {list(special_tokens)!r}")
        clash = [s for s, i in specials.items() if i < len(self.ranks) or not s]
        if clash:
            raise VocabError(f"special tokens {clash!r} are empty or have the id of an ordinary token")
        self.special_tokens = specials
        self.training: dict[str, Any] = dict(training or {})
        self.encoding = Encoding(
            "bpekit-trained", pat_str=pattern, mergeable_ranks=self.ranks, special_tokens=specials
        )
        self._decoder = {i: t for t, i in self.ranks.items()}
        self._special_ids = {i: s for s, i in specials.items()}

    def __repr__(self) -> str:
        name = self.pattern_name or "custom pattern"
        return f"Tokenizer(vocab_size={self.vocab_size}, pattern={name}, special_tokens={len(self.special_tokens)})"

    # ---- vocabulary ----

    @property
    def vocab_size(self) -> int:
        """Number of tokens: byte tokens, merged tokens and special tokens."""
        return len(self.ranks) + len(self.special_tokens)

    @property
    def n_vocab(self) -> int:
        """Highest id + 1 (tiktoken's name)."""
        return max([len(self.ranks) - 1, *self.special_tokens.values()]) + 1

    def token_to_id(self, token: str | bytes) -> int | None:
        """The id of a special token (``str``) or of ordinary token bytes; ``None`` if absent."""
        if isinstance(token, str):
            if token in self.special_tokens:
                return self.special_tokens[token]
            token = token.encode("utf-8")
        return self.ranks.get(bytes(token))

    def id_to_token(self, token_id: int) -> bytes | str:
        """The bytes of an ordinary token, or the string of a special token."""
        if token_id in self._decoder:
            return self._decoder[token_id]
        if token_id in self._special_ids:
            return self._special_ids[token_id]
        raise InvalidTokenError(f"Invalid token for decoding: {token_id}")

    # ---- encoding ----

    def encode(
        self,
        text: str,
        *,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
    ) -> list[int]:
        """Token ids of ``text``; special-token policy as tiktoken's ``Encoding.encode``."""
        return self.encoding.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids with no special-token handling (special strings are plain text)."""
        return self.encoding.encode_ordinary(text)

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: int = 0,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
    ) -> list[list[int]]:
        """``encode`` of each text, in parallel in the core (``num_threads`` 0 = every core)."""
        return self.encoding.encode_batch(
            list(texts), num_threads=num_threads, allowed_special=allowed_special, disallowed_special=disallowed_special
        )

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        return self.encoding.decode_bytes(tokens)

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        return self.encoding.decode(tokens, errors)

    # ---- files ----

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "model": "byte-level-bpe",
            "pattern": self.pattern,
            "pattern_name": self.pattern_name,
            "special_tokens": self.special_tokens,
            "vocab_size": self.vocab_size,
            "merges": [[self.ranks[a], self.ranks[b]] for a, b in self.merges],
            "training": self.training,
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the bpekit file (JSON), atomically."""
        atomic_write(path, (json.dumps(self.to_dict(), ensure_ascii=False, indent=1) + "\n").encode())

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], source: str = "<dict>") -> Tokenizer:
        if not isinstance(doc, Mapping) or doc.get("format") != FORMAT:
            raise FormatError(f"{source} is not a bpekit tokenizer file")
        if doc.get("version") != VERSION:
            raise FormatError(f"{source}: unsupported bpekit file version {doc.get('version')!r}")
        try:
            tokens = [bytes([i]) for i in range(256)]
            known = set(tokens)
            merges: list[Pair] = []
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

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Tokenizer:
        with open(path, "rb") as f:
            data = f.read()
        try:
            doc = json.loads(data)
        except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deep
            raise FormatError(f"{os.fspath(path)} is not JSON ({exc})") from None
        return cls.from_dict(doc, os.fspath(path))

    def export_tiktoken(self, path: str | os.PathLike[str]) -> str:
        """Writes a ``.tiktoken`` rank file and, beside it, ``<path>.json`` with the pattern and the
        special tokens. Returns the sidecar's path."""
        sidecar = os.fspath(path) + ".json"
        atomic_write(path, tiktoken_text(self.ranks))
        atomic_write(sidecar, tiktoken_sidecar(self.pattern, self.special_tokens, self.n_vocab))
        return sidecar

    def export_hf(self, path: str | os.PathLike[str]) -> None:
        """Writes a Hugging Face ``tokenizer.json`` that ``tokenizers.Tokenizer.from_file`` loads
        and that encodes exactly as this tokenizer does (special tokens always matched)."""
        atomic_write(path, hf_text(self.ranks, self.special_tokens, self.pattern))
