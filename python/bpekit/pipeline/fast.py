"""When bpekit's Rust pre-tokenizer may stand in for a pipeline's pre-tokenizer.

Hugging Face compiles patterns with Oniguruma, the Rust core with fancy-regex; the two agree on
the known byte-level patterns (GPT-2's, and every pattern of ``bpekit.patterns`` in the form
``onig_pattern`` writes for Hugging Face, formats.md §1.3/§3.8), which also match every character
so that no text falls between pieces. Any other pattern or pre-tokenizer runs in Python.
Performance: splitting in Rust is ~10x faster than ``regex.finditer`` on the same pattern, and
the pieces are then cached (raw piece -> ids), so most of the text never reaches the merge loop.

A ``Sequence`` of ``Split(Isolated)`` stages then ``ByteLevel`` (no regex), as DeepSeek's and
other llama.cpp families' pipelines are, runs in Rust too (``isolated_config``) when every
stage's pattern is one bpekit knows the two engines agree on: the regexes of llama.cpp's
pre-tokenizer table (``formats.llamacpp``, in both the adapted and the upstream spelling), each
checked against the Python ``regex`` path on the corpora and on random text by the tests, or a
pattern of one's own made only of constructs both engines read alike (``onig.portable``, checked
against ``tokenizers`` on patterns drawn from that grammar).

``core_model`` goes further: when the model is a byte-level ``BPE`` that Rust can run exactly
(no dropout, no unk/byte fallback needed for a missing byte; a subword prefix or end-of-word
suffix, as CLIP's ``</w>``, is a byte's first symbol by its place in the piece), the split, the
byte mapping and the pair-rank merge are one call into ``_core.PairBPE`` (src/pairbpe.rs).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from bpekit import _core
from bpekit.patterns import PATTERNS
from bpekit.pipeline.byte_level import BYTE_TO_CHAR, GPT2_PATTERN
from bpekit.pipeline.models import BPE
from bpekit.pipeline.pre_tokenizers import (
    MATCHES_ONLY,
    WHITESPACE_SPLIT_STAGE,
    WHITESPACE_STAGE,
    ByteLevel,
    Digits,
    Metaspace,
    PreTokenizer,
    Punctuation,
    Sequence,
    Split,
    Whitespace,
    WhitespaceSplit,
)
from bpekit.pipeline.onig import onig_to_regex, portable
from bpekit.tokenizer_export import onig_pattern

# Oniguruma pattern -> the fancy-regex pattern with the same pieces
KNOWN: dict[str, str] = {GPT2_PATTERN: GPT2_PATTERN}
for _p in PATTERNS.values():
    KNOWN[onig_pattern(_p)] = _p
    if "{" not in _p and "$" not in _p:
        KNOWN.setdefault(_p, _p)


def split_config(pre: PreTokenizer | None) -> tuple[str, bool, bool] | None:
    """``(fancy-regex pattern, prefix the text, prefix each piece)`` standing in for ``pre``, or
    ``None`` when the pre-tokenizer must run in Python."""
    pattern, segment_prefix, piece_prefix = None, False, False
    if isinstance(pre, ByteLevel) and pre.use_regex:
        pattern, segment_prefix = GPT2_PATTERN, pre.add_prefix_space
    elif isinstance(pre, Sequence) and len(pre.pretokenizers) == 2:
        split, byte_level = pre.pretokenizers
        if (
            isinstance(split, Split)
            and split.pattern.is_regex
            and split.behavior == "Isolated"
            and not split.invert
            and isinstance(byte_level, ByteLevel)
            and not byte_level.use_regex
        ):
            pattern, piece_prefix = KNOWN.get(split.pattern.text), byte_level.add_prefix_space
    if pattern is None:
        return None
    return pattern, segment_prefix, piece_prefix


@functools.cache
def _agreed_patterns() -> frozenset[str]:
    """Split patterns Oniguruma (Hugging Face) and fancy-regex (the core) split alike."""
    from bpekit.formats import llamacpp

    out = set(KNOWN)
    for pre in llamacpp.PRE_TOKENIZERS.values():
        out.update(rx for rx in pre.regexes if rx not in llamacpp.HAND_WRITTEN)
        if not any(rx in llamacpp.HAND_WRITTEN for rx in pre.regexes):
            out.update(llamacpp.upstream_regexes(pre))
    # word classes differ: Oniguruma's \w holds every number (``¾``), fancy-regex's only digits
    return frozenset(rx for rx in out if not any(w in rx for w in ("\\b", "\\B", "\\w", "\\W")))


# Oniguruma patterns whose ``\b`` fancy-regex would read otherwise, spelled out for it (Tiny Aya's
# first stage): a boundary after a digit is the end of the text or a char outside Oniguruma's
# word class, which is Alphabetic, marks, decimal digits, connectors and the Latin-1 numbers
# ``²³¹¼½¾`` (every code point checked against ``tokenizers``). The Rust core splits it by hand
# (src/pretokenize/known/digit_groups.rs).
ONIG_WORD = r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\u00B2\u00B3\u00B9\u00BC-\u00BE]"
SPELLED_OUT = {r"\d{1,3}(?=(?:\d{3})*\b)": r"\d{1,3}(?=(?:\d{3})*(?!" + ONIG_WORD + "))"}


# Put before the pattern of a stage after ``ByteLevel``: it cuts each piece's byte-level string
# (``AFTER_BYTE_LEVEL`` in src/pairbpe.rs)
AFTER_BYTE_LEVEL = "(?#after ByteLevel)"

# The stage the Rust core runs for ``Punctuation`` (ASCII punctuation or a P* char of the tables
# ``tokenizers`` uses; ``Isolating::Punctuation`` in src/pretokenize/known/isolating.rs)
PUNCTUATION_STAGE = r"(?#Punctuation)\p{P}"

# The stage the Rust core runs for ``Digits`` (``char::is_numeric``, as ``tokenizers``; the regex
# comment keeps it apart from a ``Split`` of the regex ``\p{N}``, src/pretokenize/known/isolating.rs)
DIGITS_STAGE = r"(?#Digits)\p{N}"


def isolated_config(pre: PreTokenizer | None) -> tuple[list[str], bool] | None:
    """``(fancy-regex patterns, prefix each piece)`` of a ``Sequence`` of ``Split(Isolated)``,
    ``Digits`` and ``Punctuation`` stages around one ``ByteLevel`` (without regex, or with it and
    no prefix space: its GPT-2 regex is then the stage after those before it), when Rust can run
    every stage; else ``None``. ``Sequence[Digits, ByteLevel]`` is how StarCoder 2's, SmolLM's and
    Command R's files split; a stage after the ``ByteLevel`` cuts the byte-level string (Falcon's
    ``Digits`` and digit groups), its pattern marked ``AFTER_BYTE_LEVEL``."""
    if not isinstance(pre, Sequence) or len(pre.pretokenizers) < 2:
        return None
    at = [i for i, stage in enumerate(pre.pretokenizers) if isinstance(stage, ByteLevel)]
    if len(at) != 1:
        return None
    byte_level = pre.pretokenizers[at[0]]
    assert isinstance(byte_level, ByteLevel)
    if byte_level.use_regex and byte_level.add_prefix_space:
        return None
    patterns, after = [], []
    for split in pre.pretokenizers[:at[0]]:
        pattern = _stage_pattern(split)
        if pattern is None:
            return None
        patterns.append(pattern)
    if byte_level.use_regex:
        patterns.append(GPT2_PATTERN)
    for split in pre.pretokenizers[at[0] + 1:]:
        pattern = _stage_pattern(split)
        if pattern is None or pattern.startswith(MATCHES_ONLY):
            return None
        after.append(AFTER_BYTE_LEVEL + pattern)
    return patterns + after, byte_level.add_prefix_space


def _stage_pattern(split: PreTokenizer) -> str | None:
    """The pattern the Rust core splits as ``split`` does (``isolated_config``), or ``None``."""
    if type(split) is Digits:
        return DIGITS_STAGE + ("" if split.individual_digits else "+")
    if type(split) is Punctuation and split.behavior in ("Isolated", "Contiguous"):
        return PUNCTUATION_STAGE + ("+" if split.behavior == "Contiguous" else "")
    if not (isinstance(split, Split) and split.pattern.is_regex):
        return None
    if (split.behavior, split.invert) == ("Removed", True):  # (CLIP's: only the matches are kept)
        mark = MATCHES_ONLY
    elif (split.behavior, split.invert) == ("Isolated", False):
        mark = ""
    else:
        return None
    if split.pattern.text in SPELLED_OUT:
        return mark + SPELLED_OUT[split.pattern.text]
    if split.pattern.text not in _agreed_patterns() and not portable(split.pattern.text):
        return None
    return mark + "(?m)" + onig_to_regex(split.pattern.text)  # Ruby syntax: ^ $ are line anchors


def char_stages(pre: PreTokenizer | None) -> list[str] | None:
    """The Rust stages (``isolated_config``'s patterns) that split as ``pre`` does when it has no
    ``ByteLevel``, for a model over characters (``BPE.char_merge``): ``Whitespace`` (the Hugging
    Face quicktour's), ``WhitespaceSplit``, ``BertPreTokenizer`` (``WhitespaceSplit`` then
    ``Punctuation``), ``Split``, ``Digits``, ``Punctuation``, and ``Sequence``s of them; else
    ``None``."""
    if isinstance(pre, Sequence) and type(pre).pre_tokenize is Sequence.pre_tokenize:
        out: list[str] = []
        for stage in pre.pretokenizers:
            patterns = char_stages(stage)
            if patterns is None:
                return None
            out += patterns
        return out or None
    if type(pre) is Whitespace:
        return [WHITESPACE_STAGE]
    if type(pre) is WhitespaceSplit:
        return [WHITESPACE_SPLIT_STAGE]
    pattern = _stage_pattern(pre) if pre is not None else None
    return None if pattern is None else [pattern]


def metaspace_config(pre: PreTokenizer | None, added_in_rust: bool) -> tuple[str, str, bool] | None:
    """``(replacement, prepend_scheme, split)`` of a ``Metaspace`` pre-tokenizer that Rust can run
    with a character BPE (``BPE.char_merge``), else ``None``. The ``"first"`` scheme prepends only
    to the input's first segment, which only the Rust cut at added tokens tells the model
    (``added_in_rust``; a ``single_word`` token is cut in Python)."""
    if type(pre) is not Metaspace or (pre.prepend_scheme == "first" and not added_in_rust):
        return None
    return pre.replacement, pre.prepend_scheme, pre.split


def core_splitter(pre: PreTokenizer | None) -> Callable[[str], list[str]] | None:
    """A function giving the same raw (not yet byte-mapped) pieces as ``pre``, or ``None``."""
    config = split_config(pre)
    if config is None:
        isolated = isolated_config(pre)
        if isolated is None or any(p.startswith(AFTER_BYTE_LEVEL) for p in isolated[0]):
            return None  # (a stage after ByteLevel may cut a character's bytes apart: no str pieces)
        stages, prefix = _core.IsolatedSplit(isolated[0]), isolated[1]

        def split_isolated(text: str) -> list[str]:
            pieces: list[str] = stages.split(text)
            return _space_prefixed(pieces) if prefix else pieces

        return split_isolated
    pattern, segment_prefix, piece_prefix = config
    core = _core.CoreBPE({bytes([i]): i for i in range(256)}, [], pattern)

    def split_text(text: str) -> list[str]:
        if segment_prefix and text and not text.startswith(" "):  # (no prefix for an empty text)
            text = " " + text
        pieces: list[str] = core.split(text)
        return _space_prefixed(pieces) if piece_prefix else pieces

    return split_text


def _space_prefixed(pieces: list[str]) -> list[str]:
    """Each piece with a leading space unless it has one (``ByteLevel(add_prefix_space)`` after a
    ``Split``)."""
    return [p if p.startswith(" ") else " " + p for p in pieces]


def core_model(pre: PreTokenizer | None, model: object) -> _core.PairBPE | None:
    """The Rust pair-rank model doing ``pre`` then ``model`` on a text, or ``None``."""
    config = split_config(pre)
    isolated = isolated_config(pre) if config is None else None
    if (config is None and isolated is None) or not isinstance(model, BPE) or model.dropout or not model.dense_ids:
        return None  # (ids far beyond the vocabulary's size: the core's tables are by id, the Python merge is not)
    # each byte's first symbol: its character, and with a subword prefix or end-of-word suffix
    # (CLIP's `</w>`) the forms it takes inside a piece, at its end, and as a piece of its own
    prefix, suffix = model.continuing_subword_prefix or "", model.end_of_word_suffix or ""
    forms = [[c for c in BYTE_TO_CHAR]]
    if prefix or suffix:
        forms += [[prefix + c for c in BYTE_TO_CHAR], [prefix + c + suffix for c in BYTE_TO_CHAR],
                  [c + suffix for c in BYTE_TO_CHAR]]
    tables = [[model.vocab.get(t) for t in form] for form in forms]
    if any(None in t for t in tables) and (model.unk_token is not None or model.byte_fallback):
        return None  # unk / byte fallback needed: the Python model handles those
    whole = model.vocab if model.ignore_merges else None
    # a character missing from the vocabulary (and no unk/fallback) is dropped, as in Hugging Face
    ids, *affixes = [[_core.PAIR_DROP if i is None else i for i in t] for t in tables]
    extra = {"affixes": tuple(affixes)} if affixes else {}
    if isolated is not None:
        return _core.PairBPE(ids, model.merge_ids, None, False, isolated[1], whole, isolated[0], **extra)
    assert config is not None
    pattern, text_prefix, piece_prefix = config
    return _core.PairBPE(ids, model.merge_ids, pattern, text_prefix, piece_prefix, whole, **extra)


Segments = Callable[[str, bool], "list[tuple[str, int | None, bool]]"]


def encode_texts(
    fast: _core.PairBPE, segments: Segments, texts: list[str], match_added: bool, num_threads: int = 0
) -> list[list[int]]:
    """Each text cut by ``segments`` (added tokens, normalizer: Python) and every model segment of
    every text encoded in one Rust call (in parallel when there are several)."""
    plan: list[list[int | None]] = []  # per text: an added token's id, or None = next Rust result
    parts: list[str] = []
    for text in texts:
        row: list[int | None] = []
        for part, tid, _ in segments(text, match_added):
            row.append(tid)
            if tid is None:
                parts.append(part)
        plan.append(row)
    results = fast.encode_batch(parts, num_threads) if len(parts) > 1 else [fast.encode(p) for p in parts]
    encoded = iter(results)
    out: list[list[int]] = []
    for row in plan:
        ids: list[int] = []
        for tid in row:
            if tid is None:
                ids.extend(next(encoded))
            else:
                ids.append(tid)
        out.append(ids)
    return out
