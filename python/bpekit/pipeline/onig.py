"""Regexes with Oniguruma's meaning, compiled by Python's ``regex`` module.

Hugging Face ``tokenizers`` compiles every ``Regex`` pattern with Oniguruma (Ruby syntax). Two
constructs mean something else in ``regex`` (formats.md §1.3):

* ``X{n,m}+`` is "one or more of ``X{n,m}``" in Oniguruma but a possessive ``X{n,m}`` in
  ``regex``: it is rewritten to ``(?:X{n,m})+``;
* ``$`` and ``^`` are line anchors in Ruby syntax: the pattern is compiled with ``MULTILINE``;
* a class intersection ``[A&&[^B]]`` (Kimi K2's letters that are not Han) is not a set operation
  in ``regex``'s default version: it is rewritten to ``(?:(?![B])[A])`` (``[A&&[B]]`` to
  ``(?:(?=[B])[A])``) for ``regex`` only; the Rust core's fancy-regex reads ``&&`` as Oniguruma
  does.
"""

from __future__ import annotations

from functools import lru_cache

import regex

from bpekit.errors import PatternError

_INTERVAL_PLUS = regex.compile(r"(?<!\\)\{\d+(?:,\d*)?\}\+")
# `[A&&[^B]]` / `[A&&[B]]` with no brackets inside A or B (escapes allowed)
_INTERSECTION = regex.compile(r"(?<!\\)\[((?:\\.|[^\[\]\\])+)&&\[(\^?)((?:\\.|[^\[\]\\])+)\]\]")


def _intersections(pattern: str) -> str:
    """Class intersections rewritten as a lookahead before a class (see the module docstring)."""

    def rewrite(m: regex.Match[str]) -> str:
        look = "?!" if m.group(2) else "?="
        return f"(?:({look}[{m.group(3)}])[{m.group(1)}])"

    return _INTERSECTION.sub(rewrite, pattern)


def _atom_start(pattern: str, end: int) -> int:
    """Where the atom that ends just before ``end`` begins (a char, an escape, a class, a group)."""
    if end == 0:  # (``pattern[-1]`` would rewrite the pattern's end, growing it without bound)
        raise PatternError(f"a counted repetition with nothing to repeat at the start of {pattern!r}")
    last = pattern[end - 1]
    if last == "]":
        i = end - 2
        while i >= 0:
            if pattern[i] == "[" and (i == 0 or pattern[i - 1] != "\\"):
                depth = pattern.count("[", i, end) - pattern.count("\\[", i, end)
                closes = pattern.count("]", i, end) - pattern.count("\\]", i, end)
                if depth == closes:
                    return i
            i -= 1
        raise PatternError(f"unbalanced character class before a counted repetition in {pattern!r}")
    if last == ")":
        depth = 0
        for i in range(end - 1, -1, -1):
            if pattern[i] in "()" and (i == 0 or pattern[i - 1] != "\\"):
                depth += 1 if pattern[i] == ")" else -1
                if depth == 0:
                    return i
        raise PatternError(f"unbalanced group before a counted repetition in {pattern!r}")
    if last == "}":  # \p{...}
        i = pattern.rfind("\\", 0, end)
        if i >= 0 and pattern[i + 1 : i + 2] in ("p", "P"):
            return i
    if end >= 2 and pattern[end - 2] == "\\":
        return end - 2
    return end - 1


def onig_to_regex(pattern: str) -> str:
    """``pattern`` rewritten so that ``regex`` gives Oniguruma's matches (see the module docstring)."""
    while True:
        m = _INTERVAL_PLUS.search(pattern)
        if m is None:
            return pattern
        start = _atom_start(pattern, m.start())
        interval = m.group()[:-1]
        pattern = pattern[:start] + "(?:" + pattern[start : m.start()] + interval + ")+" + pattern[m.end() :]


