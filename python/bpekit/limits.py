"""Resource limits: the largest input one encode call accepts.

A service that tokenizes untrusted text wants a bound on the work and memory one call can take.
``max_input_bytes`` is the UTF-8 size of the text one call may encode (for a batch, of all its
texts together); the default, 1 GiB, is far above real documents. Set it with
``bpekit.set_limits(max_input_bytes=...)`` or the ``BPEKIT_MAX_INPUT_BYTES`` environment variable
(read on first use); ``0`` means no limit.

The check costs O(1) per text: ``len(text)`` counts code points, a code point is 1 to 4 UTF-8
bytes, so only a text between a quarter of the limit and the limit has its UTF-8 size counted.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from bpekit.errors import EncodeError, UsageError

DEFAULT_MAX_INPUT_BYTES = 1 << 30
# the most threads a training run, a tokenize job or a CLI command takes: a larger count is a
# mistake, not a machine (batches start at most one thread per core anyway)
MAX_THREADS = 4096
ENV_VAR = "BPEKIT_MAX_INPUT_BYTES"

_max_input_bytes: int | None = None  # None: not read from the environment yet


def _from_env() -> int:
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return DEFAULT_MAX_INPUT_BYTES
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise UsageError(f"{ENV_VAR}={raw!r}: expected a number of bytes >= 0 (0 = no limit)")
    return value


def max_input_bytes() -> int:
    """The current limit in bytes (0 = none)."""
    global _max_input_bytes
    if _max_input_bytes is None:
        _max_input_bytes = _from_env()
    return _max_input_bytes


def set_limits(*, max_input_bytes: int | None = None) -> None:
    """Sets the limits that are given (the others keep their value); ``0`` removes a limit."""
    global _max_input_bytes
    if max_input_bytes is not None:
        if not isinstance(max_input_bytes, int) or isinstance(max_input_bytes, bool) or max_input_bytes < 0:
            raise UsageError(f"max_input_bytes must be an int >= 0 (0 = no limit), got {max_input_bytes!r}")
        _max_input_bytes = max_input_bytes


def get_limits() -> dict[str, int]:
    """The current limits, by the names :func:`set_limits` takes."""
    return {"max_input_bytes": max_input_bytes()}


def _utf8_size_over(texts: Sequence[str], limit: int) -> int | None:
    """The UTF-8 size of ``texts`` if it is over ``limit``, else ``None`` (O(1) per text)."""
    chars = 0
    for t in texts:
        chars += len(t)
    if chars * 4 <= limit:
        return None
    if chars > limit:
        return chars  # at least this many bytes
    size = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
    return size if size > limit else None


def check_texts(texts: Sequence[str]) -> None:
    """Raises :class:`EncodeError` if ``texts`` together are over ``max_input_bytes``."""
    limit = max_input_bytes()
    if limit and (size := _utf8_size_over(texts, limit)) is not None:
        raise EncodeError(
            f"input of at least {size:,} bytes is over the limit of {limit:,} bytes per call "
            f"(max_input_bytes); raise it with bpekit.set_limits(max_input_bytes=...) or the "
            f"{ENV_VAR} environment variable (0 = no limit), or split the text"
        )


def check_bytes(size: int) -> None:
    """As :func:`check_texts`, for raw bytes of ``size`` bytes."""
    limit = max_input_bytes()
    if limit and size > limit:
        raise EncodeError(
            f"input of {size:,} bytes is over the limit of {limit:,} bytes per call "
            f"(max_input_bytes); raise it with bpekit.set_limits(max_input_bytes=...) or the "
            f"{ENV_VAR} environment variable (0 = no limit)"
        )
