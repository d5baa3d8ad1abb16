"""Special tokens: finding the next allowed one in a text, and tiktoken's disallowed-special check.

Finding (what an encoder does between ordinary chunks): take the leftmost occurrence of any
special string at or after ``start``. Of the specials that start there, the longest allowed one
wins. If none of them is allowed, the search goes on from one character further, so a disallowed
special is later encoded as ordinary text. (tiktoken leaves the choice between overlapping
specials to the order of a regex alternation; longest-first is the deterministic rule bpekit uses.)

Checking: before encoding, tiktoken searches the whole text for any *disallowed* string and raises
with a four-line message; :func:`check_disallowed` reproduces it, raising
:class:`~bpekit.errors.DisallowedSpecialError` (a ``ValueError``).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

from bpekit.errors import DisallowedSpecialError


class Found(NamedTuple):
    """A special token found in a text: ``text[start:end] == token``."""

    start: int
    end: int
    token: str


def leftmost_longest(text: str, strings: Collection[str], start: int = 0) -> Found | None:
    """The leftmost occurrence at or after ``start`` of any of ``strings``; the longest there."""
    hits = [(i, -len(s), s) for s in strings if s and (i := text.find(s, start)) >= 0]
    if not hits:
        return None
    i, _, s = min(hits)  # smallest start, then greatest length
    return Found(i, i + len(s), s)


def find_special(
    text: str, start: int, specials: Collection[str], allowed: Collection[str]
) -> Found | None:
    """The next allowed special token in ``text`` at or after ``start`` (None if there is none).

    Searching only the allowed specials gives the same answer as the rule stated above: an
    occurrence of a disallowed special is skipped by moving on one character, and no allowed
    special can start before the leftmost special of all.
    """
    return leftmost_longest(text, [s for s in specials if s in allowed], start)


def disallowed_message(token: str) -> str:
    """tiktoken's error text for a disallowed special token: four lines, each ending in ``\\n``."""
    return (
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, pass it to `allowed_special`, "
        f"e.g. `allowed_special={{{token!r}, ...}}`.\n"
        "If you want this text to be encoded as normal text, disable the check for this token by "
        f"passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )


def check_disallowed(text: str, disallowed: Collection[str]) -> None:
    """Raise DisallowedSpecialError naming the leftmost (then longest) disallowed string."""
    found = leftmost_longest(text, disallowed)
    if found is not None:
        raise DisallowedSpecialError(disallowed_message(found.token), found.token)
