"""Fast, exact, streaming BPE training (see docs/training.md).

``bpekit.train.train(source, vocab_size=...)`` returns a :class:`~bpekit.tokenizer.Tokenizer`.
Counting (:func:`count`, :class:`WordCounts`) and merging (:func:`train_from_counts`) can also run
separately; :class:`Trainer` gives control over both. The textbook trainer that this one is tested
against lives in ``bpekit.reference.train``.
"""

from __future__ import annotations

from bpekit.train.counts import WordCounts
from bpekit.train.progress import TrainProgress
from bpekit.train.trainer import TIE_RULE, Trainer, count, train, train_from_counts

__all__ = ["TIE_RULE", "TrainProgress", "Trainer", "WordCounts", "count", "train", "train_from_counts"]
