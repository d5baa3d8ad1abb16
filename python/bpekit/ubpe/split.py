"""The UBPE splitting pipeline: a document becomes a list of parts, each a list of ids.

Applied at fit time (separators dropped) and at encode time (separators kept as one-id parts):

1. known words, longest match first (prefix tree); the text between matches goes through 2-4;
2. break tokens cut a part; each break symbol is a separator;
3. a regex keeps only what ``re.findall`` matches (str parts only; unmatched text is dropped);
4. stop tokens cut like break tokens, after the regex;
5. every remaining symbol is mapped through the alphabet.

A separator (known word, break or stop symbol) is a finished part: later steps leave it alone.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Hashable, Sequence

from bpekit.errors import InvalidTokenError

Symbol = Hashable
Doc = str | tuple
Part = list[int]


class SplitMode(enum.Flag):
    """Which splitting steps to apply. ``NONE`` is a bit of its own: it switches every step off."""

    NONE = 1
    KNOWN_WORDS = 2
    BREAK_TOKENS = 4
    REGEX = 8
    STOP_TOKENS = 16
    FULL = KNOWN_WORDS | BREAK_TOKENS | REGEX | STOP_TOKENS


class _Separator:
    """A part that is already final: its id(s) skip the remaining steps."""

    __slots__ = ("ids",)

    def __init__(self, ids: Part) -> None:
        self.ids = ids


class WordTree:
    """Prefix tree over known words: the longest word starting at a position of a sequence."""

    _END = object()

    def __init__(self, words: dict[int, Sequence]) -> None:
        self._root: dict = {}
        for word_id, word in words.items():
            node = self._root
            for symbol in word:
                node = node.setdefault(symbol, {})
            node[self._END] = word_id

    def longest(self, doc: Sequence, start: int) -> tuple[int, int] | None:
        """``(length, word_id)`` of the longest known word at ``doc[start:]``, or None."""
        node = self._root
        found = None
        end = self._END
        for i in range(start, len(doc)):
            node = node.get(doc[i])  # type: ignore[assignment]
            if node is None:
                break
            word_id = node.get(end)
            if word_id is not None:
                found = (i - start + 1, word_id)
        return found


class SplitPipeline:
    """The configured splitting steps of one model; call it on a document."""

    def __init__(
        self,
        alphabet: dict[Symbol, int],
        known_words: dict[int, Sequence] | None,
        break_tokens: list[Symbol] | None,
        regex_str: str | None,
        stop_tokens: list[Symbol] | None,
    ) -> None:
        self.alphabet = alphabet
        self.known_words = WordTree(known_words) if known_words else None
        self.break_tokens = frozenset(break_tokens) if break_tokens else None
        self.regex = re.compile(regex_str) if regex_str else None
        self.stop_tokens = frozenset(stop_tokens) if stop_tokens else None

    def __call__(self, doc: Doc, mode: SplitMode, leave_separators: bool) -> list[Part]:
        if isinstance(doc, list):
            doc = tuple(doc)
        pieces: list = []
        if SplitMode.KNOWN_WORDS in mode and self.known_words is not None:
            tree = self.known_words
            start = i = 0
            while i < len(doc):
                match = tree.longest(doc, i)
                if match is None:
                    i += 1
                    continue
                length, word_id = match
                if start < i:
                    pieces.extend(self._rest(doc[start:i], mode, leave_separators))
                if leave_separators:
                    pieces.append(_Separator([word_id]))
                i += length
                start = i
            if start < len(doc):
                pieces.extend(self._rest(doc[start:], mode, leave_separators))
        else:
            pieces = self._rest(doc, mode, leave_separators)
        return [p.ids if isinstance(p, _Separator) else self._map(p) for p in pieces]

    def _rest(self, text: Doc, mode: SplitMode, keep: bool) -> list:
        pieces: list = [text]
        if SplitMode.BREAK_TOKENS in mode and self.break_tokens is not None:
            pieces = self._cut(pieces, self.break_tokens, keep)
        if SplitMode.REGEX in mode and self.regex is not None:
            found: list = []
            for piece in pieces:
                if isinstance(piece, str):
                    found.extend(self.regex.findall(piece))
                else:
                    found.append(piece)
            pieces = found
        if SplitMode.STOP_TOKENS in mode and self.stop_tokens is not None:
            pieces = self._cut(pieces, self.stop_tokens, keep)
        return pieces

    def _cut(self, pieces: list, cutters: frozenset, keep: bool) -> list:
        out: list = []
        for piece in pieces:
            if isinstance(piece, _Separator):
                out.append(piece)
                continue
            start = 0
            for i, symbol in enumerate(piece):
                if symbol in cutters:
                    if start < i:
                        out.append(piece[start:i])
                    if keep:
                        out.append(_Separator([self.alphabet[symbol]]))
                    start = i + 1
            if start < len(piece):
                out.append(piece[start:])
        return out

    def _map(self, piece: Doc) -> Part:
        alphabet = self.alphabet
        try:
            return [alphabet[symbol] for symbol in piece]
        except KeyError as exc:
            raise InvalidTokenError(f"symbol {exc.args[0]!r} is not in the alphabet") from None
        except TypeError as exc:  # an unhashable symbol, e.g. a list inside the document
            raise InvalidTokenError(f"unhashable symbol in the document: {exc}") from None
