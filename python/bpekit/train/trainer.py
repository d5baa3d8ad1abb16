"""The trainer's Python side: check the settings, read the sources into the Rust counter, run the
Rust merge learner, and wrap the result in a :class:`~bpekit.tokenizer.Tokenizer`.

Python decides (argument checks, sources, progress, errors); Rust loops (pre-tokenizing,
counting, merging) with the GIL released.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from bpekit import _core
from bpekit.errors import DataNotFoundError, InputTypeError, PatternError, VocabError
from bpekit.limits import MAX_THREADS
from bpekit.patterns import PATTERNS, resolve_pattern
from bpekit.specials import check_list
from bpekit.tokenizer import Tokenizer
from bpekit.train.counts import STAT_KEYS, WordCounts
from bpekit.train.progress import ProgressBar, TrainProgress
from bpekit.train.sources import ReadOptions, items, known_size, prefetched, resolve

TIE_RULE = "highest count; ties: smallest (left token bytes, right token bytes) in byte order"
Callback = Callable[[TrainProgress], Any]


def _check_int(name: str, value: Any, low: int, high: int = 2**63 - 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise VocabError(f"{name} must be an integer >= {low}, got {value!r}")
    if value > high:  # (past 64 bits the core raised a bare OverflowError)
        raise VocabError(f"{name} must be an integer <= {high}, got {value!r}")
    return value


class Trainer:
    """Trains a byte-level BPE tokenizer; see docs/training.md.

    ``count(*sources)`` may be called several times (the counts add up); ``train(*sources)``
    counts and then learns; ``train_from_counts(counts)`` learns from saved counts.
    """

    def __init__(
        self,
        vocab_size: int,
        *,
        pattern: str = "o200k",
        special_tokens: Sequence[str] = (),
        min_frequency: int = 2,
        max_token_length: int | None = None,
        threads: int = 0,
        show_progress: bool = True,
        callback: Callback | None = None,
        field: str = "text",
        column: str = "text",
    ) -> None:
        if not isinstance(pattern, str):
            raise PatternError(f"pattern must be a name or a regex string, got {type(pattern).__name__}")
        self.special_tokens = check_list(special_tokens)
        self.vocab_size = _check_int("vocab_size", vocab_size, 256 + len(self.special_tokens), 2**32)
        self.min_frequency = _check_int("min_frequency", min_frequency, 1)
        self.max_token_length = (
            None if max_token_length is None else _check_int("max_token_length", max_token_length, 2)
        )
        self.threads = _check_int("threads", threads, 0, MAX_THREADS)
        self.pattern = resolve_pattern(pattern)
        self.pattern_name = next((name for name, p in PATTERNS.items() if p == self.pattern), None)
        if callback is not None and not callable(callback):
            raise InputTypeError(f"callback must be callable or None, got {type(callback).__name__}")
        self.show_progress = show_progress
        self.callback = callback
        self.read_options = ReadOptions(field=field, column=column)
        self.timings: dict[str, float] = {"count": 0.0, "merge": 0.0}
        self._counter = _core.WordCounter(self.pattern, list(self.special_tokens), self.threads)
        self._counts = WordCounts(self.pattern, self.special_tokens)
        self._taken = dict.fromkeys(STAT_KEYS, 0)

    # ---- phase 1: counting ----

    def count(self, *sources: Any) -> None:
        """Reads and counts ``sources``: paths (files, directories, globs; ``.jsonl``, ``.parquet``,
        compressed), lists of paths, or iterables of strings (documents)."""
        resolved = resolve(sources)
        total = known_size(resolved)
        bar = ProgressBar(self.show_progress)
        start = time.perf_counter()
        base = dict(self._counter.stats())["bytes"]
        try:
            for source in resolved:
                for kind, value in prefetched(items(source, self.read_options)):
                    self._feed(kind, value)
                    stats = dict(self._counter.stats())
                    report = TrainProgress(
                        "count", stats["bytes"] - base, total, time.perf_counter() - start, stats["documents"]
                    )
                    bar.update(report)
                    if self.callback is not None:
                        self.callback(report)
            self._counter.end_stream()
        finally:
            bar.close()
            self.timings["count"] += time.perf_counter() - start

    def _feed(self, kind: str, value: Any) -> None:
        if kind == "block":
            self._counter.feed(value)
        elif kind == "end":
            self._counter.end_stream()
        else:
            try:
                self._counter.add_documents(value)
            except (UnicodeEncodeError, TypeError):  # lone surrogates: replace, as tiktoken does
                clean = [d.encode("utf-16", "surrogatepass").decode("utf-16", "replace") for d in value]
                self._counter.add_documents(clean)

    @property
    def counts(self) -> WordCounts:
        """Everything counted so far."""
        stats = dict(self._counter.stats())
        fresh = WordCounts(
            self.pattern,
            self.special_tokens,
            core=self._counter.take_counts(),
            stats={k: stats[k] - self._taken[k] for k in STAT_KEYS},
        )
        self._taken = stats
        if len(self._counts) == 0:
            fresh.stats = {k: fresh.stats[k] + self._counts.stats[k] for k in STAT_KEYS}
            self._counts = fresh  # nothing to add to: no copy (the table may be large)
        else:
            self._counts += fresh
        return self._counts

    # ---- phase 2: merging ----

    def train(self, *sources: Any) -> Tokenizer:
        """Counts ``sources`` (see :meth:`count`) and learns the merges."""
        self.count(*sources)
        return self.train_from_counts(self.counts)

    def train_from_counts(self, counts: WordCounts, *, consume: bool = False) -> Tokenizer:
        """Learns merges from ``counts`` (made with this trainer's pattern and special tokens).
        With ``consume``, ``counts`` is emptied as learning starts, which saves its memory."""
        if not isinstance(counts, WordCounts):
            raise VocabError(f"train_from_counts needs WordCounts, got {type(counts).__name__}")
        if counts.pattern != self.pattern or counts.special_tokens != self.special_tokens:
            raise PatternError("the word counts were made with another pattern or other special tokens")
        pre_tokens = counts.total()  # a pass over the table (10-20 ms on the benchmark's): once
        if pre_tokens == 0:
            raise DataNotFoundError("the training corpus is empty: the sources hold no text besides special tokens")
        target = self.vocab_size - len(self.special_tokens)
        corpus = {**counts.stats, "distinct_pre_tokens": len(counts), "pre_tokens": pre_tokens}
        bar = ProgressBar(self.show_progress)
        start = time.perf_counter()

        def report(tokens: int, total: int, merges: int) -> None:
            p = TrainProgress("merge", tokens, total, time.perf_counter() - start, merges=merges)
            bar.update(p, force=tokens >= total)
            if self.callback is not None:
                self.callback(p)

        try:
            ids, merge_counts, tokens = _core.learn_merges(
                counts._core, target, self.min_frequency, self.max_token_length, self.threads, report, consume
            )
        finally:
            bar.close()
            self.timings["merge"] += time.perf_counter() - start
        merges = [(tokens[a], tokens[b]) for a, b in ids]
        training = {
            "vocab_size": self.vocab_size,
            "min_frequency": self.min_frequency,
            "max_token_length": self.max_token_length,
            "tie_rule": TIE_RULE,
            "merges": len(merges),
            "new_tokens": len(tokens) - 256,
            "reached_vocab_size": len(tokens) == target,
            "last_merge_count": int(merge_counts[-1]) if merge_counts else None,
            "merge_counts": merge_counts,  # aligned with `merges`
            "corpus": corpus,
            "bpekit_version": _core.__version__,
        }
        return Tokenizer._trained(self.pattern, merges, tokens, list(self.special_tokens), training, self.pattern_name)


def train(
    source: Any,
    *,
    vocab_size: int,
    pattern: str = "o200k",
    special_tokens: Sequence[str] = (),
    min_frequency: int = 2,
    max_token_length: int | None = None,
    threads: int = 0,
    show_progress: bool = True,
    callback: Callback | None = None,
    field: str = "text",
    column: str = "text",
) -> Tokenizer:
    """Trains a byte-level BPE tokenizer on ``source`` (a path, a list of paths, or an iterator of
    strings); see :class:`Trainer` and docs/training.md."""
    trainer = Trainer(
        vocab_size,
        pattern=pattern,
        special_tokens=special_tokens,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        threads=threads,
        show_progress=show_progress,
        callback=callback,
        field=field,
        column=column,
    )
    trainer.count(source)
    return trainer.train_from_counts(trainer.counts, consume=True)  # the counts are not kept


def count(
    source: Any,
    *,
    pattern: str = "o200k",
    special_tokens: Sequence[str] = (),
    threads: int = 0,
    show_progress: bool = True,
    callback: Callback | None = None,
    field: str = "text",
    column: str = "text",
) -> WordCounts:
    """Only the counting phase: the :class:`WordCounts` of ``source``."""
    specials = check_list(special_tokens)
    trainer = Trainer(
        256 + len(specials),
        pattern=pattern,
        special_tokens=specials,
        threads=threads,
        show_progress=show_progress,
        callback=callback,
        field=field,
        column=column,
    )
    trainer.count(source)
    return trainer.counts


def train_from_counts(
    counts: WordCounts,
    *,
    vocab_size: int,
    min_frequency: int = 2,
    max_token_length: int | None = None,
    threads: int = 0,
    show_progress: bool = True,
    callback: Callback | None = None,
) -> Tokenizer:
    """Learns merges from saved or added-up :class:`WordCounts` (pattern and special tokens come
    from the counts)."""
    if not isinstance(counts, WordCounts):
        raise VocabError(f"train_from_counts needs WordCounts, got {type(counts).__name__}")
    trainer = Trainer(
        vocab_size,
        pattern=counts.pattern,
        special_tokens=counts.special_tokens,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        threads=threads,
        show_progress=show_progress,
        callback=callback,
    )
    return trainer.train_from_counts(counts)

