"""Pre-tokenization: split text into pieces with a tiktoken-style regex, using the `regex` module.

The pieces are the non-overlapping leftmost matches, left to right (what ``findall`` would return
with no groups); empty matches are skipped and text that no alternative matches is dropped (every
tiktoken pattern matches every character, so nothing is dropped for them).

One engine difference is repaired: tiktoken compiles patterns with Rust's fancy-regex, where ``$``
means end of text, while ``regex`` (like ``re``) also lets ``$`` match before a final ``\\n``.
Every ``$`` outside a character class is therefore rewritten to ``\\Z`` before compiling.
"""

from __future__ import annotations

from functools import lru_cache

import regex

from bpekit.errors import PatternError


def rewrite_dollar(pattern: str) -> str:
    """``pattern`` with each anchor ``$`` (not escaped, not in ``[...]``) written as ``\\Z``."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":  # an escape: copy it and the escaped character unchanged
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            # a ']' right after '[' or '[^' is a literal member, not the end of the class
            j = i + 1
            if pattern[j : j + 1] == "^":
                j += 1
            if pattern[j : j + 1] == "]":
                out.append(pattern[i : j + 1])
                i = j + 1
                continue
        elif c == "$":
            out.append(r"\Z")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


@lru_cache(maxsize=64)
def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """Compile a tiktoken pattern with end-of-text ``$``; a bad pattern raises PatternError."""
    if not isinstance(pattern, str):
        raise PatternError(f"pattern must be a str, got {type(pattern).__name__}")
    try:
        return regex.compile(rewrite_dollar(pattern))
    except regex.error as exc:
        raise PatternError(f"invalid pre-tokenizer pattern {pattern!r}: {exc}") from exc


def split(pattern: str, text: str) -> list[str]:
    """The pieces of ``text``: the non-empty leftmost matches of ``pattern``, in order."""
    return [m.group() for m in compile_pattern(pattern).finditer(text) if m.end() > m.start()]
