"""Charts as inline SVG, written by hand (no plotting library): horizontal grouped bars (one row
per category, e.g. per language), vertical grouped bars (histograms) and line charts (linear or
log y). Each returns one ``<svg>`` element as a string; text is escaped, numbers rounded."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from bpekit.viz.page import esc

COLOURS = ("#2f6fdf", "#e4572e", "#17a398", "#f2a541", "#8c5fbf", "#6b8f23", "#d6457b", "#5d6675")
FONT = 'font-family="system-ui, sans-serif"'


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round numbers (1, 2, 5 × 10^k steps) covering ``[low, high]``."""
    if high <= low:
        high = low + 1
    raw = (high - low) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.floor(low / step) * step
    ticks = []
    t = first
    while t <= high + step * 1e-9:
        ticks.append(round(t, 10))
        t += step
    if ticks[-1] < high:
        ticks.append(round(t, 10))
    return ticks


def fmt(v: float) -> str:
    """A tick label: integers without decimals, large numbers with k/M."""
    if abs(v) >= 1e6:
        return f"{v / 1e6:g}M"
    if abs(v) >= 1e4:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def _legend(names: Sequence[str], x: float, y: float) -> str:
    out = []
    for i, name in enumerate(names):
        cx = x + i * 170
        out.append(f'<rect x="{cx}" y="{y - 10}" width="12" height="12" fill="{COLOURS[i % len(COLOURS)]}"/>'
                   f'<text x="{cx + 17}" y="{y}" font-size="12" {FONT}>{esc(name[:24])}</text>')
    return "".join(out)


def _svg(width: float, height: float, title: str, body: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" height="{height:.0f}" role="img" aria-label="{esc(title)}">'
        f'<rect width="100%" height="100%" fill="#fff"/>'
        f'<text x="12" y="22" font-size="15" font-weight="600" {FONT}>{esc(title)}</text>{body}</svg>'
    )


def hbars(
    categories: Sequence[str], series: Mapping[str, Sequence[float]], *, title: str, xlabel: str, width: int = 900
) -> str:
    """One row per category, one bar per series in each row."""
    names = list(series)
    bar, gap, left, top = 7, 5, 170, 64
    row = bar * len(names) + gap
    plot_w = width - left - 30
    height = top + row * len(categories) + 40
    vmax = max((v for vals in series.values() for v in vals if v == v), default=1.0)
    ticks = nice_ticks(0, vmax)
    scale = plot_w / ticks[-1]
    out = [_legend(names, left, 42)]
    bottom = top + row * len(categories)
    for t in ticks:
        x = left + t * scale
        out.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{bottom}" stroke="#e3e6ec"/>'
                   f'<text x="{x:.1f}" y="{bottom + 14}" font-size="11" text-anchor="middle" {FONT}>{fmt(t)}</text>'
                   f'<text x="{x:.1f}" y="{top - 7}" font-size="10" text-anchor="middle" {FONT}>{fmt(t)}</text>')
    for r, cat in enumerate(categories):
        y = top + r * row
        out.append(f'<text x="{left - 6}" y="{y + row / 2 + 2:.1f}" font-size="10" text-anchor="end" '
                   f'{FONT}>{esc(cat[:28])}</text>')
        for s, name in enumerate(names):
            v = series[name][r]
            if v != v:  # NaN: no value
                continue
            out.append(f'<rect x="{left}" y="{y + s * bar}" width="{v * scale:.1f}" height="{bar - 1}" '
                       f'fill="{COLOURS[s % len(COLOURS)]}"><title>{esc(cat)} · {esc(name)}: {v:.3g}</title></rect>')
    out.append(f'<text x="{left + plot_w / 2}" y="{bottom + 32}" font-size="12" text-anchor="middle" {FONT}>'
               f"{esc(xlabel)}</text>")
    return _svg(width, height, title, "".join(out))


