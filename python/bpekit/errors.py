"""bpekit's exceptions: one hierarchy, rooted at :class:`BpekitError`.

Each class also derives from the built-in exception that tiktoken raises in the same situation,
so code written for tiktoken (``except ValueError``, ``except KeyError``) keeps working.
"""

from __future__ import annotations


class BpekitError(Exception):
    """Base class of every error bpekit raises on purpose."""


class PatternError(BpekitError, ValueError):
    """A pre-tokenizer pattern (regex) is invalid."""


class InputTypeError(BpekitError, TypeError):
    """An argument has the wrong type (e.g. ``encode`` given bytes or ``None`` instead of ``str``)."""


class UnknownEncodingError(BpekitError, ValueError):
    """``get_encoding`` was given a name that is not a known encoding (or not a string)."""


class VocabError(BpekitError, ValueError):
    """A vocabulary is inconsistent: duplicate ranks, empty tokens, clashing special tokens."""


class EncodeError(BpekitError, ValueError):
    """Text could not be encoded (e.g. a byte the vocabulary has no token for)."""


class DisallowedSpecialError(EncodeError):
    """The text contains a special token that the call did not allow; ``token`` is its text."""

    def __init__(self, message: str = "", token: str | None = None) -> None:
        super().__init__(message)
        self.token = token


class InvalidTokenError(BpekitError, KeyError):
    """A token id (or token bytes) that the vocabulary does not have."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else ""


class FormatError(BpekitError, ValueError):
    """A tokenizer or data file is malformed, truncated or of an unknown format."""


class ChecksumError(FormatError):
    """A downloaded or cached file does not have the expected sha256."""


class DataNotFoundError(BpekitError, FileNotFoundError):
    """A data file (rank file, vocabulary) is not available locally and cannot be downloaded."""


class InternalError(BpekitError, RuntimeError):
    """A bug in bpekit's core; please report it."""


class UsageError(BpekitError, ValueError):
    """A call the object's state or an argument's value does not allow: a model used before it is
    fitted or fitted twice, ``top_n < 1``, an empty list to decode."""


class NoSidecarError(UsageError):
    """A ``.tiktoken`` rank file that is not a known encoding's, loaded without its ``.json``
    sidecar and without ``pattern=``: a rank file holds no pattern or special tokens."""


class IdRangeError(InvalidTokenError, OverflowError):
    """A token id to decode outside 0..2**32 (ids are unsigned 32-bit): an InvalidTokenError
    (KeyError) that is also an OverflowError, the exception tiktoken raises for it."""


class UnknownIdError(InvalidTokenError, ValueError):
    """An id to decode that a UBPE model does not have: an InvalidTokenError (KeyError) that is
    also a ValueError, the exception ubpe raises for it."""


__all__ = [
    "BpekitError",
    "ChecksumError",
    "DataNotFoundError",
    "DisallowedSpecialError",
    "EncodeError",
    "FormatError",
    "IdRangeError",
    "InputTypeError",
    "InternalError",
    "InvalidTokenError",
    "NoSidecarError",
    "PatternError",
    "UnknownIdError",
    "UnknownEncodingError",
    "UsageError",
    "VocabError",
]
