"""Hostile Hugging Face ``tokenizer.json`` and GGUF files: a typed bpekit error, fast, in small
memory, or a tokenizer that then encodes and decodes.

The same contract as ``test_hostile_files.py``, for the two parsers fuzzed by
``fuzz/python/parsers.py`` (targets ``hf`` and ``gguf``): malformed JSON, wrong types, absurd
sizes and ids, cyclic and duplicate merges, bad added tokens, unknown pipeline types; GGUF headers
whose declared sizes and counts exceed the file, wrong type tags, truncated arrays; and mutated
files (hypothesis; ``BPEKIT_HYPOTHESIS_EXAMPLES`` sets how many). Findings of the fuzzers are
marked where they are pinned.
"""

from __future__ import annotations

import copy
import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpekit import errors
from bpekit.formats import gguf, hf
from bpekit.formats.gguf import container as c
from bpekit.formats.gguf import to_hf, to_spm  # noqa: F401  (imported here, not inside a measured load)
from bpekit.pipeline import rank_model  # noqa: F401
from hardening.bounded import bounded

FEW = max(10, settings().max_examples // 4)
TEXT = "abc cab <|x|> ab\n"


def _typed_or_working(load: Callable[[], Any], size: int, what: str) -> None:
    """``load`` raises a BpekitError, or what it returns encodes and decodes ``TEXT`` (or raises
    a BpekitError there: an ``unk_token`` missing from the vocabulary fails at the first unknown
    character, as in Hugging Face)."""
    try:
        tok = bounded(load, size, what)
        ids = tok.encode(TEXT, add_special_tokens=True)
        tok.decode(ids)
        tok.decode(ids, skip_special_tokens=True)
    except errors.BpekitError:
        return


# ---------------------------------------------------------------------- tokenizer.json

ADDED = {"id": 5, "content": "<|x|>", "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
HF_DOC: dict[str, Any] = {
    "version": "1.0", "truncation": None, "padding": None, "added_tokens": [ADDED],
    "normalizer": {"type": "NFC"},
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    "post_processor": None,
    "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
              "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
              "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4}, "merges": ["a b", "ab c"]},
}  # fmt: skip


def _hf(path: list[str | int], value: Any) -> str:
    """HF_DOC with the value at ``path`` replaced, as JSON."""
    doc = copy.deepcopy(HF_DOC)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return json.dumps(doc)


HOSTILE_HF = [
    json.dumps(HF_DOC)[:-40],  # truncated
    "[" * 100_000 + "]" * 100_000,
    '{"model":' * 50_000 + "1" + "}" * 50_000,
    "\ud800",
    "null",
    _hf(["version"], "2.0"),
    _hf(["model"], [1, 2]),
    _hf(["model", "type"], "WordPiece"),
    _hf(["model", "vocab"], {"a": -1}),
    _hf(["model", "vocab"], {"a": 2**40, "b": 1}),
    _hf(["model", "vocab"], {"a": 1.5}),
    _hf(["model", "vocab"], {"a": True}),
    _hf(["model", "vocab"], []),
    _hf(["model", "merges"], ["a b", "a b"]),  # duplicate
    _hf(["model", "merges"], ["ab ab", "abab ab"]),  # results not in the vocabulary
    _hf(["model", "merges"], ["a b", "ab c", "abc abc"]),
    _hf(["model", "merges"], ["a"]),
    _hf(["model", "merges"], ["a b c"]),
    _hf(["model", "merges"], [["a"]]),
    _hf(["model", "merges"], [[1, 2]]),
    _hf(["model", "merges"], "a b"),
    _hf(["model", "merges"], ["#version: 0.2", "a b"]),
    _hf(["model", "dropout"], 2),
    _hf(["model", "dropout"], "x"),
    _hf(["model", "unk_token"], 7),
    _hf(["model", "unk_token"], "<unk>"),  # not in the vocabulary
    _hf(["added_tokens"], [{**ADDED, "id": 2**40}]),
    _hf(["added_tokens"], [{**ADDED, "id": -1}]),
    _hf(["added_tokens"], [{**ADDED, "content": ""}]),
    _hf(["added_tokens"], [ADDED, ADDED]),
    _hf(["added_tokens"], [{**ADDED, "content": 5}]),
    _hf(["added_tokens"], [{"id": 5}]),
    _hf(["added_tokens"], {"id": 5}),
    _hf(["normalizer"], {"type": "Lowercase2"}),
    _hf(["normalizer"], {"type": "Sequence", "normalizers": [{"type": "NFC"}] * 3 + [7]}),
    _hf(["normalizer"], {"type": "Replace", "pattern": {"Regex": "("}, "content": ""}),
    _hf(["pre_tokenizer"], {"type": "Split", "pattern": {"Regex": "(?<=a"}, "behavior": "Isolated",
                            "invert": False}),
    _hf(["pre_tokenizer"], {"type": "Split", "pattern": {"String": "a"}, "behavior": "Sideways",
                            "invert": False}),
    # (session 20, atheris) a counted repetition `{n}+` at the pattern's start made the rewrite of
    # Oniguruma's `X{n}+` grow the pattern without end (2 GB in 7 s)
    _hf(["pre_tokenizer"], {"type": "Split", "pattern": {"Regex": "{4}+Y{5}+"}, "behavior": "Isolated",
                            "invert": False}),
    _hf(["pre_tokenizer"], {"type": "Metaspace", "replacement": "", "prepend_scheme": "always"}),
    _hf(["pre_tokenizer"], {"type": "NoSuchThing"}),
    _hf(["post_processor"], {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}],
                             "pair": [], "special_tokens": {}}),
    _hf(["post_processor"], {"type": "TemplateProcessing", "single": "$A", "pair": "$A $B", "special_tokens": []}),
    _hf(["decoder"], {"type": "Fuse2"}),
    _hf(["truncation"], {"max_length": 2**62}),
    # (session 31) one long added token: the matcher's DFA filled its transitions along failure
    # links, quadratic in the literal (7,000 spaces: 5.7 s to load; 200,000 would take hours)
    _hf(["added_tokens"], [ADDED, {**ADDED, "id": 6, "content": " " * 200_000, "special": False}]),
]  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def _loaded_once() -> None:
    """One load of a working document first, so that the modules ``hf.load`` imports on first
    use are not counted in the first measured load (alone, ``"null"`` read 2.4 MB)."""
    hf.from_document(copy.deepcopy(HF_DOC)).encode(TEXT)


