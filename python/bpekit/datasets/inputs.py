"""The documents to tokenize, in a fixed order, in batches that remember where they came from.

Inputs are text files (one document per file, or one per line with ``lines``), JSON lines (a
field), Parquet (a column), any of them compressed, and a Hugging Face ``datasets`` dataset on
disk. Paths, directories and globs expand as for training (:mod:`bpekit.train.sources`, whose
readers are reused here). Empty documents are skipped everywhere, so a position -- (input index,
documents of that input already read) -- means the same thing in every run and in both engines.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from bpekit.errors import DataNotFoundError, FormatError, InputTypeError, UsageError
from bpekit.train.sources import (
    BATCH_BYTES,
    BATCH_DOCS,
    JSONL,
    PARQUET,
    ReadOptions,
    _suffixes,
    batched,
    expand_path,
    items,
    open_binary,
)

Position = tuple[int, int]  # (input index, documents of that input already read)


@dataclass(frozen=True)
class Source:
    """One input: its path, how its documents are read, and its size on disk."""

    path: str
    kind: str  # "text", "lines", "jsonl", "parquet" or "hf"
    bytes: int
    split: str | None = None

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "kind": self.kind, "bytes": self.bytes}
        if self.split is not None:
            out["split"] = self.split
        return out


def file_kind(path: Path, lines: bool) -> str:
    _, fmt = _suffixes(path)
    if fmt in PARQUET:
        return "parquet"
    if fmt in JSONL:
        return "jsonl"
    return "lines" if lines else "text"


def resolve_sources(
    inputs: Any, *, lines: bool = False, hf_dataset: str | None = None, split: str = "train"
) -> list[Source]:
    """The inputs expanded to files (in order), plus the Hugging Face dataset if one is named.
    ``inputs`` is a path (``str``, ``bytes`` or ``os.PathLike``) or an iterable of them."""
    if isinstance(inputs, (str, bytes, os.PathLike)):
        inputs = [inputs]
    try:
        items = list(inputs)
    except TypeError:
        raise InputTypeError(f"inputs must be a path or an iterable of paths, got {type(inputs).__name__}") from None
    out: list[Source] = []
    for item in items:
        if not isinstance(item, (str, bytes, os.PathLike)):
            raise InputTypeError(f"an input must be a path (str or os.PathLike), got {type(item).__name__}")
        item = os.fsdecode(item)
        if not item:
            raise UsageError("an input path is empty")
        try:
            files = expand_path(item)
        except DataNotFoundError:
            raise DataNotFoundError(f"input not found (or an empty directory or glob): {item!r}") from None
        for path in files:
            out.append(Source(str(path), file_kind(path, lines), path.stat().st_size))
    if hf_dataset is not None:
        if not isinstance(hf_dataset, (str, os.PathLike)):
            raise InputTypeError(f"hf_dataset must be a path (str or os.PathLike), got {type(hf_dataset).__name__}")
        ds = load_hf_dataset(hf_dataset, split)
        size = sum(os.path.getsize(f["filename"]) for f in ds.cache_files if os.path.exists(f["filename"]))
        out.append(Source(str(hf_dataset), "hf", size, split))
    if not out:
        raise UsageError("nothing to tokenize: give input files or --hf-dataset")
    return out


def load_hf_dataset(path: str, split: str) -> Any:
    """A split of a Hugging Face dataset saved with ``save_to_disk`` or held in local data files."""
    try:
        import datasets
    except ImportError:
        raise UsageError("--hf-dataset needs the datasets package (pip install datasets)") from None
    p = Path(path)
    if not p.exists():
        raise DataNotFoundError(f"Hugging Face dataset not found: {path!r} (only local datasets are read)")
    if (p / "dataset_dict.json").exists() or (p / "state.json").exists():
        ds = datasets.load_from_disk(str(p))
    else:
        ds = datasets.load_dataset(str(p), split=split)
    if isinstance(ds, datasets.DatasetDict):
        if split not in ds:
            raise UsageError(f"{path}: no split {split!r} (splits: {', '.join(ds)})")
        ds = ds[split]
    return ds


def text_documents(stream: BinaryIO, lines: bool) -> Iterator[str]:
    """The documents of a text stream: all of it, or each line (split at ``\\n`` only, a ``\\r``
    before it dropped); invalid UTF-8 becomes U+FFFD; empty documents are skipped."""
    with io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline="\n") as text:
        if not lines:
            if doc := text.read():
                yield doc
            return
        for line in text:
            line = line.removesuffix("\n")
            line = line.removesuffix("\r")
            if line:
                yield line


def source_batches(source: Source, opts: ReadOptions) -> Iterator[list[str]]:
    """Batches of the non-empty documents of one input, in order."""
    if source.kind in ("text", "lines"):
        with open_binary(Path(source.path)) as f:
            yield from batched(text_documents(f, source.kind == "lines"), BATCH_BYTES, BATCH_DOCS)
    elif source.kind == "hf":
        ds = load_hf_dataset(source.path, source.split or "train")
        if opts.column not in ds.column_names:
            raise FormatError(f"{source.path}: no column {opts.column!r} (columns: {', '.join(ds.column_names)})")
        for rows in ds.iter(batch_size=8192):
            docs = [d for d in rows[opts.column] if d]
            bad = next((d for d in docs if not isinstance(d, str)), None)
            if bad is not None:
                raise FormatError(f"{source.path}: column {opts.column!r} holds {type(bad).__name__}, not strings")
            if docs:
                yield docs
    else:
        for kind, value in items(Path(source.path), opts):
            if kind == "docs" and (docs := [d for d in value if d]):
                yield docs


def batches(sources: Sequence[Source], opts: ReadOptions, start: Position = (0, 0)) -> Iterator[tuple[int, int, list[str]]]:
    """``(input index, index of the batch's first document in that input, documents)`` from
    ``start`` on: earlier inputs are not opened, earlier documents of the current one dropped."""
    first, skip = start
    for index in range(first, len(sources)):
        done = 0
        for docs in source_batches(sources[index], opts):
            if index == first and done + len(docs) <= skip:
                done += len(docs)
                continue
            if index == first and done < skip:
                docs, done = docs[skip - done :], skip
            yield index, done, docs
            done += len(docs)
