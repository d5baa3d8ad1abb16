"""SentencePiece ``.model`` files: lossless round trips, and typed errors (quickly, without big
allocations) for malformed, truncated and hostile files."""

from __future__ import annotations

import struct
import time
from pathlib import Path

import pytest
from bpekit.errors import BpekitError, DataNotFoundError, FormatError, VocabError
from bpekit.formats.sentencepiece import ModelProto, SentencePieceBPE, SentencePieceModel
from formats.test_sentencepiece_support import (
    NORMAL,
    SPECIALS,
    TRAINED,
    USER_DEFINED,
    build,
    byte_pieces,
    held_out_sample,
    model_paths,
    spm,
    trained,
)
from hypothesis import given
from hypothesis import strategies as st

MODELS = model_paths()
SMALL = build([*SPECIALS, ("a", -1.0, NORMAL), ("b", -1.0, NORMAL), ("ab", 0.0, NORMAL)])


def _files() -> list[tuple[str, bytes]]:
    shared = [(p.name, p.read_bytes()) for p in MODELS]
    return shared + [(f"trained-{name}", trained(name)) for name in sorted(TRAINED)]


def test_reserializing_reproduces_every_file_byte_for_byte(tmp_path: Path) -> None:
    files = _files()
    assert len(files) >= len(TRAINED)
    for name, data in files:
        model = SentencePieceModel.load(data)
        assert model.to_proto().SerializeToString() == data, name  # the proto path itself is lossless
        assert SentencePieceModel.from_proto(model.to_proto()).serialize() == data, name
        model.save(tmp_path / name)
        assert (tmp_path / name).read_bytes() == data, name


@pytest.mark.skipif(not MODELS, reason="shared SentencePiece models not found")
def test_load_save_load_gives_the_same_encodings(tmp_path: Path) -> None:
    lines = held_out_sample()[::25]
    for path in MODELS:
        first = SentencePieceBPE.load(path)
        first.save(tmp_path / path.name)
        again = SentencePieceBPE.load(tmp_path / path.name)
        assert [again.encode_pieces_and_ids(x) for x in lines] == [first.encode_pieces_and_ids(x) for x in lines]
        assert (tmp_path / path.name).read_bytes() == path.read_bytes()


def test_presence_signed_zero_and_unknown_fields_survive() -> None:
    proto = ModelProto.FromString(SMALL)
    proto.pieces[3].score = -0.0
    proto.trainer_spec.unk_surface = ""  # set to empty: present, and used when decoding
    proto.normalizer_spec.add_dummy_prefix = True  # the default, but present
    extra = b"\xf8\x06\x07" + b"\xa2\x06\x02hi"  # field 111 varint, field 100 bytes (unknown)
    extension = b"\xc2\x0c\x01x"  # field 200, in the extension range
    data = proto.SerializeToString() + extra + extension
    model = SentencePieceModel.load(data)
    assert model.serialize() == data
    assert model.to_proto().SerializeToString() == data
    assert struct.pack("<f", model.pieces[3].score) == b"\x00\x00\x00\x80"
    tok = SentencePieceBPE(model)
    assert tok.encode("qab") == [0, 5]
    assert tok.decode([0, 5]) == "ab" == spm().SentencePieceProcessor(model_proto=data).decode([0, 5])


def test_wrong_wire_types_inside_a_piece_are_kept_as_unknown_fields() -> None:
    # piece "ba" with its score as a varint (field 2 is fixed32) and its type as bytes (an enum):
    # protobuf keeps both as unknown fields, so the piece reads as NORMAL with score 0.0.
    entry = b"\x0a\x02ba" + b"\x10\x05" + b"\x1a\x01x"
    data = b"\x0a" + bytes([len(entry)]) + entry + SMALL
    model = SentencePieceModel.load(data)
    assert model.pieces[0] == ("ba", 0.0, NORMAL)
    assert model.to_proto().SerializeToString() == data
    sp = spm().SentencePieceProcessor(model_proto=data)
    tok = SentencePieceBPE(model)
    for text in ("abab", "baba", "bab"):
        assert tok.encode(text, out_type=str) == sp.encode(text, out_type=str)


