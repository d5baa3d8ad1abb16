"""The plots (token lengths, training curves) and the report folder."""

from __future__ import annotations

import pytest

from bpekit import Tokenizer
from bpekit.errors import UsageError
from bpekit.viz import lengths_svg, training_svgs, write_report
from bpekit.viz.models import Model
from bpekit.viz.plots import checkpoints, compression_curve


def test_length_histogram_by_hand(tiny):
    # 256 bytes + ab, abab, " c", abc, ababab: 256/261 of length 1, 2/261 of length 2, ...
    out = lengths_svg([Model("tiny", tiny.encoding, tiny)])
    assert "tiny · 1: 98.1</title>" in out and "tiny · 2: 0.766</title>" in out and "tiny · 6: 0.383</title>" in out
    assert "tiny · 16+: 0</title>" in out


def test_checkpoints():
    assert checkpoints(0) == [0]
    marks = checkpoints(1000, 12)
    assert marks[0] == 0 and marks[-1] == 1000 and marks == sorted(set(marks)) and len(marks) == 12


def test_compression_curve_ends(trained):
    text = {"t": "def main(argv):\n    return parser.parse_args(argv)\n" * 20}
    (curve,) = compression_curve(trained, text).values()
    assert curve[0] == (0, 1.0)  # no merges: one token per byte
    n = len(text["t"].encode())
    assert curve[-1] == (len(trained.merges), n / len(trained.encode(text["t"])))
    assert all(a[1] <= b[1] for a, b in zip(curve, curve[1:], strict=False))


def test_training_curves(tiny, encoding):
    held = {"x": "ababab abc"}
    assert len(training_svgs(tiny, held)) == 2  # pair counts recorded, and compression
    assert len(training_svgs(Tokenizer(pattern=tiny.pattern, merges=tiny.merges), held)) == 1
    with pytest.raises(UsageError, match="not a trained tokenizer"):
        training_svgs(encoding, held)


def test_report_folder(tmp_path, trained, encoding):
    bare = Tokenizer(pattern=trained.pattern, merges=trained.merges)  # no pair counts recorded
    report = write_report(tmp_path / "r", [Model("trained", bare.encoding, bare), encoding],
                          {"code": "import os\nprint(os.getcwd())\n", "prose": "The cat sat on the mat."},
                          heldout={"held": "for x in range(10):\n    pass\n"})
    names = sorted(p.name for p in report.parent.iterdir())
    assert names == ["bytes-per-token.svg", "forest.html", "report.html", "token-lengths.svg", "tokens.html",
                     "training-1.svg"]
    html = report.read_text()
    assert html.count("<svg") == 3 and 'href="forest.html"' in html and "pair counts at training time unknown" in html
    assert "cl100k_base" in html and "<td>prose</td>" in html


def test_report_errors(tmp_path, tiny):
    with pytest.raises(UsageError, match="at least one tokenizer"):
        write_report(tmp_path, [], {"a": "b"})
    with pytest.raises(UsageError, match="at least one text"):
        write_report(tmp_path, [tiny], {})
    with pytest.raises(UsageError, match="distinct"):
        write_report(tmp_path, [tiny, tiny], {"a": "b"})
    assert not any(tmp_path.iterdir())  # nothing written on a bad call
