"""Writers that turn a byte-level BPE model (ranks, special tokens, pattern) into other libraries'
files: a ``.tiktoken`` rank file with a JSON sidecar, and a Hugging Face ``tokenizer.json``.

The Hugging Face file follows transformers' ``TikTokenConverter`` (docs: formats.md §3.8), which
reproduces rank-order BPE exactly:

* ``vocab``: every token's bytes mapped through GPT-2's ``bytes_to_unicode``, id = rank;
* ``merges``: for every token ``t`` (by rank), every split ``t = l + r`` with ``l`` and ``r`` in
  the vocabulary, sorted by ``(rank(t), rank(l), rank(r))``, so a pair's merge priority is the
  rank of what it makes, as in tiktoken;
* ``ignore_merges: true`` (a whole pre-token that is a token is emitted as is, as tiktoken does);
* pre-tokenizer ``Split(pattern, Isolated)`` then ``ByteLevel(use_regex=false)``; decoder
  ``ByteLevel``; special tokens as special added tokens, also listed in ``vocab`` so that they keep
  their ids.

Hugging Face compiles the pattern with Oniguruma, where ``X{n,m}+`` means "one or more of
``X{n,m}``" rather than a possessive ``X{n,m}`` (formats.md §1.3): the ``+`` after a counted
repetition is dropped, which is exact for cl100k's ``\\p{N}{1,3}+``.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from bpekit.formats.recover import all_splits

_POSSESSIVE_INTERVAL = re.compile(r"(?<!\\)(\{\d+(?:,\d*)?\})\+")


@lru_cache(maxsize=1)
def bytes_to_unicode() -> tuple[str, ...]:
    """GPT-2's byte -> printable character table, indexed by byte value (formats.md §2.1)."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(0x100 + extra)
            extra += 1
    return tuple(table[b] for b in range(256))


@lru_cache(maxsize=1)
def _translation() -> dict[int, str]:
    return dict(enumerate(bytes_to_unicode()))


def token_to_hf(token: bytes) -> str:
    """Token bytes in GPT-2's byte alphabet (latin-1 gives one code point per byte to translate)."""
    return token.decode("latin-1").translate(_translation())


def onig_pattern(pattern: str) -> str:
    """``pattern`` for Oniguruma: possessive counted repetitions ``{n,m}+`` become ``{n,m}``."""
    return _POSSESSIVE_INTERVAL.sub(r"\1", pattern)


def tiktoken_text(ranks: Mapping[bytes, int]) -> bytes:
    """A ``.tiktoken`` rank file: ``base64(token) rank`` per line, by rank."""
    lines = [base64.b64encode(t) + b" " + str(r).encode() for t, r in sorted(ranks.items(), key=lambda x: x[1])]
    return b"\n".join(lines) + b"\n"


def tiktoken_sidecar(pattern: str, special_tokens: Mapping[str, int], n_vocab: int) -> bytes:
    """The JSON written beside a ``.tiktoken`` file: what ``tiktoken.Encoding`` needs besides ranks."""
    doc = {
        "format": "bpekit-tiktoken-sidecar",
        "version": 1,
        "pat_str": pattern,
        "special_tokens": dict(special_tokens),
        "explicit_n_vocab": n_vocab,
    }
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode()


def hf_merges(ranks: Mapping[bytes, int]) -> list[list[str]]:
    """Every split of every token into two tokens, in (rank(t), rank(l), rank(r)) order."""
    names = {t: token_to_hf(t) for t in ranks}
    return [[names[left], names[right]] for left, right in all_splits(ranks)]


def hf_tokenizer_json(ranks: Mapping[bytes, int], special_tokens: Mapping[str, int], pattern: str) -> dict[str, Any]:
    """The ``tokenizer.json`` document (key order as Hugging Face writes it)."""
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    added = [
        {
            "id": i,
            "content": s,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for s, i in sorted(special_tokens.items(), key=lambda x: x[1])
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": onig_pattern(pattern)},
                    "behavior": "Isolated",
                    "invert": False,
                },
                byte_level,
            ],
        },
        "post_processor": {**byte_level, "trim_offsets": False},
        "decoder": dict(byte_level),
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": True,
            "vocab": _vocab(ranks, special_tokens),
            "merges": hf_merges(ranks),
        },
    }


def _vocab(ranks: Mapping[bytes, int], special_tokens: Mapping[str, int]) -> dict[str, int]:
    """Tokens in the byte alphabet by rank, and the special tokens: Hugging Face numbers an added
    token that is not in the model's vocabulary itself (next free id after the vocabulary's
    *entry count*, formats.md §3.3), which would move specials that follow an id hole (cl100k's
    100257); in the vocabulary they keep their ids."""
    vocab = {token_to_hf(t): r for t, r in ranks.items()}
    for s, i in special_tokens.items():
        vocab.setdefault(s, i)
    return dict(sorted(vocab.items(), key=lambda x: x[1]))


def hf_text(ranks: Mapping[bytes, int], special_tokens: Mapping[str, int], pattern: str) -> bytes:
    """``tokenizer.json`` bytes, formatted as Hugging Face's pretty writer does."""
    return json.dumps(hf_tokenizer_json(ranks, special_tokens, pattern), indent=2, ensure_ascii=False).encode()
