"""Fixtures shared by the format tests: GPT-NeoX's tokenizer.json, loaded once per session."""

from __future__ import annotations

import pytest
from bpekit import Tokenizer
from datapaths import DATA

NEOX = DATA / "hf" / "gpt-neox-20b.tokenizer.json"


@pytest.fixture(scope="session")
def neox_path():
    """GPT-NeoX's tokenizer.json, for a test that loads its own copy (one it changes)."""
    if not NEOX.is_file():
        pytest.skip(f"{NEOX} not found (set BPEKIT_TEST_DATA)")
    return NEOX


@pytest.fixture(scope="session")
def neox():
    """(bpekit's Tokenizer, Hugging Face's tokenizers.Tokenizer) for GPT-NeoX."""
    tokenizers = pytest.importorskip("tokenizers")
    if not NEOX.is_file():
        pytest.skip(f"{NEOX} not found (set BPEKIT_TEST_DATA)")
    return Tokenizer.from_file(NEOX), tokenizers.Tokenizer.from_file(str(NEOX))
