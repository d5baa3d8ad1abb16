"""Shard layouts: the bytes of one shard in each output format, and the dtype each format uses.

* ``bin``: nanoGPT style, the raw token ids (little-endian, no header);
* ``llmc``: llm.c / modded-nanogpt, a 1024-byte header of 256 ``int32`` (magic, version, token
  count, zeros) then the ids: magic 20240520 version 1 for ``uint16`` ids (llm.c's "gpt-2"),
  magic 20240801 version 7 for ``uint32`` ids (its "llama-3"), as in llm.c's
  ``dev/data/data_common.py``;
* ``megatron``: Megatron-LM's indexed dataset, ``.bin`` (the ids) plus ``.idx`` (layout below,
  from ``megatron/core/datasets/indexed_dataset.py``; one sequence per document).

``.idx`` (little-endian): magic ``MMIDIDX\\0\\0``, ``<Q`` version 1, ``<B`` dtype code, ``<Q``
sequence count, ``<Q`` document count (documents + 1), ``int32`` sequence lengths, ``int64``
sequence byte offsets into ``.bin``, ``int64`` document indices ``[0, 1, ..., n]``.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bpekit.errors import DataNotFoundError, FormatError, InputTypeError, UsageError

FORMATS = ("bin", "llmc", "megatron")
DTYPES = ("auto", "uint16", "uint32", "int32")

LLMC_HEADER_INTS = 256
LLMC_HEADERS = {"uint16": (20240520, 1), "uint32": (20240801, 7)}  # dtype -> (magic, version)

MEGATRON_MAGIC = b"MMIDIDX\x00\x00"
MEGATRON_VERSION = 1
MEGATRON_CODES = {"uint8": 1, "int8": 2, "int16": 3, "int32": 4, "int64": 5, "float64": 6, "float32": 7, "uint16": 8}
MEGATRON_UINT16_LIMIT = 65500  # Megatron's DType.optimal_dtype: uint16 below this vocabulary size

ALLOWED = {"bin": ("uint16", "uint32", "int32"), "llmc": ("uint16", "uint32"), "megatron": ("uint16", "int32")}


def choose_dtype(fmt: str, dtype: str, n_vocab: int) -> str:
    """The id dtype of a run: the narrowest the format allows for ``auto``, else ``dtype`` checked."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown output format {fmt!r} (choose from {', '.join(FORMATS)})")
    if dtype not in DTYPES:
        raise UsageError(f"unknown dtype {dtype!r} (choose from {', '.join(DTYPES)})")
    if dtype == "auto":
        if fmt == "megatron":
            return "uint16" if n_vocab < MEGATRON_UINT16_LIMIT else "int32"
        return "uint16" if n_vocab <= 1 << 16 else "uint32"
    if dtype not in ALLOWED[fmt]:
        raise UsageError(f"--format {fmt} cannot hold {dtype} ids (it takes {' or '.join(ALLOWED[fmt])})")
    if dtype == "uint16" and n_vocab > 1 << 16:
        raise UsageError(f"the tokenizer has {n_vocab:,} ids: they do not fit in uint16 (use --dtype auto)")
    return dtype


def shard_files(fmt: str, stem: str) -> list[str]:
    """The file names of one shard."""
    return [f"{stem}.bin", f"{stem}.idx"] if fmt == "megatron" else [f"{stem}.bin"]


def shard_bytes(fmt: str, dtype: str, ids: npt.NDArray[np.integer], lengths: npt.NDArray[np.integer]) -> list[bytes]:
    """The contents of the files of one shard (in :func:`shard_files` order): ``ids`` are the
    shard's tokens, ``lengths`` the token count of each document in it."""
    body = np.ascontiguousarray(ids, dtype=np.dtype(dtype).newbyteorder("<")).tobytes()
    if fmt == "bin":
        return [body]
    if fmt == "llmc":
        if len(ids) >= 1 << 31:
            raise FormatError(f"an llm.c shard holds fewer than 2**31 tokens, this one has {len(ids):,}")
        magic, version = LLMC_HEADERS[dtype]
        header = np.zeros(LLMC_HEADER_INTS, dtype="<i4")
        header[:3] = (magic, version, len(ids))
        return [header.tobytes() + body]
    return [body, megatron_index(dtype, lengths)]


