"""What every pipeline stage shares: reading its ``tokenizer.json`` dict with typed checks, the
``{"String": s} | {"Regex": r}`` pattern object, and the ``type`` -> class tables.

Each stage module (normalizers, pre_tokenizers, models, processors, decoders) registers its
classes with :func:`registry`; ``from_json`` looks the ``type`` up there and raises
``FormatError`` naming the stage kind and the unknown type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import regex

from bpekit.errors import FormatError, PatternError
from bpekit.pipeline.onig import compile_onig, literal

T = TypeVar("T")
_MISSING: Any = object()


def get(doc: Mapping[str, Any], key: str, types: type | tuple[type, ...], where: str, default: Any = _MISSING) -> Any:
    """``doc[key]`` checked against ``types`` (``bool`` is never accepted as an ``int``)."""
    if key not in doc:
        if default is _MISSING:
            raise FormatError(f"{where}: missing key {key!r}")
        return default
    value = doc[key]
    ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in _as_tuple(types))
    if not ok:
        names = "/".join(t.__name__ if t is not type(None) else "null" for t in _as_tuple(types))
        raise FormatError(f"{where}: {key!r} must be {names}, got {type(value).__name__} {value!r:.60}")
    return value


def _as_tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def check_dict(doc: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(doc, Mapping):
        raise FormatError(f"{where}: expected a JSON object, got {type(doc).__name__}")
    return doc


class Pattern:
    """A ``String`` (literal) or ``Regex`` (Oniguruma) pattern, as stages store it."""

    def __init__(self, text: str, is_regex: bool) -> None:
        self.text = text
        self.is_regex = is_regex
        self.compiled: regex.Pattern[str] = compile_onig(text) if is_regex else literal(text)

    @classmethod
    def from_json(cls, doc: Any, where: str) -> Pattern:
        doc = check_dict(doc, where)
        if len(doc) != 1 or next(iter(doc)) not in ("String", "Regex"):
            raise FormatError(f"{where}: a pattern is {{'String': ...}} or {{'Regex': ...}}, got {dict(doc)!r:.80}")
        kind = next(iter(doc))
        text = get(doc, kind, str, where)
        try:
            return cls(text, kind == "Regex")
        except PatternError as exc:
            raise FormatError(f"{where}: {exc}") from None

    def to_json(self) -> dict[str, str]:
        return {"Regex" if self.is_regex else "String": self.text}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pattern) and (self.text, self.is_regex) == (other.text, other.is_regex)

    def __repr__(self) -> str:
        return f"{'Regex' if self.is_regex else 'String'}({self.text!r})"


def registry(kind: str) -> tuple[dict[str, type], Callable[[type[T]], type[T]]]:
    """A ``type`` name -> class table for one stage kind, and a class decorator filling it."""
    table: dict[str, type] = {}

    def register(cls: type[T]) -> type[T]:
        table[cls.__name__] = cls
        return cls

    return table, register


def build(kind: str, table: Mapping[str, type], doc: Any, where: str) -> Any:
    """The stage object of ``doc`` (``None`` stays ``None``)."""
    if doc is None:
        return None
    doc = check_dict(doc, where)
    name = get(doc, "type", str, where)
    cls = table.get(name)
    if cls is None:
        raise FormatError(f"{where}: unknown {kind} type {name!r} (bpekit supports {', '.join(sorted(table))})")
    return cls.from_json(doc, f"{where}.{name}")  # type: ignore[attr-defined]


def build_list(kind: str, table: Mapping[str, type], items: Any, where: str) -> list[Any]:
    if not isinstance(items, list):
        raise FormatError(f"{where}: expected a list of {kind}s, got {type(items).__name__}")
    out = [build(kind, table, item, f"{where}[{i}]") for i, item in enumerate(items)]
    if any(o is None for o in out):
        raise FormatError(f"{where}: a {kind} in a Sequence must not be null")
    return out


class Stage:
    """Equality and repr by the ``tokenizer.json`` dict; a stage without options reads and writes
    just its ``type``."""

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Any:
        return cls()

    def to_json(self) -> dict[str, Any]:
        return {"type": type(self).__name__}

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_json() == other.to_json()  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.to_json().items() if k != "type")
        return f"{type(self).__name__}({fields})"


class ByteLevelOptions(Stage):
    """The options HF's ByteLevel pre-tokenizer, post-processor and decoder all carry."""

    def __init__(self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True) -> None:
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Any:
        return cls(
            get(doc, "add_prefix_space", bool, where, True),
            get(doc, "trim_offsets", bool, where, True),
            get(doc, "use_regex", bool, where, True),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "ByteLevel",
            "add_prefix_space": self.add_prefix_space,
            "trim_offsets": self.trim_offsets,
            "use_regex": self.use_regex,
        }
