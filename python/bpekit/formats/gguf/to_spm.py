"""GGUF ``llama`` (SentencePiece-style) vocabularies as SentencePiece models, and back.

GGUF -> ``ModelProto`` (formats.md §4.8): pieces, scores and types from the GGUF arrays;
``trainer_spec`` model_type BPE, ``byte_fallback`` when the vocabulary has BYTE pieces, the
special ids and pieces from the ``*_token_id`` keys; ``normalizer_spec`` named ``identity`` (no
character map, as llama.cpp does not normalize), ``add_dummy_prefix`` from
``add_space_prefix`` (default true), ``remove_extra_whitespaces`` false (llama.cpp reads that key
only for T5 vocabularies), ``escape_whitespaces`` true. sentencepiece needs exactly one UNKNOWN piece, so the piece at
``unknown_token_id`` is typed UNKNOWN and any other UNKNOWN-typed piece CONTROL (Phi-3 types its
``[PAD]`` fillers UNKNOWN and ``<unk>`` CONTROL). Encoding then goes through bpekit's
SentencePiece implementation, which gives the ``sentencepiece`` package's ids.

SentencePiece model -> GGUF: what llama.cpp's converter writes (model ``llama``, pre ``default``,
tokens, scores, token types, special ids, add_bos/add_eos flags).
"""

from __future__ import annotations

from typing import Any

from bpekit.errors import FormatError
from bpekit.formats.gguf import container as c
from bpekit.formats.gguf.vocab import BYTE, CONTROL, NORMAL, UNKNOWN, GGUFVocab
from bpekit.formats.sentencepiece import (
    ModelProto,
    SentencePieceBPE,
    SentencePieceModel,
)

_SPECIALS = (
    ("unk", "unknown_token_id"),
    ("bos", "bos_token_id"),
    ("eos", "eos_token_id"),
    ("pad", "padding_token_id"),
)


def model_proto(vocab: GGUFVocab) -> Any:
    """The ``ModelProto`` equivalent to a GGUF ``llama`` vocabulary."""
    if vocab.model != "llama":
        raise FormatError(
            f"only GGUF 'llama' (SentencePiece) vocabularies convert to a SentencePiece model, not {vocab.model!r}"
        )
    if vocab.scores is None:
        raise FormatError(
            "a GGUF 'llama' vocabulary needs tokenizer.ggml.scores (the merge priorities)"
        )
    unk = vocab.special_id("unknown")
    if unk is None:
        unk = next(
            (i for i in range(len(vocab.tokens)) if vocab.token_type(i) == UNKNOWN),
            None,
        )
    if unk is None:
        raise FormatError(
            "the vocabulary has no unknown token (no unknown_token_id and no UNKNOWN-typed token)"
        )
    proto = ModelProto()
    has_bytes = False
    for i, (tok, score) in enumerate(zip(vocab.tokens, vocab.scores, strict=True)):
        kind = vocab.token_type(i)
        if kind == UNKNOWN and i != unk:
            kind = CONTROL
        elif i == unk:
            kind = UNKNOWN
        elif kind not in (1, 3, 4, 5, 6):
            kind = NORMAL
        has_bytes |= kind == BYTE
        piece = proto.pieces.add(piece=tok, score=score)
        if kind != NORMAL:
            piece.type = kind
    spec = proto.trainer_spec
    spec.model_type = 2  # BPE
    if has_bytes:
        spec.byte_fallback = True
    ids = {
        "unk": unk,
        **{
            name: vocab.special_id(key[: -len("_token_id")])
            for name, key in _SPECIALS[1:]
        },
    }
    for name, tid in ids.items():
        setattr(spec, f"{name}_id", -1 if tid is None else tid)
        if tid is not None:
            setattr(spec, f"{name}_piece", vocab.tokens[tid])
    norm = proto.normalizer_spec
    norm.name = "identity"
    norm.add_dummy_prefix = vocab.flags.get("add_space_prefix", True)
    norm.remove_extra_whitespaces = False  # llama.cpp's SPM path never collapses spaces
    norm.escape_whitespaces = True
    return proto


def sentencepiece_model(vocab: GGUFVocab) -> SentencePieceModel:
    return SentencePieceModel.from_proto(model_proto(vocab))


def sentencepiece_bpe(vocab: GGUFVocab) -> SentencePieceBPE:
    """An encoder for a GGUF ``llama`` vocabulary with the ``sentencepiece`` package's results."""
    return SentencePieceBPE(sentencepiece_model(vocab))


def from_sentencepiece(
    model: SentencePieceModel, add_bos: bool = True, add_eos: bool = False
) -> GGUFVocab:
    """The GGUF tokenizer keys llama.cpp's converter writes for a SentencePiece BPE model."""
    if model.model_type != "BPE":
        raise FormatError(
            f"llama.cpp's 'llama' vocabulary is SentencePiece BPE; this model is {model.model_type}"
        )
    proto = model.to_proto()
    spec, norm = proto.trainer_spec, proto.normalizer_spec
    if norm.precompiled_charsmap:
        raise FormatError(
            "this SentencePiece model normalizes text with a character map, which a GGUF 'llama' vocabulary "
            "cannot hold (llama.cpp does not normalize)"
        )
    if norm.remove_extra_whitespaces:
        raise FormatError(
            "this SentencePiece model collapses runs of spaces (remove_extra_whitespaces), which llama.cpp's "
            "'llama' vocabularies never do"
        )
    if spec.treat_whitespace_as_suffix:
        raise FormatError(
            "a GGUF 'llama' vocabulary cannot hold treat_whitespace_as_suffix (llama.cpp prefixes spaces)"
        )
    vocab = GGUFVocab(
        model="llama",
        pre="default",
        tokens=[p.piece for p in model.pieces],
        scores=[float(p.score) for p in model.pieces],
        token_types=[int(p.type) for p in model.pieces],
    )
    n = len(model.pieces)
    for name, key in _SPECIALS:
        tid = getattr(spec, f"{name}_id")
        if 0 <= tid < n:
            vocab.special_ids[key] = tid
    vocab.flags = {"add_bos_token": add_bos, "add_eos_token": add_eos}
    if not norm.add_dummy_prefix:
        vocab.flags["add_space_prefix"] = False
    vocab.file = c.GGUFFile(kv={"general.architecture": c.Value(c.STRING, "llama")})
    return vocab
