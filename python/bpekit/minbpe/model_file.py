"""minbpe's files: the ``.model`` file (read and written) and the human-readable ``.vocab`` listing.

``.model`` (UTF-8, LF):

    minbpe v1
    <split pattern, empty for BasicTokenizer>
    <number of special tokens N>
    <special> <id>        (N lines)
    <left id> <right id>  (one line per merge; merge k makes id 256 + k)

Differences from minbpe's reader, all of them fixes: the pattern line keeps its leading and
trailing spaces (minbpe strips them, changing the pattern); what the format cannot hold (a
pattern with a line break, a special token with whitespace) is refused when saving instead of
producing a file that does not load back; and a malformed file raises
:class:`~bpekit.errors.FormatError` naming the file and the line instead of an AssertionError
(a missing file :class:`~bpekit.errors.DataNotFoundError`). Files are written atomically, and
``save`` writes the ``.model`` and ``.vocab`` together: both or neither.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from bpekit.atomicfile import atomic_write_all
from bpekit.errors import DataNotFoundError, FormatError, InputTypeError

HEADER = "minbpe v1"
Merges = dict[tuple[int, int], int]


def file_path(path: object, what: str) -> str:
    """``path`` (a str or an ``os.PathLike``) as a str; InputTypeError for anything else."""
    value = os.fspath(path) if isinstance(path, os.PathLike) else path
    if not isinstance(value, str):
        raise InputTypeError(f"{what} must be a str or an os.PathLike, got {type(path).__name__}")
    return value


def write_files(files: list[tuple[str, str]]) -> None:
    """Write each ``(path, text)`` (UTF-8, LF), all or none: every file is written to a temporary
    file before the first rename, so a failure never leaves a new ``.model`` beside an old ``.vocab``."""
    atomic_write_all([(path, text.encode("utf-8")) for path, text in files])


def model_text(pattern: str, special_tokens: dict[str, int], merges: Merges) -> str:
    """The text of a ``.model`` file that minbpe's ``load`` reads back to the same tokenizer."""
    if "\n" in pattern or "\r" in pattern:
        raise FormatError(f"minbpe's .model format keeps the pattern on one line; {pattern!r} has a line break")
    lines = [HEADER, pattern, str(len(special_tokens))]
    for text, idx in special_tokens.items():
        if text.split() != [text]:
            raise FormatError(
                f"minbpe's .model format separates fields with whitespace, so the special token {text!r} "
                "(which contains whitespace) cannot be saved"
            )
        lines.append(f"{text} {idx}")
    for k, ((left, right), idx) in enumerate(merges.items()):
        if idx != 256 + k:
            raise FormatError(f"merge {k} has id {idx}; a .model file can only hold ids 256, 257, ... in order")
        lines.append(f"{left} {right}")
    return "".join(line + "\n" for line in lines)


def write_model(path: str, pattern: str, special_tokens: dict[str, int], merges: Merges) -> None:
    """Write a ``.model`` file (atomically); FormatError, and nothing written, if it cannot hold them."""
    write_files([(path, model_text(pattern, special_tokens, merges))])


def _ints(path: str, lineno: int, line: str, what: str) -> list[int]:
    try:
        return [int(field) for field in line.split()]
    except ValueError:
        raise FormatError(f"{path}, line {lineno}: expected {what}, got {line!r}") from None


def read_model(path: str) -> tuple[str, dict[str, int], Merges]:
    """``(pattern, special_tokens, merges)`` from a ``.model`` file; FormatError if it is malformed,
    DataNotFoundError (a FileNotFoundError) if there is no such file."""
    path = file_path(path, "model_file")
    if not path.endswith(".model"):
        raise FormatError(f"a minbpe model file name ends with '.model', got {path!r}")
    if Path(path).is_dir():
        raise FormatError(f"{path} is a directory, not a minbpe model file")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataNotFoundError(f"no minbpe model file at {path}") from None
    except UnicodeDecodeError as exc:
        raise FormatError(f"{path}: not UTF-8 text ({exc})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final line break
    if len(lines) < 3 or lines[0].strip() != HEADER:
        first = lines[0] if lines else ""
        raise FormatError(f"{path}: not a minbpe model (first line must be {HEADER!r}, got {first!r})")
    pattern = lines[1].removesuffix("\r")
    counts = _ints(path, 3, lines[2], "the number of special tokens")
    if len(counts) != 1 or counts[0] < 0 or 3 + counts[0] > len(lines):
        raise FormatError(f"{path}, line 3: bad number of special tokens {lines[2]!r}")
    special_tokens: dict[str, int] = {}
    for lineno in range(4, 4 + counts[0]):
        fields = lines[lineno - 1].split()
        if len(fields) != 2 or not (fields[1].isascii() and fields[1].isdigit()):
            raise FormatError(f"{path}, line {lineno}: expected '<special> <id>', got {lines[lineno - 1]!r}")
        special_tokens[fields[0]] = int(fields[1])
    merges: Merges = {}
    for lineno in range(4 + counts[0], len(lines) + 1):
        pair = _ints(path, lineno, lines[lineno - 1], "'<left id> <right id>'")
        idx = 256 + len(merges)
        if len(pair) != 2 or not all(0 <= i < idx for i in pair):
            raise FormatError(
                f"{path}, line {lineno}: a merge is two ids below its own id {idx}, got {lines[lineno - 1]!r}"
            )
        left, right = pair
        if (left, right) in merges:
            raise FormatError(f"{path}, line {lineno}: the pair {left} {right} is merged twice")
        merges[left, right] = idx
    return pattern, special_tokens, merges


def render_token(token: bytes) -> str:
    """A token as minbpe's ``.vocab`` shows it: UTF-8 with U+FFFD, control characters as ``\\uXXXX``."""
    text = token.decode("utf-8", errors="replace")
    return "".join(f"\\u{ord(ch):04x}" if unicodedata.category(ch)[0] == "C" else ch for ch in text)


def vocab_text(vocab: dict[int, bytes], merges: Merges, special_tokens: dict[str, int]) -> str:
    """The ``.vocab`` listing: ``[a][b] -> [ab] id`` for merges, ``[t] id`` otherwise.

    Special tokens come last, as in a vocabulary minbpe has loaded (after training, minbpe leaves
    them out; here the listing does not depend on how the tokenizer was made).
    """
    parents = {idx: pair for pair, idx in merges.items()}
    lines = []
    for idx, token in vocab.items():
        s = render_token(token)
        if idx in parents:
            left, right = parents[idx]
            lines.append(f"[{render_token(vocab[left])}][{render_token(vocab[right])}] -> [{s}] {idx}")
        else:
            lines.append(f"[{s}] {idx}")
    for text, idx in special_tokens.items():
        lines.append(f"[{render_token(text.encode('utf-8'))}] {idx}")
    return "".join(line + "\n" for line in lines)


def write_vocab(path: str, vocab: dict[int, bytes], merges: Merges, special_tokens: dict[str, int]) -> None:
    """Write the ``.vocab`` listing (atomically)."""
    write_files([(path, vocab_text(vocab, merges, special_tokens))])