def test_self_test_data_is_kept_but_not_run() -> None:
    proto = ModelProto.FromString(SMALL)
    proto.self_test_data.samples.add(input="ab", expected="a b")  # wrong: "ab" encodes to ab
    data = proto.SerializeToString()
    spm().SentencePieceProcessor(model_proto=data)  # the 0.2.3 wheel does not run it either
    model = SentencePieceModel.load(data)
    assert model.serialize() == data
    assert SentencePieceBPE(model).encode("ab", out_type=str) == ["ab"]


def test_fields_out_of_order_are_kept_by_save(tmp_path: Path) -> None:
    proto = ModelProto.FromString(SMALL)
    pieces = b"".join(b"\x0a" + bytes([p.ByteSize()]) + p.SerializeToString() for p in proto.pieces)
    spec = proto.trainer_spec.SerializeToString()
    data = b"\x12" + bytes([len(spec)]) + spec + pieces  # trainer_spec first: not canonical order
    model = SentencePieceModel.load(data)
    assert model.to_proto().SerializeToString() != data  # protobuf would reorder ...
    model.save(tmp_path / "m.model")
    assert (tmp_path / "m.model").read_bytes() == data  # ... but save writes the bytes read


def _bad(pieces: list[tuple[str, float, int]], **options: bool) -> bytes:
    return build(pieces, **options)


@pytest.mark.parametrize(
    ("data", "error", "message"),
    [
        (_bad([("a", 0.0, NORMAL)]), VocabError, "no UNKNOWN piece"),
        (_bad([*SPECIALS, ("<unk>", 0.0, 2)]), VocabError, "defined twice"),
        (_bad([*SPECIALS, ("x", 0.0, 2)]), VocabError, "two UNKNOWN"),
        (_bad([*SPECIALS, ("ab", -1.0, NORMAL), ("ab", -2.0, NORMAL)]), VocabError, "defined twice"),
        (_bad([*SPECIALS, ("ab", -1.0, NORMAL), ("ab", -2.0, USER_DEFINED)]), VocabError, "defined twice"),
        (_bad([*SPECIALS, ("", 0.0, NORMAL)]), VocabError, "empty"),
        (_bad([*SPECIALS, ("a\0b", 0.0, NORMAL)]), VocabError, "NUL"),
        (_bad([*SPECIALS, ("x" * 8000, 0.0, NORMAL)]), VocabError, "too long"),
        (_bad([*SPECIALS, ("<0x41>", 0.0, 6)]), VocabError, "byte_fallback is false"),
        (_bad([*SPECIALS, *byte_pieces()[:-1]], byte_fallback=True), VocabError, "<0xFF>"),
        (_bad([*SPECIALS, *byte_pieces()[1:], ("<0x4g>", 0.0, 6)], byte_fallback=True), VocabError, "<0xHH>"),
        (_bad([*SPECIALS, *byte_pieces()[1:], ("<0x0a>", 0.0, 6)], byte_fallback=True), VocabError, "<0xHH>"),
        (b"\x0a\xff\xff\xff\xff\x0f" + SMALL, FormatError, "corrupt or truncated"),  # a 4 GiB piece
        (b"\x0a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", FormatError, "corrupt or truncated"),
        (b"\x0a\x02\x0a", FormatError, "corrupt or truncated"),
        (b"\x08\x05", VocabError, "no UNKNOWN piece"),  # field 1 as a varint: unknown field
        (b"\x0b" * 200 + b"\x0c" * 200, FormatError, "corrupt or truncated"),  # groups nested 200 deep
    ],
)
def test_bad_files_raise_typed_errors(data: bytes, error: type[BpekitError], message: str) -> None:
    with pytest.raises(error, match=message):
        SentencePieceModel.load(data)
    with pytest.raises(RuntimeError):  # sentencepiece refuses them too
        spm().SentencePieceProcessor(model_proto=data)


