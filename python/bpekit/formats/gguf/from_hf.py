"""Any byte-level BPE tokenizer as a GGUF ``gpt2`` vocabulary (the inverse of ``to_hf``).

Input is the tokenizer's Hugging Face document (``bpekit.formats.hf.document``: every pipeline
and rank model has one). What llama.cpp can hold: a BPE model without unk token, subword
prefix/suffix, dropout or byte fallback; no normalizer (or NFC with a pre name that has it); a
pre-tokenizer that is GPT-2's ``ByteLevel`` or a list of ``Split(Isolated)`` regexes then
``ByteLevel(use_regex=false)``; a post-processor adding at most a BOS and an EOS. Anything else
raises :class:`~bpekit.errors.FormatError` naming the part.

The pre-tokenizer becomes the llama.cpp ``pre`` name whose regex list, in upstream form, is the
same list. When no name has exactly the list (tiktoken's cl100k, a custom pattern) the closest
name is written for llama.cpp and the exact regexes go in ``tokenizer.bpekit.pre_regexes``, with
``tokenizer.bpekit.ignore_merges`` when the model's flag differs from the name's; bpekit reads
them back first, so a bpekit -> GGUF -> bpekit round trip encodes identically. llama.cpp ignores
keys it does not know.
"""

from __future__ import annotations

from typing import Any

from bpekit.errors import FormatError
from bpekit.formats import llamacpp
from bpekit.formats.gguf import container as c
from bpekit.formats.gguf.to_hf import (
    IGNORE_MERGES_KEY,
    NFC_PRE_NAMES,
    PRE_REGEXES_KEY,
    pre_tokenizer,
)
from bpekit.formats.gguf.vocab import CONTROL, NORMAL, UNUSED, USER_DEFINED, GGUFVocab
from bpekit.tokenizer_export import onig_pattern

# For patterns llama.cpp has no exact name for: the name whose splitting is closest.
CLOSEST = {"CL100K": "dbrx", "GPT2": "gpt-2"}


def _regex_list(pre: Any) -> tuple[tuple[str, ...], bool]:
    """``(regexes, gpt2_byte_level)`` of a byte-level pre-tokenizer document."""
    if pre is None:
        raise FormatError(
            "GGUF 'gpt2' vocabularies are byte-level; this tokenizer has no pre-tokenizer"
        )
    if (
        pre.get("type") == "ByteLevel"
        and pre.get("use_regex", True)
        and not pre.get("add_prefix_space")
    ):
        return (llamacpp.GPT2,), True
    items = pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else []
    if (
        not items
        or items[-1].get("type") != "ByteLevel"
        or items[-1].get("add_prefix_space")
    ):
        raise FormatError(
            f"llama.cpp cannot express the pre-tokenizer {pre.get('type')!r} (it needs regex splits then ByteLevel)"
        )
    regexes: list[str] = []
    for item in items[:-1]:
        if item.get("type") == "Digits" and item.get("individual_digits"):
            regexes.append(llamacpp.DIGIT)
        elif (
            item.get("type") == "Split"
            and "Regex" in item.get("pattern", {})
            and item.get("behavior") == "Isolated"
            and not item.get("invert")
        ):
            regexes.append(item["pattern"]["Regex"])
        else:
            raise FormatError(
                f"llama.cpp cannot express the pre-tokenizer step {item.get('type')!r} {item.get('behavior', '')}"
            )
    if items[-1].get("use_regex", True):
        regexes.append(llamacpp.GPT2)
    return tuple(regexes), False


def _pre_name(regexes: tuple[str, ...], nfc: bool) -> tuple[str, bool]:
    """A llama.cpp name for the list; ``exact`` is False when only the closest one exists."""
    for name, pre in llamacpp.PRE_TOKENIZERS.items():
        if not pre.byte_encode or (name in NFC_PRE_NAMES) != nfc:
            continue
        try:
            if llamacpp.upstream_regexes(pre) == regexes or pre.regexes == regexes:
                return name, True
        except FormatError:
            continue
    if nfc:
        return "qwen2", False
    from bpekit import patterns

    for const, name in CLOSEST.items():
        if regexes == (onig_pattern(getattr(patterns, const)),) or regexes == (
            getattr(patterns, const),
        ):
            return name, False
    return "default", False


