"""Fast, exact, streaming BPE training (see docs/training.md).

``bpekit.train.train(source, vocab_size=...)`` returns a :class:`~bpekit.tokenizer.Tokenizer`.
Counting (:func:`count`, :class:`WordCounts`) and merging (:func:`train_from_counts`) can also run
separately; :class:`Trainer` gives control over both. The textbook trainer that this one is tested
against lives in ``bpekit.reference.train``.
"""

from __future__ import annotations

import inspect
import sys
import types
from typing import Any

from bpekit.train.counts import WordCounts
from bpekit.train.progress import TrainProgress
from bpekit.train.trainer import TIE_RULE, Trainer, count, train, train_from_counts

__all__ = ["TIE_RULE", "TrainProgress", "Trainer", "WordCounts", "count", "train", "train_from_counts"]


class _CallablePackage(types.ModuleType):
    """``bpekit.train`` is this package, whichever import came first, and calling it calls
    :func:`train`: ``bpekit.train(...)`` and ``bpekit.train.count(...)`` both work. (When
    ``bpekit.train`` named the function once ``bpekit`` had imported it lazily, a later
    ``bpekit.train.count`` failed, or ``bpekit.train(...)`` after ``import bpekit.train``.)"""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return train(*args, **kwargs)


_package = sys.modules[__name__]
_package.__class__ = _CallablePackage
_package.__signature__ = inspect.signature(train)  # type: ignore[attr-defined]  (inspect.signature(bpekit.train))
