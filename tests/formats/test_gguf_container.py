"""GGUF files: byte-exact round trips of every shared vocab file, agreement with the maintained
``gguf`` package in both directions, and typed errors without big allocations for hostile files."""

from __future__ import annotations

import struct
import time
from pathlib import Path

import pytest
from bpekit.errors import BpekitError, FormatError, VocabError
from bpekit.formats.gguf import container as c
from bpekit.formats.gguf.vocab import GGUFVocab
from formats.test_gguf_support import (
    NAMES,
    gguf_bytes,
    gguf_path,
    gstr,
    kv_bytes,
    tiny_bpe,
    vocab,
)
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.parametrize("name", NAMES)
def test_every_shared_file_reads_and_writes_back_byte_for_byte(
    name: str, tmp_path: Path
) -> None:
    path = gguf_path(name)
    v = vocab(name)
    assert len(v.tokens) > 30000 and v.model in ("gpt2", "llama")
    data = c.serialize(v.to_file())
    assert data == path.read_bytes()


def test_tokenizer_keys_of_the_shared_files() -> None:
    # Facts from formats.md §5.9 (counts and ids), read back through GGUFVocab.
    gpt2 = vocab("gpt-2")
    assert (len(gpt2.tokens), len(gpt2.merges or []), gpt2.pre) == (
        50257,
        50000,
        "gpt-2",
    )
    assert gpt2.special_id("bos") == gpt2.special_id("eos") == 50256
    assert gpt2.merges and gpt2.merges[0] == ("Ġ", "t")
    spm = vocab("llama-spm")
    assert spm.model == "llama" and spm.scores is not None and spm.merges is None
    assert (
        spm.scores[259] == -1e9
        and spm.tokens[259] == "▁▁"
        and spm.scores[1000] == -741.0
    )
    assert spm.flags == {"add_bos_token": True, "add_eos_token": False}
    assert spm.token_types is not None and spm.token_types.count(6) == 256
    bpe = vocab("llama-bpe")
    assert (len(bpe.tokens), len(bpe.merges or [])) == (128256, 280147)


