"""Added tokens: strings matched in the input *before* normalization and pre-tokenization, as
Hugging Face's ``AddedVocabulary`` does (formats.md §3.3).

Two passes: tokens with ``normalized: false`` are found in the raw text; each remaining part is
normalized and searched for the ``normalized: true`` tokens (whose content is normalized too).
Matching is leftmost-longest; ``single_word`` rejects a match inside a word, ``lstrip`` /
``rstrip`` absorb the whitespace beside it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import regex

from bpekit import _core
from bpekit.errors import FormatError
from bpekit.pipeline.aligned import Aligned
from bpekit.pipeline.base import get
from bpekit.pipeline.normalizers import WHITESPACE

# (text, id or None, at the start of the input)
Segment = tuple[str, "int | None", bool]


@dataclass(frozen=True)
class AddedToken:
    id: int
    content: str
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = False
    special: bool = True

    @classmethod
    def from_json(cls, doc: Any, where: str) -> AddedToken:
        if not isinstance(doc, Mapping):
            raise FormatError(f"{where}: an added token is a JSON object, got {type(doc).__name__}")
        tid = get(doc, "id", int, where)
        if not 0 <= tid < 2**32:
            raise FormatError(f"{where}: id {str(tid)[:40]} is not in [0, 2**32)" if tid >= 0 else f"{where}: negative id {tid}")
        flags = {k: get(doc, k, bool, where) for k in ("single_word", "lstrip", "rstrip", "normalized", "special")}
        return cls(tid, get(doc, "content", str, where), **flags)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _is_word_char(c: str) -> bool:
    """The ``regex`` crate's ``\\w``, which Hugging Face tests around a ``single_word`` token
    (alphabetic, marks, decimal digits, connector punctuation: ``str.isalnum`` differs on marks,
    ``_``-like connectors and numbers such as ``²``); lone surrogates are none."""
    return not "\ud800" <= c <= "\udfff" and _core.is_word_char(c)  # type: ignore[no-any-return]


class _Matcher:
    """The added tokens' literals, found leftmost-longest: in Rust (Aho-Corasick), or with the
    equivalent ``regex`` alternation (longest first) for text that is not valid UTF-8 (lone
    surrogates)."""

    def __init__(self, literals: list[str], table: dict[str, AddedToken]) -> None:
        self.literals, self.table = literals, table
        tokens = [table[s] for s in literals]
        self.fast = _core.LiteralMatcher(literals, [(t.id, t.lstrip, t.rstrip) for t in tokens])
        # whether the Rust matcher cuts texts as ``AddedVocabulary._find`` does (it does not
        # check ``single_word``)
        self.plain = not any(t.single_word for t in tokens)

    @functools.cached_property
    def pattern(self) -> regex.Pattern[str]:
        return regex.compile("|".join(regex.escape(s) for s in self.literals))

    def __getstate__(self) -> dict[str, Any]:
        return {"literals": self.literals, "table": self.table}  # the Rust matcher is rebuilt

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["literals"], state["table"])  # type: ignore[misc]

    def find(self, text: str) -> list[tuple[int, int, AddedToken]]:
        """``(start, end, token)`` of each match, left to right (most texts: none)."""
        try:
            found = self.fast.find(text)
        except UnicodeEncodeError:
            return [(m.start(), m.end(), self.table[m.group()]) for m in self.pattern.finditer(text)]
        if not found:
            return []
        literals, table = self.literals, self.table
        return [(start, stop, table[literals[index]]) for start, stop, index in found]


class AddedVocabulary:
    """The added tokens of a tokenizer and the two-pass splitter over them."""

    def __init__(self, tokens: Iterable[AddedToken], normalize: Callable[[str], str] | None = None) -> None:
        tokens = list(tokens)
        for t in tokens:
            if type(t.id) is not int or not 0 <= t.id < 2**32:  # (ids are 32-bit, as in Hugging Face)
                raise FormatError(f"added token {t.content!r:.40}: id {str(t.id)[:40]} is not an int in [0, 2**32)")
        self.tokens = sorted(tokens, key=lambda t: t.id)
        self.by_content: dict[str, AddedToken] = {}
        self.by_id: dict[int, AddedToken] = {}
        for t in self.tokens:
            if t.id in self.by_id and self.by_id[t.id].content != t.content:
                raise FormatError(f"added tokens {self.by_id[t.id].content!r} and {t.content!r} share id {t.id}")
            self.by_id[t.id] = t
            if t.content:
                self.by_content[t.content] = t
        raw = [t for t in self.tokens if t.content and not t.normalized]
        norm = [t for t in self.tokens if t.content and t.normalized]
        normalize = normalize or (lambda s: s)
        # what id_to_token gives: a normalized token's normalized content (as Hugging Face)
        self.strings = {t.id: normalize(t.content) if t.normalized else t.content for t in self.tokens}
        self._raw = self._matcher({t.content: t for t in raw})
        self._norm = self._matcher({normalize(t.content): t for t in norm if normalize(t.content)})
        self._rust = not any(m is not None and not m.plain for m in (self._raw, self._norm))

    @staticmethod
    def _matcher(table: dict[str, AddedToken]) -> _Matcher | None:
        if not table:
            return None
        alternatives = sorted(table, key=lambda s: (-len(s), s))  # longest first: leftmost-longest
        return _Matcher(alternatives, table)

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def special_ids(self) -> frozenset[int]:
        return frozenset(t.id for t in self.tokens if t.special)

    @property
    def cuts_normalized(self) -> bool:
        """Whether a token is matched in normalized text (``normalized``): the text between raw
        tokens is then normalized before the model's segments are known."""
        return self._norm is not None

    def in_raw_text(self, text: str) -> bool:
        """Whether a token not matched in normalized text occurs in ``text`` (then ``text`` is cut
        into segments; else it is one)."""
        return self._raw is not None and bool(self._raw.find(text))

    @property
    def rust_matchers(self) -> tuple[Any, Any] | None:
        """The raw and normalized passes' Rust matchers (``None`` for a pass with no tokens),
        for ``PairBPE.encode_added`` and ``encode_added_batch``; ``None`` if a token is
        ``single_word`` (cut in Python)."""
        if not self._rust:
            return None
        return (self._raw.fast if self._raw else None, self._norm.fast if self._norm else None)

    def split(self, text: str, normalize: Callable[[str], str] | None) -> list[Segment]:
        """The input as added-token segments and normalized open segments."""
        out: list[Segment] = []
        for part, tid, start in self._find(text, self._raw, True):
            if tid is not None:
                out.append((part, tid, start))
                continue
            part = normalize(part) if normalize else part
            out.extend(self._find(part, self._norm, start))
        return out

    def split_aligned(self, text: Aligned, normalizer: Any) -> list[tuple[Aligned, int | None, bool]]:
        """:meth:`split` of a text that carries its input spans, normalized by ``normalizer``'s
        ``align`` (for offsets)."""
        out: list[tuple[Aligned, int | None, bool]] = []
        for s, e, tid, start in self._cut(text.text, self._raw, True):
            if tid is not None:
                out.append((text[s:e], tid, start))
                continue
            part = text[s:e]
            part = normalizer.align(part) if normalizer is not None else part
            out.extend((part[a:b], t, first) for a, b, t, first in self._cut(part.text, self._norm, start))
        return out

    @staticmethod
    def _find(text: str, matcher: Any, at_start: bool) -> list[Segment]:
        return [(text[s:e], tid, first) for s, e, tid, first in AddedVocabulary._cut(text, matcher, at_start)]

    @staticmethod
    def _cut(text: str, matcher: Any, at_start: bool) -> list[tuple[int, int, int | None, bool]]:
        """``(start, end, id or None, first)`` of each segment of ``text``."""
        if not text:
            return []
        found = matcher.find(text) if matcher is not None else None
        if not found:
            return [(0, len(text), None, at_start)]
        out: list[tuple[int, int, int | None, bool]] = []
        done = 0
        for start, stop, tok in found:
            inside_word = (start and _is_word_char(text[start - 1])) or (stop < len(text) and _is_word_char(text[stop]))
            if tok.single_word and inside_word:
                continue
            if tok.lstrip:
                s = start
                while s > 0 and text[s - 1] in WHITESPACE:
                    s -= 1
                start = max(s, done)
            if tok.rstrip:
                while stop < len(text) and text[stop] in WHITESPACE:
                    stop += 1
            if done < start:
                out.append((done, start, None, at_start and done == 0))
            out.append((start, stop, tok.id, at_start and start == 0))
            done = stop
        if done < len(text):
            out.append((done, len(text), None, at_start and done == 0))
        return out
