"""UBPE tokenizers over sequences of any hashable symbols, compatible with ubpe 0.3.0.

Two models share an alphabet, an optional splitting pipeline and a fitting loop that merges
several non-conflicting frequent pairs per iteration, each token weighted by idf:

* :class:`UBPEClassic` encodes like BPE (a batch of merges per step) and returns one
  segmentation with its tf-idf weight;
* :class:`UBPE` (universal) looks up every vocabulary entry in the word and returns the
  ``top_n`` segmentations with the highest tf-idf weight.

Results equal ubpe-native 0.3.0's (ids, weights bit for bit, ``dumps`` byte for byte); where
that package crashes, these raise a bpekit error that says why. See docs/ubpe.md.
"""

from __future__ import annotations

from bpekit.ubpe.base import UBPEBase
from bpekit.ubpe.classic import UBPEClassic
from bpekit.ubpe.split import SplitMode
from bpekit.ubpe.universal import UBPE

__all__ = ["UBPE", "SplitMode", "UBPEBase", "UBPEClassic"]
