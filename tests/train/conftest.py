"""Shared pieces of the trainer tests: an independent textbook trainer, an independent word
counter (Python's ``regex``), and the real corpora they run on.

The textbook trainer recounts every pair after every merge and keeps no state between merges
besides the words; it is vectorised with numpy only so that 2 MB to vocab 2,000 takes seconds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import chain
from pathlib import Path

import numpy as np
import pytest
import regex

Pair = tuple[bytes, bytes]


def textbook_merges(words: dict[bytes, int], n_tokens: int, min_frequency: int = 2) -> list[Pair]:
    """Count all pairs, merge the best (highest count, then smallest (left, right) bytes), repeat
    until ``n_tokens`` ordinary tokens exist. A merge that re-spells a token adds no new one."""
    if n_tokens >= 1 << 15:
        raise ValueError("the packed pair keys below hold ids below 2**15")
    items = [(w, c) for w, c in words.items() if len(w) > 1]
    if not items:
        return []
    # all words in one array, each followed by a -1 separator; wt = the word count at each position
    seq = np.fromiter(chain.from_iterable((*w, -1) for w, _ in items), dtype=np.int32)
    wt = np.repeat(np.array([c for _, c in items], dtype=np.int64), [len(w) + 1 for w, _ in items])
    tokens = [bytes([i]) for i in range(256)]
    index = {t: i for i, t in enumerate(tokens)}
    merges: list[Pair] = []
    while len(tokens) < n_tokens:
        # 1. count every adjacent pair from scratch: sort (pair key, weight) and sum equal keys
        left, right = seq[:-1], seq[1:]
        at = np.flatnonzero((left >= 0) & (right >= 0))
        if at.size == 0:
            break
        packed = ((left[at].astype(np.int64) << 16 | right[at]) << 32) | wt[at]
        packed.sort()
        keys = packed >> 32
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        sums = np.add.reduceat(packed & 0xFFFFFFFF, starts)
        best = sums.max()
        if best < min_frequency:
            break
        # 2. the best pair
        cands = [divmod(int(k), 1 << 16) for k in keys[starts[sums == best]]]
        a, b = min(cands, key=lambda p: (tokens[p[0]], tokens[p[1]]))
        merges.append((tokens[a], tokens[b]))
        # 3. merge non-overlapping occurrences, left to right ("a a a" -> "aa a")
        m = at[(left[at] == a) & (right[at] == b)]
        if a == b and m.size:
            run_start = np.r_[True, m[1:] != m[:-1] + 1]
            first = np.maximum.accumulate(np.where(run_start, np.arange(m.size), 0))
            m = m[(np.arange(m.size) - first) % 2 == 0]
        t = tokens[a] + tokens[b]
        if t not in index:
            index[t] = len(tokens)
            tokens.append(t)
        seq[m] = index[t]
        keep = np.ones(seq.size, bool)
        keep[m + 1] = False
        if len(merges) % 32 == 0:  # drop words that are one token now (they have no pairs)
            single = (seq[:-1] >= 0) & (np.r_[-1, seq[:-2]] < 0) & (seq[1:] < 0)
            keep[:-1] &= ~single
            keep[1:] &= ~single
        seq, wt = seq[keep], wt[keep]
    return merges


def _python_pattern(pattern: str) -> regex.Pattern[str]:
    # fancy-regex's `$` is end of text; Python's also matches before a final newline
    return regex.compile(pattern.replace("++$", r"++\Z"))


def python_counts(docs: Iterable[str], pattern: str, specials: Sequence[str] = ()) -> dict[bytes, int]:
    """Pre-token counts made with Python's ``regex``: each document split at special tokens
    (leftmost, then longest), each part split with the pattern."""
    pat = _python_pattern(pattern)
    cut = regex.compile("|".join(regex.escape(s) for s in sorted(specials, key=len, reverse=True)))
    counts: Counter[bytes] = Counter()
    for doc in docs:
        parts = cut.split(doc) if specials else [doc]
        for part in parts:
            counts.update(m.encode("utf-8") for m in pat.findall(part))
    return dict(counts)


@pytest.fixture(scope="session")
def textbook() -> Callable[..., list[Pair]]:
    return textbook_merges


@pytest.fixture(scope="session")
def count_in_python() -> Callable[..., dict[bytes, int]]:
    return python_counts


def _read(path: Path, limit: int | None = None) -> str:
    text = path.read_text(encoding="utf-8")
    return text if limit is None else text[:limit]


@pytest.fixture(scope="session")
def english_docs(data_dir: Path) -> list[str]:
    """Over 2 MB of real text: Shakespeare, an encyclopedia article, the Swahili New Testament."""
    c = data_dir / "corpora"
    return [_read(c / "tinyshakespeare.txt"), _read(c / "taylorswift.txt"), _read(c / "bible" / "Swahili-NT.txt")]


@pytest.fixture(scope="session")
def multilingual_docs(data_dir: Path) -> list[str]:
    """Tatoeba sentences in 38 languages plus slices of Bibles in non-Latin scripts (~400 KB)."""
    c = data_dir / "corpora"
    docs = [_read(p, 5_000) for p in sorted((c / "tatoeba").glob("tatoeba.*"))[::3]]
    for name in ["Gujarati-NT.txt", "Cherokee-NT.txt", "Coptic-NT.txt", "Armenian-PART.txt", "Syriac-NT.txt"]:
        docs.append(_read(c / "bible" / name, 15_000))
    return docs
