"""bpekit: fast, exact byte-pair-encoding tokenizers.

``bpekit.get_encoding("o200k_base")`` gives an :class:`Encoding` with tiktoken's API, token for
token identical to tiktoken and several times faster.
"""

from __future__ import annotations

from bpekit import errors, patterns, pipeline
from bpekit._core import __version__
from bpekit.encoding import Encoding
from bpekit.errors import BpekitError
from bpekit.limits import get_limits, set_limits
from bpekit.load import dump_tiktoken_bpe, load_tiktoken_bpe
from bpekit.tokenizer import Tokenizer
from bpekit.train import Trainer, WordCounts, train_from_counts
from bpekit.train import train as train
from bpekit.registry import (
    encoding_for_model,
    encoding_name_for_model,
    get_encoding,
    list_encoding_names,
)

__all__ = [
    "BpekitError",
    "Encoding",
    "Tokenizer",
    "Trainer",
    "WordCounts",
    "__version__",
    "dump_tiktoken_bpe",
    "encoding_for_model",
    "encoding_name_for_model",
    "errors",
    "patterns",
    "pipeline",
    "train",
    "train_from_counts",
    "get_encoding",
    "get_limits",
    "set_limits",
    "list_encoding_names",
    "load_tiktoken_bpe",
]
