"""The examples of docs/viz.md run as doctests."""

from __future__ import annotations

import doctest

from datapaths import ROOT

DOC = ROOT / "docs" / "viz.md"


def test_viz_doc_examples() -> None:
    result = doctest.testfile(str(DOC), module_relative=False, report=True, verbose=False)
    assert result.attempted >= 8, f"{DOC.name} has lost its examples"
    assert result.failed == 0, f"{result.failed} example(s) of {DOC} failed (see the output above)"
