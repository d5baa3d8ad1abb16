"""UBPEClassic: BPE-style encoding that applies several non-conflicting merges per step.

Tokens stand for pairs (``backward[id] = (left, right)``); their priority is the order of the
mapper (after rearrangement: descending weight). Encoding a word repeats:

1. take the highest-priority pair present in the word;
2. walk the priority list after it, adding every pair present in the word, and stop at the
   first entry that shares an id with the batch so far, *whether or not that entry is present*;
3. replace the batch in one substitution pass.

So ``[(a,b), (ab,c), (c,d)]`` encodes ``abcd`` as ``[ab, cd]``, not ``[abc, d]``.
"""

from __future__ import annotations

import sys
from bisect import bisect_right
from collections.abc import Sequence
from operator import add

from bpekit.errors import VocabError
from bpekit.ubpe import options
from bpekit.ubpe.base import UBPEBase
from bpekit.ubpe.score import sequence_weight
from bpekit.ubpe.split import SplitMode

Pair = tuple[int, int]


class UBPEClassic(UBPEBase):
    """Classic UBPE: tokens are pairs; encoding gives one segmentation and its tf-idf weight."""

    classic = True

    def _build_cache(self) -> None:
        forward = self.tokens_mapper["forward"]
        largest = max(self.tokens_mapper["backward"], default=self.first_token_id - 1)
        if max(largest, self.first_token_id - 1) > sys.maxunicode:
            raise VocabError(
                f"UBPEClassic encodes ids as characters, so ids must stay below "
                f"{sys.maxunicode + 1}; this model has id {max(largest, self.first_token_id - 1)}"
            )
        self._pairs: list[Pair] = list(forward)
        # Words are encoded as str, one character per id (chr), so that a substitution is
        # str.replace (C speed). Replacing the pairs of a batch one after the other equals ubpe's
        # single pass: batch pairs share no id, so their matches cannot overlap, and replace()
        # takes an (x, x) run left to right like the pass does.
        self._rank: dict[str, int] = {chr(a) + chr(b): i for i, (a, b) in enumerate(self._pairs)}
        self._keys = list(self._rank)
        self._new = [chr(forward[pair]) for pair in self._pairs]
        # For each id, the sorted ranks of the priority entries that contain it: where the
        # batch scan of step 2 must stop, found by bisection instead of a walk.
        ranks_with: dict[int, list[int]] = {}
        for rank, (left, right) in enumerate(self._pairs):
            ranks_with.setdefault(left, []).append(rank)
            if right != left:
                ranks_with.setdefault(right, []).append(rank)
        self._ranks_with = ranks_with

    def _expand(self, tokens: list[int]) -> list[int]:
        backward = self.tokens_mapper["backward"]
        out: list[int] = []
        stack = tokens[::-1]
        while stack:
            token = stack.pop()
            pair = backward.get(token)
            if pair is None:
                out.append(token)
            else:
                stack.extend(pair[::-1])
        return out

    def encode(
        self, doc: str | Sequence, *, split_mode: SplitMode = SplitMode.FULL
    ) -> list[tuple[list[int], float]]:
        """``[(ids, weight)]`` for a str, list or tuple of symbols."""
        self._check_fitted()
        options.check_document(doc, (str, list, tuple), "Data")
        mode = self._check_split_mode(split_mode)
        parts = self._pipeline(doc, mode, True)  # type: ignore[arg-type]
        if len(parts) == 1:
            return [self._encode_word(parts[0])]
        ids: list[int] = []
        weight = 0.0
        for part in parts:
            if len(part) == 1:
                ids.append(part[0])
            else:
                part_ids, part_weight = self._encode_word(part)
                ids.extend(part_ids)
                weight += part_weight
        return [(ids, weight)]

    def _encode_word(self, word: list[int]) -> tuple[list[int], float]:
        text = "".join(map(chr, word))
        rank = self._rank
        pairs, keys, new = self._pairs, self._keys, self._new
        next_rank = self._next_rank
        # The vocabulary pairs in the text, kept up to date instead of recounted: after a
        # batch, only pairs holding a merged id can vanish and only pairs holding a new id
        # can appear.
        present = set(rank.keys() & set(map(add, text, text[1:])))
        while present:
            ranks = sorted(map(rank.__getitem__, present))
            first = ranks[0]
            left, right = pairs[first]
            batch = [first]
            stop = min(next_rank(left, first), next_rank(right, first))
            for r in ranks[1:]:
                if r >= stop:
                    break
                batch.append(r)
                left, right = pairs[r]
                stop = min(stop, next_rank(left, r), next_rank(right, r))
            merged = set()
            for r in batch:
                text = text.replace(keys[r], new[r])
                merged.update(keys[r])
            present = {
                p for p in present if (p[0] not in merged and p[1] not in merged) or p in text
            }
            for r in batch:
                char = new[r]
                i = text.find(char)
                while i >= 0:
                    if i and text[i - 1 : i + 1] in rank:
                        present.add(text[i - 1 : i + 1])
                    if text[i : i + 2] in rank:
                        present.add(text[i : i + 2])
                    i = text.find(char, i + 1)
        word = list(map(ord, text))
        return word, sequence_weight(word, self.tokens_weights)

    def _next_rank(self, token: int, after: int) -> int:
        """The first priority rank above ``after`` whose pair contains ``token``."""
        ranks = self._ranks_with.get(token)
        if not ranks:
            return len(self._pairs)
        i = bisect_right(ranks, after)
        return ranks[i] if i < len(ranks) else len(self._pairs)
