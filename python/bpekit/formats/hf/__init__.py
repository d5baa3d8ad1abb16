"""Hugging Face ``tokenizer.json`` (BPE models): :func:`load` builds a :class:`bpekit.Tokenizer`
from the stages of :mod:`bpekit.pipeline`; :func:`dumps` writes it back (formats.md §3).

A file loaded and saved unchanged comes back byte for byte: the loader keeps the parsed document
and the JSON layout it detected, and the writer re-emits each unchanged top-level part as read.
"""

from __future__ import annotations

from bpekit.formats.hf.read import DEFAULT_MAX_BYTES, from_document, load, loads
from bpekit.formats.hf.write import document, dumps

__all__ = ["DEFAULT_MAX_BYTES", "document", "dumps", "from_document", "load", "loads"]