@lru_cache(maxsize=256)
def compile_onig(pattern: str) -> regex.Pattern[str]:
    """Compiles an Oniguruma (Ruby syntax) pattern; ``PatternError`` if it is not valid."""
    if not isinstance(pattern, str):
        raise PatternError(f"a regex pattern must be a str, got {type(pattern).__name__}")
    try:
        translated = _intersections(onig_to_regex(pattern))
        nested = _nested_classes(translated)  # (Oniguruma's union of nested classes: the module's V1 reads it)
        if nested is not None:
            return regex.compile(nested, regex.MULTILINE | regex.V1)
        return regex.compile(translated, regex.MULTILINE)
    except regex.error as exc:
        raise PatternError(f"invalid regex {pattern!r}: {exc}") from None


def _nested_classes(pattern: str) -> str | None:
    """``pattern`` for the regex module's V1 where one of its character classes holds another
    (``[a[^b]]``: Oniguruma's union of both, where the default V0 reads the inner ``[`` as a
    character and ends the class at the first ``]``), with the set operators V1 reads inside a
    class (``--``, ``||``, ``~~``; Oniguruma's ``&&`` is rewritten before, ``_intersections``)
    escaped, as Oniguruma reads them as characters; ``None`` where no class is nested."""
    out, depth, nested, i = [], 0, False, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "[":
            nested |= depth > 0 and not pattern.startswith("[:", i)
            depth += 1
        elif c == "]" and depth:
            depth -= 1
        elif depth and pattern.startswith((c * 2), i) and c in "-|~":
            out.append("\\" + c + "\\" + c)
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out) if nested else None


def literal(text: str) -> regex.Pattern[str]:
    """A pattern matching ``text`` literally."""
    return regex.compile(regex.escape(text))


# The constructs of a ``Split`` regex that Oniguruma (Ruby syntax, UTF-8, as ``tokenizers`` compiles
# it) and fancy-regex read alike (``portable``): escapes of classes both define by Unicode, control
# characters and code points, escaped punctuation; general categories and common scripts; groups
# and lookaheads. Anything else -- ``\w``, ``\b``, ``\h``, anchors such as ``\A``, backreferences,
# inline flags (Ruby's ``(?m)`` is fancy-regex's ``(?s)``), POSIX brackets, ``{,n}`` -- is not.
_CATEGORIES = frozenset(
    "L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po S Sm Sc Sk So Z Zs Zl Zp Cc Cf".split()
)
_SCRIPTS = frozenset("Han Hiragana Katakana Hangul Latin Greek Cyrillic Arabic Hebrew Thai Devanagari".split())
_PORTABLE_TOKEN = regex.compile(
    r"""\\[pP]\{(?P<prop>[A-Za-z]+)\}
    | \\(?:[sSdDrntfv]|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|[^0-9A-Za-z])
    | (?P<bad>\\.|\(\?(?![:=!>]|<[=!])|\[:|&&|\{,)
    | .""",
    regex.X | regex.S,
)
# The one inline flag group that agrees (``tokenizers`` and the tests check it on every family)
_CONTRACTIONS = "(?i:'s|'t|'re|'ve|'m|'ll|'d)"


@lru_cache(maxsize=256)
def portable(pattern: str) -> bool:
    """Whether the Rust core may split by the ``Split`` regex ``pattern`` as Oniguruma does: only
    constructs both engines read alike (above), and a pattern that the Rust core's hand-written
    splitters or its compiled matcher take (so no empty match, lookbehind or nested repetition,
    whose iteration the two engines need not share). ``tests/formats/test_portable_patterns.py``
    checks patterns drawn from that grammar against ``tokenizers``."""
    from bpekit import _core

    for m in _PORTABLE_TOKEN.finditer(pattern.replace(_CONTRACTIONS, "")):
        if m.group("bad") is not None:
            return False
        prop = m.group("prop")
        if prop is not None and prop not in _CATEGORIES and prop not in _SCRIPTS:
            return False
    try:
        engines = _core.IsolatedSplit(["(?m)" + onig_to_regex(pattern)]).engines
    except (ValueError, PatternError):
        return False
    return engines in (["hand"], ["compiled"])

