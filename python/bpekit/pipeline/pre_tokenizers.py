"""Pre-tokenizers: split each normalized part of the input into pre-tokens, which the model
encodes one by one.

A split is ``(text, first)``: ``first`` is true only for the split that begins the whole input
(Metaspace's ``prepend_scheme: "first"`` needs it). Empty splits are dropped after every step,
and each step sees only its own split, as in Hugging Face (formats.md §3.5). ``tokenizer.json``
shapes: ByteLevel, Split, Metaspace, Digits, Whitespace, WhitespaceSplit, Punctuation,
BertPreTokenizer, CharDelimiterSplit, FixedLength, Sequence.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import functools

import regex

from bpekit import _core
from bpekit.errors import FormatError, UsageError
from bpekit.pipeline.aligned import Aligned
from bpekit.pipeline.base import (
    ByteLevelOptions,
    Pattern,
    Stage,
    build,
    build_list,
    get,
    registry,
)
from bpekit.pipeline.byte_level import BYTE_TO_CHAR, GPT2_REGEX
from bpekit.pipeline.normalizers import WHITESPACE
from bpekit.pipeline.onig import compile_onig

PRE_TOKENIZERS, _register = registry("pre_tokenizer")
Split_ = tuple[str, bool]
BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")
_WORDS = regex.compile(r"\w+|[^\w\s]+")
# Put before a Rust stage's pattern: the stage keeps only its matches, as a ``Split`` with the
# ``Removed`` behaviour and ``invert`` does (CLIP's; ``MATCHES_ONLY`` in src/pretokenize/regex_split.rs)
MATCHES_ONLY = "(?#matches only)"
# The Rust stages of ``Whitespace`` (the ``regex`` crate's ``\w`` and ``\s``, as Hugging Face's
# own regex) and ``WhitespaceSplit`` (``char::is_whitespace``: Unicode White_Space, as ``\s``)
WHITESPACE_STAGE = MATCHES_ONLY + r"\w+|[^\w\s]+"
WHITESPACE_SPLIT_STAGE = MATCHES_ONLY + r"\S+"


def split_by(text: str, matches: list[tuple[int, int, bool]], behavior: str) -> list[tuple[int, int]]:
    """Hugging Face's ``split`` of ``text`` given ``(start, end, is_match)`` runs covering it."""
    if behavior == "Removed":
        return [(s, e) for s, e, m in matches if not m]
    if behavior == "Isolated":
        return [(s, e) for s, e, _ in matches]
    out: list[list[int]] = []
    previous = False
    if behavior == "MergedWithPrevious":
        for s, e, m in matches:
            if m and not previous and out:
                out[-1][1] = e
            else:
                out.append([s, e])
            previous = m
    elif behavior == "MergedWithNext":
        for s, e, m in reversed(matches):
            if m and not previous and out:
                out[-1][0] = s
            else:
                out.append([s, e])
            previous = m
        out.reverse()
    else:  # Contiguous
        for s, e, m in matches:
            if m == previous and out:
                out[-1][1] = e
            else:
                out.append([s, e])
            previous = m
    return [(s, e) for s, e in out]


def find_runs(pattern: regex.Pattern[str], text: str, invert: bool = False) -> list[tuple[int, int, bool]]:
    """Matches and the gaps between them, in order (empty text: one empty gap)."""
    if not text:
        return [(0, 0, invert)]
    runs: list[tuple[int, int, bool]] = []
    prev = 0
    for m in pattern.finditer(text):
        s, e = m.span()
        if prev != s:
            runs.append((prev, s, invert))
        runs.append((s, e, not invert))
        prev = e
    if prev != len(text):
        runs.append((prev, len(text), invert))
    return runs


def _apply(splits: list[Any], cut: Any) -> list[Any]:
    """Each split cut where ``cut`` (of its text) says: ``str`` splits, or :class:`Aligned` ones
    (offsets), which keep their input spans."""
    out = []
    for text, first in splits:
        for s, e in cut(text if isinstance(text, str) else text.text):
            if e > s:
                out.append((text[s:e], first and s == 0))
    return out


AlignedSplit = tuple[Aligned, bool]


class PreTokenizer(Stage):
    def pre_tokenize(self, splits: list[Split_]) -> list[Split_]:
        return splits

    def pre_tokenize_aligned(self, splits: list[AlignedSplit]) -> list[AlignedSplit]:
        """``pre_tokenize`` of splits that carry their input spans (for offsets). The stages
        that only cut the text cut ``Aligned`` splits with their own ``pre_tokenize``; those that
        change it (ByteLevel, Metaspace) say how. A pre-tokenizer of your own that changes the
        text must override this method."""
        out = self.pre_tokenize(splits)  # type: ignore[arg-type]
        if not all(isinstance(t, Aligned) for t, _ in out):
            raise UsageError(f"{type(self).__name__} does not say where its splits come from: offsets need its "
                             "pre_tokenize_aligned() method")
        return out  # type: ignore[return-value]

    def pre_tokenize_str(self, text: str) -> list[str]:
        return [t for t, _ in self.pre_tokenize([(text, True)])]


