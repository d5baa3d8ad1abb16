"""A vectorized PyTorch engine: BPE training and batch encoding on tensors, on CUDA when available
and on the CPU otherwise, with exactly the merges and ids of the Rust engine (see docs/torch.md).

Needs PyTorch (``pip install bpekit[torch]``). ``import bpekit.torch`` works without it; the
functions raise :class:`TorchMissingError` then. The modules: ``trainer`` (the merge loop),
``encoder`` (batch encoding), ``runs`` (the vectorized overlapping-run rule), ``device``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bpekit.torch.device import BpekitDeviceError, TorchMissingError

if TYPE_CHECKING:
    from bpekit.encoding import Encoding
    from bpekit.tokenizer import Tokenizer
    from bpekit.torch.encoder import TorchEncoder

__all__ = ["BpekitDeviceError", "TorchMissingError", "encode_batch", "encode_batch_tensors", "encoder_for", "train"]


def train(source: Any, vocab_size: int, **options: Any) -> Tokenizer:
    """Trains on tensors; same arguments and result as ``bpekit.train.train`` plus ``device``
    (see :func:`bpekit.torch.trainer.train`)."""
    from bpekit.torch.trainer import train as train_on_tensors

    return train_on_tensors(source, vocab_size, **options)


def encoder_for(
    encoding: Encoding | Tokenizer, device: Any = None, threads: int = 0, work_budget: float | None = None
) -> TorchEncoder:
    """A reusable encoder (its pair table is built once; cl100k takes about a second). ``threads``:
    the Rust core's threads that split the texts (0: one per core); ``work_budget``: how many times
    the batch's positions the device's merge rounds may touch before the pieces still merging go to
    the Rust core (default 8; real text needs 2-4)."""
    from bpekit.torch.encoder import WORK_BUDGET, TorchEncoder

    return TorchEncoder(encoding, device, threads, WORK_BUDGET if work_budget is None else work_budget)


def encode_batch(encoding: Encoding | Tokenizer | TorchEncoder, texts: Sequence[str], device: Any = None) -> list[list[int]]:
    """Each text's ids, equal to ``encoding.encode_ordinary(text)``, computed on tensors."""
    return _encoder(encoding, device).encode_batch(texts)


def encode_batch_tensors(
    encoding: Encoding | Tokenizer | TorchEncoder, texts: Sequence[str], device: Any = None
) -> tuple[Any, Any]:
    """``(ids, offsets)`` tensors: text ``i`` is ``ids[offsets[i]:offsets[i + 1]]``."""
    return _encoder(encoding, device).encode_tensors(texts)


def _encoder(encoding: Any, device: Any) -> TorchEncoder:
    from bpekit.torch.encoder import TorchEncoder

    if isinstance(encoding, TorchEncoder):
        return encoding
    return TorchEncoder(encoding, device)
