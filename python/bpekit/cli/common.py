"""Checks the commands share: option ranges, output paths (never an input, never a folder where a
file goes, a clear line when one cannot be written) and reading text files (their real byte
count, and a warning when invalid UTF-8 was replaced)."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from bpekit.errors import NoSidecarError, UsageError
from bpekit.limits import MAX_THREADS

MAX_VOCAB = 1 << 32  # token ids are unsigned 32-bit
MAX_COUNT = (1 << 63) - 1  # counts, lengths and budgets the core holds in 64 bits


def check_at_most(option: str, value: int | None, high: int) -> None:
    """A ``UsageError`` naming ``option`` when ``value`` is past ``high`` (lower bounds are the
    library's to check)."""
    if value is not None and value > high:
        raise UsageError(f"{option} must be at most {high}, got {value}")


def check_threads(value: int) -> None:
    if not 0 <= value <= MAX_THREADS:
        raise UsageError(f"--threads must be from 0 to {MAX_THREADS} (0 = every core), got {value}")


def check_output(path: str, *, folder: bool = False) -> None:
    """Refuses an output path that cannot be what it should be: empty, a folder where a file
    goes (``folder=False``), a file where a folder goes, or under a file."""
    if path == "":
        raise UsageError("cannot write '': the output path is empty")
    p = Path(path)
    if not folder and p.is_dir():
        raise UsageError(f"cannot write {path}: it is a directory")
    if folder and p.exists() and not p.is_dir():
        raise UsageError(f"cannot write {path}: it exists and is not a folder")
    parent = p.absolute().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise UsageError(f"cannot write {path}: {parent} is not a folder")


@contextlib.contextmanager
def writing(path: str | os.PathLike[str]) -> Iterator[None]:
    """An ``OSError`` while writing ``path`` as ``cannot write PATH: reason`` (the path the user
    gave, not the temporary file beside it)."""
    try:
        yield
    except OSError as exc:
        raise UsageError(f"cannot write {os.fspath(path)}: {exc.strerror or exc}") from None


def _existing(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    return [os.fspath(p) for p in paths if os.fspath(p) not in ("", "-") and os.path.exists(p)]


def refuse_overwrite(outputs: Iterable[str | os.PathLike[str]], inputs: Iterable[str | os.PathLike[str]]) -> None:
    """A ``UsageError`` when an output is one of the inputs (the same file, whatever the path:
    links, ``./``, ``..``), or two outputs are the same path; nothing has been done yet."""
    outs = [os.fspath(p) for p in outputs]
    seen: dict[str, str] = {}
    for out in outs:
        real = os.path.realpath(out)
        if real in seen:
            raise UsageError(f"{out} is written twice (also as {seen[real]}); choose another output path")
        seen[real] = out
    existing = _existing(outs)
    if not existing:
        return
    keys = {}
    for out in existing:
        st = os.stat(out)
        keys[(st.st_dev, st.st_ino)] = out
    for inp in _existing(inputs):
        st = os.stat(inp)
        out = keys.get((st.st_dev, st.st_ino))
        if out is not None:
            raise UsageError(f"{out} is also an input ({inp}); choose another output path")


def tokenizer_inputs(specs: Iterable[str]) -> list[str]:
    """The files a list of TOKENIZER arguments reads (a ``.tiktoken`` file's sidecar too)."""
    found = []
    for spec in specs:
        found.append(spec)
        if spec.endswith(".tiktoken"):
            found.append(spec + ".json")
    return found


def folder_files(folder: str | None) -> list[Path]:
    if not folder or not os.path.isdir(folder):
        return []
    return [p for p in Path(folder).rglob("*") if p.is_file()]


def load_file(path: str, advice: str | None = None, **options: object):  # noqa: ANN201
    """``Tokenizer.from_file(path, **options)``; a rank file without sidecar is refused with
    ``advice`` in the commands' terms (by default: how to write the sidecar), not the Python
    API's (``pattern=``)."""
    from bpekit import Tokenizer

    try:
        return Tokenizer.from_file(path, **options)
    except NoSidecarError:
        advice = advice or (f"keep the sidecar beside it, or write one with: bpekit convert {path} NEW.tiktoken "
                            "--to tiktoken --pattern PATTERN")
        raise UsageError(f"{path}: a .tiktoken rank file holds no pattern or special tokens and its .json "
                         f"sidecar is missing: {advice}") from None


_ESCAPED = re.compile("[\udc80-\udcff]")


def invalid_bytes(text: str) -> int:
    """How many invalid UTF-8 bytes a ``surrogateescape`` decoding kept as lone surrogates."""
    return len(_ESCAPED.findall(text)) if not text.isascii() else 0


def utf8_size(text: str) -> int:
    """Bytes of ``text`` as read: an escaped invalid byte counts one."""
    try:
        return len(text.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:  # other lone surrogates (not from a file)
        return len(text.encode("utf-8", "surrogatepass"))


def decode(data: bytes) -> str:
    """``data`` as text, invalid UTF-8 bytes kept as lone surrogates (``surrogateescape``)."""
    return data.decode("utf-8", "surrogateescape")


def read_stdin() -> str:
    buffer = getattr(sys.stdin, "buffer", None)
    return decode(buffer.read()) if buffer is not None else sys.stdin.read()


def warn_invalid(command: str | None, label: str, text: str) -> None:
    """One line on stderr when ``text`` (read with ``surrogateescape``) held invalid UTF-8."""
    n = invalid_bytes(text)
    if n:
        prefix = f"bpekit {command}" if command else "bpekit"
        print(f"{prefix}: warning: {label}: {n} invalid UTF-8 byte{'s' if n != 1 else ''} replaced with U+FFFD",
              file=sys.stderr)
