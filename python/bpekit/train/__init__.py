"""Fast, exact, streaming BPE training (see docs/training.md).

``bpekit.train.train(source, vocab_size=...)`` returns a :class:`~bpekit.tokenizer.Tokenizer`.
Counting (:func:`count`, :class:`WordCounts`) and merging (:func:`train_from_counts`) can also run
separately; :class:`Trainer` gives control over both. The textbook trainer that this one is tested
against lives in ``bpekit.reference.train``.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from bpekit.train.counts import WordCounts
from bpekit.train.progress import TrainProgress
from bpekit.train.trainer import TIE_RULE, Trainer, count, train, train_from_counts

__all__ = ["TIE_RULE", "TrainProgress", "Trainer", "WordCounts", "count", "train", "train_from_counts"]


class _CallablePackage(types.ModuleType):
    """``bpekit.train`` names the function :func:`train` once ``bpekit`` has imported it lazily,
    but ``import bpekit.train.sources`` before that binds this package to the name instead: the
    package then calls the function, so ``bpekit.train(...)`` works either way."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return train(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