@_register
class ByteLevel(ByteLevelOptions, PreTokenizer):
    """Optional prefix space, the GPT-2 regex split (``use_regex``), then bytes as characters."""

    def pre_tokenize(self, splits: list[Split_]) -> list[Split_]:
        out: list[Split_] = []
        for text, first in splits:
            if not text:  # (nothing to prepend to, as in Hugging Face)
                continue
            if self.add_prefix_space and not text.startswith(" "):
                text = " " + text
            pieces = [m.group() for m in GPT2_REGEX.finditer(text)] if self.use_regex else [text]
            for i, p in enumerate(pieces):
                if p:
                    out.append(("".join(BYTE_TO_CHAR[b] for b in p.encode("utf-8")), first and i == 0))
        return out

    def pre_tokenize_aligned(self, splits: list[AlignedSplit]) -> list[AlignedSplit]:
        if type(self).pre_tokenize is not ByteLevel.pre_tokenize:
            return super().pre_tokenize_aligned(splits)
        out: list[AlignedSplit] = []
        for text, first in splits:
            if not text:
                continue
            if self.add_prefix_space and not text.text.startswith(" "):
                text = text.prepend(" ")
            cuts = [m.span() for m in GPT2_REGEX.finditer(text.text)] if self.use_regex else [(0, len(text))]
            for i, (s, e) in enumerate(cuts):
                if e > s:
                    # each char becomes the chars of its bytes, all with its span
                    chars = [(BYTE_TO_CHAR[b], int(k > 0)) for c in text.text[s:e] for k, b in enumerate(c.encode("utf-8"))]
                    out.append((text[s:e].map_chars(chars), first and i == 0))
        return out


def _behavior(doc: Mapping[str, Any], where: str, default: str | None = None) -> str:
    value = get(doc, "behavior", str, where, default) if default else get(doc, "behavior", str, where)
    if value not in BEHAVIORS:
        raise FormatError(f"{where}: unknown split behavior {value!r} (one of {', '.join(BEHAVIORS)})")
    return value  # type: ignore[no-any-return]


@_register
class Split(PreTokenizer):
    def __init__(self, pattern: Pattern | str, behavior: str = "Isolated", invert: bool = False) -> None:
        self.pattern = pattern if isinstance(pattern, Pattern) else Pattern(pattern, False)
        if behavior not in BEHAVIORS:
            raise FormatError(f"unknown split behavior {behavior!r} (one of {', '.join(BEHAVIORS)})")
        self.behavior = behavior
        self.invert = invert

    def pre_tokenize(self, splits: list[Split_]) -> list[Split_]:
        if not self.pattern.text:
            return [s for s in splits if s[0]]
        return _apply(splits, lambda t: split_by(t, find_runs(self.pattern.compiled, t, self.invert), self.behavior))

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Split:
        pattern = Pattern.from_json(get(doc, "pattern", dict, where), f"{where}.pattern")
        return cls(pattern, _behavior(doc, where), get(doc, "invert", bool, where))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Split", "pattern": self.pattern.to_json(), "behavior": self.behavior, "invert": self.invert}


