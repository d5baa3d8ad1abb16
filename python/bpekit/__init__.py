"""bpekit: fast, exact byte-pair-encoding tokenizers."""

from __future__ import annotations

from bpekit import errors
from bpekit._core import __version__

__all__ = ["__version__", "errors"]
