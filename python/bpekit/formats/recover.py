"""Merge lists recovered from tiktoken-style ranks (rank = id = merge priority of the bytes).

``recover_merges`` is minbpe's: for every multi-byte token, in rank order, byte-pair-merge its
bytes with only the tokens of lower rank; the two parts left are the merge that made it.
``all_splits`` is transformers' ``TikTokenConverter`` list: every split of every token into two
tokens, in ``(rank(t), rank(l), rank(r))`` order (formats.md §3.8).
"""

from __future__ import annotations

from collections.abc import Mapping

from bpekit.errors import VocabError


def _merge_below(ranks: Mapping[bytes, int], token: bytes, limit: int) -> list[bytes]:
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 1:
        best, at = limit, -1
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < best:
                best, at = r, i
        if at < 0:
            break
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    return parts


def recover_merges(ranks: Mapping[bytes, int]) -> list[tuple[bytes, bytes]]:
    """One ``(left, right)`` merge per multi-byte token, in rank order."""
    merges: list[tuple[bytes, bytes]] = []
    for token, rank in sorted(ranks.items(), key=lambda x: x[1]):
        if len(token) < 2:
            continue
        parts = _merge_below(ranks, token, rank)
        if len(parts) != 2:
            raise VocabError(f"token {token!r} (rank {rank}) is not made by one merge of lower-ranked tokens")
        merges.append((parts[0], parts[1]))
    return merges


def all_splits(ranks: Mapping[bytes, int]) -> list[tuple[bytes, bytes]]:
    """Every split ``t = l + r`` with ``l`` and ``r`` tokens, in ``(rank(t), rank(l), rank(r))`` order."""
    found: list[tuple[int, int, int, bytes, bytes]] = []
    for token, rank in ranks.items():
        for i in range(1, len(token)):
            left, right = token[:i], token[i:]
            rl, rr = ranks.get(left), ranks.get(right)
            if rl is not None and rr is not None:
                found.append((rank, rl, rr, left, right))
    found.sort()
    return [(left, right) for _, _, _, left, right in found]
