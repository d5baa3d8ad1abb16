"""Hand-written SVG charts: valid XML, one mark per value, ticks that cover the data."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from bpekit.viz import svg

NS = "{http://www.w3.org/2000/svg}"


def _parse(text: str) -> ET.Element:
    root = ET.fromstring(text)
    assert root.tag == f"{NS}svg"
    return root


def _bars(root: ET.Element) -> list[ET.Element]:
    return [r for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]


def test_nice_ticks():
    assert svg.nice_ticks(0, 4.3) == [0, 1, 2, 3, 4, 5]
    assert svg.nice_ticks(0, 180) == [0, 50, 100, 150, 200]
    ticks = svg.nice_ticks(0.2, 0.9)
    assert ticks[0] <= 0.2 and ticks[-1] >= 0.9 and len(ticks) <= 8


def test_hbars_one_bar_per_value_and_nan_skipped():
    root = _parse(svg.hbars(["eng", "fra & <x>"], {"A": [4.0, 3.0], "B": [2.0, math.nan]}, title="t", xlabel="x"))
    bars = _bars(root)
    assert len(bars) == 3
    widths = {b.find(f"{NS}title").text: float(b.get("width")) for b in bars}
    assert widths["eng · A: 4"] == 2 * widths["eng · B: 2"]
    assert any(t.text == "fra & <x>" for t in root.iter(f"{NS}text"))


def test_vbars_heights_proportional():
    root = _parse(svg.vbars(["1", "2", "3"], {"A": [10, 20, 5]}, title="t", xlabel="x", ylabel="y"))
    heights = [float(b.get("height")) for b in _bars(root)]
    assert heights[1] == 2 * heights[0] == 4 * heights[2]


def test_lines_linear_and_log():
    root = _parse(svg.lines({"a": [(0, 1), (10, 3)], "b": [(0, 2), (5, 2)]}, title="t", xlabel="x", ylabel="y"))
    assert len(list(root.iter(f"{NS}polyline"))) == 2
    root = _parse(svg.lines({"c": [(0, 1000.0), (1, 10.0), (2, 0.0)]}, title="t", xlabel="x", ylabel="y", log_y=True))
    (line,) = root.iter(f"{NS}polyline")
    ys = [float(p.split(",")[1]) for p in line.get("points").split()]
    assert len(ys) == 2  # the zero count has no place on a log scale
    labels = {t.text for t in root.iter(f"{NS}text")}
    assert {"10", "100", "1000"} <= labels
