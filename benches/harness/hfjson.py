"""The Hugging Face ``tokenizer.json`` of cl100k_base / o200k_base, generated from the local rank
file with bpekit's exporter (transformers' TikTokenConverter construction; cl100k's possessive
``\\p{N}{1,3}+`` becomes ``{1,3}`` for Oniguruma, formats.md §1.3) and kept under
``bench-results/peers/`` (generating o200k takes a few seconds)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.local import WORK, rank_file


def path(name: str) -> Path:
    """The generated file for encoding ``name`` (made on first use, atomically)."""
    out = WORK / f"{name}.tokenizer.json"
    if out.is_file() and out.stat().st_mtime >= rank_file(name).stat().st_mtime:
        return out
    import bpekit
    from bpekit.atomicfile import atomic_write
    from bpekit.load import load_tiktoken_bpe
    from bpekit.tokenizer_export import hf_text

    enc = bpekit.get_encoding(name)
    atomic_write(out, hf_text(load_tiktoken_bpe(rank_file(name)), enc._special_tokens, enc._pat_str))
    return out


LLAMA_GGUF_NAME = "ggml-vocab-llama-spm.gguf"


def llama2(out_dir: Path, metaspace: bool = False) -> Path:
    """A Llama-2 ``tokenizer.json`` made with ``tokenizers`` from the Llama GGUF vocabulary of the
    shared data, as ``transformers``' ``LlamaConverter`` makes one: merges from the pieces'
    scores (``SentencePieceExtractor``), ``byte_fallback``, ``fuse_unk``, its decoder
    (``Replace("▁", " ")``, ``ByteFallback``, ``Fuse``, ``Strip(" ", 1, 0)``); the legacy layout
    (normalizer ``Prepend("▁")`` + ``Replace(" ", "▁")``, no pre-tokenizer), or with
    ``metaspace`` the newer one (no normalizer, ``Metaspace`` with ``prepend_scheme="first"`` and
    no split). Written to ``out_dir`` (made on first use, atomically)."""
    out = Path(out_dir) / f"llama2-{'metaspace' if metaspace else 'legacy'}.tokenizer.json"
    if out.is_file() and '"ByteFallback"' in out.read_text(encoding="utf-8"):  # (an older one had no decoder)
        return out
    import tokenizers
    from bpekit import Tokenizer
    from bpekit.atomicfile import atomic_write
    from corpora import DATA

    pieces = Tokenizer.from_file(DATA / "gguf" / LLAMA_GGUF_NAME).model.spm.model.pieces
    vocab = {p.piece: i for i, p in enumerate(pieces)}
    merges = []
    for p in pieces:
        local = [(p.piece[:k], p.piece[k:], p.score) for k in range(1, len(p.piece))
                 if p.piece[:k] in vocab and p.piece[k:] in vocab]
        merges += sorted(local, key=lambda m: (vocab[m[0]], vocab[m[1]]))
    merges.sort(key=lambda m: m[2], reverse=True)
    model = tokenizers.models.BPE(vocab=vocab, merges=[(a, b) for a, b, _ in merges], unk_token="<unk>",
                                  fuse_unk=True, byte_fallback=True)
    tok = tokenizers.Tokenizer(model)
    d = tokenizers.decoders
    tok.decoder = d.Sequence([d.Replace("\u2581", " "), d.ByteFallback(), d.Fuse(), d.Strip(" ", 1, 0)])
    if metaspace:
        tok.pre_tokenizer = tokenizers.pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
    else:
        tok.normalizer = tokenizers.normalizers.Sequence(
            [tokenizers.normalizers.Prepend("\u2581"), tokenizers.normalizers.Replace(" ", "\u2581")]
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, tok.to_str(pretty=True).encode("utf-8"))
    return out


def llama3_vocab_as(out_dir: Path, pre: str) -> Path:
    """Llama 3's GGUF vocabulary of the shared data under llama.cpp's pre-tokenizer name ``pre``
    (``tekken``, ``kimi-k2``, ``deepseek-v3``: its upstream ``Split`` stages), as the
    ``tokenizer.json`` bpekit converts a GGUF file to (formats.md §5.8): a stand-in for those
    models' own files, which the shared data does not have. Written to ``out_dir`` (made on
    first use, atomically)."""
    import dataclasses

    from bpekit.atomicfile import atomic_write
    from bpekit.formats.gguf.to_hf import tokenizer_json_text
    from bpekit.formats.gguf.vocab import GGUFVocab
    from corpora import DATA

    out = Path(out_dir) / f"llama3-vocab-{pre}.tokenizer.json"
    if not out.is_file():
        vocab = GGUFVocab.read(DATA / "gguf" / "ggml-vocab-llama-bpe.gguf")
        atomic_write(out, tokenizer_json_text(dataclasses.replace(vocab, pre=pre)).encode())
    return out


def clip(out_dir: Path, vocab_size: int = 20_000) -> Path:
    """A ``tokenizer.json`` laid out as ``transformers``' ``CLIPConverter`` lays out CLIP's
    (``NFC`` + ``Replace(\\s+, " ")`` + ``Lowercase``; ``Split`` of CLIP's pattern keeping only its
    matches, then ``ByteLevel``; byte-level BPE with the end-of-word suffix ``</w>``; RoBERTa's
    post-processor without trimming), trained by ``tokenizers`` on the English corpus (CLIP's own
    vocabulary is not in the shared data), every byte's character alone and with the suffix in
    its vocabulary as in CLIP's. Written to ``out_dir`` (made on first use, atomically)."""
    out = Path(out_dir) / f"clip-layout-{vocab_size}.tokenizer.json"
    if out.is_file():
        return out
    import json

    import tokenizers
    from bpekit.atomicfile import atomic_write
    from corpora import english
    from tokenizers import Regex, normalizers, pre_tokenizers, processors, trainers

    tok = tokenizers.Tokenizer(tokenizers.models.BPE(continuing_subword_prefix="", end_of_word_suffix="</w>",
                                                     unk_token="<|endoftext|>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "),
                                           normalizers.Lowercase()])
    pattern = r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="removed", invert=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False)])
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False, initial_alphabet=alphabet,
                                  end_of_word_suffix="</w>", special_tokens=["<|startoftext|>", "<|endoftext|>"])
    tok.train_from_iterator(english(), trainer)
    doc = json.loads(tok.to_str())
    vocab = doc["model"]["vocab"]
    for c in sorted(alphabet):
        for token in (c, c + "</w>"):
            vocab.setdefault(token, len(vocab))
    tok = tokenizers.Tokenizer.from_str(json.dumps(doc))
    tok.decoder = tokenizers.decoders.BPEDecoder(suffix="</w>")
    ids = tok.get_vocab()
    tok.post_processor = processors.RobertaProcessing(("<|endoftext|>", ids["<|endoftext|>"]),
                                                      ("<|startoftext|>", ids["<|startoftext|>"]),
                                                      add_prefix_space=False, trim_offsets=False)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, tok.to_str(pretty=True).encode("utf-8"))
    return out


