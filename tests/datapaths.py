"""Where the shared test data lives: ``$BPEKIT_TEST_DATA``, default ``../shared/data``."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BPEKIT_TEST_DATA", ROOT.parent / "shared" / "data")).resolve()


def corpus_files() -> list[Path]:
    """Every text file under corpora/, sorted (empty when the data is absent)."""
    base = DATA / "corpora"
    if not base.is_dir():
        return []
    return sorted(p for p in base.rglob("*") if p.is_file())
