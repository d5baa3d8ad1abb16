"""``.tiktoken`` rank files (with the JSON sidecar bpekit writes) as :class:`bpekit.Tokenizer`,
and any tokenizer a rank file can hold as ranks.

Loading: the ranks are parsed by the Rust core (``CoreBPE.from_tiktoken_bytes``); the pattern
and special tokens come from the caller, else from the sidecar ``<file>.json``
(``bpekit.tokenizer_export.tiktoken_sidecar``), else from the OpenAI encoding whose published
sha256 the file has (so ``ranks.tiktoken`` holding cl100k's ranks is cl100k_base whatever its
name), else from the encoding the file stem names.

Saving (:func:`save`): rank models directly; other tokenizers through :func:`rank_model`,
which accepts what rank BPE reproduces (formats.md §1.4, §2.4, §3.8): a byte-level BPE with no
normalizer, one regex split (or GPT-2's ByteLevel), only special added tokens, no BOS/EOS, and a
merge list that is either every split of every token in rank order with ``ignore_merges``
(tiktoken-derived, exact) or classic (merge ``i`` makes a new token whose id grows with ``i``:
GPT-2's files, where rank and merge order agree).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from bpekit.errors import FormatError, NoSidecarError, UsageError
from bpekit.specials import check_map

MAX_SIDECAR_BYTES = 1 << 26
MAX_RANK_FILE_BYTES = 1 << 30  # o200k_base is 3.6 MB


def _sidecar(path: str) -> dict[str, Any] | None:
    side = Path(path + ".json")
    if not side.is_file():
        return None
    if side.stat().st_size > MAX_SIDECAR_BYTES:
        raise FormatError(
            f"{side}: a sidecar over {MAX_SIDECAR_BYTES} bytes is not a bpekit sidecar"
        )
    try:
        doc = json.loads(side.read_bytes())
    except (ValueError, RecursionError) as exc:
        raise FormatError(f"{side}: not JSON ({exc})") from None
    ok = (
        isinstance(doc, dict)
        and doc.get("format") == "bpekit-tiktoken-sidecar"
        and isinstance(doc.get("pat_str"), str)
        and isinstance(doc.get("special_tokens"), dict)
        and all(
            isinstance(k, str) and type(v) is int and v >= 0
            for k, v in doc["special_tokens"].items()
        )
    )
    if not ok:
        raise FormatError(
            f"{side}: not a bpekit tiktoken sidecar (format, pat_str, special_tokens str -> int)"
        )
    return doc


def _known(data: bytes, stem: str) -> tuple[str, Any] | None:
    from bpekit.registry import RANK_FILES, get_encoding, list_encoding_names

    digest = hashlib.sha256(data).hexdigest()
    for filename, (_, sha) in RANK_FILES.items():
        if sha == digest and filename.endswith(".tiktoken"):
            name = filename.removesuffix(".tiktoken")
            return name, get_encoding(name)
    if stem in list_encoding_names():
        return stem, get_encoding(stem)
    return None


def load(
    path: str | os.PathLike[str],
    *,
    pattern: str | None = None,
    special_tokens: dict[str, int] | None = None,
    **_: Any,
) -> Any:
    """The :class:`bpekit.Tokenizer` of a ``.tiktoken`` rank file."""
    from bpekit import _core, patterns
    from bpekit.encoding import Encoding
    from bpekit.tokenizer import Tokenizer

    name = os.fspath(path)
    try:
        size = os.path.getsize(name)
        if size > MAX_RANK_FILE_BYTES:
            raise FormatError(f"{name} is {size} bytes; a rank file over {MAX_RANK_FILE_BYTES} bytes is refused")
        data = Path(name).read_bytes()
    except OSError as exc:
        raise FormatError(f"cannot read {name}: {exc.strerror or exc}") from None
    stem = Path(name).name.split(".")[0]
    side = _sidecar(name)
    explicit_n_vocab = None
    if side is not None:
        pattern = side["pat_str"] if pattern is None else pattern
        special_tokens = (
            side["special_tokens"] if special_tokens is None else special_tokens
        )
        explicit_n_vocab = side.get("explicit_n_vocab")
    if pattern is None or special_tokens is None:
        known = _known(data, stem)
        if known is None and pattern is not None:
            known = (stem, None)  # a pattern and no specials: a file with none
            special_tokens = {}
        if known is None:
            raise NoSidecarError(
                f"{name}: a rank file holds no pattern or special tokens; pass pattern= and special_tokens= "
                "(or keep the .json sidecar bpekit writes beside it)"
            )
        stem, enc = known
        if enc is not None:
            pattern = enc._pat_str if pattern is None else pattern
            special_tokens = (
                dict(enc._special_tokens) if special_tokens is None else special_tokens
            )
    if pattern is None or special_tokens is None:
        raise UsageError(f"{name}: pass both pattern= and special_tokens=")
    special_tokens = check_map(special_tokens, f"{name}: special_tokens")
    pattern = patterns.resolve_pattern(pattern)
    try:
        core = _core.CoreBPE.from_tiktoken_bytes(
            data, list(special_tokens.items()), pattern, name
        )
    except ValueError as exc:
        raise FormatError(str(exc)) from None
    enc = Encoding._from_core(stem, pattern, core, dict(special_tokens))
    if explicit_n_vocab is not None and explicit_n_vocab != enc.n_vocab:
        raise FormatError(
            f"{name}: the sidecar says {explicit_n_vocab} ids, the file and specials give {enc.n_vocab}"
        )
    return Tokenizer.from_encoding(enc)


def rank_model(tok: Any) -> Any:
    """``tok`` as a rank-model Tokenizer (itself when it is one); FormatError saying why not."""
    if getattr(tok, "encoding", None) is not None:
        return tok
    from bpekit.formats.hf import document

    ranks, specials, pattern = ranks_of_document(document(tok))
    from bpekit.encoding import Encoding
    from bpekit.tokenizer import Tokenizer

    return Tokenizer.from_encoding(
        Encoding(
            "converted", pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials
        )
    )


def _pattern_of(pre: Any) -> str:
    from bpekit import patterns
    from bpekit.pipeline.fast import KNOWN

    if (
        pre
        and pre.get("type") == "ByteLevel"
        and pre.get("use_regex", True)
        and not pre.get("add_prefix_space")
    ):
        return patterns.GPT2
    items = (
        pre.get("pretokenizers", []) if pre and pre.get("type") == "Sequence" else []
    )
    if (
        len(items) == 2
        and items[0].get("type") == "Split"
        and "Regex" in items[0].get("pattern", {})
        and items[0].get("behavior") == "Isolated"
        and not items[0].get("invert")
        and items[1].get("type") == "ByteLevel"
        and not items[1].get("use_regex", True)
        and not items[1].get("add_prefix_space")
    ):
        rx = items[0]["pattern"]["Regex"]
        if rx in KNOWN:
            return KNOWN[rx]
        if (
            "$" not in rx and "}+" not in rx
        ):  # where Oniguruma and fancy-regex agree (formats.md §1.3)
            return str(rx)
        raise FormatError(
            f"the pattern {rx!r} may split differently under tiktoken's regex engine ($ or {{n,m}}+)"
        )
    raise FormatError(
        "a rank file holds byte-level BPE split by one regex; this pre-tokenizer is something else"
    )


def ranks_of_document(
    doc: dict[str, Any],
) -> tuple[dict[bytes, int], dict[str, int], str]:
    """``(ranks, special_tokens, pattern)`` of a ``tokenizer.json`` document rank BPE reproduces."""
    from bpekit.formats.recover import all_splits
    from bpekit.pipeline.byte_level import to_bytes

    model = doc.get("model") or {}
    if model.get("type") != "BPE" or any(
        model.get(k) for k in ("unk_token", "dropout", "byte_fallback")
    ):
        raise FormatError(
            "a rank file holds a plain byte-level BPE (no unk token, dropout or byte fallback)"
        )
    if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
        raise FormatError("a rank file has no subword prefix or word suffix")
    if doc.get("normalizer") is not None:
        raise FormatError(
            f"a rank file does not normalize text; this tokenizer has a {doc['normalizer'].get('type')!r} normalizer"
        )
    post = doc.get("post_processor")
    if post is not None and post.get("type") != "ByteLevel":
        raise FormatError(
            "a rank file adds no BOS/EOS tokens; this tokenizer's post-processor does"
        )
    pattern = _pattern_of(doc.get("pre_tokenizer"))
    added = doc.get("added_tokens") or []
    plain = [t["content"] for t in added if not t["special"]]
    if plain:
        raise FormatError(
            f"a rank file has special tokens only; {plain[0]!r} is a non-special added token"
        )
    added_ids = {t["id"] for t in added}
    ranks: dict[bytes, int] = {}
    for token, tid in model["vocab"].items():
        if tid in added_ids:
            continue
        data = to_bytes(token)
        if data is None:
            raise FormatError(
                f"the vocabulary token {token!r} is not in GGUF/GPT-2's byte alphabet"
            )
        ranks[data] = tid
    merges = [
        tuple(m) if isinstance(m, list) else tuple(m.split(" ", 1))
        for m in model["merges"]
    ]
    as_bytes = [(to_bytes(a), to_bytes(b)) for a, b in merges]
    if not (
        model.get("ignore_merges") and as_bytes == all_splits(ranks)
    ) and not _classic(as_bytes, ranks):
        raise FormatError(
            "rank BPE reproduces this merge list only when merge i makes a new token with a growing id "
            "(or the list is every split of every token with ignore_merges); this one is neither"
        )
    return ranks, {t["content"]: t["id"] for t in added}, pattern


def _classic(merges: list[tuple[Any, Any]], ranks: dict[bytes, int]) -> bool:
    last = max((r for t, r in ranks.items() if len(t) == 1), default=-1)
    made = set()
    for a, b in merges:
        rid = ranks.get(a + b)
        if rid is None or rid <= last or a + b in made:
            return False
        made.add(a + b)
        last = rid
    return len(made) == sum(1 for t in ranks if len(t) > 1)


def save(tok: Any, path: str | os.PathLike[str]) -> str:
    """Writes the rank file and its sidecar (``<path>.json``) atomically; returns the sidecar path."""
    return str(rank_model(tok).export_tiktoken(path))
