"""Training sources, read in bounded chunks: text files, directories, globs, JSON lines, Parquet,
gzip/zstd/bz2/xz-compressed files, and iterators of strings.

Every source becomes a stream of *items* for the Rust counter:

* ``("block", bytes)``: the next block of a text file (cut anywhere; the counter cuts the text
  only where the pieces cannot change, so a file counts exactly as if read whole);
* ``("end", None)``: the end of that file;
* ``("docs", [str, ...])``: independent documents (JSON-lines records, Parquet rows, items of an
  iterator); each is pre-tokenized on its own.

A reader thread prepares the next items while the counter (which releases the GIL) works on the
current one; at most a few blocks are in memory at any time.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import queue
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from bpekit.errors import DataNotFoundError, FormatError

BLOCK_BYTES = 4 << 20  # bytes per read from a text file (the counter splits it among threads)
BATCH_BYTES = 4 << 20  # characters of documents per call into the counter
BATCH_DOCS = 100_000
T = TypeVar("T")
COMPRESSED = (".gz", ".zst", ".zstd", ".bz2", ".xz")
JSONL = (".jsonl", ".ndjson")
PARQUET = (".parquet",)

Item = tuple[str, Any]


@dataclass(frozen=True)
class ReadOptions:
    """How to read records: the JSON-lines ``field`` and Parquet ``column`` that hold the text."""

    field: str = "text"
    column: str = "text"
    block_bytes: int = BLOCK_BYTES


def _suffixes(path: Path) -> tuple[str, str]:
    """(compression suffix or "", format suffix) of a file name, lower case."""
    sfx = [s.lower() for s in path.suffixes]
    comp = sfx.pop() if sfx and sfx[-1] in COMPRESSED else ""
    return comp, (sfx[-1] if sfx else "")


def expand_path(source: str | os.PathLike[str]) -> list[Path]:
    """The files a path stands for: itself, every file under a directory (sorted, hidden files
    skipped), or the files a glob pattern matches (``**`` recurses)."""
    text = os.fspath(source)
    path = Path(text)
    if path.is_file():
        return [path]
    if path.is_dir():
        files = [
            f
            for f in path.rglob("*")
            if f.is_file() and not any(part.startswith(".") for part in f.relative_to(path).parts)
        ]
        if not files:
            raise DataNotFoundError(f"training source {text!r} is a directory with no files")
        return sorted(files)
    if any(c in text for c in "*?["):
        import glob

        matched: list[Path] = []
        for m in sorted(glob.glob(text, recursive=True)):
            matched.extend(expand_path(m) if Path(m).is_dir() else [Path(m)])
        if not matched:
            raise DataNotFoundError(f"no files match the training source pattern {text!r}")
        return matched
    raise DataNotFoundError(
        f"training source not found: {text!r} (to train on strings in memory, pass an iterator of "
        "str, e.g. iter(texts); a list or tuple is read as a list of paths)"
    )


def resolve(sources: Iterable[Any]) -> list[Path | Iterable[Any]]:
    """Paths expanded to files; other iterables (documents) kept as they are."""
    out: list[Path | Iterable[Any]] = []
    for s in sources:
        if isinstance(s, (str, os.PathLike)):
            out.extend(expand_path(s))
        elif isinstance(s, (list, tuple)):
            out.extend(resolve(s))
        elif isinstance(s, (bytes, bytearray)):
            raise FormatError("a training source must be a path or an iterable of str, not bytes")
        elif isinstance(s, Iterable):
            out.append(s)
        else:
            raise FormatError(f"a training source must be a path or an iterable of str, got {type(s).__name__}")
    return out


def known_size(sources: list[Path | Iterable[Any]]) -> int | None:
    """Total bytes of the input when every source is an uncompressed text file."""
    total = 0
    for s in sources:
        if not isinstance(s, Path) or _suffixes(s)[0] or _suffixes(s)[1] in JSONL + PARQUET:
            return None
        total += s.stat().st_size
    return total


# Compressed bytes per zstd step. zstd expands at most ~32,768x (RLE blocks), so a hostile file
# holds a step to 128 MiB of output; 16 KiB allowed 512 MiB.
ZSTD_INPUT = 1 << 12


class _Corrupt(Exception):
    """Data a decompressor rejects (zstandard's ZstdError, re-raised as this)."""


class _Zstd(io.RawIOBase):
    """A zstd file's decompressed bytes, frame after frame; a file that ends inside a frame is an
    ``EOFError`` (zstandard's stream reader would stop there without a word)."""

    def __init__(self, path: Path) -> None:
        import zstandard

        self._file = open(path, "rb")
        self._dctx, self._error = zstandard.ZstdDecompressor(), zstandard.ZstdError
        self._frame: Any = None
        self._input = b""
        self._output, self._at = b"", 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self._at == len(self._output):
            if not self._input:
                self._input = self._file.read(ZSTD_INPUT)
                if not self._input:
                    if self._frame is not None and not self._frame.eof:
                        raise EOFError("the file ends inside a frame")
                    return 0
            if self._frame is None or self._frame.eof:
                self._frame = self._dctx.decompressobj()
            try:
                self._output, self._at = self._frame.decompress(self._input), 0
            except self._error as exc:
                raise _Corrupt(str(exc)) from None
            self._input = self._frame.unused_data if self._frame.eof else b""
        n = min(len(buffer), len(self._output) - self._at)
        buffer[:n] = self._output[self._at : self._at + n]
        self._at += n
        return n

    def close(self) -> None:
        self._file.close()
        super().close()


def _not_valid(path: Path, kind: str, exc: BaseException) -> FormatError:
    """The ``FormatError`` for data a reader rejects; an ``OSError`` with an errno (a real read
    error) is re-raised as it is."""
    if isinstance(exc, OSError) and exc.errno is not None:
        raise exc
    return FormatError(f"{path}: not a valid {kind} file ({exc})")


class _Checked(io.RawIOBase):
    """A decompressor's bytes; corrupt or truncated data is a ``FormatError`` naming the file
    (an ``OSError`` with an errno, a real read error, stays what it is)."""

    def __init__(self, inner: Any, path: Path, kind: str) -> None:
        self._inner, self._path, self._kind = inner, path, kind

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            return int(self._inner.readinto(buffer))
        except (OSError, EOFError, zlib.error, lzma.LZMAError, _Corrupt) as exc:
            raise _not_valid(self._path, self._kind, exc) from None

    def close(self) -> None:
        self._inner.close()
        super().close()


def open_binary(path: Path) -> BinaryIO:
    """The decompressed bytes of ``path``, streamed; corrupt or truncated compressed data is a
    ``FormatError`` naming the file when it is read."""
    comp, _ = _suffixes(path)
    inner: Any
    if comp == ".gz":
        inner, kind = gzip.open(path, "rb"), "gzip"
    elif comp == ".bz2":
        inner, kind = bz2.open(path, "rb"), "bz2"
    elif comp == ".xz":
        inner, kind = lzma.open(path, "rb"), "xz"
    elif comp in (".zst", ".zstd"):
        try:
            import zstandard  # noqa: F401
        except ImportError as exc:
            raise FormatError(f"reading {path} needs the zstandard package (pip install zstandard)") from exc
        inner, kind = _Zstd(path), "zstd"
    else:
        return open(path, "rb")
    return io.BufferedReader(_Checked(inner, path, kind), 1 << 16)  # type: ignore[return-value]


def items(source: Path | Iterable[Any], opts: ReadOptions) -> Iterator[Item]:
    """The counter items of one resolved source."""
    if not isinstance(source, Path):
        yield from _iterator_items(source, opts)
        return
    _, fmt = _suffixes(source)
    if fmt in PARQUET:
        yield from _parquet_items(source, opts)
        return
    with open_binary(source) as f:
        if fmt in JSONL:
            yield from _jsonl_items(f, source, opts)
            return
        while block := f.read(opts.block_bytes):
            yield ("block", block)
    yield ("end", None)


def batched(docs: Iterable[T], most_bytes: int = BATCH_BYTES, most_docs: int = BATCH_DOCS,
            size: Callable[[T], int] = len) -> Iterator[list[T]]:
    """``docs`` in order, in runs that end once they reach ``most_bytes`` (as ``size`` counts a
    document: its characters by default) or ``most_docs`` documents."""
    batch: list[T] = []
    total = 0
    for d in docs:
        batch.append(d)
        total += size(d)
        if total >= most_bytes or len(batch) >= most_docs:
            yield batch
            batch, total = [], 0
    if batch:
        yield batch


def _batches(docs: Iterator[str]) -> Iterator[Item]:
    for batch in batched(docs):
        yield ("docs", batch)


def _jsonl_items(f: BinaryIO, path: Path, opts: ReadOptions) -> Iterator[Item]:
    def docs() -> Iterator[str]:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as exc:
                raise FormatError(f"{path}:{lineno}: not valid JSON ({exc})") from None
            if not isinstance(rec, dict) or opts.field not in rec:
                raise FormatError(f"{path}:{lineno}: the record has no field {opts.field!r}")
            value = rec[opts.field]
            if value is None:
                continue
            if not isinstance(value, str):
                raise FormatError(f"{path}:{lineno}: field {opts.field!r} is a {type(value).__name__}, not a string")
            yield value

    yield from _batches(docs())


def _parquet_items(path: Path, opts: ReadOptions) -> Iterator[Item]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise FormatError(f"reading {path} needs the pyarrow package (pip install pyarrow)") from exc

    def checked(read: Callable[[], T]) -> T:
        try:
            return read()
        except (pa.ArrowException, OSError) as exc:
            raise _not_valid(path, "parquet", exc) from None

    pf = checked(lambda: pq.ParquetFile(path))
    names = pf.schema_arrow.names
    if opts.column not in names:
        raise FormatError(f"{path}: no column {opts.column!r} (columns: {', '.join(names)})")

    def docs() -> Iterator[str]:
        batches = checked(lambda: pf.iter_batches(batch_size=8192, columns=[opts.column]))
        while (batch := checked(lambda: next(batches, None))) is not None:
            for value in batch.column(0).to_pylist():
                if isinstance(value, bytes):
                    value = value.decode("utf-8", "replace")
                if isinstance(value, str):
                    yield value
                elif value is not None:
                    raise FormatError(f"{path}: column {opts.column!r} holds {type(value).__name__}, not strings")

    yield from _batches(docs())


def _iterator_items(source: Iterable[Any], opts: ReadOptions) -> Iterator[Item]:
    def docs() -> Iterator[str]:
        for i, doc in enumerate(source):
            if isinstance(doc, dict):  # rows of a dataset: take the text field
                if opts.field not in doc:
                    raise FormatError(f"item {i} of the training iterator has no field {opts.field!r}")
                doc = doc[opts.field]
            if not isinstance(doc, str):
                raise FormatError(f"item {i} of the training iterator is a {type(doc).__name__}, not a str")
            yield doc

    yield from _batches(docs())


def prefetched(it: Iterator[Item], depth: int = 2) -> Iterator[Item]:
    """``it`` run on a reader thread, at most ``depth`` items ahead; its errors are re-raised here."""
    q: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(entry: tuple[str, Any]) -> bool:
        while not stop.is_set():
            try:
                q.put(entry, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in it:
                if not put(("item", item)):
                    return
            put(("done", None))
        except BaseException as exc:  # re-raised in the consumer
            put(("error", exc))
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=work, name="bpekit-reader", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = q.get()
            if kind == "item":
                yield value
            elif kind == "done":
                return
            else:
                raise value
    finally:
        stop.set()
        thread.join(timeout=5)
