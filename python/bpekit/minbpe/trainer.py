"""minbpe's training rule, computed incrementally instead of by recounting every pair per merge.

minbpe picks each merge with ``max(stats, key=stats.get)`` where ``stats`` counts adjacent id
pairs, filled by scanning the current ids chunk by chunk, left to right. ``max`` returns the
first key (in insertion order) among those with the highest count, and insertion order is the
order in which pairs are first seen in that scan. So the rule is:

    the pair with the highest count; among those, the one whose first occurrence
    (chunk index, then position inside the chunk) comes first in the *current* ids.

Merging never reorders anything: every current token starts at some position of the original
byte sequence, and tokens keep the order of those start positions. So an occurrence can be named
by the flat index of its left token's first byte in the concatenation of all chunks, and "first
occurrence" is the smallest such index still holding the pair.

Identical chunks have identical merge histories, so they are stored once, in order of first
appearance, with a weight (their number of copies). This keeps the rule exact: the earliest chunk
that contains a pair is always the first copy of some distinct chunk, so ordering distinct chunks
by first appearance orders first occurrences the same way.

The incremental trainer keeps, per pair, its weighted count and the ascending list of flat
positions where it was formed (stale entries are skipped, see :class:`_Pairs`), over a doubly
linked list of the current tokens. A merge touches only the occurrences of the merged pair and
their two neighbours. The choice uses a heap of ``(-count, first position, pair)``.
Existing pairs only ever lose occurrences (a merge creates only pairs that contain the brand-new
id), so a heap entry can only be *better* than the pair's true key: an entry is checked when it
reaches the top and pushed back with the true key when it is stale (the usual lazy deletion).

Performance notes (2-core machine, CPython 3.11; see docs/minbpe.md for the table): the doubly
linked list over flat positions makes a merge O(occurrences), so the whole run is about
O(N log N) for N bytes instead of minbpe's O(N * merges). Pairs are packed into one int
(``left << 32 | right``) because int keys hash faster than tuples in the hot dicts.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

from bpekit.errors import VocabError

_SHIFT = 32
_MASK = (1 << _SHIFT) - 1


class _Pairs:
    """Weighted pair counts and occurrence lists over a linked list of ids.

    ``where[pair]`` lists the positions where the pair was ever formed, ascending; entries go
    stale instead of being deleted. A stale position never holds that pair again (the pair now
    there contains a newer id), so ``head[pair]``, the index of its first live entry, only moves
    forward. Ascending order holds because a pair gains positions only in the merge pass that
    creates its newer id, and that pass walks the text left to right.
    """

    def __init__(self, words: Sequence[Sequence[int]], weights: Sequence[int]) -> None:
        ids: list[int] = []
        weight: list[int] = []
        nxt: list[int] = []
        for word, w in zip(words, weights):
            n = len(word)
            if n >= 2:  # a chunk of one token never holds a pair
                base = len(ids)
                ids.extend(word)
                weight.extend([w] * n)
                nxt.extend(range(base + 1, base + n))
                nxt.append(-1)
        prv = [-1] * len(ids)
        where: dict[int, list[int]] = {}
        for i, j in enumerate(nxt):
            if j >= 0:
                prv[j] = i
                key = ids[i] << _SHIFT | ids[j]
                positions = where.get(key)
                if positions is None:
                    where[key] = [i]
                else:
                    positions.append(i)
        if all(w == 1 for w in weights):
            count = {k: len(v) for k, v in where.items()}
        else:
            count = {k: sum([weight[i] for i in v]) for k, v in where.items()}
        self.ids, self.weight, self.nxt, self.prv = ids, weight, nxt, prv
        self.count, self.where = count, where
        self.head = dict.fromkeys(where, 0)

    def first_position(self, key: int) -> int:
        """The smallest position that holds ``key`` now (the pair must have a positive count)."""
        ids, nxt = self.ids, self.nxt
        left, right = key >> _SHIFT, key & _MASK
        positions = self.where[key]
        h = self.head[key]
        while True:
            p = positions[h]
            q = nxt[p]
            if ids[p] == left and q >= 0 and ids[q] == right:
                break
            h += 1
        self.head[key] = h
        return p

    def merge(self, key: int, new_id: int) -> list[int]:
        """Merge every occurrence of ``key`` left to right; return the pairs it created.

        The neighbour updates are written out inline: this loop is the whole cost of training.
        """
        ids, nxt, prv, weight = self.ids, self.nxt, self.prv, self.weight
        count, where, head = self.count, self.where, self.head
        left, right = key >> _SHIFT, key & _MASK
        high = new_id << _SHIFT
        fresh: list[int] = []
        positions = where[key]
        for i in range(head[key], len(positions)):
            p = positions[i]
            q = nxt[p]
            # stale, or consumed by the previous merge of this pass ("aaa" with (a, a))
            if ids[p] != left or q < 0 or ids[q] != right:
                continue
            w = weight[p]
            lp, rq = prv[p], nxt[q]
            if lp >= 0:
                count[ids[lp] << _SHIFT | left] -= w  # (L, left) at lp becomes (L, new)
                new = ids[lp] << _SHIFT | new_id
                if new in count:
                    where[new].append(lp)
                    count[new] += w
                else:
                    where[new] = [lp]
                    count[new] = w
                    head[new] = 0
                    fresh.append(new)
            if rq >= 0:
                count[right << _SHIFT | ids[rq]] -= w  # (right, R) at q becomes (new, R) at p
                new = high | ids[rq]
                if new in count:
                    where[new].append(p)
                    count[new] += w
                else:
                    where[new] = [p]
                    count[new] = w
                    head[new] = 0
                    fresh.append(new)
                prv[rq] = p
            count[key] -= w
            ids[p] = new_id
            ids[q] = -1
            nxt[p] = rq
        del count[key], where[key], head[key]
        return fresh


def _learn_merges(
    words: Sequence[Sequence[int]],
    weights: Sequence[int],
    num_merges: int,
    first_id: int = 256,
    on_merge: Callable[[int, int, int, int], None] | None = None,
) -> list[tuple[int, int, int]]:
    """The ``num_merges`` merges minbpe would learn, as ``(left, right, count)`` triples.

    ``words`` are the distinct chunks as id lists, in order of first appearance, and ``weights``
    their number of copies (BasicTokenizer passes the whole text as one word of weight 1).
    Merge ``i`` creates id ``first_id + i``. ``on_merge(i, left, right, count)``, if given, is
    called after each merge (for ``verbose``). Running out of pairs raises VocabError.
    """
    pairs = _Pairs(words, weights)
    heap = [(-c, pairs.first_position(k), k) for k, c in pairs.count.items()]
    heapq.heapify(heap)
    merges: list[tuple[int, int, int]] = []
    count = pairs.count
    while len(merges) < num_merges:
        if not heap:
            raise VocabError(
                f"the training text has no pairs left after {len(merges)} merges, so it cannot "
                f"give {num_merges} merges; use vocab_size <= {first_id + len(merges)} or more text"
            )
        neg, pos, key = heapq.heappop(heap)
        c = count.get(key, 0)
        if c <= 0:
            continue
        true_pos = pairs.first_position(key)
        if neg != -c or pos != true_pos:
            heapq.heappush(heap, (-c, true_pos, key))
            continue
        new_id = first_id + len(merges)
        for k in pairs.merge(key, new_id):
            if count[k] > 0:
                heapq.heappush(heap, (-count[k], pairs.first_position(k), k))
        merges.append((key >> _SHIFT, key & _MASK, c))
        if on_merge is not None:
            on_merge(len(merges) - 1, key >> _SHIFT, key & _MASK, c)
    return merges
