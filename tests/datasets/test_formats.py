"""Shard layouts read back with readers written here from the published layouts (Megatron-LM
``indexed_dataset.py``, llm.c ``data_common.py``), never with bpekit's own reader."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from bpekit.datasets import read_manifest, tokenize

MEGATRON_DTYPES = {1: np.uint8, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 6: np.float64, 7: np.float32, 8: np.uint16}


def read_megatron(prefix: Path) -> tuple[np.ndarray, list[np.ndarray]]:
    """Megatron's MMapIndexedDataset, from its layout: (document indices, sequences)."""
    idx = (prefix.with_suffix(".idx")).read_bytes()
    assert idx[:9] == b"MMIDIDX\x00\x00"
    (version,) = struct.unpack_from("<Q", idx, 9)
    (code,) = struct.unpack_from("<B", idx, 17)
    seq_count, doc_count = struct.unpack_from("<QQ", idx, 18)
    assert version == 1
    pos = 34
    lengths = np.frombuffer(idx, dtype="<i4", count=seq_count, offset=pos)
    pos += 4 * seq_count
    pointers = np.frombuffer(idx, dtype="<i8", count=seq_count, offset=pos)
    pos += 8 * seq_count
    doc_idx = np.frombuffer(idx, dtype="<i8", count=doc_count, offset=pos)
    pos += 8 * doc_count
    assert pos == len(idx), "no bytes after the document indices (no multimodal modes)"
    dtype = np.dtype(MEGATRON_DTYPES[code]).newbyteorder("<")
    data = prefix.with_suffix(".bin").read_bytes()
    seqs = [np.frombuffer(data, dtype=dtype, count=int(n), offset=int(p)) for n, p in zip(lengths, pointers)]
    end = int(pointers[-1]) + int(lengths[-1]) * dtype.itemsize if seq_count else 0
    assert end == len(data), ".bin holds exactly the sequences"
    return doc_idx, seqs


@pytest.mark.parametrize("dtype, code", [("uint16", 8), ("int32", 4)])
def test_megatron_shards_read_back(tmp_path, h, docs, encoding, tokenizer_file, dtype, code) -> None:
    src = h.write_jsonl(tmp_path / "in.jsonl", docs)
    out = tmp_path / "out"
    m = tokenize([src], out, tokenizer_file, format="megatron", dtype=dtype, eos=True, shard_size=2000, show_progress=False)
    eos = encoding._special_tokens["<|endoftext|>"]
    seqs: list[list[int]] = []
    for shard in m["shards"]:
        prefix = out / shard["files"][0]["name"]
        assert shard["files"][1]["name"] == prefix.with_suffix(".idx").name
        assert (out / shard["files"][1]["name"]).read_bytes()[17] == code
        doc_idx, got = read_megatron(prefix)
        assert doc_idx.tolist() == list(range(len(got) + 1))
        assert len(got) == shard["documents"] and sum(map(len, got)) == shard["tokens"] <= 2000
        seqs += [s.tolist() for s in got]
    assert seqs == [encoding.encode_ordinary(d) + [eos] for d in docs]


def test_megatron_auto_dtype_follows_megatron(tmp_path, h, docs, tokenizer_file, data_dir) -> None:
    src = h.write_jsonl(tmp_path / "in.jsonl", docs[:5])
    small = tokenize([src], tmp_path / "a", tokenizer_file, format="megatron", show_progress=False)
    large = tokenize([src], tmp_path / "b", "o200k_base", format="megatron", show_progress=False)
    assert (small["settings"]["dtype"], large["settings"]["dtype"]) == ("uint16", "int32")


@pytest.mark.parametrize("tok, dtype, magic, version", [("tiny", "uint16", 20240520, 1), ("o200k_base", "uint32", 20240801, 7)])
def test_llmc_header(tmp_path, h, docs, encoding, tokenizer_file, data_dir, tok, dtype, magic, version) -> None:
    from bpekit import get_encoding

    enc = encoding if tok == "tiny" else get_encoding(tok)
    src = h.write_parquet(tmp_path / "in.parquet", docs)
    out = tmp_path / "out"
    m = tokenize([src], out, tokenizer_file if tok == "tiny" else tok, format="llmc", bos=True, shard_size=3000, show_progress=False)
    assert m["settings"]["dtype"] == dtype and len(m["shards"]) > 1
    bos = m["settings"]["bos"]
    stream: list[int] = []
    for shard in m["shards"]:
        data = (out / shard["files"][0]["name"]).read_bytes()
        header = np.frombuffer(data, dtype="<i4", count=256)
        assert header[:3].tolist() == [magic, version, shard["tokens"]]
        assert not header[3:].any()
        body = np.frombuffer(data, dtype=np.dtype(dtype).newbyteorder("<"), offset=1024)
        assert len(body) == shard["tokens"]
        stream += body.tolist()
    assert stream == h.expected_stream(enc, docs, bos=bos)


