"""The benchmark corpora, built deterministically from the shared data (read in place).

- english: tinyshakespeare + taylorswift, split into paragraphs (blank-line separated);
- code: a fixed sample of the running interpreter's standard library sources, one file a document;
- multilingual: every bible and tatoeba file, in blocks of 20 lines.
"""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BPEKIT_TEST_DATA", ROOT.parent / "shared" / "data")).resolve()


def _paragraphs(text: str) -> list[str]:
    docs, cur = [], []
    for line in text.splitlines(keepends=True):
        cur.append(line)
        if not line.strip():
            docs.append("".join(cur))
            cur = []
    if cur:
        docs.append("".join(cur))
    return docs


def english() -> list[str]:
    docs: list[str] = []
    for name in ("tinyshakespeare.txt", "taylorswift.txt"):
        docs += _paragraphs((DATA / "corpora" / name).read_text(encoding="utf-8"))
    return docs


def code(max_bytes: int = 5_000_000) -> list[str]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if "test" not in p.parts and "site-packages" not in p.parts)
    docs, total = [], 0
    for p in files[::3]:
        text = p.read_text(encoding="utf-8", errors="replace")
        docs.append(text)
        total += len(text.encode())
        if total >= max_bytes:
            break
    return docs


def multilingual(lines_per_doc: int = 20, max_lines_per_file: int = 400) -> list[str]:
    docs = []
    files = sorted((DATA / "corpora" / "bible").glob("*.txt")) + sorted((DATA / "corpora" / "tatoeba").glob("*"))
    for p in files:
        lines = p.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)[:max_lines_per_file]
        docs += ["".join(lines[i : i + lines_per_doc]) for i in range(0, len(lines), lines_per_doc)]
    return docs


CORPORA = {"english": english, "code": code, "multilingual": multilingual}


def size_mb(docs: list[str]) -> float:
    return sum(len(d.encode("utf-8")) for d in docs) / 1e6