def test_our_files_read_with_the_gguf_package(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf", reason="the gguf package (bpekit[dev]) is the reference reader")
    v = tiny_bpe()
    v.scores = [0.0, -1.0, -2.0, -3.5, -4.0, 0.0]
    v.flags = {"add_bos_token": True}
    path = tmp_path / "tiny.gguf"
    path.write_bytes(c.serialize(v.to_file()))
    reader = gguf.GGUFReader(path)
    assert reader.fields["tokenizer.ggml.tokens"].contents() == v.tokens
    assert reader.fields["tokenizer.ggml.merges"].contents() == ["a b", "Ġ ab"]
    assert reader.fields["tokenizer.ggml.scores"].contents() == v.scores
    assert reader.fields["tokenizer.ggml.bos_token_id"].contents() == 5
    assert reader.fields["tokenizer.ggml.add_bos_token"].contents() is True
    assert reader.fields["general.architecture"].contents() == "gpt2"


def test_gguf_package_files_read_with_ours(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf", reason="the gguf package (bpekit[dev]) is the reference writer")
    path = tmp_path / "ref.gguf"
    w = gguf.GGUFWriter(path, "llama")
    w.add_tokenizer_model("llama")
    w.add_token_list(["<unk>", "▁a", "b"])
    w.add_token_scores([0.0, -1.0, -2.5])
    w.add_token_types([2, 1, 1])
    w.add_unk_token_id(0)
    w.add_add_bos_token(True)
    w.add_array("extra.ints", [1, 2, 3])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    data = path.read_bytes()
    v = GGUFVocab.read(path)
    assert (v.model, v.tokens, v.scores, v.token_types) == (
        "llama",
        ["<unk>", "▁a", "b"],
        [0.0, -1.0, -2.5],
        [2, 1, 1],
    )
    assert v.special_ids == {"unknown_token_id": 0} and v.flags == {
        "add_bos_token": True
    }
    assert v.file.get("extra.ints") == [1, 2, 3]
    assert (
        c.serialize(v.to_file()) == data
    )  # byte-exact, including the gguf package's key order


HOSTILE = {
    "not gguf": b"GGML" + bytes(40),
    "version 1": gguf_bytes(version=1),
    "version 99": gguf_bytes(version=99),
    "huge kv count": gguf_bytes(kv_count=2**62),
    "huge tensor count": gguf_bytes(kv_bytes("k", c.UINT8, b"\x01"), tensors=2**60),
    "huge key": b"GGUF" + struct.pack("<IQQQ", 3, 0, 1, 2**63) + b"k",
    "huge string": gguf_bytes(
        kv_bytes("k", c.STRING, struct.pack("<Q", 2**40) + b"abc")
    ),
    "huge array": gguf_bytes(
        kv_bytes("k", c.ARRAY, struct.pack("<IQ", c.STRING, 2**60) + gstr("x"))
    ),
    "huge int array": gguf_bytes(
        kv_bytes("k", c.ARRAY, struct.pack("<IQ", c.UINT64, 2**61))
    ),
    "unknown type": gguf_bytes(kv_bytes("k", 77, b"\x00" * 8)),
    "unknown element type": gguf_bytes(
        kv_bytes("k", c.ARRAY, struct.pack("<IQ", 99, 1) + b"\x00")
    ),
    "duplicate key": gguf_bytes(
        kv_bytes("k", c.UINT8, b"\x01"), kv_bytes("k", c.UINT8, b"\x02")
    ),
    "empty key": gguf_bytes(kv_bytes("", c.UINT8, b"\x01")),
    "bad utf-8": gguf_bytes(kv_bytes("k", c.STRING, gstr("x")[:8] + b"\xff")),
    "deep arrays": gguf_bytes(
        kv_bytes(
            "k",
            c.ARRAY,
            struct.pack("<IQ", c.ARRAY, 1) * 5 + struct.pack("<IQ", c.UINT8, 0),
        )
    ),
    "truncated array of strings": gguf_bytes(
        kv_bytes(
            "tokenizer.ggml.tokens",
            c.ARRAY,
            struct.pack("<IQ", c.STRING, 3) + gstr("a") + gstr("b"),
        )
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_containers_raise_format_error_quickly(case: str) -> None:
    start = time.perf_counter()
    with pytest.raises(FormatError):
        c.parse(HOSTILE[case], case)
    assert time.perf_counter() - start < 0.5


def _tokenizer_file(**over: bytes) -> bytes:
    parts = {
        "model": kv_bytes("tokenizer.ggml.model", c.STRING, gstr("gpt2")),
        "tokens": kv_bytes(
            "tokenizer.ggml.tokens",
            c.ARRAY,
            struct.pack("<IQ", c.STRING, 2) + gstr("a") + gstr("b"),
        ),
        "merges": kv_bytes(
            "tokenizer.ggml.merges",
            c.ARRAY,
            struct.pack("<IQ", c.STRING, 1) + gstr("a b"),
        ),
    }
    parts.update(over)
    return gguf_bytes(*(v for v in parts.values() if v))


BAD_TOKENIZERS = {
    "tokens are ints": (
        FormatError,
        {
            "tokens": kv_bytes(
                "tokenizer.ggml.tokens", c.ARRAY, struct.pack("<IQ2i", c.INT32, 2, 1, 2)
            )
        },
    ),
    "model is an int": (
        FormatError,
        {"model": kv_bytes("tokenizer.ggml.model", c.UINT32, struct.pack("<I", 1))},
    ),
    "unknown model": (
        FormatError,
        {"model": kv_bytes("tokenizer.ggml.model", c.STRING, gstr("wordpiece9"))},
    ),
    "no tokens": (FormatError, {"tokens": b""}),
    "gpt2 without merges": (FormatError, {"merges": b""}),
    "merge without space": (
        FormatError,
        {
            "merges": kv_bytes(
                "tokenizer.ggml.merges",
                c.ARRAY,
                struct.pack("<IQ", c.STRING, 1) + gstr("ab"),
            )
        },
    ),
    "short token_type": (
        FormatError,
        {
            "types": kv_bytes(
                "tokenizer.ggml.token_type", c.ARRAY, struct.pack("<IQi", c.INT32, 1, 1)
            )
        },
    ),
    "bos id is a string": (
        FormatError,
        {"bos": kv_bytes("tokenizer.ggml.bos_token_id", c.STRING, gstr("1"))},
    ),
    "duplicate tokens": (
        VocabError,
        {
            "tokens": kv_bytes(
                "tokenizer.ggml.tokens",
                c.ARRAY,
                struct.pack("<IQ", c.STRING, 2) + gstr("a") + gstr("a"),
            )
        },
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_TOKENIZERS))
def test_malformed_tokenizer_keys_raise_typed_errors(case: str) -> None:
    error, over = BAD_TOKENIZERS[case]
    with pytest.raises(error):
        GGUFVocab.from_file(c.parse(_tokenizer_file(**over)), case)


def test_every_truncation_of_a_real_vocab_file_is_a_format_error() -> None:
    data = c.serialize(tiny_bpe().to_file())
    GGUFVocab.from_file(c.parse(data))
    for cut in range(len(data)):
        with pytest.raises(FormatError):
            c.parse(data[:cut])


@given(st.data())
def test_random_corruption_gives_only_typed_errors(data: st.DataObject) -> None:
    raw = bytearray(c.serialize(tiny_bpe().to_file()))
    for _ in range(data.draw(st.integers(1, 4))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    try:
        GGUFVocab.from_file(c.parse(bytes(raw)))
    except BpekitError:
        pass


def test_reading_a_missing_or_tiny_file(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="cannot read"):
        c.read(tmp_path / "absent.gguf")
    (tmp_path / "tiny.gguf").write_bytes(b"GGUF")
    with pytest.raises(FormatError, match="shorter than a GGUF header"):
        c.read(tmp_path / "tiny.gguf")


def test_writer_refuses_values_that_do_not_fit_their_type() -> None:
    gf = c.GGUFFile(kv={"k": c.Value(c.UINT8, 300)})
    with pytest.raises(FormatError, match="UINT8"):
        c.serialize(gf)
    with pytest.raises(FormatError, match="tensors"):
        c.serialize(c.GGUFFile(tensor_count=1))
