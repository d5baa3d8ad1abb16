"""The plots (token lengths, training curves) and the report folder."""

from __future__ import annotations

import time

import pytest

from bpekit import Tokenizer
from bpekit.errors import InputTypeError, UsageError
from bpekit.viz import languages_svg, lengths_svg, training_svgs, write_report
from bpekit.viz.models import Model
from bpekit.viz.plots import MAX_POINTS, checkpoints, compression_curve


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


def test_points_is_checked_and_bounded_by_the_merges(tiny):
    one = Tokenizer(pattern=tiny.pattern, merges=[(b"a", b"b")])
    start = time.monotonic()
    assert len(training_svgs(one, {"x": "ab"}, points=2**40)) == 1  # used to loop over range(points)
    assert time.monotonic() - start < 5
    assert checkpoints(5, 2**40) == [0, 1, 2, 3, 4, 5]  # one per merge count, no more
    assert len(checkpoints(10**6, 10**9)) <= MAX_POINTS
    (curve,) = compression_curve(tiny, {"x": "ababab abc"}, points=100).values()
    assert [k for k, _ in curve] == [0, 1, 2, 3, 4, 5]
    for bad in (1, 0, -3):
        with pytest.raises(UsageError, match="points must be an int >= 2"):
            training_svgs(tiny, {"x": "ab"}, points=bad)
    for bad in (2.5, None, True, "12"):
        with pytest.raises(InputTypeError, match="points must be an int >= 2"):
            training_svgs(tiny, {"x": "ab"}, points=bad)


def test_heldout_must_be_texts(tiny):
    with pytest.raises(InputTypeError, match="heldout must be a mapping"):
        training_svgs(tiny, "ab")
    with pytest.raises(InputTypeError, match="heldout must map str labels to str texts"):
        training_svgs(tiny, {"x": b"ab"})
    assert len(training_svgs(tiny, None)) == 1  # no held-out texts: the pair counts only


def test_one_tokenizer_where_a_list_is_expected(tmp_path, tiny, encoding):
    # a str was iterated as characters ("'c' is neither an encoding name"), a Tokenizer was not iterable
    for one in ("cl100k_base", encoding.encoding, tiny, encoding):
        assert "<svg" in languages_svg(one, {"x": "hello world"})
        assert "<svg" in lengths_svg(one)
    report = write_report(tmp_path / "r", "cl100k_base", {"x": "hello"})
    assert "cl100k_base" in report.read_text()
    assert (write_report(tmp_path / "t", tiny, {"x": "ab"}).parent / "forest.html").is_file()
    with pytest.raises(InputTypeError, match="a tokenizer or a list of tokenizers"):
        lengths_svg(5)


def test_report_checks_everything_before_writing(tmp_path, tiny):
    out = tmp_path / "r"
    bad = [({"heldout": "ab"}, InputTypeError, "heldout must be a mapping"),
           ({"heldout": {"x": None}}, InputTypeError, "heldout must map str"),
           ({"sample": None}, InputTypeError, "sample must be a str"),
           ({"title": 3}, InputTypeError, "title must be a str")]
    for kwargs, error, message in bad:
        with pytest.raises(error, match=message):
            write_report(out, [tiny], {"x": "ab"}, **kwargs)
    with pytest.raises(InputTypeError, match="texts must map str labels to str texts"):
        write_report(out, [tiny], {"x": None})
    with pytest.raises(InputTypeError, match="texts must be a mapping"):
        write_report(out, [tiny], ["ab"])
    with pytest.raises(InputTypeError, match="out_dir must be a path"):
        write_report(None, [tiny], {"x": "ab"})
    assert not any(tmp_path.iterdir())  # tokens.html was written before heldout failed
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="file exists and is not a folder"):
        write_report(tmp_path / "file", [tiny], {"x": "ab"})
    assert (tmp_path / "file").read_text() == "x"
