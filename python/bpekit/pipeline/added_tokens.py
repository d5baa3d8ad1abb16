"""Added tokens: strings matched in the input *before* normalization and pre-tokenization, as
Hugging Face's ``AddedVocabulary`` does (formats.md §3.3).

Two passes: tokens with ``normalized: false`` are found in the raw text; each remaining part is
normalized and searched for the ``normalized: true`` tokens (whose content is normalized too).
Matching is leftmost-longest; ``single_word`` rejects a match inside a word, ``lstrip`` /
``rstrip`` absorb the whitespace beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import regex

from bpekit.errors import FormatError
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
        if tid < 0:
            raise FormatError(f"{where}: negative id {tid}")
        flags = {k: get(doc, k, bool, where) for k in ("single_word", "lstrip", "rstrip", "normalized", "special")}
        return cls(tid, get(doc, "content", str, where), **flags)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _is_word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


class AddedVocabulary:
    """The added tokens of a tokenizer and the two-pass splitter over them."""

    def __init__(self, tokens: Iterable[AddedToken], normalize: Callable[[str], str] | None = None) -> None:
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

    @staticmethod
    def _matcher(table: dict[str, AddedToken]) -> tuple[regex.Pattern[str], dict[str, AddedToken]] | None:
        if not table:
            return None
        alternatives = sorted(table, key=lambda s: (-len(s), s))  # longest first: leftmost-longest
        return regex.compile("|".join(regex.escape(s) for s in alternatives)), table

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def special_ids(self) -> frozenset[int]:
        return frozenset(t.id for t in self.tokens if t.special)

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

    @staticmethod
    def _find(text: str, matcher: Any, at_start: bool) -> list[Segment]:
        if matcher is None or not text:
            return [(text, None, at_start)] if text else []
        pattern, table = matcher
        out: list[Segment] = []
        done = 0
        for m in pattern.finditer(text):
            start, stop = m.span()
            tok = table[m.group()]
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
                out.append((text[done:start], None, at_start and done == 0))
            out.append((text[start:stop], tok.id, at_start and start == 0))
            done = stop
        if done < len(text):
            out.append((text[done:], None, at_start and done == 0))
        return out
