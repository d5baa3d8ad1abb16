"""The examples of docs/api.md run as doctests: the API reference cannot drift from the code."""

from __future__ import annotations

import doctest
import pytest

from datapaths import DATA, ROOT

API_DOC = ROOT / "docs" / "api.md"


def test_api_doc_examples() -> None:
    if not (DATA / "ranks").is_dir():
        pytest.skip(f"rank files not found in {DATA / 'ranks'}")
    result = doctest.testfile(str(API_DOC), module_relative=False, report=True, verbose=False)
    assert result.attempted >= 40, f"{API_DOC.name} has lost its examples"
    assert result.failed == 0, f"{result.failed} example(s) of {API_DOC} failed (see the output above)"
