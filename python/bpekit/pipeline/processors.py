"""Post-processors: add special tokens around an encoded sequence (``add_special_tokens=True``).

``tokenizer.json`` shapes (formats.md §3.7): TemplateProcessing, ByteLevel (adds nothing; it only
trims offsets), RobertaProcessing, BertProcessing, Sequence. ``trim`` gives the offsets of
``Tokenizer.encode_with_offsets`` as Hugging Face's processors leave them, ``place`` puts the
ids a processor adds among them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bpekit.errors import FormatError, UsageError
from bpekit.pipeline.base import (
    ByteLevelOptions,
    Stage,
    build,
    build_list,
    get,
    registry,
)
from bpekit.pipeline.normalizers import WHITESPACE

PROCESSORS, _register = registry("post_processor")
Span = tuple[int, int]


class PostProcessor(Stage):
    def process(self, ids: list[int], pair: list[int] | None = None) -> list[int]:
        return ids + (pair or [])

    def trim_passes(self) -> list[bool]:
        """How this processor trims offsets, whether or not it adds special tokens: one pass of
        :func:`trim_spaces` per ByteLevel or RoBERTa stage with ``trim_offsets``, in order, each
        with its ``add_prefix_space``."""
        return []

    def trim(self, tokens: list[str], offsets: list[Span]) -> list[Span]:
        """The offsets of a sequence of ``tokens`` (their strings) as this processor leaves them."""
        for add_prefix_space in self.trim_passes():
            offsets = trim_spaces(tokens, offsets, add_prefix_space)
        return offsets

    def place(self, offsets: list[Span]) -> tuple[list[int], list[Span]]:
        """Where ``process`` puts a sequence's tokens among the ids it adds: for each id of the
        result, -1 - the index of the sequence's token it is, or the added id; and the offsets
        (an added id's are ``(0, 0)``, as in Hugging Face)."""
        marks = self.process([-1 - i for i in range(len(offsets))])
        if [m for m in marks if m < 0] != [-1 - i for i in range(len(offsets))]:
            raise UsageError(f"{type(self).__name__} does not keep the sequence in order between the ids it adds: "
                             "no offsets")
        return marks, [offsets[-1 - m] if m < 0 else (0, 0) for m in marks]


_ENDS: dict[str, tuple[int, int]] = {}  # token -> its leading and trailing spaces (most tokens: none)


def _spaces(chars: Iterable[str]) -> int:
    n = 0
    for c in chars:
        if c != "\u0120" and c not in WHITESPACE:
            break
        n += 1
    return n


def spaces_at_ends(token: str) -> tuple[int, int]:
    """How many chars at the start and at the end of ``token`` are spaces to trim: ``Ġ`` (a space
    in the byte-level alphabet) or whitespace (Rust's ``char::is_whitespace``)."""
    ends = _ENDS.get(token)
    if ends is None:
        if len(_ENDS) > 1 << 16:
            _ENDS.clear()
        ends = _ENDS[token] = (_spaces(token), _spaces(reversed(token)))
    return ends


def trim_spaces(tokens: list[str], offsets: list[Span], add_prefix_space: bool) -> list[Span]:
    """Hugging Face's ``process_offsets``: a token's leading and trailing spaces are left out of
    its span, but for the one space a prefix space added to the first token (the Rust pipelines'
    copy: ``trim`` in ``src/py/offsets.rs``)."""
    out = []
    for i, (token, (start, end)) in enumerate(zip(tokens, offsets)):
        lead, trail = spaces_at_ends(token)
        if lead == 1 and add_prefix_space and (i == 0 or start == 0):
            lead = 0
        if lead:
            start = min(start + lead, end)
        if trail and end >= trail:
            end = max(end - trail, start)
        out.append((start, end))
    return out


@_register
class ByteLevel(ByteLevelOptions, PostProcessor):
    """Adds nothing to the ids; trims the spaces off each token's offsets (``trim_offsets``)."""

    def trim_passes(self) -> list[bool]:
        return [self.add_prefix_space] if self.trim_offsets else []


def _token(doc: Mapping[str, Any], key: str, where: str) -> tuple[str, int]:
    value = get(doc, key, list, where)
    if len(value) != 2 or not isinstance(value[0], str) or not isinstance(value[1], int) or isinstance(value[1], bool):
        raise FormatError(f"{where}: {key!r} must be [token, id], got {value!r:.60}")
    return value[0], value[1]


@_register
class BertProcessing(PostProcessor):
    """``[CLS] A [SEP]`` and ``[CLS] A [SEP] B [SEP]``."""

    def __init__(self, sep: tuple[str, int], cls: tuple[str, int]) -> None:
        self.sep = sep
        self.cls = cls

    def process(self, ids: list[int], pair: list[int] | None = None) -> list[int]:
        out = [self.cls[1], *ids, self.sep[1]]
        return out if pair is None else [*out, *pair, self.sep[1]]

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> BertProcessing:
        return cls(_token(doc, "sep", where), _token(doc, "cls", where))

    def to_json(self) -> dict[str, Any]:
        return {"type": "BertProcessing", "sep": list(self.sep), "cls": list(self.cls)}


@_register
class RobertaProcessing(PostProcessor):
    """``<s> A </s>`` and ``<s> A </s> </s> B </s>``."""

    def __init__(self, sep: tuple[str, int], cls: tuple[str, int], trim_offsets: bool = True,
                 add_prefix_space: bool = True) -> None:
        self.sep = sep
        self.cls = cls
        self.trim_offsets = trim_offsets
        self.add_prefix_space = add_prefix_space

    def process(self, ids: list[int], pair: list[int] | None = None) -> list[int]:
        out = [self.cls[1], *ids, self.sep[1]]
        return out if pair is None else [*out, self.sep[1], *pair, self.sep[1]]

    def trim_passes(self) -> list[bool]:
        return [self.add_prefix_space] if self.trim_offsets else []

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> RobertaProcessing:
        return cls(
            _token(doc, "sep", where),
            _token(doc, "cls", where),
            get(doc, "trim_offsets", bool, where, True),
            get(doc, "add_prefix_space", bool, where, True),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "RobertaProcessing",
            "sep": list(self.sep),
            "cls": list(self.cls),
            "trim_offsets": self.trim_offsets,
            "add_prefix_space": self.add_prefix_space,
        }


def _piece(item: Any, where: str) -> tuple[str, str, int]:
    """``("Sequence", "A"|"B", type_id)`` or ``("SpecialToken", name, type_id)``."""
    if not isinstance(item, dict) or len(item) != 1 or next(iter(item)) not in ("Sequence", "SpecialToken"):
        raise FormatError(f"{where}: a template piece is {{'Sequence': ...}} or {{'SpecialToken': ...}}")
    kind = next(iter(item))
    body = item[kind]
    if not isinstance(body, dict):
        raise FormatError(f"{where}: {kind} must be an object")
    name = get(body, "id", str, where)
    if kind == "Sequence" and name not in ("A", "B"):
        raise FormatError(f"{where}: a Sequence piece has id A or B, got {name!r}")
    return kind, name, get(body, "type_id", int, where)


@_register
class TemplateProcessing(PostProcessor):
    """``single`` / ``pair`` templates of sequences and named special tokens."""

    def __init__(self, single: list[tuple[str, str, int]], pair: list[tuple[str, str, int]],
                 special_tokens: Mapping[str, list[int]], special_strings: Mapping[str, list[str]] | None = None) -> None:
        self.single = single
        self.pair = pair
        self.special_tokens = dict(special_tokens)
        self.special_strings = dict(special_strings or {k: [k] * len(v) for k, v in special_tokens.items()})
        for kind, name, _ in [*single, *pair]:
            if kind == "SpecialToken" and name not in self.special_tokens:
                raise FormatError(f"TemplateProcessing uses special token {name!r} that it does not define")

    def process(self, ids: list[int], pair: list[int] | None = None) -> list[int]:
        out: list[int] = []
        for kind, name, _ in self.single if pair is None else self.pair:
            if kind == "SpecialToken":
                out.extend(self.special_tokens[name])
            else:
                out.extend(ids if name == "A" else (pair or []))
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> TemplateProcessing:
        single = [_piece(p, f"{where}.single") for p in get(doc, "single", list, where)]
        pair = [_piece(p, f"{where}.pair") for p in get(doc, "pair", list, where)]
        ids: dict[str, list[int]] = {}
        strings: dict[str, list[str]] = {}
        for key, body in get(doc, "special_tokens", dict, where).items():
            body = body if isinstance(body, dict) else {}
            got = get(body, "ids", list, f"{where}.special_tokens.{key}")
            tokens = get(body, "tokens", list, f"{where}.special_tokens.{key}")
            if not all(isinstance(i, int) and not isinstance(i, bool) for i in got) or len(got) != len(tokens):
                raise FormatError(f"{where}.special_tokens.{key}: ids must be ints, one per token")
            ids[key], strings[key] = list(got), [str(t) for t in tokens]
        return cls(single, pair, ids, strings)

    def to_json(self) -> dict[str, Any]:
        def pieces(items: list[tuple[str, str, int]]) -> list[dict[str, Any]]:
            return [{kind: {"id": name, "type_id": t}} for kind, name, t in items]

        specials = {
            k: {"id": k, "ids": self.special_tokens[k], "tokens": self.special_strings[k]}
            for k in sorted(self.special_tokens)
        }
        return {"type": "TemplateProcessing", "single": pieces(self.single), "pair": pieces(self.pair),
                "special_tokens": specials}


@_register
class Sequence(PostProcessor):
    def __init__(self, processors: list[PostProcessor]) -> None:
        self.processors = list(processors)

    def process(self, ids: list[int], pair: list[int] | None = None) -> list[int]:
        # Hugging Face runs each processor on the output of the previous one
        for p in self.processors:
            ids, pair = p.process(ids, pair), None
        return ids

    def trim_passes(self) -> list[bool]:
        return [aps for p in self.processors for aps in p.trim_passes()]

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Sequence:
        items = get(doc, "processors", list, where)
        return cls(build_list("post_processor", PROCESSORS, items, f"{where}.processors"))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Sequence", "processors": [p.to_json() for p in self.processors]}


def affixes(processor: PostProcessor) -> tuple[list[int], list[int]] | None:
    """The ids ``processor`` adds before and after a single sequence when that is all it does
    (TemplateProcessing, BERT, RoBERTa, ByteLevel, a Sequence of them), else ``None``. Found by
    processing stand-in ids (negative: no real id): an affix processor keeps them, in order, between
    the same ids for sequences of 0, 1 and 2 ids."""
    try:
        one = processor.process([-1])
        if one.count(-1) != 1:
            return None
        cut = one.index(-1)
        prefix, suffix = one[:cut], one[cut + 1 :]
        if not all(type(i) is int and 0 <= i < 2**32 for i in prefix + suffix):  # (ids a batch can hold)
            return None
        if processor.process([]) != prefix + suffix or processor.process([-1, -2]) != [*prefix, -1, -2, *suffix]:
            return None
    except Exception:  # a processor that refuses stand-ins (or anything else) is run per text
        return None
    return prefix, suffix


def from_json(doc: Any, where: str = "post_processor") -> PostProcessor | None:
    """The post-processor of a ``tokenizer.json`` ``"post_processor"`` value (``None`` for null)."""
    return build("post_processor", PROCESSORS, doc, where)  # type: ignore[no-any-return]
