"""UBPE's merge loop with incremental pair counts: same merges as :mod:`.reference`, much faster.

Performance notes (10 MB of text is about 10 M symbols; see docs/ubpe.md for timings):

* The corpus is one flat ``array('i')`` with ``-1`` between parts, plus a doubly linked list
  (``nxt``/``prv``) so that a merge is O(1) and never moves memory. A merged-away position gets
  ``-1`` too, so stale entries fail the validity check ``seq[pos] == left``.
* Each pair has an ``array('i')`` of the positions of its left element, appended to when the
  pair forms and never shrunk eagerly (entries are checked when read). Plain Python lists of int
  objects cost about 10x the memory at this size.
* Pair keys are ``left << 32 | right`` ints: cheaper to hash than tuples, and ordering the keys
  orders the pairs lexicographically, which is ubpe's last tie-break.
* Counts are updated exactly at every merge; the ranking reads them from a lazy max-heap that
  gets one entry per pair whose count changed in an iteration (not per change) and is rebuilt
  when stale entries outnumber live ones.
* ``df`` is not maintained: it only breaks ties in count and sets the weight of accepted pairs,
  so it is computed from the position list of those pairs (accepted pairs are read anyway to merge
  them). Keeping a per-pair document counter would cost several hundred MB at 10 MB.
* Accepted pairs of one iteration share no id, so their occurrences never overlap and replacing
  them one pair at a time equals ubpe's single left-to-right pass; only ``(x, x)`` runs overlap,
  and those positions are visited in order.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Callable

from bpekit.ubpe.reference import Merge, check_no_empty

_SHIFT = 32
_MASK = (1 << _SHIFT) - 1

Progress = Callable[[int, int, int], None]  # (iteration, newest id, live pairs)


def fast_merges(
    docs: list[list[list[int]]],
    first_id: int,
    n_tokens: int,
    n_candidates: int,
    progress: Progress | None = None,
) -> list[Merge]:
    """The merges :func:`bpekit.ubpe.reference.reference_merges` returns, computed incrementally."""
    if first_id - 1 >= n_tokens:
        return []
    state = _Corpus(docs)
    if state.counts:
        check_no_empty(docs)
    return state.run(first_id, n_tokens, n_candidates, progress)


class _Corpus:
    def __init__(self, docs: list[list[list[int]]]) -> None:
        seq = array("i", [-1])
        doc_of = array("i", [-1])
        for d, parts in enumerate(docs):
            mark = array("i", [d])
            for part in parts:
                seq.extend(part)
                seq.append(-1)
                doc_of.extend(mark * (len(part) + 1))
        size = len(seq)
        self.seq = seq
        self.doc_of = doc_of
        self.nxt = array("i", range(1, size + 1))
        self.prv = array("i", range(-1, size - 1))
        positions: dict[int, array] = {}
        get = positions.get
        for pos in range(size - 1):
            a = seq[pos]
            b = seq[pos + 1]
            if a >= 0 and b >= 0:
                key = a << _SHIFT | b
                found = get(key)
                if found is None:
                    positions[key] = array("i", [pos])
                else:
                    found.append(pos)
        self.positions = positions
        self.counts = {key: len(found) for key, found in positions.items()}

    def run(
        self, first_id: int, n_tokens: int, n_candidates: int, progress: Progress | None
    ) -> list[Merge]:
        counts = self.counts
        # Heap entries are (-count, -key). Between iterations a live pair's count only falls
        # (a pair can only form in the iteration that creates one of its ids), so a stale entry
        # is an upper bound and is corrected when it reaches the top.
        heap = [(-n, -key) for key, n in counts.items()]
        heapq.heapify(heap)
        merges: list[Merge] = []
        max_token = first_id - 1
        iteration = 0
        while max_token < n_tokens and counts:
            ranked = self._candidates(heap, n_candidates)
            accepted = [ranked[0]]
            used = {ranked[0] >> _SHIFT, ranked[0] & _MASK}
            for key in ranked[1:]:
                l2 = key >> _SHIFT
                r2 = key & _MASK
                if l2 in used or r2 in used:
                    continue
                n2 = counts[key]
                if all(
                    counts.get(r2 << _SHIFT | (k1 >> _SHIFT), 0) < n2
                    and counts.get((k1 & _MASK) << _SHIFT | l2, 0) < n2
                    for k1 in accepted
                ):
                    accepted.append(key)
                    used.add(l2)
                    used.add(r2)
            born: list[int] = []
            for key in accepted:
                max_token += 1
                df = self._merge(key, max_token, born)
                merges.append((max_token, key >> _SHIFT, key & _MASK, df))
            for key in born:
                n = counts.get(key)
                if n is not None:
                    heapq.heappush(heap, (-n, -key))
            if len(heap) > 2 * len(counts) + 4096:
                heap = [(-n, -key) for key, n in counts.items()]
                heapq.heapify(heap)
            iteration += 1
            if progress is not None:
                progress(iteration, max_token, len(counts))
        return merges

    def _candidates(self, heap: list[tuple[int, int]], n_candidates: int) -> list[int]:
        """The ``n_candidates`` best pair keys by (count desc, df asc, pair desc)."""
        counts = self.counts
        taken: list[tuple[int, int]] = []  # (count, key), count desc then key desc
        seen: set[int] = set()
        while heap:
            neg_n, neg_key = heap[0]
            key = -neg_key
            n = counts.get(key)
            if n is None or key in seen:
                heapq.heappop(heap)  # a pair that is gone, or a duplicate entry
                continue
            if n != -neg_n:
                heapq.heapreplace(heap, (-n, neg_key))  # stale: its count fell since
                continue
            if len(taken) >= n_candidates and n < taken[n_candidates - 1][0]:
                break
            heapq.heappop(heap)
            taken.append((n, key))
            seen.add(key)
        for n, key in taken:
            heapq.heappush(heap, (-n, -key))
        # Only pairs tied on count need df; ties are rare once counts are large.
        tied: dict[int, int] = {}
        for i, (n, key) in enumerate(taken):
            if (i > 0 and taken[i - 1][0] == n) or (i + 1 < len(taken) and taken[i + 1][0] == n):
                tied[key] = self._document_frequency(key)
        taken.sort(key=lambda item: (-item[0], tied.get(item[1], 0), -item[1]))
        return [key for _, key in taken[:n_candidates]]

    def _live(self, key: int) -> list[int]:
        """The positions where ``key`` occurs now (its list also holds stale ones)."""
        seq, nxt = self.seq, self.nxt
        left = key >> _SHIFT
        right = key & _MASK
        return [p for p in self.positions[key] if seq[p] == left and seq[nxt[p]] == right]

    def _document_frequency(self, key: int) -> int:
        """Documents holding ``key`` now; also drops stale entries from its position list."""
        live = self._live(key)
        self.positions[key] = array("i", live)
        return len(set(map(self.doc_of.__getitem__, live)))

    def _merge(self, key: int, new: int, born: list[int]) -> int:
        """Replace every occurrence of ``key`` by ``new``, left to right; returns its df.

        Pairs that appear are appended to ``born`` (once each, when first seen).
        """
        seq, nxt, prv = self.seq, self.nxt, self.prv
        counts, positions = self.counts, self.positions
        get = counts.get
        left = key >> _SHIFT
        right = key & _MASK
        live = self._live(key)
        if left == right:
            live.sort()  # (x, x) runs overlap: ubpe's pass takes them left to right
        df = len(set(map(self.doc_of.__getitem__, live)))
        for pos in live:
            q = nxt[pos]
            if left == right and (seq[pos] != left or seq[q] != right):
                continue  # consumed by the previous match of the run
            p = prv[pos]
            after = nxt[q]
            before_id = seq[p]
            after_id = seq[after]
            seq[pos] = new
            seq[q] = -1
            nxt[pos] = after
            prv[after] = pos
            if before_id >= 0:  # (before, left) at p becomes (before, new)
                k = before_id << _SHIFT | left
                n = counts[k] - 1
                if n:
                    counts[k] = n
                else:
                    del counts[k]
                    del positions[k]
                k = before_id << _SHIFT | new
                n = get(k)
                if n is None:
                    counts[k] = 1
                    positions[k] = array("i", [p])
                    born.append(k)
                else:
                    counts[k] = n + 1
                    positions[k].append(p)
            if after_id >= 0:  # (right, after) at q becomes (new, after) at pos
                k = right << _SHIFT | after_id
                if k != key:
                    n = counts[k] - 1
                    if n:
                        counts[k] = n
                    else:
                        del counts[k]
                        del positions[k]
                k = new << _SHIFT | after_id
                n = get(k)
                if n is None:
                    counts[k] = 1
                    positions[k] = array("i", [pos])
                    born.append(k)
                else:
                    counts[k] = n + 1
                    positions[k].append(pos)
        del counts[key]
        del positions[key]
        return df
