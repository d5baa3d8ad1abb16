"""The tokenize progress line: documents/s, MB/s of text, tokens, and an ETA from the input bytes
read (exact for plain text files, an estimate for compressed or columnar inputs).

It reuses the training progress bar (:class:`bpekit.train.progress.ProgressBar`): same terminal
handling and refresh rate, another line.
"""

from __future__ import annotations

import time
from typing import NamedTuple

from bpekit.train.progress import ProgressBar, human_bytes


class TokenizeProgress(NamedTuple):
    documents: int
    text_bytes: int
    tokens: int
    input_done: int  # input bytes read (estimated within the current input)
    input_total: int
    elapsed: float


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class TokenizeBar(ProgressBar):
    """A :class:`ProgressBar` that draws :class:`TokenizeProgress` reports."""

    @staticmethod
    def render(p: TokenizeProgress) -> str:  # type: ignore[override]
        t = max(p.elapsed, 1e-9)
        line = (
            f"tokenizing  {p.documents:,} docs ({p.documents / t:,.0f}/s)  {human_bytes(p.text_bytes / t)}/s  "
            f"{p.tokens:,} tokens"
        )
        if p.input_total:
            frac = min(p.input_done / p.input_total, 1.0)
            eta = p.elapsed * (1 - frac) / frac if frac > 0 else 0.0
            line += f"  {100 * frac:.0f}%  ETA {_duration(eta)}"
        return line


class Tracker:
    """Adds up what has been tokenized and feeds the bar."""

    def __init__(self, bar: TokenizeBar, sizes: list[int]) -> None:
        self.bar = bar
        self.sizes = sizes
        self.before = [sum(sizes[:i]) for i in range(len(sizes))]
        self.start = time.perf_counter()
        self.documents = self.text_bytes = self.tokens = 0
        self.current = -1
        self.in_current = 0

    def update(self, index: int, documents: int, text_bytes: int, tokens: int) -> None:
        if index != self.current:
            self.current, self.in_current = index, 0
        self.in_current += text_bytes
        self.documents += documents
        self.text_bytes += text_bytes
        self.tokens += tokens
        done = self.before[index] + min(self.in_current, self.sizes[index])
        elapsed = time.perf_counter() - self.start
        report = TokenizeProgress(self.documents, self.text_bytes, self.tokens, done, sum(self.sizes), elapsed)
        self.bar.update(report)  # type: ignore[arg-type]  # TokenizeBar.render draws TokenizeProgress
