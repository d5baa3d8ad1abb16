"""RegexTokenizer: split the text with a regex first, so merges stay inside chunks; special tokens.

:class:`PatternTokenizer` holds what RegexTokenizer and GPT4Tokenizer share (the split, the
special-token policy of ``encode``); :class:`RegexTokenizer` adds ``train``, ``save`` and ``load``.

``allowed_special`` (as in minbpe): ``"all"``, ``"none"`` (special strings are plain text),
``"none_raise"`` (the default: plain text, but a special string in the text is an error), or a
set of special-token strings (those registered ones are allowed; unknown names are ignored).
Specials are split out with a regex alternation in registration order, so at one position the
first registered special that matches wins, not the longest (minbpe's rule, kept).

Fixes over minbpe: ``none_raise`` raises :class:`~bpekit.errors.DisallowedSpecialError` naming the
token (minbpe: a bare AssertionError); any set type is accepted (minbpe refused a frozenset);
``load`` applies the saved pattern and special tokens (minbpe kept its constructor's pattern);
chunks are whole matches even when the pattern has capturing groups (minbpe's ``findall`` would
return the groups).
"""

from __future__ import annotations

import re
from collections.abc import Set
from functools import lru_cache

import regex

from bpekit.errors import DisallowedSpecialError, EncodeError, FormatError, InputTypeError, PatternError
from bpekit.minbpe.base import Tokenizer, apply_merges, utf8

# minbpe's own patterns. GPT4_SPLIT_PATTERN is not tiktoken's cl100k string (no ``\s++$``,
# fewer possessive quantifiers); GPT4Tokenizer uses tiktoken's, see gpt4.py.
GPT2_SPLIT_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT4_SPLIT_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*"""
    r"""|\s*[\r\n]|\s+(?!\S)|\s+"""
)
ALLOWED_MODES = ("all", "none", "none_raise")


def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """``pattern`` compiled with the ``regex`` module (as minbpe does): InputTypeError if it is not
    a str, PatternError if it is empty (it would match no text, and ``load`` refuses it) or invalid."""
    if not isinstance(pattern, str):
        raise InputTypeError(f"pattern must be a str, got {type(pattern).__name__}")
    if not pattern:
        raise PatternError("the split pattern is empty; it would split every text into no chunks")
    return _compile(pattern)


@lru_cache(maxsize=32)
def _compile(pattern: str) -> regex.Pattern[str]:
    try:
        return regex.compile(pattern)
    except regex.error as exc:
        raise PatternError(f"invalid split pattern {pattern!r}: {exc}") from None


class PatternTokenizer(Tokenizer):
    """Regex split + special tokens + encoding; the part of RegexTokenizer that GPT4Tokenizer shares."""

    def __init__(self, pattern: str | None = None) -> None:
        super().__init__()
        self.pattern = GPT4_SPLIT_PATTERN if pattern is None else pattern
        self.compiled_pattern = compile_pattern(self.pattern)

    def register_special_tokens(self, special_tokens: dict[str, int]) -> None:
        """Replace the special tokens, e.g. ``{"<|endoftext|>": 100257}``; VocabError if invalid."""
        self._set_specials(special_tokens)

    def _chunks(self, text: str) -> list[str]:
        return [m.group() for m in self.compiled_pattern.finditer(text) if m.end() > m.start()]

    def _encode_chunk(self, chunk: bytes) -> list[int]:
        return apply_merges(list(chunk), self.merges)

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of ``text``, with special-token strings treated as plain text."""
        utf8(text)  # type and surrogate check
        ids: list[int] = []
        seen: dict[str, list[int]] = {}  # repeated chunks are encoded once per call
        for chunk in self._chunks(text):
            chunk_ids = seen.get(chunk)
            if chunk_ids is None:
                chunk_ids = seen[chunk] = self._encode_chunk(chunk.encode("utf-8"))
            ids.extend(chunk_ids)
        return ids

    def _allowed(self, text: str, allowed_special: object) -> dict[str, int]:
        """The special tokens to split out of ``text`` under ``allowed_special``."""
        if isinstance(allowed_special, str) and allowed_special in ALLOWED_MODES:
            if allowed_special == "all":
                return self.special_tokens
            if allowed_special == "none_raise":
                found = [(text.find(s), s) for s in self.special_tokens if s in text]
                if found:
                    token = min(found)[1]
                    raise DisallowedSpecialError(
                        f"the text contains the special token {token!r} and allowed_special='none_raise'; "
                        "pass allowed_special='all' (or a set naming it) to encode it as its special id, "
                        "or 'none' to encode it as plain text",
                        token,
                    )
            return {}
        if isinstance(allowed_special, Set):
            return {k: v for k, v in self.special_tokens.items() if k in allowed_special}
        raise EncodeError(
            f"allowed_special={allowed_special!r} not understood; use 'all', 'none', 'none_raise' "
            "or a set of special-token strings"
        )

    def encode(self, text: str, allowed_special: object = "none_raise") -> list[int]:
        """Token ids of ``text``, with special tokens handled as ``allowed_special`` says."""
        utf8(text)
        special = self._allowed(text, allowed_special)
        if not special:
            return self.encode_ordinary(text)
        special_pattern = "(" + "|".join(re.escape(k) for k in special) + ")"
        ids: list[int] = []
        for i, part in enumerate(re.split(special_pattern, text)):
            if i % 2:  # re.split puts the captured separators at odd indices
                ids.append(special[part])
            elif part:
                ids.extend(self.encode_ordinary(part))
        return ids


class RegexTokenizer(PatternTokenizer):
    """minbpe's ``RegexTokenizer``: ``train``, ``encode``, ``decode``, ``save``, ``load`` and specials."""

    def train(self, text: str, vocab_size: int, verbose: bool = False) -> None:
        """Learn ``vocab_size - 256`` merges from the chunks of ``text`` (VocabError if it runs out).

        Identical chunks are counted once with their number of copies, in order of first
        appearance, which gives exactly minbpe's merges (see :mod:`bpekit.minbpe.trainer`).
        """
        utf8(text)
        counts: dict[str, int] = {}
        for chunk in self._chunks(text):
            counts[chunk] = counts.get(chunk, 0) + 1
        words = [chunk.encode("utf-8") for chunk in counts]
        self._train(words, list(counts.values()), vocab_size, verbose)

    def save(self, file_prefix: str) -> None:
        """Write ``file_prefix.model`` (loadable) and ``file_prefix.vocab`` (for humans)."""
        self._save(file_prefix)

    def load(self, model_file: str) -> None:
        """Replace this tokenizer by the one in ``model_file``, its pattern and specials included."""
        pattern, special_tokens, merges = self._read(model_file, with_pattern=True)
        try:
            compiled = compile_pattern(pattern)
        except PatternError as exc:
            raise FormatError(f"{model_file}: {exc}") from None
        self._restore(special_tokens, merges)
        self.pattern, self.compiled_pattern = pattern, compiled
