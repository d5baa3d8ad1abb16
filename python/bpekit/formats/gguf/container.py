"""The GGUF container's key-value section: a bounds-checked reader and a byte-exact writer.

A GGUF file (formats.md §5.1) is a header (magic ``GGUF``, version, tensor count, KV count),
``kv_count`` typed key-value pairs, then tensor infos and tensor data. A tokenizer lives entirely
in the KV pairs, so this module reads only those, from a memory map (a multi-gigabyte model file
costs no more than its metadata).

Hostile files: every length and count is checked against the bytes left in the file *before*
anything is read or allocated (an array of 2**60 strings needs at least 8 * 2**60 bytes, so it is
refused at once), value types must be known, keys unique, nesting shallow. Errors are
:class:`~bpekit.errors.FormatError` naming the file, the key and the offset.

Why not ``gguf.GGUFReader``: it builds numpy views per array element and took 13 s (gpt-2) to
52 s (llama-bpe, 408k strings) per vocab file on this machine; this reader takes well under a
second. The maintained ``gguf`` package is still the writer's reference: tests read our files
with ``GGUFReader`` and read ``GGUFWriter``'s files with this module.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass, field
from typing import Any

from bpekit.errors import FormatError

MAGIC = b"GGUF"
# value type -> (struct code, size) for the fixed-size scalars (formats.md §5.1).
(
    UINT8,
    INT8,
    UINT16,
    INT16,
    UINT32,
    INT32,
    FLOAT32,
    BOOL,
    STRING,
    ARRAY,
    UINT64,
    INT64,
    FLOAT64,
) = range(13)
SCALARS = {
    UINT8: ("B", 1),
    INT8: ("b", 1),
    UINT16: ("H", 2),
    INT16: ("h", 2),
    UINT32: ("I", 4),
    INT32: ("i", 4),
    FLOAT32: ("f", 4),
    BOOL: ("?", 1),
    UINT64: ("Q", 8),
    INT64: ("q", 8),
    FLOAT64: ("d", 8),
}
TYPE_NAMES = {
    UINT8: "UINT8",
    INT8: "INT8",
    UINT16: "UINT16",
    INT16: "INT16",
    UINT32: "UINT32",
    INT32: "INT32",
    FLOAT32: "FLOAT32",
    BOOL: "BOOL",
    STRING: "STRING",
    ARRAY: "ARRAY",
    UINT64: "UINT64",
    INT64: "INT64",
    FLOAT64: "FLOAT64",
}
_MIN_SIZE = {**{t: s for t, (_, s) in SCALARS.items()}, STRING: 8, ARRAY: 12}
MAX_DEPTH = 3  # arrays of arrays of arrays; tokenizers use none
MAX_KEY_BYTES = 65535


@dataclass
class Value:
    """One typed GGUF value. ``sub_type`` is the element type of an ARRAY (else None)."""

    type: int
    value: Any
    sub_type: int | None = None


@dataclass
class GGUFFile:
    """The header and the key-value pairs of a GGUF file, in file order."""

    version: int = 3
    tensor_count: int = 0
    kv: dict[str, Value] = field(default_factory=dict)
    big_endian: bool = False
    kv_end: int = 0  # byte offset where the KV section ends (tensor infos start)

    def get(self, key: str, default: Any = None) -> Any:
        v = self.kv.get(key)
        return default if v is None else v.value


class _Cursor:
    def __init__(self, buf: Any, source: str, endian: str) -> None:
        self.buf, self.source, self.end, self.pos, self.e = (
            buf,
            source,
            len(buf),
            0,
            endian,
        )

    def fail(self, what: str) -> FormatError:
        return FormatError(f"{self.source}: {what} (at byte {self.pos} of {self.end})")

    def need(self, n: int, what: str) -> None:
        if n < 0 or n > self.end - self.pos:
            raise self.fail(
                f"{what} needs {n} bytes but only {self.end - self.pos} are left; the file is truncated or corrupt"
            )

    def scalar(self, code: str, size: int, what: str) -> Any:
        self.need(size, what)
        (v,) = struct.unpack_from(self.e + code, self.buf, self.pos)
        self.pos += size
        return v

    def string(self, what: str) -> str:
        n = self.scalar("Q", 8, f"length of {what}")
        self.need(n, f"{what} (declared {n} bytes)")
        raw = self.buf[self.pos : self.pos + n]
        self.pos += n
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError as e:
            raise self.fail(
                f"{what} is not UTF-8 ({e.reason} at byte {e.start})"
            ) from None

    def array(self, what: str, depth: int) -> Value:
        if depth >= MAX_DEPTH:
            raise self.fail(f"{what}: arrays nested deeper than {MAX_DEPTH} levels")
        sub = self.scalar("I", 4, f"element type of {what}")
        count = self.scalar("Q", 8, f"length of {what}")
        if sub not in _MIN_SIZE:
            raise self.fail(f"{what}: unknown array element type {sub}")
        self.need(
            count * _MIN_SIZE[sub], f"{what} ({count} elements of {TYPE_NAMES[sub]})"
        )
        if sub in SCALARS:
            code, size = SCALARS[sub]
            values = list(
                struct.unpack_from(f"{self.e}{count}{code}", self.buf, self.pos)
            )
            self.pos += count * size
            if sub == BOOL:
                values = [bool(v) for v in values]
        elif sub == STRING:
            values = self._strings(count, what)
        else:
            values = [self.array(f"{what}[{i}]", depth + 1) for i in range(count)]
        return Value(ARRAY, values, sub)

    def _strings(self, count: int, what: str) -> list[str]:
        # The hot loop of a vocab file (hundreds of thousands of strings): local names only.
        buf, pos, end = self.buf, self.pos, self.end
        out: list[str] = []
        unpack = struct.Struct(self.e + "Q").unpack_from
        append = out.append
        for i in range(count):
            if end - pos < 8:
                self.pos = pos
                raise self.fail(f"{what}[{i}]: the file ends inside a string length")
            (n,) = unpack(buf, pos)
            pos += 8
            if n > end - pos:
                self.pos = pos
                raise self.fail(
                    f"{what}[{i}] declares {n} bytes but only {end - pos} are left"
                )
            try:
                append(buf[pos : pos + n].decode("utf-8"))
            except UnicodeDecodeError as e:
                self.pos = pos
                raise self.fail(f"{what}[{i}] is not UTF-8 ({e.reason})") from None
            pos += n
        self.pos = pos
        return out

    def value(self, vtype: int, what: str) -> Value:
        if vtype in SCALARS:
            code, size = SCALARS[vtype]
            v = self.scalar(code, size, what)
            return Value(vtype, bool(v) if vtype == BOOL else v)
        if vtype == STRING:
            return Value(STRING, self.string(what))
        if vtype == ARRAY:
            return self.array(what, 0)
        raise self.fail(f"{what} has unknown value type {vtype}")


def parse(buf: bytes | mmap.mmap | memoryview, source: str = "<bytes>") -> GGUFFile:
    """The header and KV pairs of GGUF bytes (or a memory map of a file)."""
    if isinstance(buf, memoryview):
        buf = bytes(buf)
    if len(buf) < 24 or bytes(buf[:4]) != MAGIC:
        raise FormatError(
            f"{source} is not a GGUF file (it does not start with the magic bytes 'GGUF')"
        )
    (version,) = struct.unpack_from("<I", buf, 4)
    big = False
    if version not in (2, 3):
        (swapped,) = struct.unpack_from(">I", buf, 4)
        if swapped not in (2, 3):
            hint = (
                " (version 1 used 32-bit lengths and is not read)"
                if version == 1 or swapped == 1
                else ""
            )
            raise FormatError(f"{source}: unsupported GGUF version {version}{hint}")
        version, big = swapped, True
    cur = _Cursor(buf, source, ">" if big else "<")
    cur.pos = 8
    tensor_count = cur.scalar("Q", 8, "tensor count")
    kv_count = cur.scalar("Q", 8, "KV count")
    cur.need(
        kv_count * 12, f"{kv_count} key-value pairs"
    )  # a key length and a type at least
    kv: dict[str, Value] = {}
    for n in range(kv_count):
        key = cur.string(f"key {n}")
        if not key or len(key) > MAX_KEY_BYTES:
            raise cur.fail(f"key {n} is empty or longer than {MAX_KEY_BYTES} bytes")
        if key in kv:
            raise cur.fail(f"key {key!r} appears twice")
        vtype = cur.scalar("I", 4, f"type of {key!r}")
        kv[key] = cur.value(vtype, repr(key))
    cur.need(
        tensor_count * 24, f"{tensor_count} tensor infos"
    )  # name length, dims, type, offset
    return GGUFFile(
        version=version,
        tensor_count=tensor_count,
        kv=kv,
        big_endian=big,
        kv_end=cur.pos,
    )


def read(path: str | os.PathLike[str]) -> GGUFFile:
    """The header and KV pairs of the GGUF file at ``path`` (memory-mapped, never read whole)."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < 24:
                raise FormatError(
                    f"{name} is not a GGUF file ({size} bytes, shorter than a GGUF header)"
                )
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                return parse(mm, name)
    except OSError as e:
        raise FormatError(f"cannot read {name}: {e.strerror or e}") from None


