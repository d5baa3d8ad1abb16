"""Readable reference of UBPE's pair-merge loop: recount everything, every iteration.

This is the specification the fast trainer in :mod:`bpekit.ubpe.fitting` is tested against on
random corpora. Both take the split corpus (per document, a list of parts of ids) and return the
merges in creation order as ``(new_id, left, right, df)``.

One iteration, while the newest id is below ``n_tokens``:

1. count every adjacent pair inside each part (overlaps included) and, per pair, the number of
   documents that contain it (``df``);
2. rank the pairs by (count desc, df asc, pair desc) and keep ``n_candidates``;
3. accept the first; accept a later one only if it shares no id with an accepted pair and, for
   every accepted ``(l1, r1)``, ``count(r2, l1)`` and ``count(r1, l2)`` are below its count;
4. give each accepted pair the next id and replace all of them in one substitution pass.
"""

from __future__ import annotations

import heapq
from collections import Counter
from itertools import pairwise

from bpekit.errors import EncodeError
from bpekit.ubpe.substitution import replace_pairs

Merge = tuple[int, int, int, int]  # (new_id, left, right, df)


def reference_merges(
    docs: list[list[list[int]]], first_id: int, n_tokens: int, n_candidates: int
) -> list[Merge]:
    docs = [[list(part) for part in parts] for parts in docs]
    max_token = first_id - 1
    merges: list[Merge] = []
    while max_token < n_tokens:
        count: Counter[tuple[int, int]] = Counter()
        df: Counter[tuple[int, int]] = Counter()
        for parts in docs:
            seen = set()
            for part in parts:
                for pair in pairwise(part):
                    count[pair] += 1
                    seen.add(pair)
            df.update(seen)
        if not count:
            break
        candidates = heapq.nlargest(n_candidates, count, key=lambda p: ((count[p], -df[p]), p))
        accepted = [candidates[0]]
        used = set(candidates[0])
        for l2, r2 in candidates[1:]:
            if l2 in used or r2 in used:
                continue
            n2 = count[(l2, r2)]
            if all(count[(r2, l1)] < n2 and count[(r1, l2)] < n2 for l1, r1 in accepted):
                accepted.append((l2, r2))
                used.update((l2, r2))
        subs = {}
        for left, right in accepted:
            max_token += 1
            merges.append((max_token, left, right, df[(left, right)]))
            subs[left] = (right, max_token)
        check_no_empty(docs)
        docs = [[replace_pairs(part, subs) for part in parts] for parts in docs]
    return merges


def check_no_empty(docs: list[list[list[int]]]) -> None:
    """ubpe's substitution pass fails on an empty document or part; say which one instead."""
    for i, parts in enumerate(docs):
        if not parts or not all(parts):
            raise EncodeError(
                f"document {i} of the corpus is empty after splitting; ubpe cannot fit a corpus "
                "with an empty document (its substitution pass raises 'Invalid list arguments'), "
                "so drop such documents first"
            )
