"""Prefix tree over id tuples: every vocabulary entry that is a prefix of a word's suffix.

This is the lookup behind universal encoding (ubpe's ``SSSTree``): alphabet ids are inserted as
one-element keys, then every token's expansion. A query lists the matches shortest first as
``(length, token_id)``; a key inserted twice keeps the later id.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

_VALUE = -1  # ids are >= 0, so this key of a node's dict holds the node's token id


class PrefixTree:
    """Maps id tuples to token ids; answers "which keys start ``word[start:]``"."""

    def __init__(self, entries: Iterable[tuple[Sequence[int], int]] = ()) -> None:
        self._root: dict[int, dict] = {}
        for key, token in entries:
            self.insert(key, token)

    def insert(self, key: Sequence[int], token: int) -> None:
        node = self._root
        for symbol in key:
            node = node.setdefault(symbol, {})
        node[_VALUE] = token  # type: ignore[assignment]

    def matches(self, word: Sequence[int], start: int) -> list[tuple[int, int]]:
        """Every ``(length, token)`` whose key is ``word[start:start + length]``, shortest first."""
        found = []
        node = self._root
        for i in range(start, len(word)):
            child = node.get(word[i])
            if child is None:
                break
            node = child
            token = node.get(_VALUE)
            if token is not None:
                found.append((i - start + 1, token))
        return found  # type: ignore[return-value]
