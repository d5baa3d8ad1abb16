"""llama.cpp's GGUF tokenizer metadata: read, write, and use as a :class:`bpekit.Tokenizer`.

Modules: ``container`` (the GGUF key-value section, bounds-checked, byte-exact), ``vocab`` (the
tokenizer keys, typed: ``GGUFVocab``), ``to_hf`` / ``from_hf`` (``gpt2`` byte-level vocabularies
<-> Hugging Face pipelines), ``to_spm`` (``llama`` vocabularies <-> SentencePiece models). See
docs/formats/gguf.md.

* :func:`load`: a ``gpt2`` vocabulary becomes the Hugging Face pipeline of formats.md §5.8 (ids
  identical to ``tokenizers`` on that pipeline); a ``llama`` vocabulary becomes a SentencePiece
  BPE model (ids identical to the ``sentencepiece`` package). BOS/EOS are added by
  ``encode(text, add_special_tokens=True)`` as the GGUF flags say.
* :func:`save`: a vocab-only GGUF file (no tensors), written atomically. A tokenizer loaded from
  GGUF writes back its file byte for byte.
"""

from __future__ import annotations

import os
from typing import Any

from bpekit.atomicfile import atomic_write
from bpekit.errors import FormatError
from bpekit.formats.gguf import container
from bpekit.formats.gguf.vocab import GGUFVocab

__all__ = ["GGUFVocab", "container", "load", "save", "to_tokenizer", "vocab_of"]


def to_tokenizer(vocab: GGUFVocab) -> Any:
    """The :class:`bpekit.Tokenizer` of a GGUF vocabulary."""
    if vocab.model == "gpt2":
        tok = _bpe_pipeline(vocab)
    elif vocab.model == "llama":
        from bpekit.formats.gguf.to_hf import add_bos_eos
        from bpekit.formats.gguf.to_spm import sentencepiece_bpe
        from bpekit.pipeline.processors import TemplateProcessing
        from bpekit.pipeline.rank_model import SentencePieceDecoder, SentencePieceStage
        from bpekit.tokenizer import Tokenizer

        spm = sentencepiece_bpe(vocab)
        tok = Tokenizer(SentencePieceStage(spm), decoder=SentencePieceDecoder(spm))
        tok.post_processor = _bos_eos_processor(
            vocab, add_bos_eos(vocab), TemplateProcessing
        )
    else:
        raise FormatError(
            f"bpekit encodes GGUF 'gpt2' and 'llama' vocabularies, not {vocab.model!r}"
        )
    tok.gguf_vocab = vocab
    return tok


def _bpe_pipeline(vocab: GGUFVocab) -> Any:
    """The §5.8 pipeline, built from the stages directly: the GGUF data was checked when read,
    so the JSON-level checks of ``formats.hf.from_document`` (seconds for 280k merges) are skipped;
    the document is the same one ``to_hf.tokenizer_json`` gives ``tokenizers``."""
    from bpekit.formats.gguf.to_hf import tokenizer_json
    from bpekit.pipeline import decoders, normalizers, pre_tokenizers, processors
    from bpekit.pipeline.added_tokens import AddedToken
    from bpekit.pipeline.models import BPE
    from bpekit.tokenizer import Tokenizer

    doc = tokenizer_json(vocab)
    m = doc["model"]
    model = BPE(m["vocab"], vocab.merges or [], ignore_merges=m["ignore_merges"])
    where = "GGUF tokenizer"
    return Tokenizer(
        model,
        normalizer=normalizers.from_json(doc["normalizer"], where),
        pre_tokenizer=pre_tokenizers.from_json(doc["pre_tokenizer"], where),
        post_processor=processors.from_json(doc["post_processor"], where),
        decoder=decoders.from_json(doc["decoder"], where),
        added_tokens=[AddedToken.from_json(t, where) for t in doc["added_tokens"]],
    )


def _bos_eos_processor(
    vocab: GGUFVocab, flags: tuple[bool, bool], template: Any
) -> Any:
    pieces = []
    specials = {}
    for flag, name in zip(flags, ("bos", "eos"), strict=True):
        tid = vocab.special_id(name)
        if flag and tid is not None:
            tok = vocab.tokens[tid]
            pieces.append((name, tok))
            specials[tok] = {"id": tok, "ids": [tid], "tokens": [tok]}
    if not pieces:
        return None
    single = [{"Sequence": {"id": "A", "type_id": 0}}]
    for name, tok in pieces:
        piece = {"SpecialToken": {"id": tok, "type_id": 0}}
        single.insert(0, piece) if name == "bos" else single.append(piece)
    doc = {
        "type": "TemplateProcessing",
        "single": single,
        "pair": single,
        "special_tokens": specials,
    }
    return template.from_json(doc, "GGUF flags")


def load(path: str | os.PathLike[str], **_: Any) -> Any:
    """A :class:`bpekit.Tokenizer` from a GGUF file (only its tokenizer keys are read)."""
    tok = to_tokenizer(GGUFVocab.read(path))
    tok.source_format = "gguf"
    return tok


def vocab_of(tok: Any) -> GGUFVocab:
    """The GGUF vocabulary of any tokenizer llama.cpp can hold; FormatError saying why not."""
    vocab = getattr(tok, "gguf_vocab", None)
    if vocab is not None:
        return vocab  # type: ignore[no-any-return]
    from bpekit.pipeline.rank_model import SentencePieceStage

    if isinstance(getattr(tok, "model", None), SentencePieceStage):
        from bpekit.formats.gguf.to_spm import from_sentencepiece

        return from_sentencepiece(tok.model.spm.model)
    from bpekit.formats.gguf.from_hf import vocab_from_document
    from bpekit.formats.hf import document

    return vocab_from_document(document(tok))


def save(tok: Any, path: str | os.PathLike[str]) -> None:
    """Writes ``tok`` as a vocab-only GGUF file, atomically."""
    atomic_write(path, container.serialize(vocab_of(tok).to_file()))
