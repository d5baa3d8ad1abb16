"""When bpekit's Rust pre-tokenizer may stand in for a pipeline's pre-tokenizer.

Hugging Face compiles patterns with Oniguruma, the Rust core with fancy-regex; the two agree on
the known byte-level patterns (GPT-2's, and every pattern of ``bpekit.patterns`` in the form
``onig_pattern`` writes for Hugging Face, formats.md §1.3/§3.8), which also match every character
so that no text falls between pieces. Any other pattern or pre-tokenizer runs in Python.
Performance: splitting in Rust is ~10x faster than ``regex.finditer`` on the same pattern, and
the pieces are then cached (raw piece -> ids), so most of the text never reaches the merge loop.
"""

from __future__ import annotations

from collections.abc import Callable

from bpekit import _core
from bpekit.patterns import PATTERNS
from bpekit.pipeline.byte_level import GPT2_PATTERN
from bpekit.pipeline.pre_tokenizers import ByteLevel, PreTokenizer, Sequence, Split
from bpekit.tokenizer_export import onig_pattern

# Oniguruma pattern -> the fancy-regex pattern with the same pieces
KNOWN: dict[str, str] = {GPT2_PATTERN: GPT2_PATTERN}
for _p in PATTERNS.values():
    KNOWN[onig_pattern(_p)] = _p
    if "{" not in _p and "$" not in _p:
        KNOWN.setdefault(_p, _p)


def core_splitter(pre: PreTokenizer | None) -> Callable[[str], list[str]] | None:
    """A function giving the same raw (not yet byte-mapped) pieces as ``pre``, or ``None``."""
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
    core = _core.CoreBPE({bytes([i]): i for i in range(256)}, [], pattern)

    def split_text(text: str) -> list[str]:
        if segment_prefix and not text.startswith(" "):
            text = " " + text
        pieces: list[str] = core.split(text)
        if piece_prefix:
            pieces = [p if p.startswith(" ") else " " + p for p in pieces]
        return pieces

    return split_text