def vbars(
    categories: Sequence[str], series: Mapping[str, Sequence[float]], *, title: str, xlabel: str, ylabel: str,
    width: int = 900, height: int = 360,
) -> str:
    """Grouped vertical bars, one group per category (a histogram when categories are bins)."""
    names = list(series)
    left, top, right, bottom_m = 60, 50, 20, 50
    plot_w, plot_h = width - left - right, height - top - bottom_m
    vmax = max((v for vals in series.values() for v in vals), default=1.0)
    ticks = nice_ticks(0, vmax)
    sy = plot_h / ticks[-1]
    group = plot_w / max(len(categories), 1)
    bar = group * 0.8 / max(len(names), 1)
    base = top + plot_h
    out = [_legend(names, left, 40)]
    for t in ticks:
        y = base - t * sy
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#e3e6ec"/>'
                   f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end" {FONT}>{fmt(t)}</text>')
    for c, cat in enumerate(categories):
        gx = left + c * group + group * 0.1
        for s, name in enumerate(names):
            v = series[name][c]
            out.append(f'<rect x="{gx + s * bar:.1f}" y="{base - v * sy:.1f}" width="{max(bar - 1, 1):.1f}" '
                       f'height="{v * sy:.1f}" fill="{COLOURS[s % len(COLOURS)]}"><title>{esc(name)} · {esc(cat)}: '
                       f"{v:.3g}</title></rect>")
        out.append(f'<text x="{gx + group * 0.4:.1f}" y="{base + 14}" font-size="10" text-anchor="middle" {FONT}>'
                   f"{esc(cat)}</text>")
    out.append(_axis_labels(left, top, plot_w, plot_h, xlabel, ylabel))
    return _svg(width, height, title, "".join(out))


def _axis_labels(left: float, top: float, plot_w: float, plot_h: float, xlabel: str, ylabel: str) -> str:
    cy = top + plot_h / 2
    return (
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#333"/>'
        f'<text x="{left + plot_w / 2}" y="{top + plot_h + 34}" font-size="12" text-anchor="middle" {FONT}>'
        f"{esc(xlabel)}</text>"
        f'<text x="14" y="{cy}" font-size="12" text-anchor="middle" transform="rotate(-90 14 {cy})" {FONT}>'
        f"{esc(ylabel)}</text>"
    )


def lines(
    series: Mapping[str, Sequence[tuple[float, float]]], *, title: str, xlabel: str, ylabel: str,
    log_y: bool = False, width: int = 900, height: int = 360,
) -> str:
    """A line per series of (x, y) points; ``log_y`` draws y on a log10 scale (y > 0 only)."""
    names = list(series)
    pts = {n: [(x, y) for x, y in series[n] if not log_y or y > 0] for n in names}
    xs = [x for p in pts.values() for x, _ in p] or [0.0, 1.0]
    ys = [y for p in pts.values() for _, y in p] or [1.0]
    left, top, right, bottom_m = 66, 50, 20, 50
    plot_w, plot_h = width - left - right, height - top - bottom_m
    xt = nice_ticks(min(xs), max(xs))
    if log_y:
        lo, hi = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
        hi = max(hi, lo + 1)
        yt = [10.0**k for k in range(lo, hi + 1)]
        fy = lambda y: (math.log10(y) - lo) / (hi - lo)  # noqa: E731
    else:
        yt = nice_ticks(min(0.0, min(ys)), max(ys))
        fy = lambda y: (y - yt[0]) / (yt[-1] - yt[0])  # noqa: E731
    fx = lambda x: (x - xt[0]) / ((xt[-1] - xt[0]) or 1)  # noqa: E731
    px = lambda x: left + fx(x) * plot_w  # noqa: E731
    py = lambda y: top + plot_h - fy(y) * plot_h  # noqa: E731
    out = [_legend(names, left, 40)]
    for t in yt:
        out.append(f'<line x1="{left}" y1="{py(t):.1f}" x2="{left + plot_w}" y2="{py(t):.1f}" stroke="#e3e6ec"/>'
                   f'<text x="{left - 6}" y="{py(t) + 4:.1f}" font-size="11" text-anchor="end" {FONT}>{fmt(t)}</text>')
    for t in xt:
        out.append(f'<text x="{px(t):.1f}" y="{top + plot_h + 15}" font-size="11" text-anchor="middle" {FONT}>'
                   f"{fmt(t)}</text>")
    for i, name in enumerate(names):
        if not pts[name]:
            continue
        d = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts[name])
        out.append(f'<polyline points="{d}" fill="none" stroke="{COLOURS[i % len(COLOURS)]}" stroke-width="2">'
                   f"<title>{esc(name)}</title></polyline>")
    out.append(_axis_labels(left, top, plot_w, plot_h, xlabel, ylabel))
    return _svg(width, height, title, "".join(out))
