"""SentencePiece BPE encoding of normalized text (``bpe::Model::SampleEncode`` + the processor).

1. Symbols: the longest user-defined piece at each point (a *frozen* symbol, never merged),
   else one character.
2. Every adjacent pair of unfrozen symbols whose concatenation is a NORMAL, USER_DEFINED or
   UNUSED piece is a candidate, ranked by that piece's score, higher first, then leftmost. Scores
   are ranked by their float32 bit patterns as sentencepiece 0.2.3 does: the usual order, except
   that ``+0.0`` ranks above ``-0.0`` and NaNs sit at the ends.
3. Pop the best candidate; skip it when stale (a side was merged away or grew); with dropout
   skip it with probability ``alpha``; else merge and add the candidates of the new neighbours.
4. A final symbol that is an UNUSED piece is split back into the two symbols it was made of,
   recursively (below 100 levels the UNUSED piece is kept as it is); any other final symbol that
   is not a NORMAL or USER_DEFINED piece is unknown.
5. Unknown symbols become the bytes ``<0xHH>`` under byte fallback; otherwise a run of them
   becomes one unknown piece (the processor's ``PopulateSentencePieceText``).

Performance: when no piece has ``▁`` except as its first character (or only as its last), no
merge can cross a ``▁``, so the text is cut before (after) each one and the pieces of each chunk
are cached (a trained model's chunks are words; measured on tinyshakespeare with a 1000-piece
model: 1.8x faster on new text, 4x once the words repeat). Models with UNUSED
pieces are not cut: which two halves an UNUSED piece splits into is the last split recorded for
that string anywhere in the text, so chunks are not independent there.
"""

from __future__ import annotations

import heapq
import random
import struct

from bpekit.formats.sentencepiece.model import (
    MERGEABLE,
    NORMAL,
    UNUSED,
    USER_DEFINED,
    SentencePieceModel,
    byte_piece,
)
from bpekit.formats.sentencepiece.normalizer import SPACE_SYMBOL

MAX_RESEGMENT_DEPTH = 100  # sentencepiece stops undoing UNUSED merges below this depth
_CACHE_LIMIT = 200_000
_BYTE_PIECES = [byte_piece(b) for b in range(256)]

Segment = list[tuple[str, int]]


def score_rank(score: float) -> int:
    """The order sentencepiece gives a float32 score: its bits as a sign-magnitude integer."""
    bits: int = struct.unpack("<i", struct.pack("<f", score))[0]
    return bits if bits >= 0 else -(1 << 31) - 1 - bits


