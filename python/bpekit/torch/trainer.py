"""Training on tensors: the textbook BPE loop (recount every pair, merge the best, repeat) run
over the deduplicated word table with PyTorch, on CUDA or the CPU. It learns exactly the merges of
``bpekit.train`` (same tie rule, same overlapping-run rule, same re-spelling rule).

Layout: every distinct word (pre-token) of length >= 2 as token ids, all words in one flat
``int64`` tensor ``seq``, each followed by a ``-1`` separator, and ``weight`` = the word's count at
each position. One step:

1. pairs: ``seq[:-1], seq[1:]`` where neither is a separator -> keys ``left * V + right``;
2. counts: the keys sorted and the weights summed per run of equal keys (:func:`pair_counts`), so
   a pair occurring twice in a word counted ``c`` times adds ``2c`` (``aaa`` holds ``(a, a)``
   twice, as the textbook counts);
3. best: the highest count; ties go to the smallest ``(left bytes, right bytes)``, found on the
   device through ``order``, the position of each token's bytes among all tokens in byte order
   (distinct tokens have distinct bytes, so comparing ``(order[left], order[right])`` is comparing
   the bytes); ``order`` is updated in place when a token is added;
4. merge: positions matching the pair, thinned to the non-overlapping left-to-right ones
   (``runs.leftmost_nonoverlapping``, only needed when left == right), get the new id and the
   position after each is deleted.

A step waits for the device four times, for sizes the host must know: the pairs' positions, the
number of distinct pairs, the best pair and its count (the one value that crosses to the host)
and the positions kept. The first version waited seven times (the tied pairs, the hits, and the
kept positions once per tensor); on an H200 the change took 2,000 merges on the 2.24 MB mix of
docs/torch.md from 2.4-2.6 s to 1.7-2.0 s, and 4,000 on every Bible from 6.1-6.2 s to 6.0 s.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from typing import Any

from bpekit import _core
from bpekit.errors import DataNotFoundError, PatternError
from bpekit.patterns import resolve_pattern
from bpekit.tokenizer import Tokenizer
from bpekit.torch.device import require_torch, resolve_device
from bpekit.torch.runs import leftmost_nonoverlapping
from bpekit.train import TIE_RULE, Trainer, WordCounts

torch = require_torch()

Pair = tuple[bytes, bytes]
COMPACT_EVERY = 32  # steps between dropping words that became one token (they have no pairs left)


def word_tensors(words: Mapping[bytes, int], device: Any) -> tuple[Any, Any]:
    """``(seq, weight)`` for the words with at least two bytes (see the module docstring)."""
    items = [(w, c) for w, c in words.items() if len(w) > 1 and c > 0]
    if not items:
        empty = torch.empty(0, dtype=torch.int64, device=device)
        return empty, empty
    lens = torch.tensor([len(w) for w, _ in items], dtype=torch.int64)
    flat = torch.frombuffer(bytearray(b"".join(w for w, _ in items)), dtype=torch.uint8).to(torch.int64)
    seq = torch.full((int(lens.sum()) + len(items),), -1, dtype=torch.int64)
    seq[torch.arange(flat.numel()) + torch.repeat_interleave(torch.arange(len(items)), lens)] = flat
    weight = torch.repeat_interleave(torch.tensor([c for _, c in items], dtype=torch.int64), lens + 1)
    return seq.to(device), weight.to(device)


def pair_counts(keys: Any, weights: Any) -> tuple[Any, Any]:
    """Distinct pair keys and their weighted counts (exact ``int64``): the keys sorted, each run of
    equal keys summed as a difference of the running sum at its ends, with no atomic adds.
    ``torch.unique`` then ``scatter_add`` was the first version: on a GPU its atomic adds queue on
    a key that many positions share (with the word separators given one key, every Bible to vocab
    4,000 took 9.9 s against 6.1-7.7 s sorted, on an H200). On one CPU thread it was about 15% faster
    than sorting; one way for both devices keeps the tested path the GPU's. A dense
    ``bincount`` over all ``V * V`` keys was tried too: it sums in float64 and was 1.7x slower at
    V = 600 on one CPU thread."""
    sorted_keys, perm = torch.sort(keys)
    distinct, runs = torch.unique_consecutive(sorted_keys, return_counts=True)
    running = torch.cumsum(weights[perm], 0)
    at_end = running[torch.cumsum(runs, 0) - 1]
    sums = at_end.clone()
    sums[1:] -= at_end[:-1]
    return distinct, sums


def _drop_single_tokens(seq: Any, weight: Any) -> tuple[Any, Any]:
    """Removes words that are one token now, with their separators."""
    prev = torch.cat([seq.new_full((1,), -1), seq[:-1]])
    nxt = torch.cat([seq[1:], seq.new_full((1,), -1)])
    single = (seq >= 0) & (prev < 0) & (nxt < 0)
    keep = ~single
    keep[1:] &= ~single[:-1]
    return seq[keep], weight[keep]


def learn_merges(
    words: Mapping[bytes, int],
    n_tokens: int,
    *,
    min_frequency: int = 2,
    max_token_length: int | None = None,
    device: Any = None,
) -> tuple[list[Pair], list[int]]:
    """Merges (as byte pairs) and their counts, until ``n_tokens`` ordinary tokens exist, no pair
    is left, or the best count is below ``min_frequency``."""
    dev = resolve_device(device)
    seq, weight = word_tensors(words, dev)
    tokens = [bytes([i]) for i in range(256)]
    index = {t: i for i, t in enumerate(tokens)}
    by_bytes = list(tokens)  # every token, in byte order
    size = max(n_tokens, 256)
    order = torch.arange(size, dtype=torch.int64, device=dev)  # order[id] = position in by_bytes
    length = torch.ones(size, dtype=torch.int64, device=dev)
    merges: list[Pair] = []
    counts: list[int] = []
    while len(tokens) < n_tokens and seq.numel() > 1:
        left, right = seq[:-1], seq[1:]
        ok = (left >= 0) & (right >= 0)
        if max_token_length is not None:
            ok &= length[left.clamp(min=0)] + length[right.clamp(min=0)] <= max_token_length
        at = torch.nonzero(ok).squeeze(1)
        if at.numel() == 0:
            break
        keys, sums = pair_counts(left[at] * size + right[at], weight[at])
        best = sums.max()
        tie_key = torch.where(sums == best, order[keys // size] * size + order[keys % size], size * size)
        best_count, key = torch.stack([best, keys[torch.argmin(tie_key)]]).tolist()
        if best_count < min_frequency:
            break
        a, b = divmod(key, size)
        merged = tokens[a] + tokens[b]
        merges.append((tokens[a], tokens[b]))
        counts.append(best_count)
        new_id = index.get(merged)
        if new_id is None:  # a new spelling: a new token (else the merge re-spells an old one)
            new_id = index[merged] = len(tokens)
            tokens.append(merged)
            place = bisect.bisect_left(by_bytes, merged)
            by_bytes.insert(place, merged)
            order[: len(tokens) - 1] += (order[: len(tokens) - 1] >= place).to(torch.int64)
            order[new_id] = place
            length[new_id] = len(merged)
        hits = (left == a) & (right == b)  # separators (-1) never match
        if a == b:
            hits = leftmost_nonoverlapping(hits)
        seq[:-1] = torch.where(hits, new_id, left)
        keep = torch.ones(seq.numel(), dtype=torch.bool, device=dev)
        keep[1:] = ~hits
        kept = torch.nonzero(keep).squeeze(1)
        seq, weight = seq[kept], weight[kept]
        if len(merges) % COMPACT_EVERY == 0:
            seq, weight = _drop_single_tokens(seq, weight)
    return merges, counts


def _counts_for(
    source: Any, trainer: Trainer, pattern: str | None, special_tokens: Sequence[str] | None
) -> WordCounts:
    if not isinstance(source, WordCounts):
        trainer.count(source)
        return trainer.counts
    if pattern is not None and resolve_pattern(pattern) != source.pattern:
        raise PatternError("the word counts were made with another pattern than the one given")
    if special_tokens is not None and tuple(special_tokens) != source.special_tokens:
        raise PatternError("the word counts were made with other special tokens than the ones given")
    return source


def train(
    source: Any,
    vocab_size: int,
    *,
    pattern: str | None = None,
    special_tokens: Sequence[str] | None = None,
    min_frequency: int = 2,
    max_token_length: int | None = None,
    device: Any = None,
    threads: int = 0,
    show_progress: bool = False,
) -> Tokenizer:
    """Trains a byte-level BPE tokenizer with the merge loop on tensors; the result equals
    ``bpekit.train.train`` 's (same merges, ids and special tokens).

    ``source`` is what ``bpekit.train.train`` reads (paths, iterators of strings), counted with
    the Rust counter, or a :class:`~bpekit.train.WordCounts` (whose pattern and special tokens are
    used; ``pattern`` / ``special_tokens``, if given, must match them). ``device``: a torch device
    or its name; ``None`` = CUDA when available, else the CPU. ``pattern`` defaults to o200k.
    """
    if isinstance(source, WordCounts):
        use_pattern, use_specials = source.pattern, source.special_tokens
    else:
        use_pattern = "o200k" if pattern is None else pattern
        use_specials = () if special_tokens is None else special_tokens
    trainer = Trainer(
        vocab_size,
        pattern=use_pattern,
        special_tokens=use_specials,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        threads=threads,
        show_progress=show_progress,
    )
    counts = _counts_for(source, trainer, pattern, special_tokens)
    if counts.total() == 0:
        raise DataNotFoundError("the training corpus is empty: the sources hold no text besides special tokens")
    dev = resolve_device(device)
    target = trainer.vocab_size - len(trainer.special_tokens)
    merges, merge_counts = learn_merges(
        counts.to_dict(), target, min_frequency=trainer.min_frequency,
        max_token_length=trainer.max_token_length, device=dev,
    )
    tok = Tokenizer(
        pattern=trainer.pattern,
        merges=merges,
        special_tokens=list(trainer.special_tokens),
        pattern_name=trainer.pattern_name,
    )
    tok.training = {
        "vocab_size": trainer.vocab_size,
        "min_frequency": trainer.min_frequency,
        "max_token_length": trainer.max_token_length,
        "tie_rule": TIE_RULE,
        "merges": len(merges),
        "new_tokens": len(tok.ranks) - 256,
        "reached_vocab_size": len(tok.ranks) == target,
        "last_merge_count": merge_counts[-1] if merge_counts else None,
        "corpus": {**counts.stats, "distinct_pre_tokens": len(counts), "pre_tokens": counts.total()},
        "bpekit_version": _core.__version__,
        "engine": f"bpekit.torch ({dev})",
    }
    return tok