def _pack(v: Value, e: str, out: list[bytes], what: str) -> None:
    if v.type in SCALARS:
        code, _ = SCALARS[v.type]
        try:
            out.append(struct.pack(e + code, v.value))
        except (struct.error, TypeError) as exc:
            raise FormatError(
                f"{what}: {v.value!r} does not fit GGUF type {TYPE_NAMES[v.type]} ({exc})"
            ) from None
    elif v.type == STRING:
        data = v.value.encode("utf-8")
        out.append(struct.pack(e + "Q", len(data)) + data)
    elif v.type == ARRAY:
        sub = v.sub_type
        if sub not in _MIN_SIZE:
            raise FormatError(f"{what}: unknown array element type {sub}")
        out.append(struct.pack(e + "IQ", sub, len(v.value)))
        if sub in SCALARS:
            try:
                out.append(struct.pack(f"{e}{len(v.value)}{SCALARS[sub][0]}", *v.value))
            except (struct.error, TypeError) as exc:
                raise FormatError(
                    f"{what}: an element does not fit GGUF type {TYPE_NAMES[sub]} ({exc})"
                ) from None
        elif sub == STRING:
            q = struct.Struct(e + "Q").pack
            for s in v.value:
                data = s.encode("utf-8")
                out.append(q(len(data)))
                out.append(data)
        else:
            for i, item in enumerate(v.value):
                _pack(item, e, out, f"{what}[{i}]")
    else:
        raise FormatError(f"{what}: unknown GGUF value type {v.type}")


def serialize(gf: GGUFFile) -> bytes:
    """A vocab-only GGUF file (no tensors): the header and the KV pairs in their order, nothing
    after the last pair, as llama.cpp's ``ggml-vocab-*.gguf`` files are laid out."""
    if gf.tensor_count:
        raise FormatError(
            "bpekit writes vocab-only GGUF files; this one declares tensors"
        )
    e = ">" if gf.big_endian else "<"
    out = [MAGIC, struct.pack(e + "IQQ", gf.version, 0, len(gf.kv))]
    for key, v in gf.kv.items():
        k = key.encode("utf-8")
        out.append(struct.pack(e + "Q", len(k)) + k + struct.pack(e + "I", v.type))
        _pack(v, e, out, repr(key))
    return b"".join(out)
