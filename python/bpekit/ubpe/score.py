"""tf-idf scores of token sequences, bit-exact with ubpe 0.3.0 on CPython >= 3.12.

A sequence's score is ``sum((1 + ln(count_t)) * w_t for each distinct token t)``, summed in the
order of the tokens' first appearance (a ``Counter``'s order). CPython 3.12 changed the built-in
``sum`` of floats to Neumaier's compensated summation; ties between candidates are decided with
exact ``==``, so :func:`py312_sum` repeats that algorithm on every Python version.

:class:`Tally` keeps a sequence's counts and running sum so that prepending a token (what the
universal encoder does for every DAG edge) costs O(1) unless the token already occurs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def py312_sum(values: Iterable[float]) -> float | int:
    """``sum(values)`` as CPython 3.12+ computes it for floats (int 0 when ``values`` is empty)."""
    it = iter(values)
    first = next(it, None)
    if first is None:
        return 0
    s = 0 + first
    c = 0.0
    for x in it:
        t = s + x
        if abs(s) >= abs(x):
            c += (s - t) + x
        else:
            c += (x - t) + s
        s = t
    if c and math.isfinite(c):
        s += c
    return s


def sequence_weight(tokens: Iterable[int], weights: dict[int, float]) -> float | int:
    """Score of ``tokens``; distinct tokens are summed in order of first appearance."""
    counts: dict[int, int] = {}
    for token in tokens:
        counts[token] = counts.get(token, 0) + 1
    return py312_sum((1 + math.log(n)) * weights.get(t, 0.0) for t, n in counts.items())


class Tally:
    """Counts and running compensated sum of a token sequence built by prepending tokens.

    Only tokens with a non-zero weight are tracked: a zero term changes neither Neumaier's sum
    nor its compensation, so skipping it is exact. ``terms`` holds one term per tracked token in
    first appearance order *reading right to left* (the order of ubpe's copied-and-extended
    Counter); ``index`` maps a token to its place there, ``counts`` its count.
    """

    __slots__ = ("c", "counts", "index", "s", "terms")

    def __init__(self) -> None:
        self.index: dict[int, int] = {}
        self.counts: list[int] = []
        self.terms: list[float] = []
        self.s = 0.0
        self.c = 0.0

    @property
    def weight(self) -> float:
        c = self.c
        if c and math.isfinite(c):
            return self.s + c
        return self.s

    def weight_with(self, token: int, w: float) -> float:
        """The weight after prepending ``token`` (of weight ``w``), without building the tally."""
        if not w:
            return self.weight
        i = self.index.get(token)
        if i is None:
            if not self.terms:
                return w  # (1 + ln 1) * w
            s, c = _step(self.s, self.c, w)
        else:
            terms = self.terms.copy()
            terms[i] = (1 + math.log(self.counts[i] + 1)) * w
            s, c = _sum_state(terms)
        if c and math.isfinite(c):
            return s + c
        return s

    def prepend(self, token: int, w: float) -> Tally:
        """A new tally for ``[token] + sequence`` (``self`` when ``w`` is zero: nothing changes)."""
        if not w:
            return self
        new = Tally()
        i = self.index.get(token)
        if i is None:
            new.index = {**self.index, token: len(self.terms)}
            new.counts = [*self.counts, 1]
            new.terms = [*self.terms, w]
            if self.terms:
                new.s, new.c = _step(self.s, self.c, w)
            else:
                new.s = w
        else:
            new.index = self.index
            new.counts = counts = self.counts.copy()
            new.terms = terms = self.terms.copy()
            counts[i] += 1
            terms[i] = (1 + math.log(counts[i])) * w
            new.s, new.c = _sum_state(terms)
        return new


def _step(s: float, c: float, x: float) -> tuple[float, float]:
    t = s + x
    if abs(s) >= abs(x):
        c += (s - t) + x
    else:
        c += (x - t) + s
    return t, c


def _sum_state(terms: list[float]) -> tuple[float, float]:
    """Neumaier's running sum and compensation over ``terms`` (non-empty), before the final add."""
    s = terms[0]
    c = 0.0
    if min(terms) >= 0.0:  # the usual case (idf weights are >= 0): no abs() needed
        for x in terms[1:]:
            t = s + x
            if s >= x:
                c += (s - t) + x
            else:
                c += (x - t) + s
            s = t
        return s, c
    for x in terms[1:]:
        t = s + x
        if abs(s) >= abs(x):
            c += (s - t) + x
        else:
            c += (x - t) + s
        s = t
    return s, c
