"""Shared pieces of the PyTorch-engine tests: the real text they run on (read in place)."""

from __future__ import annotations

from pathlib import Path

import pytest


def _read(path: Path, limit: int) -> str:
    return path.read_text(encoding="utf-8")[:limit]


@pytest.fixture(scope="session")
def shakespeare(data_dir: Path) -> str:
    """About 120 KB of tinyshakespeare."""
    return _read(data_dir / "corpora" / "tinyshakespeare.txt", 120_000)


@pytest.fixture(scope="session")
def multilingual(data_dir: Path) -> list[str]:
    """About 80 KB: Tatoeba sentences in many languages and slices of non-Latin Bibles."""
    c = data_dir / "corpora"
    docs = [_read(p, 1_500) for p in sorted((c / "tatoeba").glob("tatoeba.*"))[::3]]
    for name in ["Gujarati-NT.txt", "Cherokee-NT.txt", "Coptic-NT.txt", "Armenian-PART.txt"]:
        docs.append(_read(c / "bible" / name, 5_000))
    return docs


@pytest.fixture(autouse=True, scope="session")
def one_torch_thread():
    """The step tensors are small: on a busy 2-core machine torch's intra-op threads spin and make
    the loop ~8x slower (measured: 2.7 s vs 22 s), so the tests use one thread."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install bpekit[torch])")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _devices() -> list[str]:
    """The CPU always; CUDA too where torch sees a GPU (CI has none; run there by hand)."""
    try:
        import torch
    except ImportError:
        return ["cpu"]
    return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]


@pytest.fixture(scope="module", params=_devices())
def device(request) -> str:
    """Each engine test runs once per device torch has here."""
    return request.param
