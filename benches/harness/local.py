"""Local files for every library, so that nothing is downloaded: the rank files are read in place
from the shared data, and the libraries that insist on their own cache layout (tiktoken,
wordchipper) get a cache directory under ``bench-results/`` made of symlinks to those files.

Call :func:`setup_env` before importing any tokenizer library (some read their environment at
import time; ``RAYON_NUM_THREADS`` caps the Rust thread pools at the benchmark's 2 threads).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from corpora import DATA, ROOT

RANKS = DATA / "ranks"
RESULTS = ROOT / "bench-results"
WORK = Path(os.environ.get("BPEKIT_BENCH_WORK", RESULTS / "peers"))  # symlinks, generated files

ENCODINGS = ("cl100k_base", "o200k_base")
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


def rank_file(name: str) -> Path:
    return RANKS / f"{name}.tiktoken"


def _symlink(target: Path, link: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        if link.resolve() == target.resolve():
            return
        link.unlink()
    link.symlink_to(target)


def setup_env(threads: int = 2, work: Path = WORK, apply: bool = True) -> dict[str, str]:
    """Points every library at the local rank files (symlinks under ``work``); returns the
    environment variables, which are also set in ``os.environ`` if ``apply``."""
    tk_cache = work / "tiktoken-cache"
    wc_cache = work / "wordchipper-cache"
    for name in ENCODINGS:
        if rank_file(name).is_file():
            key = hashlib.sha1(TIKTOKEN_URL.format(name).encode()).hexdigest()  # tiktoken's cache key
            _symlink(rank_file(name), tk_cache / key)
            _symlink(rank_file(name), wc_cache / "openai" / name / f"{name}.tiktoken")
    env = {
        "BPEKIT_BENCH_WORK": str(work),
        "BPEKIT_DATA_DIR": str(RANKS),
        "BPEKIT_OFFLINE": "1",
        "TIKTOKEN_CACHE_DIR": str(tk_cache),
        "WORDCHIPPER_CACHE_DIR": str(wc_cache),
        "RAYON_NUM_THREADS": str(threads),
        "TOKENIZERS_PARALLELISM": "true",
        "HF_HUB_OFFLINE": "1",
    }
    if apply:
        os.environ.update(env)
    return env


def load_corpora(max_mb: float = 0) -> dict[str, list[str]]:
    """The benchmark corpora (``benches/corpora.py``), each sampled with a document stride to
    about ``max_mb`` MB when ``max_mb`` > 0."""
    from corpora import CORPORA, size_mb

    out = {}
    for name, make in CORPORA.items():
        docs = make()
        if max_mb > 0:
            stride = max(1, int(size_mb(docs) / max_mb))
            docs = docs[::stride]
        out[name] = docs
    return out