@pytest.mark.parametrize("text", HOSTILE_HF, ids=range(len(HOSTILE_HF)))
def test_hostile_hf_tokenizer_json(tmp_path: Path, text: str) -> None:
    raw = text.encode("utf-8", "surrogatepass")
    path = tmp_path / "tokenizer.json"
    path.write_bytes(raw)
    _typed_or_working(lambda: hf.load(path), len(raw), "tokenizer.json")


@pytest.mark.parametrize("raw", [
    json.dumps(HF_DOC).replace('"abc": 4', '"a\\udf5c": 4').encode(),  # escaped, in the vocabulary
    json.dumps(HF_DOC).replace('"ab c"', '"ab \\ud800"').encode(),  # escaped, in a merge
    json.dumps(HF_DOC).replace("<|x|>", "<|\\udc00|>").encode(),  # escaped, in an added token
    json.dumps(HF_DOC).encode().replace(b'"abc": 4', b'"a\xed\xbd\x9c": 4'),  # encoded (not UTF-8)
])  # fmt: skip
def test_lone_surrogates_in_tokenizer_json_are_refused(tmp_path: Path, raw: bytes) -> None:
    """Found by atheris: a vocabulary key holding U+DF5C (as the bytes ED BD 9C, which
    ``json.loads`` on bytes lets through) reached the Rust core and raised UnicodeEncodeError."""
    path = tmp_path / "tokenizer.json"
    path.write_bytes(raw)
    with pytest.raises(errors.FormatError, match="surrogate|not valid JSON"):
        hf.load(path)


def test_paired_surrogate_escapes_still_load(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(HF_DOC).replace("<|x|>", "\\ud83d\\ude00"))
    assert hf.load(path).token_to_id("\U0001f600") == 5


def test_hf_document_loads() -> None:
    """The document the cases above break is itself good (else they would prove nothing)."""
    tok = hf.from_document(copy.deepcopy(HF_DOC))
    assert tok.encode("abc<|x|>") == [4, 5]


