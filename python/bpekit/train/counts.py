"""``WordCounts``: the result of the counting phase, a table of distinct pre-tokens with 64-bit
counts that can be saved, loaded and added together (count shards of a corpus separately, add the
tables, train once with :func:`bpekit.train.train_from_counts`).

File format (``.counts``), version 1::

    bpekit-counts\\n
    {"format": "bpekit-counts", "version": 1, "pattern": ..., "special_tokens": [...],
     "words": N, "total": T, "stats": {...}, "body_bytes": B, "body_sha256": ...}\\n
    body

The header is one line of JSON; the body is B bytes of ``varint(len) word varint(count)``
records in byte order of the words, so equal tables give identical files.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from bpekit import _core
from bpekit.errors import ChecksumError, FormatError, InputTypeError, PatternError
from bpekit.patterns import resolve_pattern
from bpekit.atomicfile import atomic_write

MAGIC = b"bpekit-counts\n"
VERSION = 1
STAT_KEYS = ("bytes", "documents", "pieces", "specials", "forced_cuts")


def _word_bytes(word: object) -> bytes:
    """A word as bytes: ``str`` UTF-8 encoded, bytes-like as is (``bytes(5)`` would be five NULs)."""
    if isinstance(word, str):
        return word.encode("utf-8")
    if isinstance(word, (bytes, bytearray, memoryview)):
        return bytes(word)
    raise InputTypeError(f"a word is a str or bytes, got {type(word).__name__}")


class WordCounts:
    """Distinct pre-tokens (``bytes``) and how often each occurred, for one pattern and one set of
    special tokens (both are part of the table: tables made with different ones cannot be added)."""

    def __init__(
        self,
        pattern: str,
        special_tokens: Iterable[str] = (),
        *,
        core: Any = None,
        stats: Mapping[str, int] | None = None,
    ) -> None:
        self.pattern = resolve_pattern(pattern)  # a name ("o200k") as its regex, as the trainer has it
        self.special_tokens: tuple[str, ...] = tuple(special_tokens)
        self._core = core if core is not None else _core.WordCounts()
        self.stats: dict[str, int] = {k: int((stats or {}).get(k, 0)) for k in STAT_KEYS}

    @classmethod
    def from_dict(
        cls, counts: Mapping[bytes | str, int], pattern: str, special_tokens: Iterable[str] = ()
    ) -> WordCounts:
        """A table from ``{word: count}`` (``str`` words are UTF-8 encoded)."""
        wc = cls(pattern, special_tokens)
        for word, n in counts.items():
            data = _word_bytes(word)
            if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n < 2**64:
                raise FormatError(f"count of {word!r} must be an integer in 0..2**64, got {n!r}")
            wc._core.add_word(data, n)
        return wc

    # ---- the table ----

    def __len__(self) -> int:
        return len(self._core)

    def total(self) -> int:
        """Number of pre-tokens counted (the sum of all counts)."""
        return int(self._core.total())

    def __getitem__(self, word: bytes | str) -> int:
        return int(self._core.get(_word_bytes(word)))

    def most_common(self, n: int | None = None) -> list[tuple[bytes, int]]:
        """``(word, count)`` pairs, most frequent first, ties in byte order."""
        if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 0):
            raise InputTypeError(f"most_common takes None or an int >= 0, got {n!r}")
        return list(self._core.most_common(n))

    def to_dict(self) -> dict[bytes, int]:
        return dict(self._core.most_common(None))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WordCounts):
            return NotImplemented
        return (
            self.pattern == other.pattern
            and self.special_tokens == other.special_tokens
            and bool(self._core == other._core)
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"WordCounts({len(self):,} words, {self.total():,} pre-tokens)"

    # ---- adding ----

    def _check_compatible(self, other: WordCounts) -> None:
        if not isinstance(other, WordCounts):
            raise FormatError(f"can only add WordCounts to WordCounts, not {type(other).__name__}")
        if other.pattern != self.pattern:
            raise PatternError("cannot add word counts made with different pre-tokenizer patterns")
        if other.special_tokens != self.special_tokens:
            raise PatternError(
                f"cannot add word counts made with different special tokens "
                f"({list(self.special_tokens)!r} vs {list(other.special_tokens)!r})"
            )

    def __add__(self, other: WordCounts) -> WordCounts:
        self._check_compatible(other)
        out = WordCounts(self.pattern, self.special_tokens, core=self._core.copy(), stats=self.stats)
        out += other
        return out

    def __iadd__(self, other: WordCounts) -> WordCounts:
        self._check_compatible(other)
        self._core.update(other._core)
        for k in STAT_KEYS:
            self.stats[k] += other.stats[k]
        return self

    # ---- files ----

    def to_bytes(self) -> bytes:
        body = self._core.to_bytes()
        header = {
            "format": "bpekit-counts",
            "version": VERSION,
            "pattern": self.pattern,
            "special_tokens": list(self.special_tokens),
            "words": len(self),
            "total": self.total(),
            "stats": self.stats,
            "body_bytes": len(body),
            "body_sha256": hashlib.sha256(body).hexdigest(),
        }
        return MAGIC + json.dumps(header, ensure_ascii=True).encode() + b"\n" + body

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "<bytes>") -> WordCounts:
        if not data.startswith(MAGIC):
            raise FormatError(f"{source} is not a bpekit word-counts file (bad magic line)")
        end = data.find(b"\n", len(MAGIC))
        try:
            header = json.loads(data[len(MAGIC) : end])
        except ValueError as exc:
            raise FormatError(f"{source}: the header is not valid JSON ({exc})") from None
        if end < 0 or not isinstance(header, dict) or header.get("format") != "bpekit-counts":
            raise FormatError(f"{source}: missing or malformed header")
        if header.get("version") != VERSION:
            raise FormatError(f"{source}: unsupported word-counts version {header.get('version')!r}")
        body = data[end + 1 :]
        if len(body) != header.get("body_bytes"):
            raise FormatError(f"{source}: truncated ({len(body)} of {header.get('body_bytes')} body bytes)")
        if hashlib.sha256(body).hexdigest() != header.get("body_sha256"):
            raise ChecksumError(f"{source}: the body does not match its sha256")
        core = _core.WordCounts.from_bytes(body)
        wc = cls(header["pattern"], header["special_tokens"], core=core, stats=header.get("stats"))
        if len(wc) != header.get("words"):
            raise FormatError(f"{source}: {len(wc)} words, the header says {header.get('words')}")
        return wc

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the table (atomically: a reader never sees a half-written file)."""
        atomic_write(path, self.to_bytes())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> WordCounts:
        with open(path, "rb") as f:
            return cls.from_bytes(f.read(), os.fspath(path))