@_register
class Metaspace(PreTokenizer):
    """Spaces become ``replacement`` (``▁``), which is prepended per ``prepend_scheme`` and split on."""

    def __init__(self, replacement: str = "\u2581", prepend_scheme: str = "always", split: bool = True) -> None:
        if len(replacement) != 1:
            raise FormatError(f"Metaspace replacement must be one character, got {replacement!r}")
        if prepend_scheme not in ("always", "first", "never"):
            raise FormatError(f"Metaspace prepend_scheme must be always, first or never, got {prepend_scheme!r}")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = split
        self._on = regex.compile(regex.escape(replacement))

    def pre_tokenize(self, splits: list[Split_]) -> list[Split_]:
        out: list[Split_] = []
        for text, first in splits:
            if not text:  # (nothing to prepend to, as in Hugging Face)
                continue
            text = text.replace(" ", self.replacement)
            if not text.startswith(self.replacement) and (
                self.prepend_scheme == "always" or (self.prepend_scheme == "first" and first)
            ):
                text = self.replacement + text
            if self.split:
                out.extend(_apply([(text, first)], lambda t: split_by(t, find_runs(self._on, t), "MergedWithNext")))
            elif text:
                out.append((text, first))
        return out

    def pre_tokenize_aligned(self, splits: list[AlignedSplit]) -> list[AlignedSplit]:
        if type(self).pre_tokenize is not Metaspace.pre_tokenize:
            return super().pre_tokenize_aligned(splits)
        out: list[AlignedSplit] = []
        for text, first in splits:
            if not text:
                continue
            text = text.replace_char(" ", self.replacement) if len(self.replacement) == 1 else \
                text.replace(((i, i + 1) for i, c in enumerate(text.text) if c == " "), self.replacement)
            if not text.text.startswith(self.replacement) and (
                self.prepend_scheme == "always" or (self.prepend_scheme == "first" and first)
            ):
                text = text.prepend(self.replacement)
            if self.split:
                out.extend(_apply([(text, first)], lambda t: split_by(t, find_runs(self._on, t), "MergedWithNext")))
            elif text:
                out.append((text, first))
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Metaspace:
        scheme = get(doc, "prepend_scheme", str, where, "always")
        if get(doc, "add_prefix_space", bool, where, True) is False:
            if "prepend_scheme" in doc and scheme != "never":
                raise FormatError(f"{where}: add_prefix_space false contradicts prepend_scheme {scheme!r}")
            scheme = "never"
        return cls(get(doc, "replacement", str, where), scheme, get(doc, "split", bool, where, True))

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "Metaspace",
            "replacement": self.replacement,
            "prepend_scheme": self.prepend_scheme,
            "split": self.split,
        }


def _class_runs(text: str, kind: str) -> list[tuple[int, int, bool]]:
    """:func:`_char_runs` of the characters of a Hugging Face class (``"numeric"``: Rust's
    ``char::is_numeric``; ``"punctuation"``: ASCII punctuation or ``unicode_categories``' ``P*``),
    computed in Rust with the tables ``tokenizers`` uses (Python's differ on characters newer
    or older than theirs: U+1E4F0 is numeric there, U+2E45 no punctuation)."""
    try:
        return _core.class_runs(text, kind)  # type: ignore[no-any-return]
    except UnicodeEncodeError:  # lone surrogates: in neither class
        return _char_runs(text, lambda c: not "\ud800" <= c <= "\udfff" and _core.class_runs(c, kind)[0][2])


def _char_runs(text: str, test: Any) -> list[tuple[int, int, bool]]:
    """Each character passing ``test`` is a match of its own; the text between is one gap."""
    if not text:
        return [(0, 0, False)]
    runs: list[tuple[int, int, bool]] = []
    gap = 0
    for i, c in enumerate(text):
        if test(c):
            if gap < i:
                runs.append((gap, i, False))
            runs.append((i, i + 1, True))
            gap = i + 1
    if gap < len(text):
        runs.append((gap, len(text), False))
    return runs


@_register
class Digits(PreTokenizer):
    def __init__(self, individual_digits: bool = False) -> None:
        self.individual_digits = individual_digits

    def pre_tokenize(self, splits: list[Split_]) -> list[Split_]:
        how = "Isolated" if self.individual_digits else "Contiguous"
        return _apply(splits, lambda t: split_by(t, _class_runs(t, "numeric"), how))

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Digits:
        return cls(get(doc, "individual_digits", bool, where, False))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Digits", "individual_digits": self.individual_digits}


@_register
class Punctuation(PreTokenizer):
    def __init__(self, behavior: str = "Isolated") -> None:
        if behavior not in BEHAVIORS:
            raise FormatError(f"unknown split behavior {behavior!r}")
        self.behavior = behavior

    def pre_tokenize(self, splits: list[Split_]) -> list[Split_]:
        return _apply(splits, lambda t: split_by(t, _class_runs(t, "punctuation"), self.behavior))

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Punctuation:
        return cls(_behavior(doc, where, "Isolated"))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Punctuation", "behavior": self.behavior}


@functools.cache
def _whitespace_stage() -> Any:
    return _core.IsolatedSplit([WHITESPACE_STAGE])


def _words(text: str) -> list[tuple[int, int]]:
    """The matches of ``\\w+|[^\\w\\s]+`` in ``text``, found in Rust by the ``regex`` crate, whose
    Unicode tables are the ones Hugging Face's ``Whitespace`` uses (Python's ``regex`` module
    lacks the letters of Unicode 17: U+088F, U+1ACF...); text with lone surrogates by ``regex``."""
    try:
        return _whitespace_stage().spans(text)  # type: ignore[no-any-return]
    except UnicodeEncodeError:
        return split_by(text, find_runs(_WORDS, text, invert=True), "Removed")


@_register
class Whitespace(PreTokenizer):
    """Keeps the matches of ``\\w+|[^\\w\\s]+``."""

    def pre_tokenize(self, splits: list[Split_]) -> list[Split_]:
        return _apply(splits, _words)


