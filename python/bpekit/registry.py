"""Named encodings: ``get_encoding``, ``list_encoding_names``, ``encoding_for_model``.

The OpenAI encodings are public constants (pattern, special tokens, rank file and its sha256);
rank files are found by :func:`bpekit.load.fetch` (data dir, cache, or a verified download).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any  # noqa: F401  (tiktoken.registry has the name: tests/unit/test_encoding_api.py)

from bpekit import _core, load, patterns
from bpekit.encoding import Encoding
from bpekit.errors import InputTypeError, UnknownEncodingError

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

_BLOB = "https://openaipublic.blob.core.windows.net"
RANK_FILES: dict[str, tuple[str, str]] = {
    "r50k_base.tiktoken": (
        f"{_BLOB}/encodings/r50k_base.tiktoken",
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    ),
    "p50k_base.tiktoken": (
        f"{_BLOB}/encodings/p50k_base.tiktoken",
        "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    ),
    "cl100k_base.tiktoken": (
        f"{_BLOB}/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base.tiktoken": (
        f"{_BLOB}/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "vocab.bpe": (
        f"{_BLOB}/gpt-2/encodings/main/vocab.bpe",
        "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    ),
    "encoder.json": (
        f"{_BLOB}/gpt-2/encodings/main/encoder.json",
        "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    ),
}


def _fetch(filename: str) -> bytes:
    url, sha = RANK_FILES[filename]
    return load.fetch(filename, url, sha)


def _from_rank_file(name: str, filename: str, pat_str: str, specials: dict[str, int]) -> Encoding:
    core = _core.CoreBPE.from_tiktoken_bytes(_fetch(filename), list(specials.items()), pat_str, filename)
    return Encoding._from_core(name, pat_str, core, specials)


def _gpt2() -> Encoding:
    ranks = load.data_gym_to_mergeable_bpe_ranks(_fetch("vocab.bpe"), _fetch("encoder.json"))
    return Encoding(
        "gpt2",
        pat_str=patterns.GPT2,
        mergeable_ranks=ranks,
        special_tokens={ENDOFTEXT: 50256},
        explicit_n_vocab=50257,
    )


def _harmony_specials() -> dict[str, int]:
    s = {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}
    s.update(
        {
            "<|startoftext|>": 199998,
            ENDOFTEXT: 199999,
            "<|reserved_200000|>": 200000,
            "<|reserved_200001|>": 200001,
            "<|return|>": 200002,
            "<|constrain|>": 200003,
            "<|reserved_200004|>": 200004,
            "<|channel|>": 200005,
            "<|start|>": 200006,
            "<|end|>": 200007,
            "<|message|>": 200008,
            "<|reserved_200009|>": 200009,
            "<|reserved_200010|>": 200010,
            "<|reserved_200011|>": 200011,
            "<|call|>": 200012,
        }
    )
    s.update({f"<|reserved_{i}|>": i for i in range(200013, 201088)})
    return s


CONSTRUCTORS: dict[str, Callable[[], Encoding]] = {
    "gpt2": _gpt2,
    "r50k_base": lambda: _from_rank_file("r50k_base", "r50k_base.tiktoken", patterns.GPT2, {ENDOFTEXT: 50256}),
    "p50k_base": lambda: _from_rank_file("p50k_base", "p50k_base.tiktoken", patterns.GPT2, {ENDOFTEXT: 50256}),
    "p50k_edit": lambda: _from_rank_file(
        "p50k_edit",
        "p50k_base.tiktoken",
        patterns.GPT2,
        {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283},
    ),
    "cl100k_base": lambda: _from_rank_file(
        "cl100k_base",
        "cl100k_base.tiktoken",
        patterns.CL100K,
        {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260, ENDOFPROMPT: 100276},
    ),
    "o200k_base": lambda: _from_rank_file(
        "o200k_base", "o200k_base.tiktoken", patterns.O200K, {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}
    ),
    "o200k_harmony": lambda: _from_rank_file(
        "o200k_harmony", "o200k_base.tiktoken", patterns.O200K, _harmony_specials()
    ),
}

ENCODINGS: dict[str, Encoding] = {}
_lock = threading.RLock()


def get_encoding(encoding_name: str) -> Encoding:
    """A named encoding (loaded once per process, then shared)."""
    if not isinstance(encoding_name, str):
        raise UnknownEncodingError(f"Expected a string in get_encoding, got {type(encoding_name)}")
    if (enc := ENCODINGS.get(encoding_name)) is not None:
        return enc
    with _lock:
        if (enc := ENCODINGS.get(encoding_name)) is not None:
            return enc
        if encoding_name not in CONSTRUCTORS:
            raise UnknownEncodingError(
                f"Unknown encoding {encoding_name}.\nKnown encodings: {list_encoding_names()}"
            )
        enc = CONSTRUCTORS[encoding_name]()
        ENCODINGS[encoding_name] = enc
        return enc


def list_encoding_names() -> list[str]:
    return list(CONSTRUCTORS)


# ---------------------------------------------------------------------- models (tiktoken/model.py)

MODEL_PREFIX_TO_ENCODING: dict[str, str] = {
    "o1-": "o200k_base",
    "o3-": "o200k_base",
    "o4-mini-": "o200k_base",
    "gpt-5": "o200k_base",
    "gpt-4.5-": "o200k_base",
    "gpt-4.1-": "o200k_base",
    "chatgpt-4o-": "o200k_base",
    "gpt-4o-": "o200k_base",
    "gpt-4-": "cl100k_base",
    "gpt-3.5-turbo-": "cl100k_base",
    "gpt-35-turbo-": "cl100k_base",
    "gpt-oss-": "o200k_harmony",
    "ft:gpt-4o": "o200k_base",
    "ft:gpt-4": "cl100k_base",
    "ft:gpt-3.5-turbo": "cl100k_base",
    "ft:davinci-002": "cl100k_base",
    "ft:babbage-002": "cl100k_base",
}

MODEL_TO_ENCODING: dict[str, str] = {
    **dict.fromkeys(["o1", "o3", "o4-mini", "gpt-5", "gpt-4.1", "gpt-4o"], "o200k_base"),
    **dict.fromkeys(
        [
            "gpt-4", "gpt-3.5-turbo", "gpt-3.5", "gpt-35-turbo", "davinci-002", "babbage-002",
            "text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large",
        ],
        "cl100k_base",
    ),
    **dict.fromkeys(
        [
            "text-davinci-003", "text-davinci-002", "code-davinci-002", "code-davinci-001",
            "code-cushman-002", "code-cushman-001", "davinci-codex", "cushman-codex",
        ],
        "p50k_base",
    ),
    **dict.fromkeys(["text-davinci-edit-001", "code-davinci-edit-001"], "p50k_edit"),
    **dict.fromkeys(
        [
            "text-davinci-001", "text-curie-001", "text-babbage-001", "text-ada-001",
            "davinci", "curie", "babbage", "ada",
            *(f"text-similarity-{m}-001" for m in ("davinci", "curie", "babbage", "ada")),
            *(f"text-search-{m}-doc-001" for m in ("davinci", "curie", "babbage", "ada")),
            "code-search-babbage-code-001", "code-search-ada-code-001",
        ],
        "r50k_base",
    ),
    "gpt2": "gpt2",
    "gpt-2": "gpt2",
}


def encoding_name_for_model(model_name: str) -> str:
    """The encoding name of an OpenAI model (exact names first, then known prefixes)."""
    if not isinstance(model_name, str):
        raise InputTypeError(f"model_name must be a str, got {type(model_name).__name__}")
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, name in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return name
    raise KeyError(
        f"Could not automatically map {model_name} to a tokeniser. "
        "Please use `bpekit.get_encoding` to explicitly get the tokeniser you expect."
    )


def encoding_for_model(model_name: str) -> Encoding:
    return get_encoding(encoding_name_for_model(model_name))


