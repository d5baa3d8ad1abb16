"""The examples of docs/ubpe.md run as doctests: the page cannot drift from the code."""

from __future__ import annotations

import doctest

from datapaths import ROOT

UBPE_DOC = ROOT / "docs" / "ubpe.md"


def test_ubpe_doc_examples() -> None:
    result = doctest.testfile(str(UBPE_DOC), module_relative=False, report=True, verbose=False)
    assert result.attempted >= 30, f"{UBPE_DOC.name} has lost its examples"
    assert result.failed == 0, f"{result.failed} example(s) of {UBPE_DOC} failed (see above)"