def megatron_index(dtype: str, lengths: npt.NDArray[np.integer]) -> bytes:
    """The ``.idx`` file of a Megatron indexed dataset with one sequence per document."""
    n = len(lengths)
    lens = np.asarray(lengths, dtype="<i4")
    pointers = np.zeros(n, dtype="<i8")
    if n:
        np.cumsum(lens[:-1].astype("<i8") * np.dtype(dtype).itemsize, out=pointers[1:])
    header = MEGATRON_MAGIC + struct.pack("<Q", MEGATRON_VERSION) + struct.pack("<B", MEGATRON_CODES[dtype])
    header += struct.pack("<Q", n) + struct.pack("<Q", n + 1)
    return header + lens.tobytes() + pointers.tobytes() + np.arange(n + 1, dtype="<i8").tobytes()


def read_shard(path: str | os.PathLike[str], fmt: str, dtype: Any) -> npt.NDArray[np.integer]:
    """The token ids of a shard's ``.bin`` file (a read-only memory map), checked against its
    format: ``dtype`` must be one bpekit writes (``uint16``, ``uint32``, ``int32``) and agree with
    the dtype the llm.c header or the Megatron ``.idx`` beside the file records; the header's
    magic, version and token count (the ``.idx``'s for Megatron) must match the file's size."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise InputTypeError(f"path must be a path (str or os.PathLike), got {type(path).__name__}")
    if not isinstance(fmt, str) or fmt not in FORMATS:
        raise UsageError(f"unknown shard format {fmt!r} (choose from {', '.join(FORMATS)})")
    try:
        name = np.dtype(dtype).name if isinstance(dtype, (str, type, np.dtype)) else ""
    except TypeError:
        name = ""
    if name not in ALLOWED["bin"]:
        raise InputTypeError(f"dtype must be one of {', '.join(ALLOWED['bin'])} (the dtypes bpekit writes), got {dtype!r}")
    path = Path(os.fsdecode(path))
    if not path.is_file():
        raise DataNotFoundError(f"shard not found: {str(path)!r}" + (" (a directory, not a file)" if path.is_dir() else ""))
    size = path.stat().st_size
    offset, kind, count = 0, name, -1  # what the llm.c header or the .idx records (bin: nothing)
    if fmt == "llmc":
        offset = LLMC_HEADER_INTS * 4
        if size < offset:
            raise FormatError(f"{path}: {size} bytes, shorter than the {offset}-byte llm.c header")
        magic, version, count = np.fromfile(path, dtype="<i4", count=3).tolist()
        kind = next((d for d, (m, _) in LLMC_HEADERS.items() if m == magic), "")
        if not kind:
            raise FormatError(f"{path}: not an llm.c shard (magic {magic}, expected 20240520 or 20240801)")
        if version != LLMC_HEADERS[kind][1]:
            raise FormatError(f"{path}: llm.c header version {version}, expected {LLMC_HEADERS[kind][1]} for magic {magic}")
    elif fmt == "megatron":
        kind, count = _megatron_index(path.with_suffix(".idx"))
    where = "llm.c header" if fmt == "llmc" else ".idx"
    if kind != name:
        raise FormatError(f"{path}: the shard holds {kind} ids (its {where} says), not {name}")
    width = np.dtype(name).itemsize
    if (size - offset) % width:
        raise FormatError(f"{path}: {size - offset} bytes of ids, not a whole number of {name} ({width} bytes each)")
    if fmt != "bin" and count != (size - offset) // width:
        raise FormatError(f"{path}: the {where} declares {count:,} tokens, the file holds {(size - offset) // width:,}")
    ltype = np.dtype(name).newbyteorder("<")
    if size == offset:  # an empty file cannot be memory-mapped
        empty = np.zeros(0, dtype=ltype)
        empty.flags.writeable = False
        return empty
    return np.memmap(path, dtype=ltype, mode="r", offset=offset)


def _megatron_index(idx: Path) -> tuple[str, int]:
    """The dtype and the token count that a Megatron ``.idx`` records (its header checked)."""
    if not idx.is_file():
        raise DataNotFoundError(f"the Megatron index of the shard is missing: {str(idx)!r}")
    data = idx.read_bytes()
    if len(data) < 34 or data[:9] != MEGATRON_MAGIC:
        raise FormatError(f"{idx}: not a Megatron index (no MMIDIDX header)")
    (version,) = struct.unpack_from("<Q", data, 9)
    if version != MEGATRON_VERSION:
        raise FormatError(f"{idx}: Megatron index version {version}, expected {MEGATRON_VERSION}")
    code, n = data[17], struct.unpack_from("<Q", data, 18)[0]
    kind = next((d for d, c in MEGATRON_CODES.items() if c == code), f"code {code}")
    if len(data) < 34 + 4 * n:
        raise FormatError(f"{idx}: truncated ({len(data)} bytes for {n:,} sequences)")
    return kind, int(np.frombuffer(data, dtype="<i4", count=n, offset=34).sum(dtype=np.int64))