class BpeEncoder:
    """Turns normalized text into pieces and ids with one model's vocabulary."""

    def __init__(self, model: SentencePieceModel) -> None:
        self.unk_id = model.unk_id
        self.byte_fallback = model.byte_fallback
        # piece -> (-rank, id, is_unused) for the pieces a merge may produce
        self._table: dict[str, tuple[int, int, bool]] = {
            p.piece: (-score_rank(p.score), i, p.type == UNUSED)
            for i, p in enumerate(model.pieces)
            if p.type in MERGEABLE
        }
        self._emit = {p.piece: i for i, p in enumerate(model.pieces) if p.type in (NORMAL, USER_DEFINED)}
        self._byte_ids = [model.piece_to_id(piece) for piece in _BYTE_PIECES] if self.byte_fallback else []
        user_defined = [p.piece for p in model.pieces if p.type == USER_DEFINED]
        self._ud = frozenset(user_defined)
        self._ud_lengths = sorted({len(p) for p in user_defined}, reverse=True)
        self._ud_first = frozenset(p[0] for p in user_defined)
        self._chunking = _chunk_mode(self._table)
        # chunk -> (pieces, ids, starts with unk, ends with unk), unknown handling done
        self._cache: dict[str, tuple[list[str], list[int], bool, bool]] = {}

    def encode(
        self, normalized: str, alpha: float = 0.0, rng: random.Random | None = None
    ) -> tuple[list[str], list[int]]:
        """Pieces and ids of ``normalized`` (the normalizer's output)."""
        if not normalized:
            return [], []
        if alpha > 0.0 or self._chunking is None:
            return self._finish(self.segment(normalized, alpha, rng))
        cache = self._cache
        pieces: list[str] = []
        ids: list[int] = []
        join_unk = not self.byte_fallback
        last_unk = False
        for chunk in _chunks(normalized, self._chunking):
            found = cache.get(chunk)
            if found is None:
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                chunk_pieces, chunk_ids = self._finish(self.segment(chunk))
                found = cache[chunk] = (
                    chunk_pieces,
                    chunk_ids,
                    chunk_ids[0] == self.unk_id,
                    chunk_ids[-1] == self.unk_id,
                )
            chunk_pieces, chunk_ids, first_unk, end_unk = found
            if join_unk and last_unk and first_unk:  # a run of unknowns across the cut is one piece
                pieces[-1] += chunk_pieces[0]
                pieces.extend(chunk_pieces[1:])
                ids.extend(chunk_ids[1:])
            else:
                pieces.extend(chunk_pieces)
                ids.extend(chunk_ids)
            last_unk = end_unk
        return pieces, ids

    def segment(self, text: str, alpha: float = 0.0, rng: random.Random | None = None) -> Segment:
        """The model's output for ``text``: ``(piece, id)`` pairs before unknown handling."""
        syms, frozen = self._symbols(text)
        n = len(syms)
        table = self._table
        rev_merge: dict[str, tuple[str, str]] = {}
        agenda: list[tuple[int, int, int, int]] = []
        for i in range(n - 1):
            if frozen is not None and (frozen[i] or frozen[i + 1]):
                continue
            piece = syms[i] + syms[i + 1]
            entry = table.get(piece)
            if entry is not None:
                agenda.append((entry[0], i, i + 1, len(piece)))
                if entry[2]:
                    rev_merge[piece] = (syms[i], syms[i + 1])
        if agenda and alpha < 1.0:
            if alpha > 0.0 and rng is None:
                rng = random.Random()
            self._merge(syms, frozen, agenda, rev_merge, alpha, rng)
        if not rev_merge:
            emit, unk = self._emit, self.unk_id
            return [(sym, emit.get(sym, unk)) for sym in syms if sym]
        out: Segment = []
        for sym in syms:
            if sym:
                self._resegment(sym, rev_merge, out, 0)
        return out

    def _merge(
        self,
        syms: list[str],
        frozen: list[bool] | None,
        agenda: list[tuple[int, int, int, int]],
        rev_merge: dict[str, tuple[str, str]],
        alpha: float,
        rng: random.Random | None,
    ) -> None:
        n = len(syms)
        prev = list(range(-1, n - 1))
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        table = self._table
        heapq.heapify(agenda)
        pop, push = heapq.heappop, heapq.heappush
        while agenda:
            _, left, right, size = pop(agenda)
            sl, sr = syms[left], syms[right]
            if not sl or not sr or len(sl) + len(sr) != size:
                continue  # stale
            if rng is not None and rng.random() < alpha:
                continue  # BPE-dropout: this candidate is dropped
            syms[left] = sl + sr
            syms[right] = ""
            after = nxt[left] = nxt[right]
            if after >= 0:
                prev[after] = left
            for a, b in ((prev[left], left), (left, after)):
                if a < 0 or b < 0 or (frozen is not None and (frozen[a] or frozen[b])):
                    continue
                piece = syms[a] + syms[b]
                entry = table.get(piece)
                if entry is not None:
                    push(agenda, (entry[0], a, b, len(piece)))
                    if entry[2]:
                        rev_merge[piece] = (syms[a], syms[b])

    def _resegment(self, sym: str, rev_merge: dict[str, tuple[str, str]], out: Segment, depth: int) -> None:
        entry = self._table.get(sym)
        if entry is not None and entry[2]:
            if depth > MAX_RESEGMENT_DEPTH:
                out.append((sym, entry[1]))  # sentencepiece gives up and keeps the UNUSED piece
                return
            halves = rev_merge.get(sym)
            if halves is not None:
                self._resegment(halves[0], rev_merge, out, depth + 1)
                self._resegment(halves[1], rev_merge, out, depth + 1)
                return
        out.append((sym, self._emit.get(sym, self.unk_id)))

    def _symbols(self, text: str) -> tuple[list[str], list[bool] | None]:
        if not self._ud_first or not any(c in text for c in self._ud_first):
            return list(text), None
        syms: list[str] = []
        frozen: list[bool] = []
        i, n = 0, len(text)
        while i < n:
            if text[i] in self._ud_first:
                for length in self._ud_lengths:
                    if text[i : i + length] in self._ud:
                        syms.append(text[i : i + length])
                        frozen.append(True)
                        i += length
                        break
                else:
                    syms.append(text[i])
                    frozen.append(False)
                    i += 1
            else:
                syms.append(text[i])
                frozen.append(False)
                i += 1
        return syms, frozen

    def _finish(self, segment: Segment) -> tuple[list[str], list[int]]:
        """Unknown handling: byte fallback, or one piece per run of unknown symbols."""
        pieces: list[str] = []
        ids: list[int] = []
        unk = self.unk_id
        prev_unk = False
        for piece, i in segment:
            if i != unk:
                pieces.append(piece)
                ids.append(i)
                prev_unk = False
            elif self.byte_fallback:
                for b in piece.encode("utf-8"):
                    pieces.append(_BYTE_PIECES[b])
                    ids.append(self._byte_ids[b])
                prev_unk = True
            elif prev_unk:
                pieces[-1] += piece
            else:
                pieces.append(piece)
                ids.append(i)
                prev_unk = True
        return pieces, ids


def _chunk_mode(table: dict[str, tuple[int, int, bool]]) -> str | None:
    """How the text may be cut into independent chunks: ``"before"``/``"after"`` each ``▁``."""
    if any(unused for _, _, unused in table.values()):
        return None
    marked = [p for p in table if SPACE_SYMBOL in p]
    if all(p.find(SPACE_SYMBOL, 1) < 0 for p in marked):
        return "before"
    if all(p.find(SPACE_SYMBOL) == len(p) - 1 for p in marked):
        return "after"
    return None


def _chunks(text: str, mode: str) -> list[str]:
    parts = text.split(SPACE_SYMBOL)
    if len(parts) == 1:
        return parts
    if mode == "before":
        out = [SPACE_SYMBOL + p for p in parts[1:]]
        return [parts[0], *out] if parts[0] else out
    out = [p + SPACE_SYMBOL for p in parts[:-1]]
    return [*out, parts[-1]] if parts[-1] else out
