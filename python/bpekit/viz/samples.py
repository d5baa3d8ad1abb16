"""Texts to measure and train on: evenly spaced slices of every file of a corpora folder (the
language of each comes from the file name), and a fixed sample of the running interpreter's
standard library (code, and the prose of ``pydoc_data/topics.py``), which is always present.

Corpora layout (see the data README): ``tatoeba/tatoeba.<lang>-eng.<lang>`` (one ISO 639-3 code
per file, ``tatoeba.eng`` is English), ``bible/<Language>-NT.txt`` or ``-PART.txt``, and loose
``*.txt`` files, labelled by their stem.
"""

from __future__ import annotations

import os
import re
import sysconfig
from pathlib import Path

from bpekit.errors import DataNotFoundError, InputTypeError, UsageError

SKIP_DIRS = {"site-packages", "test", "tests", "idlelib", "__pycache__", "lib2to3", "turtledemo"}
MIN_SLICE = 80  # bytes: a sample smaller than slices × this is read in fewer (longer) runs


def check_count(name: str, value: object, low: int = 1) -> int:
    """``value`` as an int >= ``low``, else an ``InputTypeError`` (not an int) or ``UsageError``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputTypeError(f"{name} must be an int >= {low}, got {type(value).__name__}")
    if value < low:
        raise UsageError(f"{name} must be an int >= {low}, got {value}")
    return value


def language_of(path: Path) -> str:
    """The label of a corpus file: ``tatoeba.fra-eng.fra`` -> ``fra``, ``Zulu-NT.txt`` ->
    ``Zulu (bible)``, ``tinyshakespeare.txt`` -> ``tinyshakespeare``."""
    name = path.name
    if m := re.fullmatch(r"tatoeba\.(?:[\w]+-eng\.)?(\w+)", name):
        return m.group(1)
    if path.parent.name == "bible":
        return re.sub(r"-(NT|PART)(-\w+)?$", lambda m: m.group(2) or "", path.stem).replace("-", " ") + " (bible)"
    return path.stem


def read_slices(path: Path, sample_bytes: int, slices: int = 8) -> str:
    """About ``sample_bytes`` of ``path`` in ``slices`` evenly spaced runs of whole lines (fewer
    runs when each would be under ``MIN_SLICE`` bytes; a run with no line break is cut at bytes)."""
    size = path.stat().st_size
    if size <= sample_bytes:
        return path.read_text(encoding="utf-8", errors="replace")
    slices = max(1, min(slices, sample_bytes // MIN_SLICE))
    each = sample_bytes // slices
    parts = []
    with path.open("rb") as f:
        for i in range(slices):
            f.seek(i * (size - each) // max(slices - 1, 1))
            chunk = f.read(each)
            start = 0 if i == 0 else chunk.find(b"\n") + 1
            end = chunk.rfind(b"\n") + 1 or len(chunk)
            parts.append(chunk[start:end].decode("utf-8", errors="replace"))
    return "".join(parts)


def corpus_samples(root: str | os.PathLike[str], sample_bytes: int = 16_000) -> dict[str, str]:
    """``{language label: text}`` for every text file under ``root`` (sorted by label), about
    ``sample_bytes`` (an int >= 1) of each."""
    if not isinstance(root, (str, os.PathLike)):
        raise InputTypeError(f"root must be a path to a corpora folder, got {type(root).__name__}")
    check_count("sample_bytes", sample_bytes)
    base = Path(root)
    if not base.is_dir():
        raise DataNotFoundError(f"corpora folder {base} not found")
    files = [p for p in sorted(base.rglob("*")) if p.is_file() and not p.name.startswith((".", "README"))]
    if not files:
        raise DataNotFoundError(f"no text files under {base}")
    out: dict[str, str] = {}
    for path in files:
        label = language_of(path)
        while label in out:
            label += "'"
        out[label] = read_slices(path, sample_bytes)
    return dict(sorted(out.items(), key=lambda kv: kv[0].lower()))


def stdlib_dir() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def _python_files(root: Path) -> list[Path]:
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")]
        found += [Path(folder) / n for n in names if n.endswith(".py") and n != "topics.py"]
    return found


def stdlib_sample(code_bytes: int, *, heldout_every: int = 5) -> tuple[list[str], dict[str, str]]:
    """(training documents, held-out texts) from the standard library, the same on every run of
    one interpreter: evenly spaced ``.py`` files (sorted by path) up to ``code_bytes``, plus up to
    half as much of the topics of ``pydoc_data``; one file or chunk in ``heldout_every`` is kept
    aside (``heldout_every`` >= 2)."""
    check_count("code_bytes", code_bytes)
    check_count("heldout_every", heldout_every, 2)
    root = stdlib_dir()
    files = sorted(_python_files(root))
    if not files:
        raise DataNotFoundError(f"no Python sources found in the standard library at {root}")
    train: list[str] = []
    held_code: list[str] = []
    used = 0
    stride = max(1, len(files) // max(1, code_bytes // 12_000))  # ~12 kB per file on average
    for n, path in enumerate(files[::stride]):
        text = path.read_text(encoding="utf-8", errors="replace")
        if n % heldout_every == heldout_every - 1:
            held_code.append(text)
        elif used < code_bytes:
            train.append(text)
            used += len(text)
        elif held_code:
            break
    held_docs: list[str] = []
    topics = root / "pydoc_data" / "topics.py"
    if topics.is_file():
        lines = topics.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        chunks = ["".join(lines[i : i + 200]) for i in range(0, len(lines), 200)]
        prose = 0
        for n, chunk in enumerate(chunks):
            if prose >= code_bytes // 2 and held_docs:  # prose: about a third of the sample
                break
            if n % heldout_every == heldout_every - 1:
                held_docs.append(chunk)
            else:
                train.append(chunk)
                prose += len(chunk)
    heldout = {"python code (held out)": "".join(held_code)}
    if held_docs:
        heldout["python docs (held out)"] = "".join(held_docs)
    return train, heldout
