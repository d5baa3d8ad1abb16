"""Universal encoding of one word: the DAG of segmentations and the search for the best ones.

Every vocabulary entry that matches at a position is an edge (shortest first, the prefix-tree
order). Since every alphabet id is an entry, every position is reachable. Candidates are built
from the end of the word backwards, a token prepended to a suffix's candidates, and compared by
tf-idf weight, then by fewer tokens (:mod:`bpekit.ubpe.score`). The score is not additive over
the sequence, so both searches are heuristics that ubpe defines by their exact procedure:

* ``top_n = 1``: one survivor per position; a new candidate replaces it only when strictly
  heavier, or equally heavy with strictly fewer tokens;
* ``top_n > 1``: a bounded ``heapq`` min-heap per position, fed edge by edge and, per edge, in the
  suffix heap's array order; the order of exact ties follows heapq's sift algorithms, so the
  real ``heapq`` is used with the same comparison.
"""

from __future__ import annotations

import heapq
import math

from bpekit.ubpe.score import Tally
from bpekit.ubpe.trie import PrefixTree

Edges = list[list[tuple[int, int]]]  # per position: (length, token), shortest first
Result = list[tuple[list[int], float]]


def word_edges(tree: PrefixTree, word: list[int]) -> Edges:
    return [tree.matches(word, start) for start in range(len(word))]


def best_one(edges: Edges, weights: dict[int, float]) -> Result:
    """The greedy ``top_n = 1`` search."""
    n = len(edges)
    tallies: list[Tally] = [Tally()] * (n + 1)
    totals = [0.0] * (n + 1)  # tallies[i].weight
    sizes = [0] * (n + 1)
    choice = [(0, 0)] * (n + 1)  # (token, next position)
    get_weight = weights.get
    isfinite = math.isfinite
    for start in range(n - 1, -1, -1):
        best_w = 0.0
        best_size = best_token = best_next = -1
        for length, token in edges[start]:
            nxt = start + length
            w_token = get_weight(token, 0.0)
            if not w_token:
                w = totals[nxt]
            else:
                tally = tallies[nxt]
                if token in tally.index or not tally.terms:
                    w = tally.weight_with(token, w_token)
                else:  # a new token: one more step of Neumaier's sum (inlined for speed)
                    s = tally.s
                    t = s + w_token
                    if abs(s) >= abs(w_token):
                        c = tally.c + ((s - t) + w_token)
                    else:
                        c = tally.c + ((w_token - t) + s)
                    w = t + c if c and isfinite(c) else t
            size = sizes[nxt] + 1
            if best_size < 0 or w > best_w or (w == best_w and size < best_size):
                best_w, best_size, best_token, best_next = w, size, token, nxt
        tallies[start] = tallies[best_next].prepend(best_token, get_weight(best_token, 0.0))
        totals[start] = best_w
        sizes[start] = best_size
        choice[start] = (best_token, best_next)
    ids = []
    pos = 0
    while pos < n:
        token, pos = choice[pos]
        ids.append(token)
    return [(ids, totals[0])]


class Candidate:
    """A token sequence for a suffix, as a token plus the candidate it was prepended to."""

    __slots__ = ("_tally", "rest", "size", "token", "token_weight", "weight")

    def __init__(
        self, weight: float, size: int, token: int, token_weight: float, rest: Candidate | None
    ) -> None:
        self.weight = weight
        self.size = size
        self.token = token
        self.token_weight = token_weight
        self.rest = rest
        self._tally: Tally | None = None

    def __lt__(self, other: Candidate) -> bool:
        """Worse: lighter, or as heavy with more tokens (ubpe's order, used by heapq and sort)."""
        return self.weight < other.weight or (
            self.weight == other.weight and self.size > other.size
        )

    @property
    def tally(self) -> Tally:
        if self._tally is None:
            rest: Candidate = self.rest  # type: ignore[assignment]
            self._tally = rest.tally.prepend(self.token, self.token_weight)
        return self._tally

    def ids(self) -> list[int]:
        out = []
        node: Candidate | None = self
        while node is not None and node.rest is not None:
            out.append(node.token)
            node = node.rest
        return out


def best_many(edges: Edges, weights: dict[int, float], top_n: int) -> Result:
    """The ``top_n > 1`` search: up to ``top_n`` candidates, best first."""
    n = len(edges)
    empty = Candidate(0.0, 0, -1, 0.0, None)
    empty._tally = Tally()
    heaps: list[list[Candidate]] = [[] for _ in range(n + 1)]
    heaps[n] = [empty]
    push = heapq.heappush
    replace = heapq.heapreplace
    for start in range(n - 1, -1, -1):
        heap = heaps[start]
        for length, token in edges[start]:
            w_token = weights.get(token, 0.0)
            for rest in heaps[start + length]:
                w = rest.tally.weight_with(token, w_token)
                cand = Candidate(w, rest.size + 1, token, w_token, rest)
                if len(heap) < top_n:
                    push(heap, cand)
                elif heap[0] < cand:
                    replace(heap, cand)
    return [(cand.ids(), cand.weight) for cand in sorted(heaps[0], reverse=True)]


def merge_parts(parts: list[Result | int], top_n: int) -> Result:
    """Combine per-part candidate lists (best first) from the last part to the first.

    A part given as a bare id (a one-id part) is prepended to every tail.

    ubpe's staircase walk: from ``(0, 0)``, emit ``C[ci] + T[ti]`` (ids joined, weights added),
    stop after ``top_n`` items or when both lists are exhausted, and otherwise advance the
    pointer whose next step looks heavier (then shorter); this is not a full top-n of all sums.
    """
    tails: Result = [([], 0.0)]
    for cands in reversed(parts):
        if isinstance(cands, int):
            tails = [([cands, *ids], w) for ids, w in tails]
            continue
        out: Result = []
        ci = ti = 0
        last_c = len(cands) - 1
        last_t = len(tails) - 1
        while True:
            c_ids, c_w = cands[ci]
            t_ids, t_w = tails[ti]
            out.append((c_ids + t_ids, c_w + t_w))
            if len(out) >= top_n or (ci == last_c and ti == last_t):
                break
            if ti == last_t:
                ci += 1
            elif ci == last_c:
                ti += 1
            else:
                down_t = (tails[ti + 1][1] + c_w, -len(tails[ti + 1][0]) - len(c_ids))
                down_c = (t_w + cands[ci + 1][1], -len(t_ids) - len(cands[ci + 1][0]))
                if down_t > down_c:
                    ti += 1
                else:
                    ci += 1
        tails = out
    return tails
