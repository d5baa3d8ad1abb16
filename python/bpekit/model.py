"""tiktoken's ``tiktoken.model``, for code written against it: which encoding a model name uses.

``import bpekit as tiktoken`` then ``tiktoken.model.MODEL_TO_ENCODING`` or
``tiktoken.model.encoding_for_model("gpt-4o")`` work as with tiktoken; the tables live in
:mod:`bpekit.registry`.
"""

from __future__ import annotations

from bpekit.encoding import Encoding
from bpekit.registry import (
    MODEL_PREFIX_TO_ENCODING,
    MODEL_TO_ENCODING,
    encoding_for_model,
    encoding_name_for_model,
    get_encoding,
)

__all__ = [
    "MODEL_PREFIX_TO_ENCODING",
    "MODEL_TO_ENCODING",
    "Encoding",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
]
