"""Normalizers: text -> text, applied to each part of the input that is not an added token.

``tokenizer.json`` shapes (formats.md §3.4): NFC, NFD, NFKC, NFKD, Lowercase, StripAccents,
Strip, Replace, Prepend, BertNormalizer, Nmt, ByteLevel, Sequence. Each class reads and writes its
own dict.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from typing import Any

from bpekit import _core
from bpekit.encoding import _has_surrogates
from bpekit.errors import UsageError
from bpekit.pipeline.aligned import Aligned
from bpekit.pipeline.base import Pattern, Stage, build, build_list, get, registry
from bpekit.pipeline.byte_level import BYTE_TO_CHAR

NORMALIZERS, _register = registry("normalizer")
_SURROGATES = re.compile("([\ud800-\udfff]+)")


def _between_surrogates(fn: Any, text: str) -> str:
    """``fn`` (a Rust call on UTF-8 text) of ``text``; a Python string with lone surrogates
    (combining class 0, no decomposition, no mark: they stop every normalization) has the runs
    between them done one by one and keeps them as they are."""
    try:
        return fn(text)  # type: ignore[no-any-return]
    except UnicodeEncodeError:
        return "".join(p if _SURROGATES.fullmatch(p) else fn(p) for p in _SURROGATES.split(text))

# Rust's char::is_whitespace (Unicode White_Space), which Hugging Face's Strip uses
WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


class Normalizer(Stage):
    # whether every ASCII text is its own normal form (the Rust pipelines then skip the call)
    ascii_invariant = False

    def normalize(self, text: str) -> str:
        return text

    def align(self, text: Aligned) -> Aligned:
        """``normalize`` of ``text.text`` with the input span of each character, as Hugging
        Face's ``NormalizedString`` keeps them (for offsets). A normalizer of your own that
        changes the text must say how, by overriding this method."""
        if self.normalize(text.text) != text.text:
            raise UsageError(f"{type(self).__name__} changed the text and does not say where its characters come from: "
                             "offsets need its align() method")
        return text

    def core_steps(self) -> list[tuple[Any, ...]] | None:
        """The steps of ``_core.Normalizer`` (``src/normalizer.rs``) that normalize exactly as
        this stage does, so that the Rust pipelines run them with no Python call per text; or
        ``None`` (a stage only Python runs: a regex ``Replace``, a subclass that overrides
        ``normalize``)."""
        return None

    def _own(self, cls: type) -> bool:
        """Whether ``normalize`` is ``cls``'s own (not a subclass's)."""
        return type(self).normalize is cls.normalize  # type: ignore[attr-defined]


class InRust:
    """``normalizer.align`` computed by ``program``, its ``_core.Normalizer`` (``Normalizer.align``
    in Rust, ``src/aligned.rs``, which the Python stages' ``align`` methods are the reference
    for): one call per text, each step's spans computed in Rust and handed back once, where
    the Python stages build a list per step. A text with lone surrogates, which UTF-8 cannot
    carry, takes the Python stages."""

    __slots__ = ("normalizer", "program")

    def __init__(self, normalizer: Normalizer, program: Any) -> None:
        self.normalizer = normalizer
        self.program = program

    def align(self, text: Aligned) -> Aligned:
        try:
            done = self.program.align(text.text, text._spans, text.origin, text.lead)
        except UnicodeEncodeError:
            return self.normalizer.align(text)
        return text if done is None else Aligned(*done)


def aligner(normalizer: Normalizer | None, program: Any) -> Any:
    """What aligns a text through ``normalizer`` for offsets: :class:`InRust` where ``program``
    (``core_normalizer``'s) is a Rust program, but for a prefix and one-for-one character
    replacements (Llama 2's ``Prepend`` + ``Replace``), whose Python ``align`` keeps no span per
    character (a list from Rust made its offsets 1.5-3x slower); else ``normalizer`` itself."""
    if normalizer is None or not isinstance(program, _core.Normalizer):
        return normalizer
    steps = normalizer.core_steps() or []
    light = all(s[0] == "prepend" or (s[0] == "replace" and len(s[1]) == len(s[2]) == 1) for s in steps)
    return normalizer if light else InRust(normalizer, program)


def core_normalizer(normalizer: Normalizer | None) -> Any:
    """What the Rust pipelines take as the normalizer: ``None``, a ``_core.Normalizer`` program,
    or the Python call."""
    if normalizer is None:
        return None
    steps = normalizer.core_steps()
    return normalizer.normalize if steps is None else _core.Normalizer(steps)


class _Unicode(Normalizer):
    """A Unicode normalization form, computed in Rust by the crate Hugging Face's normalizers use
    (Unicode 9.0 tables), so that text normalizes exactly as there: Python's ``unicodedata``
    (a later Unicode) also reorders and composes marks assigned since, such as U+1DF6."""

    form = "NFC"
    ascii_invariant = True  # no ASCII character has a (compatibility) decomposition

    def normalize(self, text: str) -> str:
        return _between_surrogates(lambda part: _core.normalize_unicode(self.form, part), text)

    def align(self, text: Aligned) -> Aligned:
        if not self._own(_Unicode):
            return super().align(text)
        if text.text.isascii() or _core.normalize_unicode(self.form, text.text) is text.text:  # (in the form already)
            return text
        normalized, changes = _core.normalize_unicode_changes(self.form, text.text)
        return text.map_chars(zip(normalized, changes))

    def core_steps(self) -> list[tuple[Any, ...]] | None:
        return [("form", self.form)] if self._own(_Unicode) else None


@_register
class NFC(_Unicode):
    form = "NFC"


@_register
class NFD(_Unicode):
    form = "NFD"


@_register
class NFKC(_Unicode):
    form = "NFKC"


@_register
class NFKD(_Unicode):
    form = "NFKD"


@_register
class Lowercase(Normalizer):
    def normalize(self, text: str) -> str:
        # per character by Rust's char::to_lowercase, as Hugging Face (no final-sigma rule, unlike
        # str.lower; and Rust's casing tables, where Python's older ones miss newer pairs: U+1C89)
        return text.lower() if text.isascii() else _between_surrogates(_core.lowercase, text)

    def align(self, text: Aligned) -> Aligned:
        if not self._own(Lowercase):
            return super().align(text)
        low = self.normalize(text.text)
        if low == text.text:
            return text
        if len(low) == len(text.text):  # (every char lowers to one: each keeps its span)
            return Aligned(low, text._spans, text.origin, text.lead)
        # one char may lower to several (İ: i + U+0307), each after the first inserted
        return text.map_chars((low, int(k > 0)) for c in text.text for k, low in enumerate(self.normalize(c)))

    def core_steps(self) -> list[tuple[Any, ...]] | None:
        return [("lowercase",)] if self._own(Lowercase) else None


@_register
class StripAccents(Normalizer):
    """Removes combining marks (use after NFD or NFKD): every mark (Mn, Mc, Me) of Hugging Face's
    Unicode 9.0 tables, computed in Rust as there."""

    def normalize(self, text: str) -> str:
        return _between_surrogates(_core.strip_marks, text)

    def align(self, text: Aligned) -> Aligned:
        if not self._own(StripAccents):
            return super().align(text)
        return text if text.text.isascii() else text.keep(c.isascii() or _core.strip_marks(c) == c for c in text.text)

    def core_steps(self) -> list[tuple[Any, ...]] | None:
        return [("strip_accents",)] if self._own(StripAccents) else None


@_register
class Strip(Normalizer):
    def __init__(self, strip_left: bool = True, strip_right: bool = True) -> None:
        self.strip_left = strip_left
        self.strip_right = strip_right

    def normalize(self, text: str) -> str:
        start, end = 0, len(text)
        if self.strip_left:
            while start < end and text[start] in WHITESPACE:
                start += 1
        if self.strip_right:
            while end > start and text[end - 1] in WHITESPACE:
                end -= 1
        return text[start:end]

    def align(self, text: Aligned) -> Aligned:
        if not self._own(Strip):
            return super().align(text)
        kept = self.normalize(text.text)
        if len(kept) == len(text.text):
            return text
        start = len(text.text) - len(text.text.lstrip("".join(WHITESPACE))) if self.strip_left else 0
        return text[start:start + len(kept)]

    def core_steps(self) -> list[tuple[Any, ...]] | None:
        return [("strip", self.strip_left, self.strip_right)] if self._own(Strip) else None

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Strip:
        return cls(get(doc, "strip_left", bool, where), get(doc, "strip_right", bool, where))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Strip", "strip_left": self.strip_left, "strip_right": self.strip_right}


@functools.lru_cache(maxsize=64)
def _regex_replace(pattern: str, content: str) -> tuple[tuple[Any, ...], Any] | None:
    """The Rust step of a regex ``Replace`` (CLIP's ``\\s+`` -> ``" "``) and its compiled program,
    where the core reads the pattern as Oniguruma does (``onig.portable``, and no class by Unicode
    property but ``\\s``), and the ``regex`` crate takes it and finds no empty match in it
    (``src/normalizer.rs``, ``ReplaceRegex``); else ``None``."""
    from bpekit.pipeline.onig import onig_to_regex, portable

    # (character classes by Unicode property follow each engine's Unicode version: the regex
    # crate's \d takes digits assigned in 2025 that Oniguruma's tables lack; White_Space is stable)
    if not portable(pattern) or re.search(r"\\[pPdDwWbBhHRXN]", pattern):
        return None
    step = ("replace_regex", "(?m)" + onig_to_regex(pattern), content)  # (Ruby syntax: ^ $ are line anchors)
    try:
        return step, _core.Normalizer([step])
    except ValueError:  # (lookarounds, a pattern that may match nothing)
        return None


@_register
class Replace(Normalizer):
    """Replaces every match of a literal or regex pattern with ``content``."""

    def __init__(self, pattern: Pattern | str, content: str) -> None:
        self.pattern = pattern if isinstance(pattern, Pattern) else Pattern(pattern, False)
        self.content = content

    def normalize(self, text: str) -> str:
        pieces, done = [], 0
        for s, e in self._matches(text):
            pieces += (text[done:s], self.content)
            done = e
        if not pieces:
            return text
        pieces.append(text[done:])
        return "".join(pieces)

    def _matches(self, text: str) -> Iterator[tuple[int, int]]:
        """The spans Hugging Face replaces (its ``find_matches``): none in an empty text, and no
        empty match right where a match ended (``\\s*`` on ``" "`` is one match; Python's
        ``regex`` finds an empty one after it too)."""
        if not text:
            return
        end = -1
        for m in self.pattern.compiled.finditer(text):
            s, e = m.span()
            if s == e == end:
                continue
            end = e
            yield s, e

    def align(self, text: Aligned) -> Aligned:
        if not self._own(Replace):
            return super().align(text)
        if not self.pattern.is_regex and len(self.pattern.text) == 1 and len(self.content) == 1:
            return text.replace_char(self.pattern.text, self.content)  # (" " -> "▁": every span kept)
        if self.pattern.is_regex and (rust := _regex_replace(self.pattern.text, self.content)) is not None \
                and not _has_surrogates(text.text):  # (the matches found and the text replaced in Rust)
            program = rust[1]
            return text.replace(program.replace_matches(text.text), self.content, program.normalize(text.text))
        return text.replace(self._matches(text.text), self.content)

    def core_steps(self) -> list[tuple[Any, ...]] | None:
        if not self._own(Replace):
            return None
        if not self.pattern.is_regex:
            return [("replace", self.pattern.text, self.content)] if self.pattern.text else None
        rust = _regex_replace(self.pattern.text, self.content)
        return [rust[0]] if rust is not None else None

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Replace:
        return cls(Pattern.from_json(get(doc, "pattern", dict, where), where), get(doc, "content", str, where))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Replace", "pattern": self.pattern.to_json(), "content": self.content}


@_register
class Prepend(Normalizer):
    """Prepends ``prepend`` to a non-empty text."""

    def __init__(self, prepend: str) -> None:
        self.prepend = prepend

    def normalize(self, text: str) -> str:
        return self.prepend + text if text else text

    def align(self, text: Aligned) -> Aligned:
        return text.prepend(self.prepend) if self._own(Prepend) else super().align(text)

    def core_steps(self) -> list[tuple[Any, ...]] | None:
        return [("prepend", self.prepend)] if self._own(Prepend) else None

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Prepend:
        return cls(get(doc, "prepend", str, where))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Prepend", "prepend": self.prepend}


@functools.lru_cache(maxsize=16)
def _program(step: tuple[Any, ...]) -> Any:
    """The ``_core.Normalizer`` of one step (each stage below normalizes in Rust)."""
    return _core.Normalizer([step])


def _chars_in(text: str, kind: str) -> list[bool]:
    """Whether each character of ``text`` is in the class ``kind`` of ``_core.class_runs``
    (computed in Rust with the tables ``tokenizers`` uses; a lone surrogate is in none)."""
    try:
        runs = _core.class_runs(text, kind)
    except UnicodeEncodeError:
        return [not "\ud800" <= c <= "\udfff" and _core.class_runs(c, kind)[0][2] for c in text]
    out = [False] * len(text)
    for s, e, match in runs:
        if match:
            out[s:e] = [True] * (e - s)
    return out


def _one_for_one(text: Aligned, new: str) -> Aligned:
    """``text`` with each character replaced by the one at its place in ``new`` (same length):
    every span kept."""
    return text if new == text.text else Aligned(new, text._spans, text.origin, text.lead)


@_register
class BertNormalizer(Normalizer):
    """Hugging Face's ``BertNormalizer`` (BERT's, and the ``tokenizer.json`` of OpenAI GPT and
    HerBERT): ``clean_text`` removes NUL, U+FFFD and control characters (``unicode_categories``'
    Cc, Cf and Co, but tab, newline and carriage return) and makes every whitespace character a
    space; ``handle_chinese_chars`` puts a space on both sides of each CJK ideograph;
    ``strip_accents`` (``None``: as ``lowercase``) applies NFD and removes nonspacing marks (Mn);
    ``lowercase`` as :class:`Lowercase`. In that order, computed in Rust with the tables
    ``tokenizers`` uses (``src/hf_unicode.rs``)."""

    def __init__(self, clean_text: bool = True, handle_chinese_chars: bool = True,
                 strip_accents: bool | None = None, lowercase: bool = True) -> None:
        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        self.strip_accents = strip_accents
        self.lowercase = lowercase

    def _step(self) -> tuple[Any, ...]:
        strip = self.lowercase if self.strip_accents is None else self.strip_accents
        return ("bert", bool(self.clean_text), bool(self.handle_chinese_chars), bool(strip), bool(self.lowercase))

    def normalize(self, text: str) -> str:
        return _between_surrogates(_program(self._step()).normalize, text)

    def align(self, text: Aligned) -> Aligned:
        if not self._own(BertNormalizer):
            return super().align(text)
        _, clean, chinese, strip, lower = self._step()
        if clean:
            removed = _chars_in(text.text, "bert_removed")
            if any(removed):
                text = text.keep(not r for r in removed)
            spaces = _chars_in(text.text, "bert_whitespace")
            if any(spaces):
                text = _one_for_one(text, "".join(" " if w else c for c, w in zip(text.text, spaces)))
        cjk = _chars_in(text.text, "bert_chinese") if chinese and not text.text.isascii() else []
        if any(cjk):  # (the CJK ideographs of Hugging Face's table)
            # (Hugging Face's changes: the first space stands for the ideograph, which is inserted)
            text = text.map_chars(x for c, k in zip(text.text, cjk) for x in (((" ", 0), (c, 1), (" ", 1)) if k else ((c, 0),)))
        if strip:
            text = NFD().align(text)
            marks = _chars_in(text.text, "nonspacing_mark")
            if any(marks):
                text = text.keep(not m for m in marks)
        return Lowercase().align(text) if lower else text

    def core_steps(self) -> list[tuple[Any, ...]] | None:
        return [self._step()] if self._own(BertNormalizer) else None

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> BertNormalizer:
        return cls(get(doc, "clean_text", bool, where), get(doc, "handle_chinese_chars", bool, where),
                   get(doc, "strip_accents", (bool, type(None)), where, None), get(doc, "lowercase", bool, where))

    def to_json(self) -> dict[str, Any]:
        return {"type": "BertNormalizer", "clean_text": self.clean_text, "handle_chinese_chars": self.handle_chinese_chars,
                "strip_accents": self.strip_accents, "lowercase": self.lowercase}


# Nmt: the control characters it removes, and the characters it makes a space
_NMT_REMOVED = frozenset(map(chr, [*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F]))
_NMT_SPACES = frozenset(map(chr, [0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581,
                                  0xFEFF, 0xFFFD]))


@_register
class Nmt(Normalizer):
    """Hugging Face's ``Nmt`` (SentencePiece's ``nmt_nfkc`` cleaning, without the NFKC): removes
    U+0001-0008, U+000B, U+000E-001F, U+007F, U+008F and U+009F, and makes tab, newline, form
    feed, carriage return, U+1680, U+200B-200F, U+2028, U+2029, ``▁``, U+FEFF and U+FFFD a
    space."""

    def normalize(self, text: str) -> str:
        return _between_surrogates(_program(("nmt",)).normalize, text)

    def align(self, text: Aligned) -> Aligned:
        if not self._own(Nmt):
            return super().align(text)
        if any(c in _NMT_REMOVED for c in text.text):
            text = text.keep(c not in _NMT_REMOVED for c in text.text)
        return _one_for_one(text, "".join(" " if c in _NMT_SPACES else c for c in text.text))

    def core_steps(self) -> list[tuple[Any, ...]] | None:
        return [("nmt",)] if self._own(Nmt) else None


@_register
class ByteLevel(Normalizer):
    """Hugging Face's ``ByteLevel`` normalizer: each UTF-8 byte of the text as its byte-level
    character (GPT-2's table, as the ``ByteLevel`` pre-tokenizer maps them, with no split); the
    characters after a character's first byte are inserted (they share its span)."""

    def normalize(self, text: str) -> str:
        return _between_surrogates(_program(("byte_level",)).normalize, text)

    def align(self, text: Aligned) -> Aligned:
        if not self._own(ByteLevel):
            return super().align(text)
        if all(c.isascii() and BYTE_TO_CHAR[ord(c)] == c for c in text.text):
            return text

        def changes(c: str) -> list[tuple[str, int]]:
            if "\ud800" <= c <= "\udfff":  # (a lone surrogate stays, as normalize keeps it)
                return [(c, 0)]
            return [(BYTE_TO_CHAR[b], int(i > 0)) for i, b in enumerate(c.encode("utf-8"))]

        return text.map_chars(x for c in text.text for x in changes(c))

    def core_steps(self) -> list[tuple[Any, ...]] | None:
        return [("byte_level",)] if self._own(ByteLevel) else None


@_register
class Sequence(Normalizer):
    def __init__(self, normalizers: list[Normalizer]) -> None:
        self.normalizers = list(normalizers)

    @property  # type: ignore[override]
    def ascii_invariant(self) -> bool:  # type: ignore[override]
        return all(n.ascii_invariant for n in self.normalizers)

    def normalize(self, text: str) -> str:
        for n in self.normalizers:
            text = n.normalize(text)
        return text

    def align(self, text: Aligned) -> Aligned:
        if not self._own(Sequence):
            return super().align(text)
        for n in self.normalizers:
            text = n.align(text)
        return text

    def core_steps(self) -> list[tuple[Any, ...]] | None:
        if not self._own(Sequence):
            return None
        steps: list[tuple[Any, ...]] = []
        for n in self.normalizers:
            if (more := n.core_steps()) is None:
                return None
            steps += more
        return steps

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Sequence:
        return cls(build_list("normalizer", NORMALIZERS, get(doc, "normalizers", list, where), f"{where}.normalizers"))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Sequence", "normalizers": [n.to_json() for n in self.normalizers]}


def from_json(doc: Any, where: str = "normalizer") -> Normalizer | None:
    """The normalizer of a ``tokenizer.json`` ``"normalizer"`` value (``None`` for null)."""
    return build("normalizer", NORMALIZERS, doc, where)  # type: ignore[no-any-return]
from bpekit.pipeline import precompiled as _precompiled  # noqa: E402,F401  (registers Precompiled)
