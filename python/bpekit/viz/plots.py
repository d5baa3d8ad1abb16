"""The plots, as inline SVG strings: bytes per token per language (or any set of texts) for one or
several tokenizers, the token-length histogram of each vocabulary, and the training curve of a
trained tokenizer (each merge's pair count at training time, and compression of held-out text as
merges are added)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bpekit.errors import UsageError
from bpekit.tokenizer import Tokenizer
from bpekit.viz import svg
from bpekit.viz.forest import merge_counts
from bpekit.viz.measure import Measure, measure
from bpekit.viz.models import Model, as_model

LONGEST_BIN = 16  # tokens this long or longer share the last bar
CURVE_CHARS = 200_000  # each held-out text is cut to this for the compression curve (13 encodes)


def bytes_per_token(rows: Sequence[Measure], title: str = "Bytes per token (higher = better compression)") -> str:
    """One row per text, one bar per tokenizer."""
    if not rows:
        raise UsageError("nothing to plot: no measurements")
    names = list(dict.fromkeys(r.tokenizer for r in rows))
    texts = list(dict.fromkeys(r.text for r in rows))
    cell = {(r.tokenizer, r.text): r.bytes_per_token for r in rows}
    series = {n: [cell[(n, t)] for t in texts] for n in names}
    return svg.hbars(texts, series, title=title, xlabel="UTF-8 bytes per token")


def languages(models: Sequence[object], samples: Mapping[str, str]) -> str:
    """:func:`bytes_per_token` of ``models`` on ``samples`` (``{language: text}``)."""
    return bytes_per_token(measure([as_model(m) for m in models], samples), "Bytes per token, by language")


def length_histogram(models: Sequence[object]) -> str:
    """Share of each vocabulary's ordinary tokens by length in bytes."""
    ms: list[Model] = [as_model(m) for m in models]
    if not ms:
        raise UsageError("length_histogram needs at least one tokenizer")
    bins = [str(n) for n in range(1, LONGEST_BIN)] + [f"{LONGEST_BIN}+"]
    series = {}
    for m in ms:
        hist = [0] * LONGEST_BIN
        for token in m.ranks:
            hist[min(len(token), LONGEST_BIN) - 1] += 1
        series[m.label] = [100 * h / len(m.ranks) for h in hist]
    return svg.vbars(bins, series, title="Token lengths", xlabel="token length in bytes", ylabel="% of the vocabulary")


def checkpoints(n_merges: int, points: int = 12) -> list[int]:
    """About ``points`` merge counts from 0 to ``n_merges``, denser at the start."""
    if n_merges <= 0:
        return [0]
    marks = {0, n_merges} | {round(n_merges * (k / (points - 1)) ** 2) for k in range(points)}
    return sorted(marks)


def compression_curve(
    tokenizer: Tokenizer, texts: Mapping[str, str], points: int = 12
) -> dict[str, list[tuple[float, float]]]:
    """``{text label: [(merges used, bytes per token), ...]}``: the tokenizer cut after k merges."""
    docs = [t[:CURVE_CHARS] for t in texts.values()]
    sizes = [len(t.encode("utf-8", "surrogatepass")) for t in docs]
    curves: dict[str, list[tuple[float, float]]] = {k: [] for k in texts}
    for k in checkpoints(len(tokenizer.merges), points):
        cut = Tokenizer(pattern=tokenizer.pattern, merges=tokenizer.merges[:k])
        for label, ids, size in zip(texts, cut.encoding.encode_ordinary_batch(docs, num_threads=0), sizes, strict=True):
            curves[label].append((k, size / max(len(ids), 1)))
    return curves


def training_curves(tokenizer: object, heldout: Mapping[str, str], points: int = 12) -> list[str]:
    """[pair count per merge (when recorded), bytes per token of ``heldout`` vs merges]."""
    model = as_model(tokenizer)
    if model.tokenizer is None:
        raise UsageError(f"{model.label} is not a trained tokenizer: it has no training curve")
    tok = model.tokenizer
    out = []
    counts = merge_counts(model)
    if counts is not None:
        step = max(1, len(counts) // 2000)  # at most ~2000 points
        pts = [(float(i), float(c)) for i, c in enumerate(counts) if i % step == 0 or i == len(counts) - 1]
        out.append(svg.lines({"pair count": pts}, title="Pair count at training time, per merge",
                             xlabel="merge index", ylabel="count (log scale)", log_y=True))
    if heldout:
        out.append(svg.lines(compression_curve(tok, heldout, points), title="Compression as merges are added",
                             xlabel="merges", ylabel="bytes per token"))
    return out