@settings(max_examples=FEW)
@given(st.data())
def test_mutated_hf_tokenizer_json(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    raw = bytearray(json.dumps(HF_DOC).encode())
    for _ in range(data.draw(st.integers(1, 6))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at : at + data.draw(st.integers(0, 3))] = data.draw(st.binary(max_size=4))
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    path.write_bytes(bytes(raw))
    _typed_or_working(lambda: hf.load(path), len(raw), "mutated tokenizer.json")


# ---------------------------------------------------------------------- GGUF


def _gguf(**changes: c.Value | None) -> bytes:
    """A small vocab-only GGUF file (a ``gpt2`` vocabulary), tokenizer keys changed or removed."""
    kv = {
        "general.architecture": c.Value(c.STRING, "gpt2"),
        "tokenizer.ggml.model": c.Value(c.STRING, "gpt2"),
        "tokenizer.ggml.tokens": c.Value(c.ARRAY, ["a", "b", "c", "ab", "abc", "<|x|>"], c.STRING),
        "tokenizer.ggml.token_type": c.Value(c.ARRAY, [1, 1, 1, 1, 1, 3], c.INT32),
        "tokenizer.ggml.merges": c.Value(c.ARRAY, ["a b", "ab c"], c.STRING),
        "tokenizer.ggml.bos_token_id": c.Value(c.UINT32, 5),
        "tokenizer.ggml.add_bos_token": c.Value(c.BOOL, True),
    }
    for key, value in changes.items():
        full = "tokenizer.ggml." + key
        if value is None:
            kv.pop(full, None)
        else:
            kv[full] = value
    return c.serialize(c.GGUFFile(kv=kv))


def _load_gguf(raw: bytes) -> Any:
    return gguf.to_tokenizer(gguf.GGUFVocab.from_file(c.parse(raw), "hostile.gguf"))


def _patched(raw: bytes, find: bytes, fmt: str, value: int, skip: int = 0) -> bytes:
    """``raw`` with the integer ``skip`` bytes after ``find`` overwritten by ``value``."""
    at = raw.index(find) + len(find) + skip
    return raw[:at] + struct.pack(fmt, value) + raw[at + struct.calcsize(fmt) :]


GOOD = _gguf()
TOKENS_KEY = b"tokenizer.ggml.tokens"
HOSTILE_GGUF = {
    "kv count 2^60": _patched(GOOD, b"GGUF", "<Q", 2**60, skip=12),
    "tensor count 2^60": _patched(GOOD, b"GGUF", "<Q", 2**60, skip=4),
    "version 1": _patched(GOOD, b"GGUF", "<I", 1),
    "version 2^31": _patched(GOOD, b"GGUF", "<I", 2**31),
    "tokens: type tag 99": _patched(GOOD, TOKENS_KEY, "<I", 99),
    "tokens: element type 99": _patched(GOOD, TOKENS_KEY, "<I", 99, skip=4),
    "tokens: 2^61 elements": _patched(GOOD, TOKENS_KEY, "<Q", 2**61, skip=8),
    "tokens: 7 of 6 elements": _patched(GOOD, TOKENS_KEY, "<Q", 7, skip=8),
    "tokens: first string 2^63 bytes": _patched(GOOD, TOKENS_KEY, "<Q", 2**63, skip=16),
    "key length 2^64 - 1": _patched(GOOD, b"GGUF", "<Q", 2**64 - 1, skip=20),
    "tokens as INT32": _gguf(tokens=c.Value(c.ARRAY, [1, 2, 3], c.INT32)),
    "tokens as one string": _gguf(tokens=c.Value(c.STRING, "abc")),
    "no tokens": _gguf(tokens=None),
    "no model": _gguf(model=None),
    "model 'bert'": _gguf(model=c.Value(c.STRING, "bert")),
    "model 'llama'": _gguf(model=c.Value(c.STRING, "llama")),
    "duplicate token": _gguf(tokens=c.Value(c.ARRAY, ["a", "b", "c", "ab", "ab", "<|x|>"], c.STRING)),
    "empty tokens": _gguf(tokens=c.Value(c.ARRAY, [], c.STRING), token_type=None),
    "merge without a space": _gguf(merges=c.Value(c.ARRAY, ["ab"], c.STRING)),
    "merge of unknown tokens": _gguf(merges=c.Value(c.ARRAY, ["x y", "ab ab"], c.STRING)),
    "duplicate merge": _gguf(merges=c.Value(c.ARRAY, ["a b", "a b"], c.STRING)),
    "no merges": _gguf(merges=None),
    "token_type too short": _gguf(token_type=c.Value(c.ARRAY, [1], c.INT32)),
    "token_type 2^31 - 1": _gguf(token_type=c.Value(c.ARRAY, [2**31 - 1] * 6, c.INT32)),
    "bos id 2^32 - 1": _gguf(bos_token_id=c.Value(c.UINT32, 2**32 - 1)),
    "bos id as a string": _gguf(bos_token_id=c.Value(c.STRING, "5")),
    "add_bos as UINT8 7": _gguf(add_bos_token=c.Value(c.UINT8, 7)),
    "nested arrays": _gguf(scores=c.Value(c.ARRAY, [c.Value(c.ARRAY, [c.Value(c.ARRAY, [c.Value(
        c.ARRAY, [], c.INT32)], c.ARRAY)], c.ARRAY)], c.ARRAY)),
    "scores NaN": _gguf(scores=c.Value(c.ARRAY, [float("nan")] * 6, c.FLOAT32)),
}  # fmt: skip


@pytest.mark.parametrize("name", list(HOSTILE_GGUF))
def test_hostile_gguf(name: str) -> None:
    raw = HOSTILE_GGUF[name]
    _typed_or_working(lambda: _load_gguf(raw), len(raw), name)


def test_gguf_file_loads() -> None:
    """The file the cases above break is itself good."""
    assert _load_gguf(GOOD).encode("abc") == [4]


def test_gguf_cut_anywhere_is_refused(tmp_path: Path) -> None:
    """Every proper prefix of the file: a FormatError (from bytes and from a file on disk)."""
    for cut in range(len(GOOD)):
        with pytest.raises(errors.FormatError):
            c.parse(GOOD[:cut])
    path = tmp_path / "cut.gguf"
    path.write_bytes(GOOD[: len(GOOD) // 2])
    with pytest.raises(errors.FormatError, match="cut.gguf"):
        gguf.load(path)


@settings(max_examples=FEW)
@given(st.data())
def test_mutated_gguf(data: st.DataObject) -> None:
    raw = bytearray(GOOD)
    for _ in range(data.draw(st.integers(1, 6))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at : at + data.draw(st.integers(0, 8))] = data.draw(st.binary(max_size=8))
    _typed_or_working(lambda: _load_gguf(bytes(raw)), len(raw), "mutated GGUF")
