"""bpekit: fast, exact byte-pair-encoding tokenizers.

``bpekit.get_encoding("o200k_base")`` gives an :class:`Encoding` with tiktoken's API, token for
token identical to tiktoken and several times faster.

``import bpekit`` loads only what ``get_encoding`` needs; the pipelines (:class:`Tokenizer`,
``bpekit.pipeline``) and the trainer are imported the first time they are named (PEP 562), which
keeps the import of a service that only counts tokens at a few milliseconds.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from bpekit import core, errors, model, patterns  # (core, model: tiktoken's module names)
from bpekit._core import __version__
from bpekit.encoding import Encoding
from bpekit.errors import BpekitError
from bpekit.limits import get_limits, set_limits
from bpekit.load import dump_tiktoken_bpe, load_tiktoken_bpe
from bpekit.registry import (
    encoding_for_model,
    encoding_name_for_model,
    get_encoding,
    list_encoding_names,
)

if TYPE_CHECKING:
    from bpekit import pipeline
    from bpekit.tokenizer import Tokenizer
    from bpekit.train import Trainer, WordCounts, train, train_from_counts

# name -> (module, attribute in it; None: the module itself)
_LAZY: dict[str, tuple[str, str | None]] = {
    "pipeline": ("bpekit.pipeline", None),
    "Tokenizer": ("bpekit.tokenizer", "Tokenizer"),
    "Trainer": ("bpekit.train", "Trainer"),
    "WordCounts": ("bpekit.train", "WordCounts"),
    "train": ("bpekit.train", None),  # the package, which calls its `train` (bpekit/train/__init__.py)
    "train_from_counts": ("bpekit.train", "train_from_counts"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'bpekit' has no attribute {name!r}")
    module, attr = _LAZY[name]
    value = importlib.import_module(module)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "BpekitError",
    "Encoding",
    "Tokenizer",
    "Trainer",
    "WordCounts",
    "__version__",
    "core",
    "dump_tiktoken_bpe",
    "encoding_for_model",
    "encoding_name_for_model",
    "errors",
    "model",
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
