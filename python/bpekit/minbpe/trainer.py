"""minbpe's training rule, run by bpekit's Rust trainer instead of recounting every pair per merge.

minbpe picks each merge with ``max(stats, key=stats.get)`` where ``stats`` counts adjacent id
pairs, filled by scanning the current ids chunk by chunk, left to right. ``max`` returns the
first key (in insertion order) among those with the highest count, and insertion order is the
order in which pairs are first seen in that scan. So the rule is:

    the pair with the highest count; among those, the one whose first occurrence
    (chunk index, then position inside the chunk) comes first in the *current* ids.

Identical chunks have identical merge histories, so they are passed once, in order of first
appearance, with a weight (their number of copies). This keeps the rule exact: the earliest chunk
that contains a pair is always the first copy of some distinct chunk, so ordering distinct chunks
by first appearance orders first occurrences the same way.

The Rust trainer (``src/train/first_seen.rs``) keys each pair by (its count, the word and byte
offset of its first occurrence), recomputing the offset when a merge destroys that occurrence;
every merge gets a new id (``256 + i``), and pairs seen once are merged too, as in minbpe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bpekit import _core
from bpekit.errors import VocabError


def learn_merges(
    words: Sequence[bytes],
    weights: Sequence[int],
    num_merges: int,
    on_merge: Callable[[int, int, int, int], None] | None = None,
) -> list[tuple[int, int, int]]:
    """The ``num_merges`` merges minbpe would learn, as ``(left, right, count)`` triples.

    ``words`` are the distinct chunks (UTF-8 bytes) in order of first appearance, ``weights``
    their number of copies (BasicTokenizer passes the whole text as one word of weight 1). Merge
    ``i`` creates id ``256 + i``. ``on_merge(i, left, right, count)``, if given, is called for each
    merge in order (for ``verbose``). Running out of pairs raises VocabError.
    """
    pairs, counts = _core.learn_merges_first_seen(list(words), list(weights), num_merges)
    if len(pairs) < num_merges:
        raise VocabError(
            f"the training text has no pairs left after {len(pairs)} merges, so it cannot "
            f"give {num_merges} merges; use vocab_size <= {256 + len(pairs)} or more text"
        )
    merges = [(left, right, count) for (left, right), count in zip(pairs, counts)]
    if on_merge is not None:
        for i, (left, right, count) in enumerate(merges):
            on_merge(i, left, right, count)
    return merges
