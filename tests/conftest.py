"""Shared fixtures: where the real data lives, and hypothesis profiles.

Data is read in place from ``$BPEKIT_TEST_DATA`` (default ``../shared/data`` beside the repository
root); tests that need it skip with a clear reason when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from datapaths import DATA

# Rank files for bpekit.get_encoding come from the shared data unless the caller set a directory.
if (DATA / "ranks").is_dir():
    os.environ.setdefault("BPEKIT_DATA_DIR", str(DATA / "ranks"))

settings.register_profile(
    "default",
    max_examples=int(os.environ.get("BPEKIT_HYPOTHESIS_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("default")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA.is_dir():
        pytest.skip(f"shared test data not found at {DATA} (set BPEKIT_TEST_DATA)")
    return DATA
