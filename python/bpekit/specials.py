"""The checks on special tokens that a caller passes in, shared by every entry point.

``Encoding(special_tokens=)``, ``Tokenizer(special_tokens=)``, ``.tiktoken`` loading, the trainer
and minbpe check them here, so one mistake raises one error class wherever it is made: a wrong
*type* (not a dict or list, a key that is not a ``str``, an id that is not an ``int``, one string
where a list goes) is an :class:`InputTypeError`; a wrong *value* (an empty token, a lone
surrogate, an id outside 0..2**32, a repeated token) is a :class:`VocabError`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from bpekit.errors import InputTypeError, VocabError

MAX_ID = 2**32  # ids are unsigned 32-bit everywhere in the core


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _check_text(text: Any, where: str) -> None:
    if not isinstance(text, str):
        raise InputTypeError(f"{where}: a special token must be a str, got {type(text).__name__} {_short(text)}")
    if not text:
        raise VocabError(f"{where}: a special token is the empty string")
    if not text.isascii():  # (CPython keeps the flag: no scan for ASCII tokens)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise VocabError(
                f"{where}: special token {_short(text)} holds a lone surrogate at position {exc.start}; "
                "it has no UTF-8 bytes"
            ) from None


def check_map(special_tokens: Any, where: str = "special_tokens") -> dict[str, int]:
    """``special_tokens`` as a ``dict`` of non-empty UTF-8 strings to ids in 0..2**32."""
    if not isinstance(special_tokens, Mapping):
        raise InputTypeError(f"{where} must be a dict of str -> int, got {type(special_tokens).__name__}")
    for text, idx in special_tokens.items():
        _check_text(text, where)
        if not isinstance(idx, int) or isinstance(idx, bool):  # (300.9 would become 300, True 1)
            raise InputTypeError(f"{where}: the id of {_short(text)} must be an int, got {type(idx).__name__} {idx!r}")
        if not 0 <= idx < MAX_ID:
            raise VocabError(f"{where}: the id of {_short(text)} is {idx}, outside 0..2**32")
    return dict(special_tokens)


def check_list(special_tokens: Any, where: str = "special_tokens") -> tuple[str, ...]:
    """``special_tokens`` as a tuple of distinct non-empty UTF-8 strings (a list, not one string)."""
    if isinstance(special_tokens, (str, bytes)):
        raise InputTypeError(f"{where} must be a sequence of strings, not one {type(special_tokens).__name__}")
    if isinstance(special_tokens, (Mapping, AbstractSet)) or not isinstance(special_tokens, Iterable):
        # (a set's order changes from run to run, and the order gives the ids)
        raise InputTypeError(f"{where} must be a sequence of strings, got {type(special_tokens).__name__}")
    texts = tuple(special_tokens)
    for text in texts:
        _check_text(text, where)
    if len(set(texts)) != len(texts):
        twice = sorted(t for t, n in Counter(texts).items() if n > 1)
        raise VocabError(f"{where}: special tokens must be distinct, {_short(twice)} repeated")
    return texts
