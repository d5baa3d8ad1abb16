"""The plots, as inline SVG strings: bytes per token per language (or any set of texts) for one or
several tokenizers, the token-length histogram of each vocabulary, and the training curve of a
trained tokenizer (each merge's pair count at training time, and compression of held-out text as
merges are added)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bpekit.errors import InputTypeError, UsageError
from bpekit.tokenizer import Tokenizer
from bpekit.viz import svg
from bpekit.viz.forest import merge_counts
from bpekit.viz.measure import Measure, check_rows, measure
from bpekit.viz.models import Model, as_model, as_models, check_texts

LONGEST_BIN = 16  # tokens this long or longer share the last bar
CURVE_CHARS = 200_000  # each held-out text is cut to this for the compression curve (13 encodes)
MAX_POINTS = 200  # the compression curve is drawn at most at this many merge counts (a cut tokenizer each)


def bytes_per_token(rows: Sequence[Measure], title: str = "Bytes per token (higher = better compression)") -> str:
    """One row per text, one bar per tokenizer."""
    rows = check_rows(rows)
    if not rows:
        raise UsageError("nothing to plot: no measurements")
    names = list(dict.fromkeys(r.tokenizer for r in rows))
    texts = list(dict.fromkeys(r.text for r in rows))
    cell = {(r.tokenizer, r.text): r.bytes_per_token for r in rows}
    series = {n: [cell[(n, t)] for t in texts] for n in names}
    return svg.hbars(texts, series, title=title, xlabel="UTF-8 bytes per token")


def languages(models: object, samples: Mapping[str, str]) -> str:
    """:func:`bytes_per_token` of ``models`` (a list of tokenizers, or one) on ``samples``
    (``{language: text}``)."""
    return bytes_per_token(measure(as_models(models), samples), "Bytes per token, by language")


def length_histogram(models: object) -> str:
    """Share of each vocabulary's ordinary tokens by length in bytes (``models``: a list of
    tokenizers, or one)."""
    ms: list[Model] = as_models(models)
    if not ms:
        raise UsageError("length_histogram needs at least one tokenizer")
    bins = [str(n) for n in range(1, LONGEST_BIN)] + [f"{LONGEST_BIN}+"]
    series = {}
    for m in ms:
        hist = [0] * LONGEST_BIN
        for token in m.vocab:
            hist[min(max(len(token), 1), LONGEST_BIN) - 1] += 1
        series[m.label] = [100 * h / max(len(m.vocab), 1) for h in hist]
    return svg.vbars(bins, series, title="Token lengths", xlabel="token length in bytes", ylabel="% of the vocabulary")


def check_points(points: object) -> int:
    """``points`` (how many merge counts the compression curve is drawn at), an int >= 2."""
    if isinstance(points, bool) or not isinstance(points, int):
        raise InputTypeError(f"points must be an int >= 2, got {type(points).__name__}")
    if points < 2:
        raise UsageError(f"points must be an int >= 2 (the curve's two ends at least), got {points}")
    return points


def checkpoints(n_merges: int, points: int = 12) -> list[int]:
    """About ``points`` merge counts from 0 to ``n_merges``, denser at the start: at most one per
    merge count (``n_merges + 1``) and :data:`MAX_POINTS`, so the work is bounded whatever
    ``points`` is."""
    points = min(check_points(points), MAX_POINTS)
    if n_merges <= 0:
        return [0]
    if points > n_merges:
        return list(range(n_merges + 1))
    marks = {0, n_merges} | {round(n_merges * (k / (points - 1)) ** 2) for k in range(points)}
    return sorted(marks)


def compression_curve(
    tokenizer: Tokenizer, texts: Mapping[str, str], points: int = 12
) -> dict[str, list[tuple[float, float]]]:
    """``{text label: [(merges used, bytes per token), ...]}``: the tokenizer cut after k merges."""
    texts = check_texts(texts, "heldout")
    docs = [t[:CURVE_CHARS] for t in texts.values()]
    sizes = [len(t.encode("utf-8", "surrogatepass")) for t in docs]
    curves: dict[str, list[tuple[float, float]]] = {k: [] for k in texts}
    for k in checkpoints(len(tokenizer.merges), points):
        cut = Tokenizer(pattern=tokenizer.pattern, merges=tokenizer.merges[:k])
        for label, ids, size in zip(texts, cut.encoding.encode_ordinary_batch(docs, num_threads=0), sizes, strict=True):
            curves[label].append((k, size / max(len(ids), 1)))
    return curves


def training_curves(tokenizer: object, heldout: Mapping[str, str] | None, points: int = 12) -> list[str]:
    """[pair count per merge (when recorded), bytes per token of ``heldout`` vs merges, drawn at
    ``points`` merge counts (an int >= 2; at most one per merge count and :data:`MAX_POINTS`)]."""
    model = as_model(tokenizer)
    heldout = {} if heldout is None else check_texts(heldout, "heldout")
    points = check_points(points)
    if model.tokenizer is None or model.encoding is None:
        raise UsageError(f"{model.label} is not a trained tokenizer: it has no training curve (the curve needs "
                         f"a bpekit tokenizer with its merges; got a {model.kind})")
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
