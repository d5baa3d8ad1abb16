"""UBPE (universal): tokens store their whole alphabet expansion; encoding searches all
segmentations of a word into vocabulary entries and returns the ``top_n`` best by tf-idf.

The lookup tree holds every alphabet id and every token's expansion, so an encoding may use
any token whose symbols occur in the word, not only the merges that fitting performed.
"""

from __future__ import annotations

from bpekit.errors import EncodeError
from bpekit.ubpe import options
from bpekit.ubpe.base import UBPEBase
from bpekit.ubpe.lattice import Result, best_many, best_one, merge_parts, word_edges
from bpekit.ubpe.split import SplitMode
from bpekit.ubpe.trie import PrefixTree


class UBPE(UBPEBase):
    """Universal UBPE: ``encode`` ranks segmentations by tf-idf weight and returns the best."""

    classic = False

    def _build_cache(self) -> None:
        tree = PrefixTree(((i,), i) for i in self.inverse_alphabet)
        for tup, token in self.tokens_mapper["forward"].items():
            tree.insert(tup, token)
        self._tree = tree

    def _expand(self, tokens: list[int]) -> list[int]:
        backward = self.tokens_mapper["backward"]
        out: list[int] = []
        for token in tokens:
            expansion = backward.get(token)
            if expansion is None:
                out.append(token)
            else:
                out.extend(expansion)
        return out

    def encode(
        self, doc: str | list, *, split_mode: SplitMode = SplitMode.FULL, top_n: int = 1
    ) -> Result:
        """Up to ``top_n`` ``(ids, weight)`` candidates for a str or list, best first.

        Parts made by the pipeline are encoded separately; for ``top_n > 1`` their candidate
        lists are combined by :func:`bpekit.ubpe.lattice.merge_parts`.
        """
        self._check_fitted()
        top_n = options.check_positive("top_n", top_n)
        options.check_document(doc, (str, list), "Data")
        mode = self._check_split_mode(split_mode)
        parts = self._pipeline(doc, mode, True)
        if len(parts) == 1:
            word = parts[0]
            if len(word) == 1 and word[0] not in self.inverse_alphabet:
                raise EncodeError(
                    f"the document is exactly one known word (id {word[0]}); ubpe 0.3.0 fails "
                    "on it with IndexError, so UBPE refuses it: use UBPEClassic, or a split_mode "
                    "without KNOWN_WORDS"
                )
            return self._encode_word(word, top_n)
        if top_n == 1:
            ids: list[int] = []
            weight = 0.0
            for part in parts:
                if len(part) == 1:
                    ids.append(part[0])
                else:
                    ((part_ids, part_weight),) = self._encode_word(part, 1)
                    ids.extend(part_ids)
                    weight += part_weight
            return [(ids, weight)]
        return merge_parts(
            [part[0] if len(part) == 1 else self._encode_word(part, top_n) for part in parts],
            top_n,
        )

    def _encode_word(self, word: list[int], top_n: int) -> Result:
        if not word:
            return [([], 0.0)]
        edges = word_edges(self._tree, word)
        if top_n == 1:
            return best_one(edges, self.tokens_weights)
        return best_many(edges, self.tokens_weights, top_n)
