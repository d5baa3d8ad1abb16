"""The rank merge: turn one pre-tokenized piece (bytes) into token ids, as tiktoken does.

Start from single bytes; repeatedly merge the adjacent pair whose concatenated bytes have the
lowest rank (ties: the leftmost pair), one occurrence at a time, until no adjacent concatenation is
a token. A piece that is itself a token is emitted whole, without merging. Two implementations
with the same result:

* :func:`rank_merge` rescans all pairs after each merge (tiktoken's algorithm, O(n * merges));
* :func:`heap_merge` keeps candidate pairs in a priority queue over a linked list of parts
  (llama.cpp's approach, O(n log n)).

If a final part is not a token (which can only happen when the vocabulary lacks one of the
piece's single bytes) :class:`~bpekit.errors.EncodeError` is raised.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping

from bpekit.errors import EncodeError

Ranks = Mapping[bytes, int]


def merge_steps(piece: bytes, ranks: Ranks) -> Iterator[list[bytes]]:
    """Yield the parts of ``piece`` at the start and after each merge (no whole-piece shortcut)."""
    parts = [piece[i : i + 1] for i in range(len(piece))]
    yield list(parts)
    while True:
        best_rank, best_i = None, -1
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            # strict "<": of equal ranks, the leftmost pair wins
            if rank is not None and (best_rank is None or rank < best_rank):
                best_rank, best_i = rank, i
        if best_rank is None:
            return
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]
        yield list(parts)


def part_ids(parts: list[bytes], ranks: Ranks, piece: bytes) -> list[int]:
    """The rank of each final part; EncodeError names a part that is not a token."""
    ids = []
    for part in parts:
        rank = ranks.get(part)
        if rank is None:
            raise EncodeError(f"no token for the bytes {part!r} (in the piece {piece!r})")
        ids.append(rank)
    return ids


def rank_merge(piece: bytes, ranks: Ranks) -> list[int]:
    """Token ids of ``piece``: its own rank if it is a token, else the lowest-rank-first merge."""
    if piece in ranks:
        return [ranks[piece]]
    *_, parts = merge_steps(piece, ranks)
    return part_ids(parts, ranks, piece)


def heap_merge(piece: bytes, ranks: Ranks) -> list[int]:
    """Same result as :func:`rank_merge`, with a min-heap of (rank, start) over a linked list.

    Parts are named by their start offset. ``end[s]`` is where part ``s`` ends (``-1`` once it has
    been merged into its left neighbour) and ``prev[s]`` is the start of the part before it. A heap
    entry ``(rank, s, e)`` proposes merging part ``s`` with the part starting at ``e``; it is stale,
    and skipped, unless part ``s`` still ends at ``e`` and the part at ``e`` still ends where it did
    (so the concatenation still has that rank). Ties on rank pop the smallest start: leftmost.
    """
    if piece in ranks:
        return [ranks[piece]]
    n = len(piece)
    end = [i + 1 for i in range(n)]  # -1 marks a part merged into its left neighbour
    prev = [i - 1 for i in range(n)]
    heap: list[tuple[int, int, int, int]] = []

    def push(s: int) -> None:
        e = end[s]
        if e < n:
            rank = ranks.get(piece[s : end[e]])
            if rank is not None:
                heapq.heappush(heap, (rank, s, e, end[e]))

    for s in range(n - 1):
        push(s)
    while heap:
        _, s, e, e2 = heapq.heappop(heap)
        if end[s] != e or end[e] != e2:
            continue  # stale: one of the two parts has changed since this entry was pushed
        end[s], end[e] = e2, -1
        if e2 < n:
            prev[e2] = s
        push(s)
        if prev[s] >= 0:
            push(prev[s])
    parts = []
    s = 0
    while s < n:
        parts.append(piece[s : end[s]])
        s = end[s]
    return part_ids(parts, ranks, piece)
