"""Every tokenizer under test behind one interface, built from the local rank files.

A :class:`Lib` has a per-document ``encode`` (list output) and, where the library offers them,
``numpy`` (per document, array output), ``batch`` (a 2-thread batch call, lists) and
``batch_numpy`` (a 2-thread batch call into one flat array; returns ``(flat, offsets)``).
``prepare`` runs before every timed pass: bpekit starts each pass with an empty pre-token cache,
gigatoken with a fresh instance (its pre-token cache would otherwise stay warm across passes).
A library that cannot be measured raises :class:`Unavailable` with the reason.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness import hfjson
from harness.local import rank_file



class Unavailable(Exception):
    """The library cannot be measured here (not installed, no such encoding, ...)."""


@dataclass
class Lib:
    name: str
    version: str
    encode: Callable[[str], Sequence[int]]
    numpy: Callable[[str], Any] | None = None
    batch: Callable[[list[str]], list[Sequence[int]]] | None = None
    batch_numpy: Callable[[list[str]], tuple[Any, Any]] | None = None
    prepare: Callable[[], None] = field(default=lambda: None)
    note: str = ""


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def _import(module: str, dist: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise Unavailable(f"not installed (`pip install {dist}`): {e}") from e


# The special tokens tiktoken defines for these encodings (tiktoken_ext/openai_public.py).
SPECIALS = {
    "cl100k_base": {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                    "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276},
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}

# The module whose import a load-time measurement times separately.
MODULES = {"bpekit(no cache)": "bpekit", "rs_bpe": "rs_bpe.bpe", "hf_tokenizers": "tokenizers"}


def _pattern(name: str) -> str:
    from bpekit import patterns

    return {"cl100k_base": patterns.CL100K, "o200k_base": patterns.O200K}[name]


def _specials(name: str) -> dict[str, int]:
    if name not in SPECIALS:
        raise Unavailable(f"no special tokens known for {name}")
    return SPECIALS[name]


def _tiktoken_ranks(name: str) -> dict[bytes, int]:
    from tiktoken.load import load_tiktoken_bpe

    return load_tiktoken_bpe(str(rank_file(name)))


def _bpekit(name: str, cache_bytes: int | None, label: str) -> Lib:
    """bpekit with the pre-token cache budget ``cache_bytes`` (``None``: the one it ships with)."""
    bpekit = _import("bpekit", "bpekit")
    enc = bpekit.get_encoding(name)
    # The shipped default comes from the core (not from `enc`, which "bpekit(no cache)" shares
    # and sets to 0). It was a constant here, 4 MiB, the default until session 7: every "bpekit"
    # column since measured a cache 16x the shipped one, slower than no cache at all
    # (src/PERFORMANCE.md, "Eighth round: the benchmark's cache budget").
    budget = bpekit._core.DEFAULT_PRETOKEN_CACHE_BYTES if cache_bytes is None else cache_bytes

    def prepare() -> None:
        enc.pretoken_cache_bytes = budget  # (re)setting the budget also empties the cache

    return Lib(
        label,
        bpekit.__version__,
        enc.encode_ordinary,
        numpy=lambda t: enc.encode_to_numpy(t, disallowed_special=()),
        batch=lambda ts: enc.encode_ordinary_batch(ts, num_threads=2),
        batch_numpy=lambda ts: enc.encode_batch_to_numpy(ts, num_threads=2, disallowed_special=()),
        prepare=prepare,
    )


def bpekit_lib(name: str) -> Lib:
    return _bpekit(name, None, "bpekit")


def bpekit_nocache(name: str) -> Lib:
    return _bpekit(name, 0, "bpekit(no cache)")


def tiktoken_lib(name: str) -> Lib:
    tiktoken = _import("tiktoken", "tiktoken")
    enc = tiktoken.get_encoding(name)
    return Lib(
        "tiktoken",
        tiktoken.__version__,
        enc.encode_ordinary,
        numpy=lambda t: enc.encode_to_numpy(t, disallowed_special=()),
        batch=lambda ts: enc.encode_ordinary_batch(ts, num_threads=2),
    )


def rs_bpe_lib(name: str) -> Lib:
    openai = _import("rs_bpe.bpe", "rs-bpe").openai
    if not hasattr(openai, name):
        raise Unavailable(f"rs-bpe has no {name}")
    tok = getattr(openai, name)()
    opts = openai.ParallelOptions(1, 16, 2)  # min_batch_size, chunk_size, max_threads
    return Lib(
        "rs_bpe",
        _version("rs-bpe"),
        tok.encode,
        batch=lambda ts: tok.encode_batch_parallel(ts, opts)[0],
        note="vocabulary built into the package (does not read the rank file); in a process that "
        "created the cl100k tokenizer first, o200k's encode_batch_parallel returns cl100k ids",
    )


def tokendagger_lib(name: str) -> Lib:
    td = _import("tokendagger", "tokendagger")
    enc = td.Encoding(name, pat_str=_pattern(name), mergeable_ranks=_tiktoken_ranks(name),
                      special_tokens=_specials(name))
    return Lib(
        "tokendagger",
        _version("tokendagger"),
        enc.encode_ordinary,
        batch=lambda ts: enc.encode_batch(ts, num_threads=2),
    )


def hf_lib(name: str) -> Lib:
    tokenizers = _import("tokenizers", "tokenizers")
    tok = tokenizers.Tokenizer.from_file(str(hfjson.path(name)))
    return Lib(
        "hf_tokenizers",
        tokenizers.__version__,
        lambda t: tok.encode(t, add_special_tokens=False).ids,
        batch=lambda ts: [e.ids for e in tok.encode_batch_fast(ts, add_special_tokens=False)],
        note="tokenizer.json generated from the rank file (bpekit.tokenizer_export; `{1,3}+` -> `{1,3}`)",
    )


def tokie_lib(name: str) -> Lib:
    tokie = _import("tokie", "tokie")
    tok = tokie.Tokenizer.from_json(str(hfjson.path(name)))

    def flat(ts: list[str]) -> tuple[Any, Any]:
        import numpy as np

        ids, lengths = tok.encode_batch_flat(ts, add_special_tokens=False)
        return ids, np.concatenate((np.zeros(1, np.int64), np.cumsum(lengths, dtype=np.int64)))

    return Lib(
        "tokie",
        _version("tokie"),
        lambda t: tok.encode(t, add_special_tokens=False).ids,
        batch=lambda ts: [e.ids for e in tok.encode_batch(ts, add_special_tokens=False)],
        batch_numpy=flat,
        note="loaded from the same generated tokenizer.json as hf_tokenizers",
    )


def gigatoken_lib(name: str) -> Lib:
    gigatoken = _import("gigatoken", "gigatoken")
    lib = Lib("gigatoken", _version("gigatoken"), encode=lambda t: [])

    def prepare() -> None:  # a fresh instance: its pre-token cache must not stay warm
        tok = gigatoken.Tokenizer.from_tiktoken(str(rank_file(name)))
        lib.encode = tok.as_tiktoken().encode_ordinary
        lib.numpy = tok.encode
        lib.batch = lambda ts: tok.encode_batch_list(ts, parallel=True)

    prepare()
    lib.prepare = prepare
    lib.note = "a fresh instance for every timed pass (cold pre-token cache)"
    return lib


def wordchipper_lib(name: str) -> Lib:
    wc = _import("wordchipper", "wordchipper")
    single = wc.Tokenizer.from_pretrained(name)
    opts = wc.TokenizerOptions.default()
    opts.set_parallel(True)
    multi = wc.Tokenizer.from_pretrained(name, opts)
    return Lib("wordchipper", _version("wordchipper"), single.encode, batch=multi.encode_batch)


def kitoken_lib(name: str) -> Lib:
    kitoken = _import("kitoken", "kitoken")
    tok = kitoken.Kitoken.from_tiktoken_file(str(rank_file(name)))
    return Lib(
        "kitoken",
        _version("kitoken"),
        lambda t: tok.encode(t, False),
        batch=lambda ts: tok.encode_all(ts, False),
    )


def riptoken_lib(name: str) -> Lib:
    riptoken = _import("riptoken", "riptoken")
    ranks = riptoken.load_tiktoken_bpe(str(rank_file(name)))
    core = riptoken.CoreBPE(ranks, _specials(name), _pattern(name))
    return Lib("riptoken", _version("riptoken"), core.encode_ordinary, batch=core.encode_ordinary_batch)


def quicktok_lib(name: str) -> Lib:
    quicktok = _import("quicktok", "quicktok")
    loaders = [a for a in ("get_encoding", "Encoding", "from_tiktoken") if hasattr(quicktok, a)]
    if not loaders:
        raise Unavailable(
            f"quicktok {_version('quicktok')} on PyPI is a different project (a minbpe-style "
            "BasicTokenizer: no split pattern, cannot load .tiktoken ranks)"
        )
    raise Unavailable(f"quicktok {_version('quicktok')} exposes {loaders}; no adapter written for it")


BUILDERS: dict[str, Callable[[str], Lib]] = {
    "bpekit": bpekit_lib,
    "bpekit(no cache)": bpekit_nocache,
    "tiktoken": tiktoken_lib,
    "rs_bpe": rs_bpe_lib,
    "tokendagger": tokendagger_lib,
    "hf_tokenizers": hf_lib,
    "quicktok": quicktok_lib,
    "gigatoken": gigatoken_lib,
    "wordchipper": wordchipper_lib,
    "kitoken": kitoken_lib,
    "tokie": tokie_lib,
    "riptoken": riptoken_lib,
}


def build(lib: str, name: str) -> Lib:
    """Builds ``lib`` for encoding ``name``; :class:`Unavailable` says why it cannot be."""
    if lib not in BUILDERS:
        raise Unavailable(f"unknown library {lib!r}; known: {', '.join(BUILDERS)}")
    try:
        return BUILDERS[lib](name)
    except Unavailable:
        raise
    except Exception as e:
        raise Unavailable(f"failed to load {name}: {type(e).__name__}: {str(e)[:200]}") from e
