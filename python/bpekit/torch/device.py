"""Finding PyTorch and choosing the device: the one place that imports ``torch`` for the package,
so that a missing install gives one clear error instead of an ``ImportError`` from deep inside."""

from __future__ import annotations

from typing import Any

from bpekit.errors import BpekitError


class TorchMissingError(BpekitError, ImportError):
    """PyTorch is not installed (``pip install bpekit[torch]``)."""


class BpekitDeviceError(BpekitError, ValueError):
    """A device that torch does not know, or CUDA asked for where there is none."""


def require_torch() -> Any:
    """The ``torch`` module, or :class:`TorchMissingError` saying how to install it."""
    try:
        import torch
    except ImportError as exc:
        raise TorchMissingError(
            f"bpekit.torch needs PyTorch, which is not importable ({exc}); install bpekit[torch]"
        ) from None
    return torch


def resolve_device(device: Any = None) -> Any:
    """``device`` as a ``torch.device``; ``None`` picks CUDA when available, else the CPU."""
    torch = require_torch()
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise BpekitDeviceError(f"not a torch device: {device!r} ({exc})") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise BpekitDeviceError(f"device {device!r} asked for, but CUDA is not available")
    return dev
