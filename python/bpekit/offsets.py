"""Where each token of an encoding comes from in the input: ``Encoding.encode_with_offsets`` and
``Tokenizer.encode_with_offsets``.

A token's offsets are the span ``(start, end)`` of characters of the input it stands for, as
Hugging Face's ``Encoding.offsets`` gives them: a token that holds only some of a character's
bytes (a byte-level BPE may cut inside a UTF-8 sequence) spans that whole character, so two
neighbouring tokens may share one. A text with lone surrogates is encoded with them fixed
(tiktoken's rule: a valid pair is one character, any other surrogate U+FFFD); offsets still
count the characters of the text as given.
"""

from __future__ import annotations

from collections.abc import Callable

from bpekit.encoding import _fix_surrogates, _has_surrogates
from bpekit.pipeline.aligned import Aligned, Span


def aligned_input(text: str) -> Aligned:
    """``text`` with its lone surrogates fixed as the encoders fix them (``_fix_surrogates``),
    each character with its span of ``text`` (a joined pair spans both of its surrogates)."""
    if not _has_surrogates(text):
        return Aligned.of(text)
    spans: list[Span] = []
    i = 0
    while i < len(text):
        pair = "\ud800" <= text[i] <= "\udbff" and i + 1 < len(text) and "\udc00" <= text[i + 1] <= "\udfff"
        spans.append((i, i + 1 + pair))
        i += 1 + pair
    return Aligned(_fix_surrogates(text), spans)


def of_rank_ids(text: str, ids: list[int], char_offsets: Callable[[str, list[int]], list[Span]]) -> list[Span]:
    """The offsets of ``ids``, a rank encoding of ``text`` (its tokens spell its UTF-8 one after
    another), from the core's ``char_offsets`` (``src/py/offsets.rs``)."""
    aligned = aligned_input(text)
    return aligned.map(char_offsets(aligned.text, ids))


def char_at_byte(text: str) -> list[int]:
    """For each byte offset of the UTF-8 of ``text`` that starts a character, and for its end,
    the character index there (other offsets: 0): byte offsets (sentencepiece's) in characters."""
    out = [0] * (len(text.encode("utf-8", "surrogatepass")) + 1)
    at = 0
    for i, c in enumerate(text):
        out[at] = i
        at += len(c.encode("utf-8", "surrogatepass"))
    out[at] = len(text)
    return out
