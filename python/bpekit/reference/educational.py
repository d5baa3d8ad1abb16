"""A step-by-step view of BPE, in the terminal, in the manner of tiktoken's ``_educational.py``.

* :func:`visualise_tokens` prints tokens with alternating 256-colour backgrounds (ANSI), so token
  boundaries are visible;
* :func:`encode_piece` shows each merge of the rank merge on one piece;
* :func:`train` runs the reference trainer and, after each merge, reports the pair and shows the
  first words of the corpus as they are now tokenized.

``visualise`` is ``"colour"`` (ANSI backgrounds), ``"simple"`` (Python lists of bytes) or None
(silent, the default). Output goes to ``stream`` (default ``sys.stdout``). With the same pattern,
data, ``tie="first_seen"`` and ``min_frequency=1``, the printed text is byte-for-byte tiktoken's.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import TextIO

from bpekit.errors import UsageError
from bpekit.reference.merge import Ranks, merge_steps, part_ids
from bpekit.reference.train import Pair, byte_ranks, train_steps

PALETTE = (167, 179, 185, 77, 80, 68, 134)  # 256-colour background codes
MODES = ("colour", "simple", None)


def _mode(visualise: str | None) -> str | None:
    if visualise not in MODES:
        raise UsageError(f"visualise must be one of {MODES}, got {visualise!r}")
    return visualise


def visualise_tokens(token_values: Sequence[bytes], stream: TextIO | None = None) -> None:
    """Print the tokens side by side, each on a background chosen by its character offset.

    The colour is ``PALETTE[offset % 7]``, where offset counts the characters printed before the
    token; if that repeats the previous token's colour, the next palette entry is used instead.
    """
    out = stream or sys.stdout
    last = None
    offset = 0
    for value in token_values:
        text = value.decode("utf-8", errors="replace")
        colour = PALETTE[offset % len(PALETTE)]
        if colour == last:
            colour = PALETTE[(offset + 1) % len(PALETTE)]
        last = colour
        offset += len(text)
        out.write(f"\x1b[48;5;{colour}m{text}")
    out.write("\x1b[0m\n")


def encode_piece(
    piece: bytes, ranks: Ranks, visualise: str | None = "colour", stream: TextIO | None = None
) -> list[int]:
    """Rank-merge ``piece`` (no whole-piece shortcut), showing the parts at each step."""
    mode = _mode(visualise)
    out = stream or sys.stdout
    parts: list[bytes] = []
    for parts in merge_steps(piece, ranks):
        if mode == "colour":
            visualise_tokens(parts, out)
        elif mode == "simple":
            out.write(f"{parts}\n")
    if mode is not None:
        out.write("\n")
    return part_ids(parts, ranks, piece)


def train(
    texts: Iterable[str],
    vocab_size: int,
    pattern: str,
    *,
    visualise: str | None = None,
    stream: TextIO | None = None,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 2,
    tie: str = "bytes",
) -> tuple[list[Pair], dict[bytes, int]]:
    """:func:`bpekit.reference.train.train`, reporting every merge when ``visualise`` is set."""
    mode = _mode(visualise)
    out = stream or sys.stdout
    merges: list[Pair] = []
    ranks = byte_ranks()
    for step in train_steps(texts, vocab_size, pattern, special_tokens, min_frequency, tie):
        merges.append(step.pair)
        ranks = step.ranks
        if mode is None:
            continue
        left, right = step.pair
        out.write(f"The current most common pair is {left!r} + {right!r}\n")
        out.write(f"So we made {left + right!r} our {len(ranks)}th token\n")
        if mode == "colour":
            out.write("Now the first fifty words in our training data look like:\n")
            visualise_tokens([t for i in step.sample[:50] for t in step.words[i]], out)
        else:
            out.write("Now the first twenty words in our training data look like:\n")
            for i in step.sample[:20]:
                out.write(f"{step.words[i]}\n")
        out.write("\n\n")
    return merges, ranks