def _bos_eos(post: Any) -> tuple[int | None, int | None, bool]:
    """BOS id, EOS id, and whether the post-processor is one GGUF flags can state."""
    if post is None or post.get("type") == "ByteLevel":
        return None, None, True
    if post.get("type") != "TemplateProcessing":
        return None, None, False
    single = post.get("single", [])
    specials = post.get("special_tokens", {})
    names = [p.get("SpecialToken", {}).get("id") for p in single]
    seq_at = [i for i, p in enumerate(single) if "Sequence" in p]
    if len(seq_at) != 1 or len(single) > 3:
        return None, None, False
    at = seq_at[0]

    def one(name: str | None) -> int | None:
        ids = specials.get(name, {}).get("ids", [])
        return ids[0] if len(ids) == 1 else None

    bos = one(names[0]) if at == 1 else None
    eos = one(names[at + 1]) if at + 1 < len(single) else None
    return bos, eos, at <= 1 and len(single) - at - 1 <= 1


def vocab_from_document(doc: dict[str, Any], architecture: str = "gpt2") -> GGUFVocab:
    """The GGUF ``gpt2`` vocabulary of a ``tokenizer.json`` document."""
    model = doc.get("model") or {}
    if model.get("type") != "BPE":
        raise FormatError(
            f"GGUF 'gpt2' vocabularies hold BPE models, not {model.get('type')!r}"
        )
    for key in (
        "unk_token",
        "continuing_subword_prefix",
        "end_of_word_suffix",
        "dropout",
    ):
        if model.get(key):
            raise FormatError(
                f"llama.cpp's BPE has no {key} (this tokenizer sets it to {model[key]!r})"
            )
    if model.get("byte_fallback"):
        raise FormatError(
            "llama.cpp's byte-level BPE has no byte fallback (this tokenizer uses it)"
        )
    norm = doc.get("normalizer")
    if norm is not None and norm.get("type") != "NFC":
        raise FormatError(
            f"llama.cpp does not normalize text; this tokenizer has a {norm.get('type')!r} normalizer"
        )
    regexes, _ = _regex_list(doc.get("pre_tokenizer"))
    name, exact = _pre_name(regexes, norm is not None)
    ignore = bool(model.get("ignore_merges"))
    pre = llamacpp.PRE_TOKENIZERS[name]
    ids: dict[int, tuple[str, int]] = {
        i: (t, NORMAL) for t, i in model["vocab"].items()
    }
    for t in doc.get("added_tokens") or []:
        ids[t["id"]] = (t["content"], CONTROL if t["special"] else USER_DEFINED)
    n = max(ids, default=-1) + 1
    tokens = [ids.get(i, (f"[PAD{i}]", UNUSED)) for i in range(n)]
    merges = [
        tuple(m) if isinstance(m, list) else tuple(m.split(" ", 1))
        for m in model["merges"]
    ]
    bad = [m for m in merges if " " in m[0][1:] or " " in m[1]]
    if bad:
        raise FormatError(
            f"GGUF merges are 'left right' strings; the merge {bad[0]!r} has a space in a token"
        )
    bos, eos, ok = _bos_eos(doc.get("post_processor"))
    if not ok:
        raise FormatError(
            "llama.cpp adds at most a BOS and an EOS token; this post-processor does more"
        )
    vocab = GGUFVocab(
        model="gpt2",
        pre=name,
        tokens=[t for t, _ in tokens],
        token_types=[k for _, k in tokens],
        merges=merges,  # type: ignore[arg-type]
        file=c.GGUFFile(kv={"general.architecture": c.Value(c.STRING, architecture)}),
    )
    for key, tid in (("bos_token_id", bos), ("eos_token_id", eos)):
        if tid is not None:
            vocab.special_ids[key] = tid
    vocab.flags = {"add_bos_token": bos is not None, "add_eos_token": eos is not None}
    if not exact:
        vocab.file.kv[PRE_REGEXES_KEY] = c.Value(c.ARRAY, list(regexes), c.STRING)
    if ignore != bool(pre.flags.get("ignore_merges", False)):
        vocab.file.kv[IGNORE_MERGES_KEY] = c.Value(c.BOOL, ignore)
    pre_tokenizer(
        pre
    )  # the name chosen must itself convert back (byte-level, regex form)
    return vocab
