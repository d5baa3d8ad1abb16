"""Pre-tokenizer patterns of the known model families, by name.

The strings are the public constants of each encoding, exactly as tiktoken, Hugging Face and
llama.cpp write them; the Rust core recognises them and uses a hand-written splitter where it has
one. Any other pattern gets the compiled matcher when its shape allows (most pre-tokenizer
patterns), else the regex engine (fancy-regex, tiktoken's); :func:`engine` says which.
"""

from __future__ import annotations

# GPT-2 / r50k_base / p50k_base (tiktoken's possessive, equivalent form of GPT-2's pattern)
GPT2 = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""

CL100K = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

O200K = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# Llama 3 (as its tokenizer.json and llama.cpp's "llama-bpe" write it)
LLAMA3 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# Qwen 2 (transformers' converter): single digits
QWEN2 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# Qwen 3.5 (llama.cpp's "qwen35", upstream form): Qwen 2 with marks in letter runs
QWEN35 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# Mistral's Tekken (NeMo, Pixtral, Small 3): o200k's classes, single digits, no contractions
TEKKEN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*""",
        r"""\p{N}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# Moonshot's Kimi K2 (tokenization_kimi.py): Han runs first, Han out of o200k's letter classes
# (Oniguruma and fancy-regex class intersection ``&&``), ``[\r\n]*`` after punctuation
KIMI_K2 = "|".join(
    [
        r"""[\p{Han}]+""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

PATTERNS: dict[str, str] = {
    "gpt2": GPT2,
    "r50k": GPT2,
    "p50k": GPT2,
    "cl100k": CL100K,
    "o200k": O200K,
    "llama3": LLAMA3,
    "qwen2": QWEN2,
    "qwen35": QWEN35,
    "tekken": TEKKEN,
    "kimi_k2": KIMI_K2,
}


def resolve_pattern(name_or_regex: str) -> str:
    """A known family name (``"o200k"``, ``"cl100k_base"``, ``"gpt2"``...) or a regex, as a regex."""
    if not isinstance(name_or_regex, str):
        from bpekit.errors import InputTypeError

        raise InputTypeError(f"pattern must be a str, got {type(name_or_regex).__name__}")
    key = name_or_regex.lower().removesuffix("_base")
    if key in PATTERNS:
        return PATTERNS[key]
    if name_or_regex.isidentifier():  # "o300k": a misspelt name, not a pre-tokenizer regex
        from bpekit.errors import PatternError

        raise PatternError(
            f"unknown pattern name {name_or_regex!r}; the names are {', '.join(PATTERNS)} (with or "
            "without _base), anything else is a regex (one plain word would match only itself)"
        )
    return name_or_regex


def engine(pattern: str) -> str:
    """How bpekit splits text by ``pattern`` (a family name or a regex), fastest first:

    - ``"hand-written (o200k)"``: a hand-written splitter (the patterns above, exact strings);
    - ``"compiled"``: the compiled matcher, for alternations of character classes with greedy
      counts, literal alternations (``'s|'t``) and a trailing lookahead (``\\s+(?!\\S)``) or
      ``$`` -- most other pre-tokenizer patterns (DeepSeek, BLOOM, llama.cpp's ``default``...);
    - ``"regex (<why>)"``: fancy-regex, tiktoken's engine, for anything else (nested
      repetition, lookbehind, ``\\b``, backreferences...), with what kept it off the compiled path.

    All three give the same pieces; see ``docs/api.md``, "Pre-tokenizer patterns".
    An invalid regex raises :class:`bpekit.errors.PatternError`.
    """
    from bpekit import _core

    kind, detail = _core.pattern_engine(resolve_pattern(pattern))
    if kind == "hand":
        return f"hand-written ({detail})"
    return "compiled" if kind == "compiled" else f"regex ({detail})"
