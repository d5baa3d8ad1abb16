"""A GGUF ``gpt2`` (byte-level BPE) vocabulary as the equivalent Hugging Face ``tokenizer.json``.

The construction is formats.md §5.8, which reproduces llama.cpp's test vectors with HF
``tokenizers``:

* model BPE: ``vocab`` = ``tokenizer.ggml.tokens`` (id = index), ``merges`` = the merge strings
  split at the first space after index 0, ``ignore_merges`` from the pre-tokenizer's flags;
* added tokens: CONTROL (and UNKNOWN) -> special, ``normalized: false``; USER_DEFINED ->
  non-special, ``normalized: true``. They are partitioned out of the text before anything else;
* normalizer: NFC for the pre names whose upstream tokenizer has it (qwen2, mpt, command-r);
* pre-tokenizer: the llama.cpp regex list of the ``pre`` name in its upstream form
  (``llamacpp.upstream_regexes``), each regex a ``Split(Isolated)``, then
  ``ByteLevel(use_regex=false)``; a list that is just GPT-2's regex is HF's
  ``ByteLevel(use_regex=true)``, and digits-then-GPT-2 is ``Digits(individual) + ByteLevel``;
* post-processor: BOS / EOS added when ``add_special_tokens=True`` as llama.cpp's flags say
  (the ``add_bos_token``/``add_eos_token`` keys, else the pre name's default, else the model's);
* decoder: ByteLevel.

bpekit's keys ``tokenizer.bpekit.pre_regexes`` / ``.ignore_merges`` (written by ``from_hf`` when
no llama.cpp name states a tokenizer's splitting exactly) take precedence over the pre name.
"""

from __future__ import annotations

import json
from typing import Any

from bpekit.errors import FormatError
from bpekit.formats import llamacpp
from bpekit.formats.gguf.vocab import CONTROL, UNKNOWN, USER_DEFINED, GGUFVocab

# bpekit's own keys (llama.cpp ignores them): the exact regex list and ignore_merges flag of a
# tokenizer whose splitting no llama.cpp pre name states exactly (see from_hf.py).
PRE_REGEXES_KEY = "tokenizer.bpekit.pre_regexes"
IGNORE_MERGES_KEY = "tokenizer.bpekit.ignore_merges"
# Pre names whose upstream Hugging Face tokenizer normalizes with NFC (formats.md §5.8).
NFC_PRE_NAMES = frozenset({"qwen2", "mpt", "command-r"})
_BYTE_LEVEL = {
    "type": "ByteLevel",
    "add_prefix_space": False,
    "trim_offsets": True,
    "use_regex": True,
}


def add_bos_eos(vocab: GGUFVocab) -> tuple[bool, bool]:
    """Whether llama.cpp's ``tokenize(add_special=true)`` adds BOS and EOS (formats.md §5.4)."""
    if vocab.model == "llama":
        bos_default = True
    else:
        _, pre = llamacpp.lookup(vocab.pre, vocab.model)
        bos_default = pre.flags.get("add_bos", vocab.model == "gemma4")
    return vocab.flags.get("add_bos_token", bos_default), vocab.flags.get(
        "add_eos_token", False
    )


def pre_tokenizer(
    pre: llamacpp.Pre, regexes: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """The HF pre-tokenizer for a byte-level llama.cpp pre-tokenizer entry (or for an explicit
    regex list, as ``tokenizer.bpekit.pre_regexes`` gives one)."""
    if not pre.byte_encode:
        raise FormatError(
            f"pre-tokenizer type {pre.type} is not byte-level; only byte-level GGUF BPE is converted"
        )
    if regexes is None:
        if llamacpp.is_gpt2_regex_only(pre):
            return dict(_BYTE_LEVEL)
        if pre.regexes == (llamacpp.DIGIT, llamacpp.GPT2):
            digits = {"type": "Digits", "individual_digits": True}
            return {"type": "Sequence", "pretokenizers": [digits, dict(_BYTE_LEVEL)]}
        regexes = llamacpp.upstream_regexes(pre)
    elif regexes == (llamacpp.GPT2,):
        return dict(_BYTE_LEVEL)
    splits: list[dict[str, Any]] = [
        {
            "type": "Split",
            "pattern": {"Regex": rx},
            "behavior": "Isolated",
            "invert": False,
        }
        for rx in regexes
    ]
    return {
        "type": "Sequence",
        "pretokenizers": [*splits, {**_BYTE_LEVEL, "use_regex": False}],
    }


def _post_processor(vocab: GGUFVocab) -> dict[str, Any]:
    add_bos, add_eos = add_bos_eos(vocab)
    specials: dict[str, Any] = {}
    single: list[dict[str, Any]] = [{"Sequence": {"id": "A", "type_id": 0}}]
    pair_b: list[dict[str, Any]] = [{"Sequence": {"id": "B", "type_id": 1}}]
    for flag, name, at_start in ((add_bos, "bos", True), (add_eos, "eos", False)):
        tid = vocab.special_id(name)
        if not flag or tid is None:
            continue
        tok = vocab.tokens[tid]
        specials[tok] = {"id": tok, "ids": [tid], "tokens": [tok]}
        for seq, type_id in ((single, 0), (pair_b, 1)):
            piece = {"SpecialToken": {"id": tok, "type_id": type_id}}
            seq.insert(0, piece) if at_start else seq.append(piece)
    if not specials:
        return {**_BYTE_LEVEL, "trim_offsets": False}
    return {
        "type": "TemplateProcessing",
        "single": single,
        "pair": single + pair_b,
        "special_tokens": dict(sorted(specials.items())),
    }


def _added_tokens(vocab: GGUFVocab) -> list[dict[str, Any]]:
    added = []
    for i, tok in enumerate(vocab.tokens):
        kind = vocab.token_type(i)
        if kind not in (CONTROL, UNKNOWN, USER_DEFINED) or not tok:
            continue
        special = kind != USER_DEFINED
        added.append(
            {
                "id": i,
                "content": tok,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": not special,
                "special": special,
            }
        )
    return added


def tokenizer_json(vocab: GGUFVocab) -> dict[str, Any]:
    """The ``tokenizer.json`` document (HF key order) equivalent to a GGUF ``gpt2`` vocabulary."""
    if vocab.model != "gpt2":
        raise FormatError(
            f"only GGUF 'gpt2' (byte-level BPE) vocabularies convert to tokenizer.json, not {vocab.model!r}"
        )
    name, pre = llamacpp.lookup(vocab.pre, vocab.model)
    merges = vocab.merges or []
    regexes = vocab.file.get(PRE_REGEXES_KEY)
    if regexes is not None and not (
        isinstance(regexes, list) and all(isinstance(r, str) for r in regexes)
    ):
        raise FormatError(f"{PRE_REGEXES_KEY} must be an array of strings")
    ignore_merges = vocab.file.get(
        IGNORE_MERGES_KEY, pre.flags.get("ignore_merges", False)
    )
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": _added_tokens(vocab),
        "normalizer": {"type": "NFC"} if name in NFC_PRE_NAMES else None,
        "pre_tokenizer": pre_tokenizer(
            pre, None if regexes is None else tuple(regexes)
        ),
        "post_processor": _post_processor(vocab),
        "decoder": dict(_BYTE_LEVEL),
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": bool(ignore_merges),
            "vocab": {t: i for i, t in enumerate(vocab.tokens)},
            "merges": [[a, b] for a, b in merges],
        },
    }


def tokenizer_json_text(vocab: GGUFVocab) -> str:
    """The document as Hugging Face's pretty writer formats it."""
    return json.dumps(tokenizer_json(vocab), indent=2, ensure_ascii=False)