def test_bin_is_raw_ids_and_shards_hold_whole_documents(tmp_path, h, docs, encoding, tokenizer_file) -> None:
    src = h.write_jsonl(tmp_path / "in.jsonl", docs)
    out = tmp_path / "out"
    m = tokenize([src], out, tokenizer_file, eos_token="<s>", shard_size=500, show_progress=False)
    eos = encoding._special_tokens["<s>"]
    assert m["complete"] and m["settings"]["dtype"] == "uint16" and m["settings"]["eos"] == eos
    lengths = [len(encoding.encode_ordinary(d)) + 1 for d in docs]
    # shards close before the document that would not fit: replay the rule on the lengths
    expect, cur = [], 0
    for n in lengths:
        if cur and cur + n > 500:
            expect.append(cur)
            cur = 0
        cur += n
    expect.append(cur)
    assert [s["tokens"] for s in m["shards"]] == expect
    for shard in m["shards"]:
        raw = (out / shard["files"][0]["name"]).read_bytes()
        assert len(raw) == 2 * shard["tokens"] and np.frombuffer(raw, dtype="<u2")[-1] == eos
    assert h.read_all(out) == h.expected_stream(encoding, docs, eos=eos)
    assert m["documents"] == len(docs) and m["tokens"] == sum(lengths)
    assert read_manifest(out / "manifest.json") == m


def test_a_document_longer_than_a_shard_gets_its_own(tmp_path, encoding, tokenizer_file) -> None:
    docs = ["short one", "long " * 300, "short two"]
    src = tmp_path / "in.txt"
    src.write_text("\n".join(docs) + "\n", encoding="utf-8")
    m = tokenize([src], tmp_path / "out", tokenizer_file, lines=True, shard_size=50, show_progress=False)
    counts = [len(encoding.encode_ordinary(d)) for d in docs]
    assert [s["tokens"] for s in m["shards"]] == counts
    assert [s["documents"] for s in m["shards"]] == [1, 1, 1]


def test_real_corpus_matches_tiktoken(tmp_path, data_dir) -> None:
    """A few Tatoeba files, one document per line, o200k_base: the shards hold what tiktoken (an
    independent implementation) gives for each line, then EOS."""
    from peers import tiktoken_encoding

    files = sorted((data_dir / "corpora" / "tatoeba").glob("tatoeba.*"))[::25]
    out = tmp_path / "out"
    m = tokenize(files, out, "o200k_base", lines=True, eos=True, shard_size=20_000, show_progress=False)
    enc = tiktoken_encoding("o200k_base")
    expect: list[int] = []
    for f in files:
        for line in f.read_text(encoding="utf-8").split("\n"):
            line = line.removesuffix("\r")
            if line:
                expect += enc.encode_ordinary(line) + [enc.eot_token]
    got = np.concatenate([np.fromfile(out / s["files"][0]["name"], dtype="<u4") for s in m["shards"]])
    assert m["settings"]["dtype"] == "uint32" and len(m["shards"]) > 1
    assert got.tolist() == expect


