"""Flat batches: every text's ids in one ``uint32`` array, and ``int64`` offsets (``len + 1``) such
that the ids of text ``i`` are ``flat[offsets[i]:offsets[i + 1]]``.

The core makes them without a Python object per id (``Encoding.encode_batch_to_numpy``,
``Tokenizer.encode_batch_to_numpy``); this module adds ids around every text (a post-processor's
special tokens, a dataset's BOS/EOS) and flattens lists where no core path exists.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from bpekit.errors import InputTypeError, VocabError

Flat = tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]

_MAX_ID = 2**32 - 1


def from_lists(lists: Sequence[Sequence[int]]) -> Flat:
    """The flat array and offsets of lists of ids (:class:`VocabError` for an id that is not in
    ``[0, 2**32)``, which a post-processor written by hand may add)."""
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    ids = list(itertools.chain.from_iterable(lists))
    if not all(type(i) is int and 0 <= i <= _MAX_ID for i in ids):  # (numpy would take "1" and 1.5)
        bad = next(i for i in ids if type(i) is not int or not 0 <= i <= _MAX_ID)
        raise VocabError(f"an id does not fit a uint32 array: {bad!r}")
    return np.array(ids, dtype=np.uint32), offsets


def with_affixes(flat: npt.NDArray[np.uint32], offsets: npt.NDArray[np.int64], prefix: Sequence[int],
                 suffix: Sequence[int]) -> Flat:
    """The batch with the ids ``prefix`` before and ``suffix`` after every text (one pass of numpy
    per id added; no Python per text)."""
    for t in (*prefix, *suffix):
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or not 0 <= t <= _MAX_ID:
            raise InputTypeError(f"ids added around each text must be ints in [0, 2**32), got {t!r}")
    p, s = len(prefix), len(suffix)
    if not p and not s:
        return flat, offsets
    n = len(offsets) - 1
    new_offsets = offsets + (p + s) * np.arange(n + 1, dtype=np.int64)
    out = np.empty(int(new_offsets[-1]), dtype=flat.dtype)
    keep = np.ones(len(out), dtype=bool)
    starts, ends = new_offsets[:-1], new_offsets[1:] - s  # where each text's own ids start and end
    for k, t in enumerate(prefix):
        out[starts + k] = t
        keep[starts + k] = False
    for k, t in enumerate(suffix):
        out[ends + k] = t
        keep[ends + k] = False
    out[keep] = flat
    return out, new_offsets
