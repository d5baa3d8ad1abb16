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

import struct

import numpy as np
import numpy.typing as npt

from bpekit.errors import FormatError, UsageError

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


def read_shard(path: str, fmt: str, dtype: str) -> npt.NDArray[np.integer]:
    """The token ids of a shard's ``.bin`` file (a read-only memory map)."""
    offset = LLMC_HEADER_INTS * 4 if fmt == "llmc" else 0
    return np.memmap(path, dtype=np.dtype(dtype).newbyteorder("<"), mode="r", offset=offset)
