"""The substitution pass shared by fitting and classic encoding (ubpe's ``_replace_token_pairs``).

``subs`` maps a first id to ``(second id, new id)``. The pass walks left to right; where
``ids[i]`` is a key and ``ids[i + 1]`` its second, the two become the new id and the walk moves
past it, so a new id takes part in no further match during the same pass and matches never
overlap (``x x x`` with ``(x, x)`` gives ``n x``).
"""

from __future__ import annotations


def replace_pairs(ids: list[int], subs: dict[int, tuple[int, int]]) -> list[int]:
    """One left-to-right substitution pass; returns a new list."""
    out: list[int] = []
    append = out.append
    n = len(ids)
    i = 0
    last = n - 1
    while i < last:
        a = ids[i]
        hit = subs.get(a)
        if hit is not None and ids[i + 1] == hit[0]:
            append(hit[1])
            i += 2
        else:
            append(a)
            i += 1
    if i == last:
        append(ids[last])
    return out
