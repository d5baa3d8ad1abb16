"""tiktoken's ``tiktoken.core``, for code written against it: ``tiktoken.core.Encoding`` is
:class:`bpekit.Encoding`, defined with ``raise_disallowed_special_token`` in
:mod:`bpekit.encoding`."""

from __future__ import annotations

from bpekit.encoding import Encoding, raise_disallowed_special_token

__all__ = ["Encoding", "raise_disallowed_special_token"]
