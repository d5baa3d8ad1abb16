"""GPT4Tokenizer: tiktoken's cl100k_base seen as minbpe merges (minbpe's third idea).

tiktoken stores ranks (token bytes -> id), not merges. :func:`recover_merges` finds, for each
token, the two tokens that BPE joins last to make it: run rank-ordered BPE on the token's bytes
using only the ranks below its own; exactly two parts must remain, and their ids give the merge.
The 256 single bytes do not have ranks 0..255 in byte order, so ``byte_shuffle[b]`` is the rank
of byte ``b``; minbpe's merge loop runs on shuffled bytes, and ids are then cl100k ids.

Fixes over minbpe: the split pattern is tiktoken's cl100k string, not minbpe's
GPT4_SPLIT_PATTERN (they split differently, e.g. a line break followed by spaces at the end of
the text), so ``encode`` equals tiktoken's on all text; special ids decode to their text (minbpe
raised KeyError); ``vocab`` holds the real token bytes. ``encode_ordinary`` runs in bpekit's Rust
core (``bpekit.get_encoding("cl100k_base")``), which gives the same ids as the minbpe merge loop
(``PatternTokenizer.encode_ordinary(tok, text)`` runs that loop) far faster. A GPT4Tokenizer
cannot be trained, and minbpe's ``.model`` format has no room for the byte shuffle, so there is
no ``train``, ``save`` or ``load`` (minbpe raised NotImplementedError); ``save_vocab`` works.
"""

from __future__ import annotations

from functools import lru_cache

from bpekit.encoding import Encoding
from bpekit.errors import VocabError
from bpekit.minbpe.base import Merges, apply_merges, utf8
from bpekit.minbpe.regex_tokenizer import PatternTokenizer
from bpekit.registry import get_encoding

_NONE = 1 << 62  # rank of a pair that may not merge


def _parts_below(token: bytes, ranks: dict[bytes, int], max_rank: int) -> list[bytes]:
    """``token`` after rank-ordered BPE (lowest rank first, leftmost on ties) with ranks < max_rank.

    Only the two pair ranks next to a merge change, so only those are looked up again (this
    runs once per cl100k token: 100k times).
    """
    get = ranks.get
    parts = [token[i : i + 1] for i in range(len(token))]
    pair_ranks = []
    for i in range(len(parts) - 1):
        r = get(parts[i] + parts[i + 1], _NONE)
        pair_ranks.append(r if r < max_rank else _NONE)
    while pair_ranks:
        best = min(pair_ranks)
        if best == _NONE:
            break
        i = pair_ranks.index(best)
        parts[i] += parts.pop(i + 1)
        del pair_ranks[i]
        if i > 0:
            r = get(parts[i - 1] + parts[i], _NONE)
            pair_ranks[i - 1] = r if r < max_rank else _NONE
        if i < len(pair_ranks):
            r = get(parts[i] + parts[i + 1], _NONE)
            pair_ranks[i] = r if r < max_rank else _NONE
    return parts


def recover_merges(mergeable_ranks: dict[bytes, int]) -> Merges:
    """The merges ``{(left id, right id): id}`` behind tiktoken ranks, in rank order."""
    merges: Merges = {}
    for token, rank in sorted(mergeable_ranks.items(), key=lambda item: item[1]):
        if len(token) == 1:
            continue
        parts = _parts_below(token, mergeable_ranks, rank)
        if len(parts) != 2:
            raise VocabError(
                f"token {token!r} (rank {rank}) is not the merge of two lower-ranked tokens; "
                f"BPE below its rank ends in {len(parts)} parts"
            )
        merges[mergeable_ranks[parts[0]], mergeable_ranks[parts[1]]] = rank
    return merges


@lru_cache(maxsize=4)
def _cl100k() -> tuple[Encoding, Merges, dict[int, int]]:
    """cl100k_base's Encoding, recovered merges and byte shuffle (about 2 s, once per process)."""
    enc = get_encoding("cl100k_base")
    ranks = enc._mergeable_ranks
    return enc, recover_merges(ranks), {b: ranks[bytes([b])] for b in range(256)}


class GPT4Tokenizer(PatternTokenizer):
    """minbpe's ``GPT4Tokenizer``: cl100k_base ids from minbpe-style merges; encode and decode only."""

    def __init__(self) -> None:
        enc, merges, byte_shuffle = _cl100k()
        super().__init__(pattern=enc._pat_str)
        self._encoding = enc
        self.merges = merges
        self.byte_shuffle = byte_shuffle
        self.inverse_byte_shuffle = {v: k for k, v in byte_shuffle.items()}
        self.vocab = {rank: token for token, rank in enc._mergeable_ranks.items()}
        self.register_special_tokens(enc._special_tokens)

    def _encode_chunk(self, chunk: bytes) -> list[int]:
        """minbpe's path: shuffle the bytes into rank space, then merge in merge order."""
        return apply_merges([self.byte_shuffle[b] for b in chunk], self.merges)

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of ``text`` (special strings as plain text), from bpekit's core."""
        utf8(text)  # the same type and surrogate checks as the Python path
        return self._encoding.encode_ordinary(text)
