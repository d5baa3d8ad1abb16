"""Hostile files: every parser answers garbage with a typed bpekit error, fast, in small memory.

Parsers: ``.tiktoken`` rank files (Rust), minbpe ``.model``, SentencePiece ``.model`` (protobuf)
and bpekit's tokenizer JSON. Inputs: truncated and garbage lines, declared sizes larger than the
file, absurd vocabulary sizes and ids, deep JSON, duplicate and cyclic merges, invalid tokens,
wrong protobuf wire types, and random bytes (hypothesis; ``BPEKIT_HYPOTHESIS_EXAMPLES`` sets how
many). Python allocations are measured with tracemalloc, Rust ones with the peak RSS.
(tokenizer.json and GGUF parsers are covered by their own suites; they join this one later.)
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bpekit
from bpekit import _core, errors
from bpekit.formats.sentencepiece import SentencePieceModel
from bpekit.minbpe import RegexTokenizer
from datapaths import DATA
from hardening.bounded import bounded

BYTES = {bytes([b]): b for b in range(256)}
SPM_DIR = DATA / "spm"
TYPED = (errors.BpekitError,)
# the slower file targets run a quarter of the profile's examples (BPEKIT_HYPOTHESIS_EXAMPLES)
FEW = max(10, settings().max_examples // 4)


# ---------------------------------------------------------------------- .tiktoken


@pytest.mark.parametrize("content", [
    b"IQ== 0\nIg== 1\nIw",  # truncated mid-line
    b"IQ== 0\n\xff\xfe\x00garbage 1\n",
    b"IQ== 0\nIg== 1 2 3\n",
    b"IQ== 99999999999999999999\n",
    b"IQ==" + b"=" * 10000 + b" 0\n",
    b"\x00" * 5000,
    b"IQ== 0\n" * 3 + b"!!!!\n",
])  # fmt: skip
def test_garbage_rank_files(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(content)
    with pytest.raises(errors.FormatError, match=r"line \d+"):
        bounded(lambda: bpekit.load_tiktoken_bpe(path), len(content), "rank file")


@given(st.binary(max_size=400))
def test_random_rank_files(data: bytes) -> None:
    try:
        ranks = _core.parse_tiktoken_ranks(data, "random")
    except errors.FormatError:
        return
    assert all(isinstance(k, bytes) and k and isinstance(v, int) for k, v in ranks.items())


@pytest.mark.parametrize("rank", [2**31 - 2, 2**31, 50_000_000])
def test_absurd_ids_are_refused_without_allocating_them(rank: int) -> None:
    """One token with a huge rank used to make the decode table 16 GiB (86 s)."""
    start = time.perf_counter()
    with pytest.raises(errors.VocabError, match="too large"):
        bpekit.Encoding("sparse", pat_str=r"\S+", mergeable_ranks=BYTES | {b"ab": rank}, special_tokens={})
    with pytest.raises(errors.VocabError, match="too large"):
        bpekit.Encoding("sparse", pat_str=r"\S+", mergeable_ranks=BYTES, special_tokens={"<|x|>": rank})
    assert time.perf_counter() - start < 1.0


def test_ids_with_a_few_holes_still_load() -> None:
    enc = bpekit.Encoding("holes", pat_str=r"\S+", mergeable_ranks=BYTES | {b"ab": 300_000}, special_tokens={})
    assert enc.encode("ab") == [300_000]


# ---------------------------------------------------------------------- minbpe .model


HEADER = "minbpe v1\n"


@pytest.mark.parametrize("body", [
    "\n999999999999\n",  # more special tokens than lines
    "\n-1\n",
    "\n1\n<|x|> 99999999999999999999\n",  # absurd special id
    "\n0\n256 256\n",  # a merge of itself (cyclic)
    "\n0\n97 98\n97 98\n",  # duplicate merge
    "\n0\n97\n",
    "\n0\n97 98 99\n",
    "\n0\n1e9 2\n",
    "\n1\n<|x|>\n",
])  # fmt: skip
def test_hostile_minbpe_models(tmp_path: Path, body: str) -> None:
    path = tmp_path / "bad.model"
    path.write_text(HEADER + body)
    with pytest.raises(TYPED):
        bounded(lambda: RegexTokenizer().load(str(path)), len(body) + 10, "minbpe model")


@settings(max_examples=FEW)
@given(st.text(alphabet="0123456789 \n-<|>x", max_size=200))
def test_random_minbpe_models(tmp_path_factory: pytest.TempPathFactory, body: str) -> None:
    path = tmp_path_factory.mktemp("m") / "r.model"
    path.write_text(HEADER + "\n" + body)
    try:
        RegexTokenizer().load(str(path))
    except TYPED:
        pass


# ---------------------------------------------------------------------- SentencePiece .model


def _spm_bytes() -> bytes:
    path = SPM_DIR / "bpe_shakes_1000.model"
    if not path.is_file():
        pytest.skip(f"SentencePiece model {path} not found (set BPEKIT_TEST_DATA)")
    return path.read_bytes()


def _spm_load(data: bytes) -> Any:
    return SentencePieceModel.load(data)


@pytest.mark.parametrize("data", [
    b"\x0a\xff\xff\xff\x0f" + b"x" * 10,  # a piece declared 4 GiB long in a 15-byte file
    b"\x0a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01",  # a length varint that does not end
    b"\x08\x01",  # field 1 (pieces) as a varint: wrong wire type
    b"\x0d\x00\x00\x80\x3f",  # field 1 as a fixed32
    b"\x12\x03\x08\xff\x7f",  # trainer_spec with a truncated body
    b"\x0a\x04\x0a\x02\xff\xfe",  # a piece that is not UTF-8
    b"\x12\x06\x18\xff\xff\xff\xff\x07",  # trainer_spec.vocab_size = 2^31 - 1 (absurd; no pieces)
    b"",
])  # fmt: skip
def test_hostile_sentencepiece_bytes(data: bytes) -> None:
    with pytest.raises(TYPED):
        bounded(lambda: _spm_load(data), len(data) + 64, "SentencePiece model")


def test_truncated_sentencepiece_models() -> None:
    data = _spm_bytes()
    for cut in range(1, len(data), max(1, len(data) // 60)):
        try:
            bounded(lambda: _spm_load(data[:cut]), cut, f"cut at {cut}")
        except TYPED:
            pass


@settings(max_examples=FEW)
@given(st.data())
def test_mutated_sentencepiece_models(draw: st.DataObject) -> None:
    data = bytearray(_spm_bytes()[:3000])
    for _ in range(draw.draw(st.integers(1, 8))):
        data[draw.draw(st.integers(0, len(data) - 1))] = draw.draw(st.integers(0, 255))
    try:
        _spm_load(bytes(data))
    except TYPED:
        pass


@given(st.binary(max_size=300))
def test_random_sentencepiece_bytes(data: bytes) -> None:
    try:
        _spm_load(data)
    except TYPED:
        pass


# ---------------------------------------------------------------------- bpekit tokenizer JSON


def _doc(**fields: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"format": "bpekit", "version": 1, "pattern": r"\S+", "merges": [], "special_tokens": []}
    doc.update(fields)
    return doc


def _json_load(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "t.json"
    path.write_text(text)
    return bpekit.Tokenizer.load(path)


@pytest.mark.parametrize("text", [
    "[" * 100_000 + "]" * 100_000,  # deep JSON
    '{"a":' * 50_000 + "1" + "}" * 50_000,
    json.dumps(_doc(merges=[[97, 98], [97, 98]])),  # duplicate merge
    json.dumps(_doc(merges=[[256, 256]])),  # cyclic: the merge refers to its own result
    json.dumps(_doc(merges=[[-1, 98]])),
    json.dumps(_doc(merges=[[97, 2**70]])),
    json.dumps(_doc(merges=[[97]])),
    json.dumps(_doc(merges="abc")),
    json.dumps(_doc(vocab_size=2**40)),
    json.dumps(_doc(special_tokens=[""])),
    json.dumps(_doc(special_tokens=[["<|x|>", 2**40]])),
    json.dumps(_doc(pattern="(")),
    json.dumps(_doc(version=2**80)),
    '{"format": "bpekit", "version": 1, "pattern": "\\\\S+", "merges": [[97, 98]',  # truncated
    "\ud800",
    json.dumps(_doc(special_tokens={"<|x|>": 1})).replace("1}", "Infinity}"),  # found by atheris
    json.dumps(_doc(special_tokens={"<|x|>": 1})).replace("1}", "1e400}"),
])  # fmt: skip
def test_hostile_tokenizer_json(tmp_path: Path, text: str) -> None:
    size = len(text.encode("utf-8", "surrogatepass"))
    path = tmp_path / "t.json"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        tok = bounded(lambda: bpekit.Tokenizer.load(path), size, "tokenizer JSON")
    except TYPED:
        return
    # accepted (a duplicate merge is harmless): it must then encode and round-trip
    assert tok.decode_bytes(tok.encode("abab")) == b"abab"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=FEW)
@given(merges=json_values, specials=json_values, pattern=json_values)
def test_random_tokenizer_documents(merges: Any, specials: Any, pattern: Any) -> None:
    doc = _doc(merges=merges, special_tokens=specials, pattern=pattern)
    try:
        bpekit.Tokenizer.from_dict(doc, "random")
    except TYPED:
        pass