@_register
class WhitespaceSplit(PreTokenizer):
    """Splits on Unicode whitespace, which is dropped."""

    def pre_tokenize(self, splits: list[Split_]) -> list[Split_]:
        return _apply(splits, lambda t: split_by(t, _char_runs(t, WHITESPACE.__contains__), "Removed"))


@_register
class Sequence(PreTokenizer):
    def __init__(self, pretokenizers: list[PreTokenizer]) -> None:
        self.pretokenizers = list(pretokenizers)

    def pre_tokenize(self, splits: list[Split_]) -> list[Split_]:
        for p in self.pretokenizers:
            splits = p.pre_tokenize(splits)
        return splits

    def pre_tokenize_aligned(self, splits: list[AlignedSplit]) -> list[AlignedSplit]:
        if type(self).pre_tokenize is not Sequence.pre_tokenize:
            return super().pre_tokenize_aligned(splits)
        for p in self.pretokenizers:
            splits = p.pre_tokenize_aligned(splits)
        return splits

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Sequence:
        items = get(doc, "pretokenizers", list, where)
        return cls(build_list("pre_tokenizer", PRE_TOKENIZERS, items, f"{where}.pretokenizers"))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Sequence", "pretokenizers": [p.to_json() for p in self.pretokenizers]}


@_register
class BertPreTokenizer(Sequence):
    """BERT's: split on Unicode whitespace, which is dropped, then each punctuation character
    (ASCII or ``P*`` of ``tokenizers``' tables) is a split of its own. That is exactly
    ``Sequence([WhitespaceSplit(), Punctuation("Isolated")])``, which it is; it reads and writes
    ``{"type": "BertPreTokenizer"}``."""

    def __init__(self) -> None:
        super().__init__([WhitespaceSplit(), Punctuation("Isolated")])

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> BertPreTokenizer:
        return cls()

    def to_json(self) -> dict[str, Any]:
        return {"type": "BertPreTokenizer"}


@_register
class CharDelimiterSplit(PreTokenizer):
    """Splits on one character, which is dropped."""

    def __init__(self, delimiter: str) -> None:
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            raise FormatError(f"CharDelimiterSplit delimiter must be one character, got {delimiter!r:.60}")
        self.delimiter = delimiter

    def _cut(self, text: str) -> list[tuple[int, int]]:
        spans, start = [], 0
        for part in text.split(self.delimiter):
            spans.append((start, start + len(part)))
            start += len(part) + 1
        return spans

    def pre_tokenize(self, splits: list[Split_]) -> list[Split_]:
        return _apply(splits, self._cut)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> CharDelimiterSplit:
        delimiter = get(doc, "delimiter", str, where)
        try:
            return cls(delimiter)
        except FormatError as exc:
            raise FormatError(f"{where}: {exc}") from None

    def to_json(self) -> dict[str, Any]:
        return {"type": "CharDelimiterSplit", "delimiter": self.delimiter}


# ``tokenizers`` reads ``length`` as a Rust ``usize``
_MAX_USIZE = 2**64 - 1


@_register
class FixedLength(PreTokenizer):
    """Cuts each split into pieces of ``length`` characters (the last one shorter). A length of
    0 is refused: ``tokenizers`` 0.23 loads it but panics on any non-empty text."""

    def __init__(self, length: int = 5) -> None:
        if isinstance(length, bool) or not isinstance(length, int) or not 0 < length <= _MAX_USIZE:
            raise FormatError(f"FixedLength length must be an integer from 1 to 2**64-1, got {length!r:.60}")
        self.length = length

    def _cut(self, text: str) -> list[tuple[int, int]]:
        n = self.length
        return [(i, min(i + n, len(text))) for i in range(0, len(text), n)]

    def pre_tokenize(self, splits: list[Split_]) -> list[Split_]:
        return _apply(splits, self._cut)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> FixedLength:
        length = get(doc, "length", int, where, 5)
        try:
            return cls(length)
        except FormatError as exc:
            raise FormatError(f"{where}: {exc}") from None

    def to_json(self) -> dict[str, Any]:
        return {"type": "FixedLength", "length": self.length}


def from_json(doc: Any, where: str = "pre_tokenizer") -> PreTokenizer | None:
    """The pre-tokenizer of a ``tokenizer.json`` ``"pre_tokenizer"`` value (``None`` for null)."""
    return build("pre_tokenizer", PRE_TOKENIZERS, doc, where)  # type: ignore[no-any-return]


__all__ = ["PRE_TOKENIZERS", "BertPreTokenizer", "ByteLevel", "CharDelimiterSplit", "Digits", "FixedLength",
           "Metaspace", "Pattern", "PreTokenizer", "Punctuation", "Sequence", "Split", "Whitespace",
           "WhitespaceSplit", "compile_onig", "from_json"]
