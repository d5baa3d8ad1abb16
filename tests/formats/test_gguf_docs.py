"""The examples of docs/formats/gguf.md and docs/formats/convert.md run as doctests."""

from __future__ import annotations

import doctest

import pytest
from datapaths import ROOT


@pytest.mark.parametrize(("name", "minimum"), [("gguf.md", 5), ("convert.md", 3)])
def test_doc_examples(name: str, minimum: int) -> None:
    doc = ROOT / "docs" / "formats" / name
    result = doctest.testfile(
        str(doc), module_relative=False, report=True, verbose=False
    )
    assert result.attempted >= minimum, f"{doc.name} has lost its examples"
    assert result.failed == 0, (
        f"{result.failed} example(s) of {doc} failed (see the output above)"
    )
