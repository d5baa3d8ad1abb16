"""Text that remembers where each of its characters came from: Hugging Face's
``NormalizedString`` at character granularity, so that a pipeline can give each token its span
of the input (``Tokenizer.encode_with_offsets``).

An :class:`Aligned` holds a text and, for each of its characters, the span ``(start, end)`` of
the input it stands for. Normalizers and pre-tokenizers change the text through
:meth:`Aligned.transform`, which assigns spans by Hugging Face's rules (``transform_range``):
a character that replaces one of the text takes that character's span, an inserted one the span
of the character before it, and one that also removes characters after it keeps only the first
one's span. A token's span is then the start of its first character's span and the end of its
last's (``convert_offsets``). Hugging Face keeps the spans per byte, but every byte of a character
always shares one, so characters give the same offsets.
"""

from __future__ import annotations

from collections.abc import Iterable

from bpekit import _core

Span = tuple[int, int]


class Aligned:
    """``text`` with ``spans[i]``, the input span of ``text[i]``; ``origin`` is where the part of
    the input it was cut from starts (the span of a character inserted at the very start). Text
    that nothing changed but a prefix and one-for-one character replacements keeps no list: its
    first ``lead`` characters (a prefix) span the first input character, the others their own
    positions from ``origin`` (a ``Metaspace`` or ``Prepend`` + ``Replace`` word, aligned without
    a span per character)."""

    __slots__ = ("_spans", "lead", "origin", "text")

    def __init__(self, text: str, spans: list[Span] | None, origin: int = 0, lead: int = 0) -> None:
        self.text = text
        self._spans = spans
        self.origin = origin
        self.lead = lead

    @classmethod
    def of(cls, text: str, start: int = 0) -> Aligned:
        """``text`` as it is, found at ``start`` of the input."""
        return cls(text, None, start)

    @property
    def spans(self) -> list[Span]:
        if self._spans is None:
            o, lead = self.origin, self.lead
            self._spans = [(o, o + 1)] * lead + [(o + i, o + i + 1) for i in range(len(self.text) - lead)]
        return self._spans

    def __len__(self) -> int:
        return len(self.text)

    def __getitem__(self, cut: slice) -> Aligned:
        """The characters of ``cut`` (a step-1 slice) with their spans."""
        start, stop, _ = cut.indices(len(self.text))
        if self._spans is None:
            if start >= self.lead:
                return Aligned(self.text[start:stop], None, self.origin + start - self.lead)
            return Aligned(self.text[start:stop], None, self.origin, max(0, min(stop, self.lead) - start))
        origin = self._spans[start][0] if start < min(stop, len(self._spans)) else self.origin
        return Aligned(self.text[start:stop], self._spans[start:stop], origin)

    def __repr__(self) -> str:
        return f"Aligned({self.text!r}, {self.spans!r})"

    def span(self, start: int, end: int) -> Span:
        """The input span of ``text[start:end]`` (``start < end``)."""
        if self._spans is None:
            o, lead = self.origin, self.lead
            return (o + start, o + end) if not lead else (o + max(start - lead, 0), o + max(end - lead, 1))
        return self._spans[start][0], self._spans[end - 1][1]

    def map(self, cuts: list[Span]) -> list[Span]:
        """:meth:`span` of each ``(start, end)`` of ``cuts``."""
        if self._spans is None:
            o, lead = self.origin, self.lead
            if not lead:
                return [(o + a, o + b) for a, b in cuts] if o else cuts
            return _core.lead_spans(cuts, o, lead, len(self.text))  # type: ignore[no-any-return]
        spans = self._spans
        return [(spans[a][0], spans[b - 1][1]) if a < b else self._at(a) for a, b in cuts]

    def _at(self, i: int) -> Span:
        """The empty input span where ``text[i:i]`` is."""
        spans = self.spans
        at = spans[i][0] if i < len(spans) else spans[-1][1] if spans else self.origin
        return at, at

    def transform(self, start: int, end: int, chars: Iterable[tuple[str, int]], removed_first: int = 0) -> Aligned:
        """``text[start:end]`` replaced by ``chars``, each with its change: 0 stands for the next
        character of the range, 1 is inserted, ``-n`` stands for the next one and removes ``n``
        after it; the first ``removed_first`` characters of the range are removed first."""
        spans, out_text, out_spans = self.spans, [], []
        at = start + removed_first  # the next character of the range not yet replaced
        for c, change in chars:
            if change > 0:
                out_spans.append(spans[at - 1] if at >= 1 else (self.origin, self.origin))
            else:
                out_spans.append(spans[at])
                at += 1 - change
            out_text.append(c)
        return Aligned(self.text[:start] + "".join(out_text) + self.text[end:],
                       spans[:start] + out_spans + spans[end:], self.origin)

    def map_chars(self, change: Iterable[tuple[str, int]]) -> Aligned:
        """The whole text replaced by ``change`` (see :meth:`transform`)."""
        return self.transform(0, len(self.text), change)

    def prepend(self, prefix: str) -> Aligned:
        """``prefix`` before the text, as Hugging Face prepends: every added character takes the
        span of the first one (an empty text stays empty)."""
        if not self.text or not prefix:
            return self
        if self._spans is None:
            return Aligned(prefix + self.text, None, self.origin, self.lead + len(prefix))
        chars = [(c, int(i > 0)) for i, c in enumerate(prefix)]
        return self.transform(0, 1, [*chars, (self.text[0], 1)])

    def replace_char(self, old: str, new: str) -> Aligned:
        """Every ``old`` character replaced by the character ``new``: :meth:`replace` of
        one-character matches by one character, which keeps every span (the inserted character
        takes the span of the one it replaces)."""
        if len(old) != 1 or len(new) != 1:
            raise ValueError("replace_char replaces one character by one character")
        return Aligned(self.text.replace(old, new), self._spans, self.origin, self.lead)

    def replace(self, matches: Iterable[tuple[int, int]], content: str, replaced: str | None = None) -> Aligned:
        """Each ``(start, end)`` of ``matches`` (in order, not overlapping) replaced by ``content``,
        whose characters are all inserted after the last removed one (Hugging Face's ``replace``);
        ``replaced``: the text that gives, if known. The spans come from Rust
        (``_core.replaced_spans``), as :meth:`replace_reference` gives them."""
        cuts = list(matches)
        if not cuts:
            return self
        if replaced is None:
            pieces, done = [], 0
            for s, e in cuts:
                pieces += (self.text[done:s], content)
                done = e
            pieces.append(self.text[done:])
            replaced = "".join(pieces)
        spans = _core.replaced_spans(self._spans, self.origin, self.lead, len(self.text), cuts, len(content))
        return Aligned(replaced, spans, self.origin)

    def replace_reference(self, matches: Iterable[tuple[int, int]], content: str) -> Aligned:
        """:meth:`replace` in Python, a span at a time (the reference its tests hold it to)."""
        pieces: list[str] = []
        spans: list[Span] = []
        done = 0
        for s, e in matches:
            pieces.append(self.text[done:s])
            spans.extend(self.spans[done:s])
            after = self.spans[e - 1] if e >= 1 else (self.origin, self.origin)
            pieces.append(content)
            spans.extend([after] * len(content))
            done = e
        if not pieces:
            return self
        pieces.append(self.text[done:])
        spans.extend(self.spans[done:])
        return Aligned("".join(pieces), spans, self.origin)

    def keep(self, test: Iterable[bool]) -> Aligned:
        """The characters for which ``test`` gives true, each with its own span (Hugging Face's
        ``filter`` and ``strip``)."""
        kept = [i for i, k in zip(range(len(self.text)), test) if k]
        if len(kept) == len(self.text):
            return self
        return Aligned("".join(self.text[i] for i in kept), [self.spans[i] for i in kept], self.origin)


def spans_of_bytes(text: str, lengths: Iterable[int], one_byte_chars: bool = False) -> list[Span]:
    """The chars of ``text`` that each of consecutive runs of its UTF-8 bytes, ``lengths`` bytes
    each, begins and ends in (as Hugging Face spans a model's tokens over a word); with
    ``one_byte_chars`` every char stands for one byte (a word in the byte-level alphabet)."""
    char_of = list(range(len(text))) if one_byte_chars else byte_chars(text)
    spans, at = [], 0
    for n in lengths:
        spans.append((char_of[at], char_of[at + n - 1] + 1))
        at += n
    return spans


def byte_chars(text: str) -> list[int]:
    """The index of the char each byte of the UTF-8 of ``text`` belongs to."""
    return [i for i, c in enumerate(text) for _ in range(len(c.encode("utf-8")))]
