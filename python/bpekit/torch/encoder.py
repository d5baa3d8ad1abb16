"""Batch encoding on tensors: the pieces of many texts merged together, exactly as
``Encoding.encode_ordinary`` (tiktoken's rule: in each piece, merge the adjacent pair whose joined
bytes have the lowest rank, the leftmost one on ties, and repeat; a piece that is itself a token
is that token).

All pieces sit in one flat tensor ``seq`` with ``piece[i]`` = the piece of position ``i``. A pair's
rank comes from a sorted table of ``left * V + right`` keys (every split of every token into two
tokens), looked up with ``torch.searchsorted``. One round, for every piece at once:

1. ``r`` = the piece's lowest pair rank (a segment minimum);
2. candidates: its positions with rank ``r``, thinned to the non-overlapping left-to-right ones;
3. merging them all at once equals merging them one by one, as tiktoken does, as long as no merge
   makes a neighbour pair ranked below ``r`` (the pair it forms with the next token, or with the
   previous token, which is the previous merge's token when that merge is adjacent); a pair formed
   with a longer token never has rank ``r`` itself. So each piece keeps its candidates up to and
   including the first one that makes such a pair, and the rest wait for the next round.

A round makes at least one merge in every unfinished piece, and usually many (long runs of
spaces, digits or repeated letters merge level by level). Finished pieces leave the working
tensors. But a round takes one rank per piece, so a long piece with many different merges (random
letters without a split point) would need about one round per merge, quadratic time: once the
rounds have touched ``work_budget`` times the batch's positions (8 by default; real text needs
2-4), the pieces still merging are merged by the Rust core, in linear time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bpekit.encoding import Encoding, _check_batch, _check_threads
from bpekit.errors import InputTypeError
from bpekit.tokenizer import Tokenizer
from bpekit.torch.device import require_torch, resolve_device
from bpekit.torch.runs import leftmost_nonoverlapping, segment_min

torch = require_torch()

NONE = 1 << 62  # the rank of a pair that is not a token, and "no position"
# The device's rounds may touch at most this many times the batch's starting positions in all; the
# pieces still merging then go to the Rust core. A round takes one rank per piece, so a long piece
# with many different merges needs about one round per merge: 20,000 random lowercase letters (one
# piece) took 1,827 rounds and 3.6 s on one CPU thread, quadratic. Real text stays well inside:
# the benchmark corpora's rounds touched 2.2-4.3 times their positions (3,000 documents each).
WORK_BUDGET = 8


class TorchEncoder:
    """The tensors needed to encode with one :class:`~bpekit.Encoding` on one device."""

    def __init__(
        self, encoding: Encoding | Tokenizer, device: Any = None, threads: int = 0, work_budget: float = WORK_BUDGET
    ) -> None:
        if isinstance(encoding, Tokenizer):
            encoding = encoding.encoding
        if not isinstance(encoding, Encoding):
            raise InputTypeError(f"expected a bpekit Encoding or Tokenizer, got {type(encoding).__name__}")
        self.encoding = encoding
        self.device = resolve_device(device)
        self.threads = _check_threads(threads)  # the Rust core's threads for splitting (0: one per core)
        if not isinstance(work_budget, (int, float)) or isinstance(work_budget, bool) or not work_budget >= 0:
            raise InputTypeError(f"work_budget must be a number >= 0, got {work_budget!r}")
        self.work_budget = work_budget
        self.ranks: dict[bytes, int] = encoding._mergeable_ranks
        self.size = max(self.ranks.values(), default=0) + 1
        keys, values = [], []
        ranks = self.ranks
        for token, rank in ranks.items():
            for cut in range(1, len(token)):
                left, right = ranks.get(token[:cut]), ranks.get(token[cut:])
                if left is not None and right is not None:
                    keys.append(left * self.size + right)
                    values.append(rank)
        key_t = torch.tensor(keys, dtype=torch.int64)
        key_t, perm = torch.sort(key_t)
        self.pair_keys = key_t.to(self.device)
        self.pair_ranks = torch.tensor(values, dtype=torch.int64)[perm].to(self.device)

    def pair_rank(self, left: Any, right: Any) -> Any:
        """The rank of each pair's joined bytes (``NONE`` if not a token)."""
        keys = left * self.size + right
        if self.pair_keys.numel() == 0:
            return torch.full_like(keys, NONE)
        at = torch.searchsorted(self.pair_keys, keys).clamp(max=self.pair_keys.numel() - 1)
        return torch.where(self.pair_keys[at] == keys, self.pair_ranks[at], NONE)

    def _pieces(self, texts: list[str]) -> tuple[Any, Any, Any]:
        """``(seq, piece, text of each piece)``: every piece of every text, a piece that is a token
        as that token and any other as its bytes' ids. The Rust core splits and looks the pieces up
        on its threads and marks each piece's first id with bit 31 (``unmerged_batch_flat``)."""
        flat, offsets = self.encoding._core_bpe.unmerged_batch_flat(texts, self.threads)
        marked = torch.from_numpy(flat.view(np.int32)).to(self.device)
        first = marked < 0
        seq = (marked & 0x7FFFFFFF).to(torch.int64)
        piece = torch.cumsum(first, 0) - 1
        per_text = torch.from_numpy(np.diff(offsets)).to(self.device)
        text_of_id = torch.repeat_interleave(torch.arange(len(texts), device=self.device), per_text)
        return seq, piece, text_of_id[first]

    def _merge_round(self, seq: Any, piece: Any, n_pieces: int) -> tuple[Any, Any, Any]:
        """One round (see the module docstring); returns ``(seq, piece, finished)`` where
        ``finished`` marks the positions of pieces that had nothing left to merge."""
        same = piece[:-1] == piece[1:]
        rank = torch.where(same, self.pair_rank(seq[:-1], seq[1:]), NONE)
        lowest = segment_min(rank, piece[:-1], n_pieces, NONE)
        finished = lowest[piece] == NONE
        hits = torch.nonzero(leftmost_nonoverlapping((rank == lowest[piece[:-1]]) & (rank < NONE))).squeeze(1)
        if hits.numel() == 0:
            return seq, piece, finished
        new = rank[hits]
        n = seq.numel()
        owner = piece[hits]
        # the pair the merged token forms with the next token
        nxt = hits + 2
        has_next = (nxt < n) & (piece[nxt.clamp(max=n - 1)] == owner)
        bad = has_next & (self.pair_rank(new, seq[nxt.clamp(max=n - 1)]) < new)
        # ... and with the previous token (the previous merge's token if it is adjacent)
        prev = hits - 1
        has_prev = (prev >= 0) & (piece[prev.clamp(min=0)] == owner)
        adjacent = torch.zeros_like(has_prev)
        adjacent[1:] = hits[1:] == hits[:-1] + 2
        before = torch.where(adjacent, torch.roll(new, 1), seq[prev.clamp(min=0)])
        bad |= has_prev & (self.pair_rank(before, new) < new)
        first_bad = segment_min(torch.where(bad, hits, NONE), owner, n_pieces, NONE)
        take = hits <= first_bad[owner]
        hits, new = hits[take], new[take]
        seq = seq.clone()
        seq[hits] = new
        keep = torch.ones(n, dtype=torch.bool, device=seq.device)
        keep[hits + 1] = False
        return seq[keep], piece[keep], finished[keep]

    def encode_tensors(self, texts: Sequence[str]) -> tuple[Any, Any]:
        """``(ids, offsets)``: all texts' ids in one tensor on the device, text ``i`` at
        ``ids[offsets[i]:offsets[i+1]]`` (``offsets`` on the CPU)."""
        texts = _check_batch(texts)
        seq, piece, text_of_piece = self._pieces(texts)
        n_pieces = text_of_piece.numel()
        done_seq, done_piece = [], []
        budget = self.work_budget * seq.numel()
        while seq.numel() and (budget := budget - seq.numel()) >= 0:
            seq, piece, finished = self._merge_round(seq, piece, n_pieces)
            if bool(finished.any()):
                done_seq.append(seq[finished])
                done_piece.append(piece[finished])
                seq, piece = seq[~finished], piece[~finished]
        if seq.numel():  # pieces that need more rounds: merged on the host, each in linear time
            seq, piece = self._merge_on_host(seq, piece)
            done_seq.append(seq)
            done_piece.append(piece)
        if done_piece:
            pieces, order = torch.sort(torch.cat(done_piece), stable=True)
            ids = torch.cat(done_seq)[order]
        else:
            pieces = ids = torch.empty(0, dtype=torch.int64, device=self.device)
        per_piece = torch.bincount(pieces, minlength=n_pieces)
        per_text = torch.zeros(len(texts), dtype=torch.int64, device=self.device).scatter_add_(0, text_of_piece, per_piece)
        offsets = torch.zeros(len(texts) + 1, dtype=torch.int64)
        offsets[1:] = torch.cumsum(per_text, 0).cpu()
        return ids, offsets

    def _merge_on_host(self, seq: Any, piece: Any) -> tuple[Any, Any]:
        """The rest of each piece still merging, by the Rust core's merge of its bytes (the same
        ids; the piece is not one token, or it would have been finished from the start)."""
        core = self.encoding._core_bpe
        ids: list[int] = []
        owners: list[int] = []
        flat, pieces = seq.tolist(), piece.tolist()
        start = 0
        for end in range(1, len(flat) + 1):  # a piece's positions are contiguous
            if end == len(flat) or pieces[end] != pieces[start]:
                merged = core.encode_single_piece(core.decode_bytes(flat[start:end]))
                ids += merged
                owners += [pieces[start]] * len(merged)
                start = end
        dev = self.device
        return torch.tensor(ids, dtype=torch.int64, device=dev), torch.tensor(owners, dtype=torch.int64, device=dev)

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's ids, as ``Encoding.encode_ordinary`` gives them."""
        ids, offsets = self.encode_tensors(texts)
        flat = ids.tolist()
        bounds = offsets.tolist()
        return [flat[bounds[i] : bounds[i + 1]] for i in range(len(bounds) - 1)]
