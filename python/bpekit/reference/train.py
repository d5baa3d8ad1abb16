"""The textbook byte-level BPE trainer: recount every pair after every merge, no cleverness.

1. Split each text on the special tokens (they are never counted as text), split the rest with
   the pattern, and count the distinct pre-tokens ("words"), kept in first-occurrence order.
2. Start from the 256 single-byte tokens, id = byte value.
3. Repeat: count all adjacent pairs inside words, weighted by word counts; pick the pair with the
   highest count; merge all its non-overlapping occurrences left to right in every word; the
   merged bytes become the next token (id ``len(ranks)``, i.e. 256 + merge index).
4. Stop when ``vocab_size`` tokens exist (the special tokens count: they take the ids after the
   merges, see :func:`special_token_ids`), when no pair is left, or when the best pair occurs
   fewer than ``min_frequency`` times.

Ties (several pairs with the highest count):

* ``tie="bytes"`` (default): the smallest ``(left bytes, right bytes)`` in byte order. It depends
  only on the counts, so any correct fast trainer can reproduce it.
* ``tie="first_seen"``: the pair whose first occurrence comes first, scanning the words in corpus
  order (``max(stats, key=stats.get)`` over a dict filled in that order). This is minbpe's and
  tiktoken ``_educational``'s rule; with ``min_frequency=1`` their merges are reproduced exactly
  (deduplicating words keeps the order of first occurrences, so it does not change the rule).

``min_frequency`` defaults to 2: a pair seen once is noise, and merging it only memorises the
training text. minbpe and tiktoken's educational trainer merge such pairs; pass 1 to match them.

A merge whose bytes are already a token (two different pairs can spell the same bytes) is still
recorded in ``merges`` but adds no new id, as in Hugging Face's trainer.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import pairwise
from typing import NamedTuple

from bpekit.errors import UsageError, VocabError
from bpekit.reference.encoding import utf8_safe
from bpekit.reference.pretokenize import compile_pattern, split
from bpekit.reference.special import leftmost_longest

Pair = tuple[bytes, bytes]
TIES = ("bytes", "first_seen")
SAMPLE = 50  # how many leading pre-tokens of the corpus a Step carries (for visualisation)


class Step(NamedTuple):
    """One merge: the pair, its count, the state after it. ``sample`` indexes ``words``."""

    pair: Pair
    count: int
    ranks: dict[bytes, int]
    words: list[list[bytes]]
    sample: list[int]


def byte_ranks() -> dict[bytes, int]:
    """The 256 single-byte tokens, id = byte value."""
    return {bytes([i]): i for i in range(256)}


def special_token_ids(ranks: dict[bytes, int], special_tokens: Sequence[str]) -> dict[str, int]:
    """Ids of the special tokens: the ones right after the trained ranks, in the given order."""
    return {s: len(ranks) + i for i, s in enumerate(special_tokens)}


def _text_chunks(text: str, special_tokens: Sequence[str]) -> Iterator[str]:
    """The parts of ``text`` between special tokens (leftmost, then longest, occurrences)."""
    start = 0
    while (found := leftmost_longest(text, special_tokens, start)) is not None:
        yield text[start : found.start]
        start = found.end
    yield text[start:]


def count_words(
    texts: Iterable[str], pattern: str, special_tokens: Sequence[str] = ()
) -> tuple[list[list[bytes]], list[int], list[int]]:
    """Distinct pre-tokens (lists of single bytes), their counts, the first SAMPLE pre-tokens."""
    index: dict[str, int] = {}
    counts: list[int] = []
    sample: list[int] = []
    for text in [texts] if isinstance(texts, str) else texts:
        for chunk in _text_chunks(utf8_safe(text), special_tokens):
            for piece in split(pattern, chunk):
                i = index.setdefault(piece, len(index))
                if i == len(counts):
                    counts.append(0)
                counts[i] += 1
                if len(sample) < SAMPLE:
                    sample.append(i)
    words = [[bytes([b]) for b in piece.encode("utf-8")] for piece in index]
    return words, counts, sample


def count_pairs(words: list[list[bytes]], counts: list[int]) -> dict[Pair, int]:
    """Adjacent-pair counts weighted by word counts, in first-occurrence order."""
    stats: dict[Pair, int] = {}
    for word, n in zip(words, counts, strict=True):
        for pair in pairwise(word):
            stats[pair] = stats.get(pair, 0) + n
    return stats


def best_pair(stats: dict[Pair, int], tie: str) -> Pair:
    """The most frequent pair; ties by byte order or by first occurrence (see the module doc)."""
    if tie == "first_seen":
        return max(stats, key=stats.__getitem__)  # max keeps the first of equal keys
    return min(stats, key=lambda pair: (-stats[pair], pair))


def merge_word(word: list[bytes], pair: Pair) -> list[bytes]:
    """``word`` with every non-overlapping occurrence of ``pair`` merged, left to right."""
    out: list[bytes] = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def _check(
    vocab_size: int, pattern: str, special_tokens: Sequence[str], min_frequency: int, tie: str
) -> None:
    if isinstance(special_tokens, str):
        raise VocabError("special_tokens must be a sequence of strings, not one string")
    if len(set(special_tokens)) != len(special_tokens) or "" in special_tokens:
        raise VocabError(
            f"special tokens must be distinct and non-empty, got {list(special_tokens)!r}"
        )
    if not isinstance(vocab_size, int) or vocab_size < 256 + len(special_tokens):
        raise VocabError(
            f"vocab_size must be at least 256 + {len(special_tokens)} (the special tokens), "
            f"got {vocab_size!r}"
        )
    if not isinstance(min_frequency, int) or min_frequency < 1:
        raise UsageError(f"min_frequency must be an integer >= 1, got {min_frequency!r}")
    if tie not in TIES:
        raise UsageError(f"tie must be one of {TIES}, got {tie!r}")
    compile_pattern(pattern)


def train_steps(
    texts: Iterable[str],
    vocab_size: int,
    pattern: str,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 2,
    tie: str = "bytes",
) -> Iterator[Step]:
    """Run the trainer, yielding a :class:`Step` after each merge (arguments as :func:`train`)."""
    _check(vocab_size, pattern, special_tokens, min_frequency, tie)
    words, counts, sample = count_words(texts, pattern, special_tokens)
    ranks = byte_ranks()
    while len(ranks) < vocab_size - len(special_tokens):
        stats = count_pairs(words, counts)
        if not stats:
            return
        pair = best_pair(stats, tie)
        if stats[pair] < min_frequency:
            return
        ranks.setdefault(pair[0] + pair[1], len(ranks))
        words = [merge_word(word, pair) for word in words]
        yield Step(pair, stats[pair], ranks, words, sample)


def train(
    texts: Iterable[str],
    vocab_size: int,
    pattern: str,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 2,
    tie: str = "bytes",
) -> tuple[list[Pair], dict[bytes, int]]:
    """Train byte-level BPE; return ``(merges, ranks)``, ranks mapping token bytes to ids.

    ``texts`` is an iterable of documents (a single ``str`` counts as one document). Special token
    ids are not in ``ranks``; get them with :func:`special_token_ids`. A vocabulary that cannot be
    built (``vocab_size`` too small, bad special tokens) raises :class:`~bpekit.errors.VocabError`,
    a bad option :class:`~bpekit.errors.UsageError`, a bad pattern
    :class:`~bpekit.errors.PatternError`.
    """
    merges: list[Pair] = []
    ranks = byte_ranks()
    for step in train_steps(texts, vocab_size, pattern, special_tokens, min_frequency, tie):
        merges.append(step.pair)
        ranks = step.ranks
    return merges, ranks