def test_strings_that_are_not_utf8_are_refused() -> None:
    # sentencepiece loads such a piece (C++ strings are bytes); bpekit works on str and refuses it.
    piece = b"\x0a\x02\xff\xfe\x15\x00\x00\x00\x00"
    with pytest.raises(FormatError, match="piece 0 is not valid UTF-8"):
        SentencePieceModel.load(b"\x0a" + bytes([len(piece)]) + piece + SMALL)
    proto = ModelProto.FromString(SMALL)
    spec = proto.trainer_spec.SerializeToString() + b"\xe2\x02\x01\xff"  # unk_surface = b"\xff"
    with pytest.raises(FormatError, match="unk_surface is not valid UTF-8"):
        SentencePieceModel.load(SMALL + b"\x12" + bytes([len(spec)]) + spec)


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (b"\x01\x00\x00", "broken"),
        (struct.pack("<I", 0xFFFFFFF0) + b"\0" * 8, "exceeds the blob size"),
        (struct.pack("<I", 8) + b"\0\0\0\0", "exceeds the blob size"),
        (struct.pack("<I", 2) + b"\0\0a\0", "no units"),
    ],
)
def test_broken_charsmaps_raise_format_errors(blob: bytes, message: str) -> None:
    proto = ModelProto.FromString(SMALL)
    proto.normalizer_spec.precompiled_charsmap = blob
    with pytest.raises(FormatError, match=message):
        SentencePieceModel.load(proto.SerializeToString())


@given(
    units=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=40),
    pool=st.binary(max_size=20),
    text=st.text("ab\x00 é\u0301", max_size=12),
)
def test_hostile_charsmaps_raise_format_error_or_normalize(units: list[int], pool: bytes, text: str) -> None:
    proto = ModelProto.FromString(SMALL)
    trie = struct.pack(f"<{len(units)}I", *units)
    proto.normalizer_spec.precompiled_charsmap = struct.pack("<I", len(trie)) + trie + pool + b"\0"
    try:
        tok = SentencePieceBPE.load(proto.SerializeToString())
        normalized = tok.normalize(text)
    except FormatError:
        return
    assert isinstance(normalized, str)
    try:
        assert tok.model.normalizer.normalize_reference(text) == normalized
    except FormatError:
        pass  # the byte-level walk saw a unit out of range that the str path skipped


@given(data=st.binary(max_size=300))
def test_random_bytes_load_or_raise_typed_errors(data: bytes) -> None:
    try:
        SentencePieceModel.load(data)
    except (FormatError, VocabError):
        pass


@pytest.mark.skipif(not MODELS, reason="shared SentencePiece models not found")
def test_every_truncation_of_a_model_loads_or_raises_quickly() -> None:
    data = max(MODELS, key=lambda p: p.stat().st_size).read_bytes()
    start = time.perf_counter()
    outcomes = set()
    for cut in range(0, len(data), max(1, len(data) // 400)):
        try:
            SentencePieceModel.load(data[:cut])
            outcomes.add("loaded")
        except (FormatError, VocabError) as e:
            outcomes.add(type(e).__name__)
    assert "FormatError" in outcomes
    assert time.perf_counter() - start < 10


def test_size_limit_is_checked_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.model"
    path.write_bytes(SMALL)
    with pytest.raises(FormatError, match="over the SentencePiece model limit"):
        SentencePieceModel.load(path, max_bytes=len(SMALL) - 1)
    with pytest.raises(FormatError, match="over the limit"):
        SentencePieceModel.load(SMALL, max_bytes=10)
    assert SentencePieceModel.load(path, max_bytes=len(SMALL)).serialize() == SMALL
    with pytest.raises(DataNotFoundError):
        SentencePieceModel.load(tmp_path / "missing.model")
    with pytest.raises(FormatError, match="directory"):
        SentencePieceModel.load(tmp_path)


def test_save_is_atomic_and_replaces(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "m.model"
    SentencePieceModel.load(SMALL).save(path)
    other = build([*SPECIALS, ("z", 0.0, NORMAL)])
    SentencePieceModel.load(other).save(path)
    assert path.read_bytes() == other
    assert [p.name for p in path.parent.iterdir()] == ["m.model"]  # no temporary file left


def test_other_model_types_load_and_save_but_do_not_encode(tmp_path: Path) -> None:
    unigram = build([*SPECIALS, ("a", -1.0, NORMAL), ("a", 0.0, 3)], model_type=1)  # two maps: allowed
    model = SentencePieceModel.load(unigram)
    assert model.model_type == "UNIGRAM"
    model.save(tmp_path / "u.model")
    assert (tmp_path / "u.model").read_bytes() == unigram
    with pytest.raises(FormatError, match="only BPE"):
        SentencePieceBPE(model)
