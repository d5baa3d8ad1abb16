"""How well tokenizers compress texts: tokens, bytes per token and fertility (tokens per
whitespace-separated word) for each (tokenizer, text) pair; the numbers behind ``bpekit compare``
and the bytes-per-token plots.

Texts are encoded as ordinary text (special-token strings count as text). Fertility is only
meaningful for languages that put spaces between words; for Chinese, Japanese or Thai a "word" is
a whole sentence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from bpekit.errors import InputTypeError
from bpekit.viz.models import as_models, check_texts


@dataclass(frozen=True)
class Measure:
    """One tokenizer on one text."""

    tokenizer: str
    text: str
    tokens: int
    bytes: int
    chars: int
    words: int

    @property
    def bytes_per_token(self) -> float:
        return self.bytes / self.tokens if self.tokens else float("nan")

    @property
    def fertility(self) -> float:
        return self.tokens / self.words if self.words else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "bytes_per_token": _round(self.bytes_per_token), "fertility": _round(self.fertility)}


def _round(v: float) -> float | None:
    return None if v != v else round(v, 4)


def measure(models: object, texts: Mapping[str, str]) -> list[Measure]:
    """Every model on every text (``{label: text}``), in (model, text) order; ``models`` is a
    list of tokenizers (each a name, a file, an ``Encoding``, a ``Tokenizer`` or a ``Model``) or
    one tokenizer."""
    texts = check_texts(texts)
    labels = list(texts)
    docs = [texts[k] for k in labels]
    sizes = [len(t.encode("utf-8", "surrogatepass")) for t in docs]
    words = [len(t.split()) for t in docs]
    out = []
    for model in as_models(models):
        counts = model.counts(docs)
        out += [
            Measure(model.label, label, n, size, len(doc), w)
            for label, n, size, doc, w in zip(labels, counts, sizes, docs, words, strict=True)
        ]
    return out


def check_rows(rows: object) -> list[Measure]:
    """``rows`` as a list, or an ``InputTypeError`` unless it is a list of :class:`Measure`."""
    if isinstance(rows, Measure):
        return [rows]
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Sequence):
        raise InputTypeError(f"expected a list of Measure (what measure() returns), got {type(rows).__name__}")
    for r in rows:
        if not isinstance(r, Measure):
            raise InputTypeError(f"expected a list of Measure (what measure() returns), got a {type(r).__name__} in it")
    return list(rows)


def totals(rows: Sequence[Measure]) -> list[Measure]:
    """One row per tokenizer: the sums over all its texts."""
    by_model: dict[str, list[Measure]] = {}
    for r in rows:
        by_model.setdefault(r.tokenizer, []).append(r)
    return [
        Measure(name, "(all)", sum(r.tokens for r in rs), sum(r.bytes for r in rs), sum(r.chars for r in rs),
                sum(r.words for r in rs))
        for name, rs in by_model.items()
    ]


def table(rows: Sequence[Measure]) -> tuple[list[str], list[list[str]]]:
    """(header, cells): one row per text, three columns (tokens, bytes/token, fertility) per
    tokenizer, and a last row of totals."""
    names = list(dict.fromkeys(r.tokenizer for r in rows))
    texts = list(dict.fromkeys(r.text for r in rows))
    cell = {(r.tokenizer, r.text): r for r in rows}
    header = ["text", "bytes"]
    for n in names:
        header += [f"{n} tokens", "bytes/tok", "tok/word"]
    body = []
    for t in texts:
        first = cell[(names[0], t)]
        line = [t, f"{first.bytes:,}"]
        for n in names:
            r = cell[(n, t)]
            line += [f"{r.tokens:,}", f"{r.bytes_per_token:.2f}", f"{r.fertility:.2f}"]
        body.append(line)
    if len(texts) > 1:
        tot = {r.tokenizer: r for r in totals(rows)}
        line = ["(all)", f"{tot[names[0]].bytes:,}"]
        for n in names:
            line += [f"{tot[n].tokens:,}", f"{tot[n].bytes_per_token:.2f}", f"{tot[n].fertility:.2f}"]
        body.append(line)
    return header, body


def compact_table(rows: Sequence[Measure]) -> tuple[list[str], list[list[str]]]:
    """(header, cells): one row per text, the bytes per token of each tokenizer."""
    names = list(dict.fromkeys(r.tokenizer for r in rows))
    cell = {(r.tokenizer, r.text): r for r in rows}
    body = [[t, *(f"{cell[(n, t)].bytes_per_token:.2f}" for n in names)] for t in dict.fromkeys(r.text for r in rows)]
    return ["bytes per token", *names], body


def format_table(rows: Sequence[Measure], *, compact: bool = False) -> str:
    """:func:`table` (or :func:`compact_table`) as aligned plain text."""
    rows = check_rows(rows)
    header, body = compact_table(rows) if compact else table(rows)
    widths = [max(len(x) for x in col) for col in zip(header, *body, strict=True)]
    lines = []
    for line in [header, *body]:
        first = line[0].ljust(widths[0])
        lines.append("  ".join([first, *(c.rjust(w) for c, w in zip(line[1:], widths[1:], strict=True))]))
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)