def test_read_shard_checks_format_dtype_and_size(tmp_path, h, docs, encoding, tokenizer_file) -> None:
    """read_shard refuses what it cannot read right, with typed errors: an unknown format or a
    dtype bpekit does not write, a dtype the file itself contradicts, a size that is not whole ids,
    a missing file (it once read "xyz" as bin, float32 as garbage, uint16 ids as uint32)."""
    from bpekit.datasets import read_shard
    from bpekit.errors import DataNotFoundError, FormatError, InputTypeError, UsageError

    src = h.write_jsonl(tmp_path / "in.jsonl", docs[:20])
    expect = h.expected_stream(encoding, docs[:20])
    outs = {fmt: tmp_path / fmt for fmt in ("bin", "llmc", "megatron")}
    for fmt, out in outs.items():
        m = tokenize([src], out, tokenizer_file, format=fmt, show_progress=False)
        assert m["settings"]["dtype"] == "uint16" and len(m["shards"]) == 1
    binary, llmc, mega = (str(out / "shard_000000.bin") for out in outs.values())
    for path, fmt in ((binary, "bin"), (llmc, "llmc"), (mega, "megatron")):
        got = read_shard(path, fmt, "uint16")
        assert got.tolist() == expect and not got.flags.writeable
    assert read_shard(outs["bin"] / "shard_000000.bin", "bin", np.uint16).tolist() == expect
    with pytest.raises(UsageError, match=r"unknown shard format 'xyz' \(choose from bin, llmc, megatron\)"):
        read_shard(binary, "xyz", "uint16")
    for dtype in ("float32", None, "int64", "auto", 2):
        with pytest.raises(InputTypeError, match="dtype must be one of uint16, uint32, int32"):
            read_shard(binary, "bin", dtype)
    with pytest.raises(FormatError, match=r"the shard holds uint16 ids \(its llm.c header says\), not uint32"):
        read_shard(llmc, "llmc", "uint32")
    with pytest.raises(FormatError, match=r"the shard holds uint16 ids \(its .idx says\), not int32"):
        read_shard(mega, "megatron", "int32")
    three = tmp_path / "three.bin"  # three uint16 ids read as uint32 (a bin file records no dtype)
    three.write_bytes(np.arange(3, dtype="<u2").tobytes())
    with pytest.raises(FormatError, match="6 bytes of ids, not a whole number of uint32"):
        read_shard(three, "bin", "uint32")
    with pytest.raises(DataNotFoundError, match="shard not found: .*missing.bin"):
        read_shard(tmp_path / "missing.bin", "bin", "uint16")
    with pytest.raises(InputTypeError, match="got NoneType"):
        read_shard(None, "bin", "uint16")
    odd = tmp_path / "odd.bin"
    odd.write_bytes(b"\x01\x00\x02")
    with pytest.raises(FormatError, match="3 bytes of ids, not a whole number of uint16"):
        read_shard(odd, "bin", "uint16")
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    assert read_shard(empty, "bin", "uint16").tolist() == []
    with pytest.raises(FormatError, match="shorter than the 1024-byte llm.c header"):
        read_shard(empty, "llmc", "uint16")
    (tmp_path / "alone.bin").write_bytes(b"\x01\x00")
    with pytest.raises(DataNotFoundError, match="Megatron index of the shard is missing"):
        read_shard(tmp_path / "alone.bin", "megatron", "uint16")


@pytest.mark.parametrize(
    "header, body, message",
    [
        ((20240520, 1, 10**6), [1], "the llm.c header declares 1,000,000 tokens, the file holds 1"),
        ((20240520, 1, 0), [1, 2], "the llm.c header declares 0 tokens, the file holds 2"),
        ((12345, 1, 1), [1], "not an llm.c shard"),
        ((20240520, 7, 1), [1], "llm.c header version 7, expected 1"),
    ],
)
def test_read_shard_checks_the_llmc_header(tmp_path, header, body, message) -> None:
    from bpekit.datasets import read_shard
    from bpekit.errors import FormatError

    data = np.zeros(256, dtype="<i4")
    data[:3] = header
    path = tmp_path / "s.bin"
    path.write_bytes(data.tobytes() + np.array(body, dtype="<u2").tobytes())
    with pytest.raises(FormatError, match=message):
        read_shard(path, "llmc", "uint16")


def test_read_shard_checks_the_megatron_index(tmp_path) -> None:
    from bpekit.datasets import read_shard
    from bpekit.datasets.formats import megatron_index
    from bpekit.errors import FormatError

    (tmp_path / "s.bin").write_bytes(np.arange(5, dtype="<u2").tobytes())
    (tmp_path / "s.idx").write_bytes(megatron_index("uint16", np.array([2, 2])))
    with pytest.raises(FormatError, match=r"the .idx declares 4 tokens, the file holds 5"):
        read_shard(tmp_path / "s.bin", "megatron", "uint16")
    (tmp_path / "s.idx").write_bytes(b"not an index at all, but long enough to have a header")
    with pytest.raises(FormatError, match="not a Megatron index"):
        read_shard(tmp_path / "s.bin", "megatron", "uint16")
