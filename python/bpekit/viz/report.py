"""The HTML report that puts the pictures together, written into a folder: ``report.html`` (the
tokens of a sample text under each tokenizer, a compression table, bytes per token per text or
language, token lengths, the training curve), ``forest.html`` (the merge forest of the first
tokenizer that has merges), ``tokens.html`` and each plot as its own ``.svg`` file."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from bpekit.atomicfile import atomic_write
from bpekit.errors import UsageError
from bpekit.viz import colour, plots
from bpekit.viz.forest import forest_page, merge_counts
from bpekit.viz.measure import measure, table
from bpekit.viz.models import Model, as_model
from bpekit.viz.page import esc, page

SAMPLE = (
    "Byte-pair encoding turns text into tokens: frequent pieces such as \" the\" become one token, "
    "rare words are spelled from smaller pieces.\n"
    "def tokenize(text: str) -> list[int]:\n    return enc.encode(text)  # 12345\n"
    "Façade, naïve, Ελληνικά, русский, 日本語, 한국어, हिन्दी, عربى 👍\n"
)


def _write(path: Path, text: str) -> None:
    atomic_write(path, text.encode("utf-8"))


def _table_html(header: list[str], body: list[list[str]]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    rows = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in line) + "</tr>" for line in body)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _forest_model(models: Sequence[Model]) -> tuple[Model | None, str]:
    for m in models:
        if m.tokenizer is not None:
            return m, ""
    return None, "No merge forest: none of these tokenizers carries its merge list (only ranks)."


def write_report(
    out_dir: str | os.PathLike[str],
    tokenizers: Sequence[object],
    texts: Mapping[str, str],
    *,
    sample: str = SAMPLE,
    heldout: Mapping[str, str] | None = None,
    title: str = "bpekit report",
) -> Path:
    """Writes the report for ``tokenizers`` measured on ``texts`` (``{label: text}``, e.g. one per
    language) into ``out_dir``; ``heldout`` texts draw the training curve. Returns report.html."""
    models = [as_model(t) for t in tokenizers]
    if not models:
        raise UsageError("a report needs at least one tokenizer")
    if not texts:
        raise UsageError("a report needs at least one text to measure")
    labels = [m.label for m in models]
    if len(set(labels)) != len(labels):
        raise UsageError(f"tokenizer labels must be distinct, got {labels}")
    out = Path(out_dir)
    rows = measure(models, texts)
    parts = [f"<h1>{esc(title)}</h1>", _summary(models)]
    parts.append("<h2>A sample, token by token</h2><p class=\"note\">hover a token for its id</p>")
    for m in models:
        parts.append(f"<h3>{esc(m.label)}</h3>{colour.html_fragment(m, sample)}")
    _write(out / "tokens.html", colour.html_page(models[0], sample))
    parts.append("<h2>Compression</h2>" + _table_html(*table(rows)))
    figures = {"bytes-per-token.svg": plots.bytes_per_token(rows), "token-lengths.svg": plots.length_histogram(models)}
    trained = next((m for m in models if m.tokenizer is not None), None)
    if trained is not None:
        curves = plots.training_curves(trained, heldout or {})
        if merge_counts(trained) is None:
            parts.append(f'<p class="note">{esc(trained.label)}: pair counts at training time unknown '
                         "(the tokenizer file does not record them).</p>")
        for n, fig in enumerate(curves):
            figures[f"training-{n + 1}.svg"] = fig
    for name, fig in figures.items():
        _write(out / name, fig)
        parts.append(f'<h2>{esc(name.removesuffix(".svg").replace("-", " ").capitalize())}</h2>{fig}')
    forest_model, why = _forest_model(models)
    if forest_model is not None:
        _write(out / "forest.html", forest_page(forest_model))
        parts.append(f'<h2>Merge forest</h2><p><a href="forest.html">Explore the merges of '
                     f"{esc(forest_model.label)}</a> (search any token, browse by length and id).</p>")
    else:
        parts.append(f"<h2>Merge forest</h2><p class=\"note\">{esc(why)}</p>")
    report = out / "report.html"
    _write(report, page(title, "\n".join(parts)))
    return report


def _summary(models: Sequence[Model]) -> str:
    body = []
    for m in models:
        enc = m.encoding
        kind = "trained by bpekit" if m.tokenizer is not None else "encoding"
        body.append([m.label, kind, f"{len(m.ranks):,}", f"{len(enc.special_tokens_set):,}",
                     f"{max(map(len, m.ranks)):,}"])
    return _table_html(["tokenizer", "kind", "ordinary tokens", "special", "longest token (bytes)"], body)
