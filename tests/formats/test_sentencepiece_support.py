"""Shared helpers of the SentencePiece tests (no tests here): the models in the shared data, the
``sentencepiece`` package as the oracle, corpus lines, freshly trained and hand-built models.

``BPEKIT_SPM_STRIDE`` (default 10) thins the corpus sweep: model number k checks the lines whose
index is k modulo the stride, so every line is checked by some model; 1 checks every line with
every model (the full sweep, about ten times slower than the default).
"""

from __future__ import annotations

import functools
import io
import itertools
import os
from pathlib import Path
from typing import Any

import pytest
from bpekit.formats.sentencepiece import ModelProto, SentencePieceBPE
from datapaths import DATA

SPM_DIR = DATA / "spm"
CORPORA = DATA / "corpora"
STRIDE = max(1, int(os.environ.get("BPEKIT_SPM_STRIDE", "10")))
BIBLE_LINES = 300
UD_SYMBOLS = ["<sep>", "ing", "\u2581the", "[MASK]"]

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def spm() -> Any:
    return pytest.importorskip("sentencepiece", reason="the sentencepiece package is the oracle for these tests")


def model_paths() -> list[Path]:
    """Every ``.model`` in the shared data (empty when the data is absent)."""
    return sorted(SPM_DIR.glob("*.model")) if SPM_DIR.is_dir() else []


def require(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared test data not found: {path} (set BPEKIT_TEST_DATA)")
    return path


@functools.cache
def oracle(path: Path) -> Any:
    return spm().SentencePieceProcessor(model_file=str(require(path)))


@functools.cache
def ours(path: Path) -> SentencePieceBPE:
    return SentencePieceBPE.load(require(path))


@functools.cache
def corpus_lines() -> dict[str, tuple[str, ...]]:
    """Lines of every corpus file: all of tatoeba, shakespeare and taylorswift, 300 per bible."""
    if not CORPORA.is_dir():
        pytest.skip(f"corpora not found in {CORPORA} (set BPEKIT_TEST_DATA)")
    out: dict[str, tuple[str, ...]] = {}
    for path in sorted(CORPORA.rglob("*")):
        if not path.is_file():
            continue
        with path.open(encoding="utf-8") as f:
            if path.parent.name == "bible":
                lines = [line.rstrip("\n") for line in itertools.islice(f, BIBLE_LINES)]
            else:
                lines = f.read().split("\n")
        out[str(path.relative_to(CORPORA))] = tuple(lines)
    return out


def training_sample() -> list[str]:
    """About 240 KB of text: the first 50 lines of each tatoeba file (112 languages)."""
    lines = []
    for name, file_lines in corpus_lines().items():
        if name.startswith("tatoeba/"):
            lines.extend(file_lines[:50])
    return lines


def held_out_sample() -> list[str]:
    lines = []
    for name, file_lines in corpus_lines().items():
        if name.startswith("tatoeba/"):
            lines.extend(file_lines[50:80])
    return lines


def train(**options: Any) -> bytes:
    """A BPE model trained by sentencepiece on ``training_sample()``, as file bytes."""
    out = io.BytesIO()
    spm().SentencePieceTrainer.train(
        sentence_iterator=iter(training_sample()),
        model_writer=out,
        model_type="bpe",
        vocab_size=2000,
        character_coverage=0.995,
        num_threads=1,
        minloglevel=2,
        **options,
    )
    return out.getvalue()


TRAINED = {
    "plain": {},
    "byte_fallback": {"byte_fallback": True},
    "user_defined": {"user_defined_symbols": UD_SYMBOLS},
    "ws_suffix": {"treat_whitespace_as_suffix": True},
    "fallback_ud_suffix": {
        "byte_fallback": True,
        "user_defined_symbols": UD_SYMBOLS,
        "treat_whitespace_as_suffix": True,
    },
}


@functools.cache
def trained(name: str) -> bytes:
    return train(**TRAINED[name])


def build(
    pieces: list[tuple[str, float, int]],
    *,
    byte_fallback: bool = False,
    model_type: int = 2,
    add_dummy_prefix: bool = False,
    remove_extra_whitespaces: bool = False,
    escape_whitespaces: bool = True,
    treat_whitespace_as_suffix: bool = False,
) -> bytes:
    """A hand-made model with the identity normalizer, serialized."""
    proto = ModelProto()
    for piece, score, kind in pieces:
        p = proto.pieces.add(piece=piece, score=score)
        if kind != NORMAL:
            p.type = kind
    proto.trainer_spec.model_type = model_type
    if byte_fallback:
        proto.trainer_spec.byte_fallback = True
    if treat_whitespace_as_suffix:
        proto.trainer_spec.treat_whitespace_as_suffix = True
    spec = proto.normalizer_spec
    spec.name = "identity"
    spec.add_dummy_prefix = add_dummy_prefix
    spec.remove_extra_whitespaces = remove_extra_whitespaces
    spec.escape_whitespaces = escape_whitespaces
    return proto.SerializeToString()


def byte_pieces() -> list[tuple[str, float, int]]:
    return [(f"<0x{b:02X}>", 0.0, BYTE) for b in range(256)]


SPECIALS = [("<unk>", 0.0, UNKNOWN), ("<s>", 0.0, CONTROL), ("</s>", 0.0, CONTROL)]


def both(data: bytes) -> tuple[SentencePieceBPE, Any]:
    """Our tokenizer and sentencepiece's processor for the same model bytes."""
    return SentencePieceBPE.load(data), spm().SentencePieceProcessor(model_proto=data)