def falcon(out_dir: Path, vocab_size: int = 20_000) -> Path:
    """A ``tokenizer.json`` with Falcon's pre-tokenizer (``Punctuation(Contiguous)``,
    ``ByteLevel`` with its regex, then ``Digits`` and ``Split("[0-9][0-9][0-9]")`` over the
    byte-level characters) and a byte-level BPE trained by ``tokenizers`` on the English corpus
    (Falcon's own vocabulary is not in the shared data). Written to ``out_dir`` (atomically)."""
    out = Path(out_dir) / f"falcon-layout-{vocab_size}.tokenizer.json"
    if out.is_file():
        return out
    import tokenizers
    from bpekit.atomicfile import atomic_write
    from corpora import english
    from tokenizers import Regex, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Punctuation(behavior="contiguous"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True),
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.Split(Regex("[0-9][0-9][0-9]"), behavior="isolated", invert=False)])
    tok.decoder = tokenizers.decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=[">>TITLE<<", ">>ABSTRACT<<", "<|endoftext|>"])
    tok.train_from_iterator(english(), trainer)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, tok.to_str(pretty=True).encode("utf-8"))
    return out


def _trained(out: Path, tok: Any, trainer: Any) -> Path:
    """``tok`` trained by ``tokenizers`` on the English corpus, written to ``out`` (atomically)."""
    from bpekit.atomicfile import atomic_write
    from corpora import english

    tok.train_from_iterator(english(), trainer)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, tok.to_str(pretty=True).encode("utf-8"))
    return out


def quicktour(out_dir: Path, vocab_size: int = 20_000) -> Path:
    """A ``tokenizer.json`` as the ``tokenizers`` quicktour trains one (``BPE(unk_token="[UNK]")``
    over characters, the ``Whitespace`` pre-tokenizer, its five special tokens), on the English
    corpus. Written to ``out_dir``."""
    out = Path(out_dir) / f"quicktour-layout-{vocab_size}.tokenizer.json"
    if out.is_file():
        return out
    import tokenizers
    from tokenizers import pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                  special_tokens=["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"])
    return _trained(out, tok, trainer)


def openai_gpt(out_dir: Path, vocab_size: int = 20_000) -> Path:
    """A ``tokenizer.json`` laid out as ``transformers`` converts OpenAI GPT's (``BertNormalizer``
    lowercasing, ``BertPreTokenizer``, a BPE over characters with an unk token and the ``</w>``
    suffix, the ``BPEDecoder``), trained on the English corpus. Written to ``out_dir``."""
    out = Path(out_dir) / f"openai-gpt-layout-{vocab_size}.tokenizer.json"
    if out.is_file():
        return out
    import tokenizers
    from tokenizers import decoders, normalizers, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False, end_of_word_suffix="</w>",
                                  special_tokens=["<unk>"])
    return _trained(out, tok, trainer)


def spm_converted(out_dir: Path, vocab_size: int = 8_000) -> Path:
    """A ``tokenizer.json`` laid out as ``transformers``' ``SpmConverter`` converts a SentencePiece
    BPE model (the shared model's ``nmt_nfkc`` charsmap as a ``Precompiled`` normalizer, ``Strip``
    right, runs of spaces to ``▁``; ``Metaspace``; characters with byte fallback), trained on the
    English corpus and the multilingual sample. Written to ``out_dir``."""
    out = Path(out_dir) / f"spm-converted-layout-{vocab_size}.tokenizer.json"
    if out.is_file():
        return out
    import tokenizers
    from bpekit.atomicfile import atomic_write
    from bpekit.formats.sentencepiece.model import SentencePieceModel
    from corpora import DATA, english, multilingual
    from tokenizers import Regex, decoders, normalizers, pre_tokenizers, trainers

    blob = SentencePieceModel.load(DATA / "spm" / "bpe_multi_bytefb_3000.model").precompiled_charsmap
    tok = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(blob), normalizers.Strip(left=False, right=True),
                                           normalizers.Replace(Regex(" {2,}"), "\u2581")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    specials = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False, special_tokens=specials, limit_alphabet=1000)
    tok.train_from_iterator(english() + multilingual()[::2], trainer)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, tok.to_str(pretty=True).encode("utf-8"))
    return out
