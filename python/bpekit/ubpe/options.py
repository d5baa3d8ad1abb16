"""Checks and normal forms of UBPE's constructor arguments (alphabet, known words, separators).

Each function returns the normal form or raises a bpekit error naming what is wrong, with the
built-in base ubpe 0.3.0 uses for the same mistake (TypeError or ValueError).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Iterable

from bpekit.errors import EncodeError, InputTypeError, PatternError, UsageError, VocabError

Symbol = Hashable


def check_alphabet(alphabet: object) -> dict[Symbol, int]:
    """A dict ``symbol -> id`` with ids exactly ``0..len-1``; other iterables number in order."""
    if alphabet is None:
        raise InputTypeError("`alphabet` must be specified, or the model loaded with loads()")
    if isinstance(alphabet, dict):
        mapping = dict(alphabet)
        ids = list(mapping.values())
        if any(type(i) is not int for i in ids):
            raise VocabError("`alphabet` ids must be ints")
    elif isinstance(alphabet, Iterable):
        symbols = list(alphabet)
        try:
            mapping = {symbol: i for i, symbol in enumerate(symbols)}
        except TypeError as exc:
            raise InputTypeError(f"alphabet symbols must be hashable: {exc}") from None
        if len(mapping) != len(symbols):
            dup = next(s for s, n in Counter(symbols).items() if n > 1)
            raise VocabError(f"`alphabet` lists the symbol {dup!r} twice")
        ids = list(mapping.values())
    else:
        raise InputTypeError(
            f"`alphabet` must be a dict or an iterable of symbols, not {type(alphabet).__name__}"
        )
    if not mapping:
        raise VocabError("`alphabet` must be non-empty")
    kinds = {type(symbol) for symbol in mapping}
    if len(kinds) > 1:
        names = ", ".join(sorted(k.__name__ for k in kinds))
        raise InputTypeError(f"elements in `alphabet` must have the same type, got {names}")
    if sorted(ids) != list(range(len(ids))):
        raise VocabError(
            f"values in `alphabet` should form the sequence 0..{len(ids) - 1}, "
            f"got {sorted(ids)[:8]}..."
        )
    return mapping


def check_known_words(
    known_words: object, alphabet: dict[Symbol, int]
) -> dict[int, str | tuple] | None:
    """Known words as ``id -> word`` with ids ``A..A+K-1`` (A = alphabet size), or None.

    A list numbers the words in order. A dict may map ``word -> id`` (like the alphabet) or
    ``id -> word`` (like a dump); either way the ids must be exactly ``A..A+K-1``.
    """
    if known_words is None:
        return None
    if isinstance(known_words, str) or not isinstance(known_words, Iterable):
        raise InputTypeError(
            f"`known_words` must be a list or dict of words, not {type(known_words).__name__}"
        )
    if not known_words:  # type: ignore[truthy-bool]
        return None
    first = next(iter(alphabet))
    if not isinstance(first, (str, tuple)):
        raise InputTypeError(
            f"known words need an alphabet of str or tuple symbols, not {type(first).__name__}"
        )
    size = len(alphabet)
    if isinstance(known_words, dict):
        items = list(known_words.items())
        by_id = all(type(k) is int for k, _ in items)
        pairs = items if by_id else [(i, w) for w, i in items]
        bad = next((i for i, _ in pairs if type(i) is not int), None)
        if bad is not None:
            raise InputTypeError(
                "`known_words` as a dict must map every word to an int id, or every int id to a "
                f"word; got the id {bad!r} ({type(bad).__name__})"
            )
        if sorted(i for i, _ in pairs) != list(range(size, size + len(pairs))):
            raise VocabError(
                f"known word ids must be exactly {size}..{size + len(pairs) - 1} "
                "(they follow the alphabet)"
            )
        pairs.sort(key=lambda item: item[0])
    else:
        pairs = list(enumerate(known_words, start=size))
    words: dict[int, str | tuple] = {}
    for word_id, word in pairs:
        if isinstance(word, list):
            word = tuple(word)
        if not isinstance(word, (str, tuple)):
            raise InputTypeError(f"a known word must be a str or a sequence, got {word!r}")
        if len(word) == 0:
            raise VocabError("a known word must not be empty")
        words[word_id] = word
    if len(set(words.values())) != len(words):
        raise VocabError("`known_words` lists a word twice")
    return words


def check_separators(name: str, symbols: object, alphabet: dict[Symbol, int]) -> list | None:
    """Break or stop symbols: a str is split into characters, symbols outside the alphabet
    are dropped, and nothing left means None. Order is kept (duplicates removed)."""
    if symbols is None:
        return None
    if not isinstance(symbols, Iterable):
        raise InputTypeError(f"`{name}` must be a str or an iterable of symbols")
    try:
        kept = [s for s in dict.fromkeys(symbols) if s in alphabet]
    except TypeError as exc:
        raise InputTypeError(f"`{name}` symbols must be hashable: {exc}") from None
    return kept or None


def check_regex(regex_str: object) -> str | None:
    """A non-empty pattern for ``re.findall`` (at most one group), or None."""
    if regex_str is None or regex_str == "":
        return None
    if not isinstance(regex_str, str):
        raise InputTypeError(f"`regex_str` must be a str, not {type(regex_str).__name__}")
    try:
        compiled = re.compile(regex_str)
    except re.error as exc:
        raise PatternError(f"`regex_str` {regex_str!r} is not a valid pattern: {exc}") from None
    if compiled.groups > 1:
        raise PatternError(
            f"`regex_str` {regex_str!r} has {compiled.groups} groups; re.findall would return "
            "tuples of groups, which are not symbols (use (?:...) for grouping)"
        )
    return regex_str


def check_positive(name: str, value: object) -> int:
    """An int >= 1 (bool is refused)."""
    if type(value) is not int:
        raise InputTypeError(f"`{name}` must be an int, not {type(value).__name__}")
    if value < 1:
        raise UsageError(f"`{name}` should be greater than 0, got {value}")
    return value


def check_document(doc: object, allowed: tuple[type, ...], where: str) -> None:
    """A document must be one of ``allowed`` (str, list and, for classic models, tuple)."""
    if not isinstance(doc, allowed):
        names = " or ".join(t.__name__ for t in allowed)
        raise EncodeError(f"{where} can only be a {names}, not {type(doc).__name__}")
