"""The HTML report that puts the pictures together, written into a folder: ``report.html`` (the
tokens of a sample text under each tokenizer, a compression table, bytes per token per text or
language, token lengths, the training curve), ``forest.html`` (the merge forest of the first
tokenizer that has merges), ``tokens.html`` and each plot as its own ``.svg`` file."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from bpekit.atomicfile import atomic_write_all
from bpekit.errors import InputTypeError, UsageError
from bpekit.viz import colour, plots
from bpekit.viz.forest import forest_page, merge_counts
from bpekit.viz.measure import measure, table
from bpekit.viz.models import Model, as_models, check_texts
from bpekit.viz.page import esc, page

SAMPLE = (
    "Byte-pair encoding turns text into tokens: frequent pieces such as \" the\" become one token, "
    "rare words are spelled from smaller pieces.\n"
    "def tokenize(text: str) -> list[int]:\n    return enc.encode(text)  # 12345\n"
    "Façade, naïve, Ελληνικά, русский, 日本語, 한국어, हिन्दी, عربى 👍\n"
)


def _table_html(header: list[str], body: list[list[str]]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    rows = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in line) + "</tr>" for line in body)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _has_merges(m: Model) -> bool:
    """Whether ``m`` is a rank-based ``Tokenizer`` (it knows its merges: a forest, a training curve)."""
    return m.tokenizer is not None and m.encoding is not None


def _forest_model(models: Sequence[Model]) -> tuple[Model | None, str]:
    for m in models:
        if _has_merges(m):
            return m, ""
    return None, ("No merge forest: none of these tokenizers carries its merge list (encodings carry only ranks, "
                  "pipeline tokenizers are not byte-level rank models).")


def write_report(
    out_dir: str | os.PathLike[str],
    tokenizers: object,
    texts: Mapping[str, str],
    *,
    sample: str = SAMPLE,
    heldout: Mapping[str, str] | None = None,
    title: str = "bpekit report",
) -> Path:
    """Writes the report for ``tokenizers`` (a list of tokenizers, or one) measured on ``texts``
    (``{label: text}``, e.g. one per language) into ``out_dir``; ``heldout`` texts draw the
    training curve. Returns report.html. Every page and plot is made before the first file is
    written, and the files are written together (``atomic_write_all``), so a bad argument leaves
    the folder as it was."""
    if not isinstance(out_dir, (str, os.PathLike)):
        raise InputTypeError(f"out_dir must be a path, got {type(out_dir).__name__}")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a folder: a report is written into a folder")
    for name, value in (("sample", sample), ("title", title)):
        if not isinstance(value, str):
            raise InputTypeError(f"{name} must be a str, got {type(value).__name__}")
    models = as_models(tokenizers)
    texts = check_texts(texts)
    heldout = None if heldout is None else check_texts(heldout, "heldout")
    if not models:
        raise UsageError("a report needs at least one tokenizer")
    if not texts:
        raise UsageError("a report needs at least one text to measure")
    labels = [m.label for m in models]
    if len(set(labels)) != len(labels):
        raise UsageError(f"tokenizer labels must be distinct, got {labels}")
    rows = measure(models, texts)
    parts = [f"<h1>{esc(title)}</h1>", _summary(models)]
    parts.append("<h2>A sample, token by token</h2><p class=\"note\">hover a token for its id</p>")
    for m in models:
        parts.append(f"<h3>{esc(m.label)}</h3>{colour.html_fragment(m, sample)}")
    files = {"tokens.html": colour.html_page(models[0], sample)}
    parts.append("<h2>Compression</h2>" + _table_html(*table(rows)))
    figures = {"bytes-per-token.svg": plots.bytes_per_token(rows), "token-lengths.svg": plots.length_histogram(models)}
    trained = next((m for m in models if _has_merges(m)), None)
    if trained is not None:
        curves = plots.training_curves(trained, heldout)
        if merge_counts(trained) is None:
            parts.append(f'<p class="note">{esc(trained.label)}: pair counts at training time unknown '
                         "(the tokenizer file does not record them).</p>")
        for n, fig in enumerate(curves):
            figures[f"training-{n + 1}.svg"] = fig
    for name, fig in figures.items():
        files[name] = fig
        parts.append(f'<h2>{esc(name.removesuffix(".svg").replace("-", " ").capitalize())}</h2>{fig}')
    forest_model, why = _forest_model(models)
    if forest_model is not None:
        files["forest.html"] = forest_page(forest_model)
        parts.append(f'<h2>Merge forest</h2><p><a href="forest.html">Explore the merges of '
                     f"{esc(forest_model.label)}</a> (search any token, browse by length and id).</p>")
    else:
        parts.append(f"<h2>Merge forest</h2><p class=\"note\">{esc(why)}</p>")
    files["report.html"] = page(title, "\n".join(parts))
    atomic_write_all([(out / name, text.encode("utf-8")) for name, text in files.items()])
    return out / "report.html"


def _summary(models: Sequence[Model]) -> str:
    body = []
    for m in models:
        body.append([m.label, m.kind, f"{len(m.vocab):,}", f"{len(m.special_ids):,}",
                     f"{max(map(len, m.vocab), default=0):,}"])
    return _table_html(["tokenizer", "kind", "ordinary tokens", "special", "longest token (bytes)"], body)
