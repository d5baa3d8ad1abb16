"""The examples of docs/minbpe.md run as doctests, so the page cannot drift from the code."""

from __future__ import annotations

import doctest

import pytest

from minbpe.minbpe_data import DATA, ROOT

DOC = ROOT / "docs" / "minbpe.md"


def test_minbpe_doc_examples() -> None:
    if not (DATA / "ranks" / "cl100k_base.tiktoken").is_file():
        pytest.skip(f"cl100k rank file not found in {DATA / 'ranks'}")
    result = doctest.testfile(str(DOC), module_relative=False, report=True, verbose=False)
    assert result.attempted >= 20, f"{DOC.name} has lost its examples"
    assert result.failed == 0, f"{result.failed} example(s) of {DOC} failed (see the output above)"
