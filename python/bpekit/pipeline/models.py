"""The BPE model of ``tokenizer.json``: vocabulary, ranked merges and the options of Hugging
Face's ``BPE`` (formats.md §3.2), encoding one pre-token at a time exactly as it does.

Merge priority is the *pair's* index in the merge list (not the rank of the merged token as in
tiktoken): a heap of ``(rank, position)`` candidates, stale entries skipped, one merge at a time.
Dropout is seeded (``seed``) so that results are reproducible; Hugging Face uses an unseeded
thread RNG, so only the distribution, not the draw, can match it.
"""

from __future__ import annotations

import functools
import heapq
import random
from collections.abc import Mapping, Sequence
from typing import Any

from bpekit import _core
from bpekit.errors import EncodeError, FormatError, VocabError
from bpekit.pipeline.aligned import spans_of_bytes
from bpekit.pipeline.base import Stage, get

_CACHE_LIMIT = 1 << 16
# Longer words are merged every time: a pipeline with no pre-tokenizer (or Metaspace without a
# split) hands whole texts to the model, and caching those would keep every text seen.
CACHE_MAX_WORD = 256
# SentencePiece's word-start marker (the Rust merge cuts whole texts before it: ``_cuts_before``)
MARKER = "\u2581"


def dense_table_ok(size: int, count: int) -> bool:
    """Whether a table of ``size`` slots (one per id up to the largest) for ``count`` ids is a small
    multiple of them (ids are up to 2**32: one far out would make it gigabytes)."""
    return size <= 4 * count + 65536


class BPE(Stage):
    """Byte-pair encoding with a merge list (``merges[i]`` has priority ``i``)."""

    def __init__(
        self,
        vocab: Mapping[str, int],
        merges: Sequence[tuple[str, str]],
        *,
        dropout: float | None = None,
        unk_token: str | None = None,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        fuse_unk: bool = False,
        byte_fallback: bool = False,
        ignore_merges: bool = False,
        merges_as_pairs: bool = True,
        seed: int | None = None,
    ) -> None:
        if dropout is not None and not 0.0 <= dropout <= 1.0:
            raise VocabError(f"BPE dropout must be in [0, 1], got {dropout}")
        self.vocab: dict[str, int] = dict(vocab)
        self.vocab_r: dict[int, str] = {i: t for t, i in self.vocab.items()}
        if len(self.vocab_r) != len(self.vocab):
            raise VocabError("BPE vocab gives the same id to two tokens")
        self.merges: list[tuple[str, str]] = [(a, b) for a, b in merges]
        self.dropout = dropout
        self.unk_token = unk_token
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        self.fuse_unk = fuse_unk
        self.byte_fallback = byte_fallback
        self.ignore_merges = ignore_merges
        self.merges_as_pairs = merges_as_pairs
        self.rng = random.Random(seed)
        prefix_len = len(self.continuing_subword_prefix.encode()) if self.continuing_subword_prefix else 0
        try:  # checked and resolved in Rust: ~50x faster than _pair_table on 280k merges
            self.merge_ids: list[tuple[int, int, int]] = _core.pair_merge_ids(self.vocab, self.merges, prefix_len)
        except (OverflowError, TypeError) as e:
            raise VocabError(f"BPE vocab ids must be ints in [0, 2**32): {e}") from None
        self._cache: dict[str, list[int]] = {}

    @functools.cached_property
    def pair_ranks(self) -> dict[tuple[int, int], tuple[int, int]]:
        """``(left id, right id) -> (rank, merged id)``, built when the Python merge first runs."""
        return {(a, b): (rank, new) for rank, (a, b, new) in enumerate(self.merge_ids)}

    def _pair_table(self) -> dict[tuple[int, int], tuple[int, int]]:
        """``pair_ranks`` computed in Python (the reference for ``_core.pair_merge_ids``); every
        token must be in the vocabulary."""
        prefix_len = len(self.continuing_subword_prefix.encode()) if self.continuing_subword_prefix else 0
        table: dict[tuple[int, int], tuple[int, int]] = {}
        for rank, (a, b) in enumerate(self.merges):
            for tok in (a, b):
                if tok not in self.vocab:
                    raise VocabError(f"merge {rank} ({a!r}, {b!r}): token {tok!r} is not in the vocabulary")
            try:
                merged = a + b.encode()[prefix_len:].decode()
            except UnicodeDecodeError:
                raise VocabError(f"merge {rank} ({a!r}, {b!r}): cannot strip the subword prefix") from None
            new_id = self.vocab.get(merged)
            if new_id is None:
                raise VocabError(f"merge {rank} ({a!r}, {b!r}): the merged token {merged!r} is not in the vocabulary")
            pair = (self.vocab[a], self.vocab[b])
            if pair in table:
                raise VocabError(f"merge {rank} ({a!r}, {b!r}) repeats merge {table[pair][0]}")
            table[pair] = (rank, new_id)
        return table

    def __repr__(self) -> str:
        return f"BPE({len(self.vocab)} tokens, {len(self.merges)} merges, ignore_merges={self.ignore_merges})"

    @functools.cached_property
    def fast_merge(self) -> _core.PairBPE | None:
        """This model's merge of one word in Rust (``_core.PairBPE`` over characters, with the
        byte fallback and unk rules of ``_symbols``; ``encode(word)`` gives ``tokenize(word)``),
        or ``None`` where only Python is exact: dropout, an unk token missing from the vocabulary
        (the error is raised only when an unknown character is met)."""
        return self.char_merge()

    def char_merge(self, metaspace: tuple[str, str, bool] | None = None,
                   stages: list[str] | None = None) -> _core.PairBPE | None:
        """:attr:`fast_merge`, or with ``metaspace`` (``(replacement, prepend_scheme, split)``)
        the ``Metaspace`` pre-tokenizer and this model in one Rust call per segment; or with
        ``stages`` (``fast.char_stages``) the split stages and this model."""
        if self.dropout or not self.dense_ids:
            return None  # (ids far beyond the vocabulary's size: the core's tables are by id)
        unk = None
        if self.unk_token is not None:
            unk = self.vocab.get(self.unk_token)
            if unk is None:
                return None
        singles = {t: i for t, i in self.vocab.items() if len(t) == 1}
        fallback = [self.vocab.get(f"<0x{b:02X}>", _core.PAIR_DROP) for b in range(256)] if self.byte_fallback else None
        whole = self.vocab if self.ignore_merges else None
        marker = MARKER if self._cuts_before(MARKER) else None
        chars = (singles, fallback, unk, self.fuse_unk, marker)
        return _core.PairBPE([], self.merge_ids, None, False, False, whole, stages or [], chars, metaspace,
                             char_affixes=self._char_affixes())

    def _char_affixes(self) -> tuple[dict[str, int], dict[str, int], dict[str, int]] | None:
        """With a subword prefix or end-of-word suffix, each character's token inside a word
        (prefix + character), at its end (prefix + character + suffix) and as a word of its own
        (character + suffix), as ``merge_word`` spells them (``CharAffixes`` in src/pairbpe.rs)."""
        prefix, suffix = self.continuing_subword_prefix or "", self.end_of_word_suffix or ""
        if not prefix and not suffix:
            return None
        middle: dict[str, int] = {}
        last: dict[str, int] = {}
        only: dict[str, int] = {}
        p, s = len(prefix), len(suffix)
        for t, i in self.vocab.items():
            if len(t) == p + 1 and t.startswith(prefix):
                middle[t[p]] = i
            if len(t) == p + 1 + s and t.startswith(prefix) and t.endswith(suffix):
                last[t[p]] = i
            if len(t) == 1 + s and t.endswith(suffix):
                only[t[0]] = i
        return middle, last, only

    def _cuts_before(self, marker: str) -> bool:
        """Whether a word may be merged in parts cut before each ``marker`` that follows another
        character (``CharSymbols::marker`` in ``src/pairbpe.rs``): no merge joins a token that
        starts with ``marker`` to one that does not end with it, so no token of the merge crosses
        such a cut (byte tokens ``<0xHH>`` end with ``>``; the unk token must not end with the
        marker either). SentencePiece-made vocabularies (Llama 2, Mistral) hold ``▁`` only at the
        start of a token: their texts are merged word by word, each word cached."""
        if marker not in self.vocab or (self.unk_token or "").endswith(marker):
            return False
        return not any(b.startswith(marker) and not a.endswith(marker) for a, b in self.merges)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("fast_merge", None)  # rebuilt on first use after unpickling
        state.pop("_marker_cuts", None)
        state.pop("_byte_lengths", None)
        return state

    # ------------------------------------------------------------------ encoding

    def get_vocab_size(self) -> int:
        return len(self.vocab)

    def get_vocab(self) -> dict[str, int]:
        """``{token string: id}`` (a copy)."""
        return dict(self.vocab)

    def token_to_id(self, token: str) -> int | None:
        return self.vocab.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self.vocab_r.get(token_id)

    def tokenize(self, word: str) -> list[int]:
        """The ids of one pre-token."""
        if not word:
            return []
        if self.dropout:
            return self.merge_word(word)
        if self.ignore_merges:
            hit = self.vocab.get(word)
            if hit is not None:
                return [hit]
        ids = self._cache.get(word)
        if ids is None:
            fast = self.fast_merge
            try:
                ids = fast.encode(word) if fast is not None else self.merge_word(word)
            except UnicodeEncodeError:  # a lone surrogate: only the Python merge takes it
                ids = self.merge_word(word)
            if len(word) > CACHE_MAX_WORD:
                return ids
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[word] = ids
        return ids

    def tokenize_spans(self, word: str) -> tuple[list[int], list[tuple[int, int]]]:
        """:meth:`tokenize` of ``word`` and the characters of ``word`` each id stands for, as
        ``(start, end)`` (a byte-fallback id: the character of its byte; for offsets)."""
        if self.ignore_merges and not self.dropout and (hit := self.vocab.get(word)) is not None:
            return [hit], [(0, len(word))]
        fast = self.fast_merge
        if fast is not None and word and not self.continuing_subword_prefix:  # (None where ids are not dense_ids)
            try:  # the Rust merge's ids, each spanning its token's bytes of the word
                got = fast.encode(word)
                return got, self._byte_lengths.char_offsets(word, got)
            except (UnicodeEncodeError, ValueError):
                pass  # a lone surrogate, or an unk (whose bytes no table holds): the Python merge's
        ids: list[int] = []
        spans: list[tuple[int, int]] = []
        # a SentencePiece-made vocabulary merges a whole text in its words (see `_cuts_before`)
        # (cut before a marker whose previous character is a token of its own and no marker, so
        # that no merge and no pending unk crosses the cut)
        vocab = self.vocab
        cuts = [i for i, c in enumerate(word) if c == MARKER and i and word[i - 1] != MARKER and word[i - 1] in vocab] \
            if self._marker_cuts and len(word) > CACHE_MAX_WORD else []
        done = 0
        for part in (word[a:b] for a, b in zip([0, *cuts], [*cuts, len(word)])):
            lengths: list[int] = []
            ids += self.merge_word(part, lengths)
            # as Hugging Face: each id's bytes follow the previous id's
            spans += [(done + a, done + b) for a, b in spans_of_bytes(part, lengths)]
            done += len(part)
        return ids, spans

    @functools.cached_property
    def dense_ids(self) -> bool:
        """Whether a table with a slot per id up to the largest (:meth:`token_lengths`, the
        offsets' tables) is a small multiple of the vocabulary: a file may give one token the id
        777,777,796 (2.9 GB of table, found by the ``hf`` atheris target); such a model's offsets
        take the Python merge."""
        return dense_table_ok(max(self.vocab.values(), default=-1) + 1, len(self.vocab))

    @functools.cached_property
    def _byte_lengths(self) -> _core.ByteLengths:
        """:meth:`token_lengths` as the core's table (ids whose lengths do not add up to the word,
        and the unk id, take the Python merge in :meth:`tokenize_spans`)."""
        return _core.ByteLengths(self.token_lengths(), [])

    def token_lengths(self) -> list[int]:
        """The bytes of the word each id of :attr:`fast_merge` stands for, by id: its token's UTF-8
        (an end-of-word suffix not counted), one byte for a byte-fallback id, none (0) for the unk
        id, which stands for a run of unknown characters."""
        size = max(self.vocab.values(), default=-1) + 1
        lengths = [0] * size
        suffix = self.end_of_word_suffix or ""
        for token, i in self.vocab.items():
            own = token[:-len(suffix)] if suffix and token.endswith(suffix) else token
            lengths[i] = len(own.encode("utf-8", "surrogatepass"))
        if self.byte_fallback:
            for b in range(256):
                if (byte_id := self.vocab.get(f"<0x{b:02X}>")) is not None:
                    lengths[byte_id] = 1
        if self.unk_token is not None and (unk_id := self.vocab.get(self.unk_token)) is not None:
            lengths[unk_id] = 0
        return lengths

    @functools.cached_property
    def _marker_cuts(self) -> bool:
        """Whether a word may be merged in parts cut before markers (the parts of a word with a
        subword prefix or suffix would take them at the cuts; dropout draws per word)."""
        plain = not (self.dropout or self.continuing_subword_prefix or self.end_of_word_suffix)
        return plain and self._cuts_before(MARKER)

    def _symbols(self, word: str, lengths: list[int] | None = None) -> list[int]:
        """Initial symbols: one per character (prefix/suffix applied), byte fallback, unk; with
        ``lengths``, the number of bytes of ``word`` each stands for is appended to it."""
        vocab, out = self.vocab, []
        unk: int | None = None  # pending unk id
        unk_len = 0  # (its bytes)
        last = len(word) - 1
        for i, c in enumerate(word):
            s = c
            if i and self.continuing_subword_prefix is not None:
                s = self.continuing_subword_prefix + s
            if i == last and self.end_of_word_suffix is not None:
                s = s + self.end_of_word_suffix
            tid = vocab.get(s)
            if tid is not None:
                if unk is not None:
                    out.append(unk)
                    if lengths is not None:
                        lengths.append(unk_len)
                    unk = None
                out.append(tid)
                if lengths is not None:
                    lengths.append(len(c.encode("utf-8")))
                continue
            if self.byte_fallback:
                ids = [vocab.get(f"<0x{b:02X}>") for b in s.encode("utf-8")]
                if all(x is not None for x in ids):
                    out.extend(ids)  # type: ignore[arg-type]  # (a pending unk stays pending, as in HF)
                    if lengths is not None:
                        lengths.extend([1] * len(ids))
                    continue
            if self.unk_token is not None:
                unk_id = vocab.get(self.unk_token)
                if unk_id is None:  # Hugging Face too fails only when an unknown character is met
                    raise EncodeError(f"unk_token {self.unk_token!r} is not in the vocabulary")
                if unk is not None and not self.fuse_unk:
                    out.append(unk)
                    if lengths is not None:
                        lengths.append(unk_len)
                unk_len = unk_len + len(c.encode("utf-8")) if unk is not None and self.fuse_unk else len(c.encode("utf-8"))
                unk = unk_id
        if unk is not None:
            out.append(unk)
            if lengths is not None:
                lengths.append(unk_len)
        return out

    def merge_word(self, word: str, lengths: list[int] | None = None) -> list[int]:
        """Hugging Face's ``Word::merge_all``: lowest (rank, position) pair first, one at a time;
        with ``lengths``, the number of bytes of ``word`` each id stands for is appended to it."""
        sizes: list[int] | None = [] if lengths is not None else None
        ids = self._symbols(word, sizes)
        n = len(ids)
        if n < 2:
            if lengths is not None:
                lengths.extend(sizes or ())
            return ids
        pairs = self.pair_ranks
        prev = list(range(-1, n - 1))
        nxt = list(range(1, n + 1))
        alive = [True] * n
        heap = []
        for i in range(n - 1):
            m = pairs.get((ids[i], ids[i + 1]))
            if m is not None:
                heap.append((m[0], i, m[1]))
        heapq.heapify(heap)
        p = self.dropout or 0.0
        skipped: list[tuple[int, int, int]] = []
        while heap:
            top = heapq.heappop(heap)
            if p and self.rng.random() < p:
                skipped.append(top)
                continue
            for s in skipped:
                heapq.heappush(heap, s)
            skipped.clear()
            _, pos, new_id = top
            right = nxt[pos]
            if not alive[pos] or right >= n:
                continue
            m = pairs.get((ids[pos], ids[right]))
            if m is None or m[1] != new_id:
                continue
            ids[pos] = new_id
            alive[right] = False
            after = nxt[right]
            nxt[pos] = after
            if after < n:
                prev[after] = pos
            before = prev[pos]
            if before >= 0:
                m = pairs.get((ids[before], new_id))
                if m is not None:
                    heapq.heappush(heap, (m[0], before, m[1]))
            if after < n:
                m = pairs.get((new_id, ids[after]))
                if m is not None:
                    heapq.heappush(heap, (m[0], pos, m[1]))
        if lengths is not None and sizes is not None:  # a merged id has the bytes of its symbols
            lengths.extend(sum(sizes[i:nxt[i]]) for i in range(n) if alive[i])
        return [ids[i] for i in range(n) if alive[i]]

    # ------------------------------------------------------------------ JSON

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str = "model", seed: int | None = None) -> BPE:
        if get(doc, "type", str, where, "BPE") != "BPE":
            raise FormatError(f"{where}: unknown model type {doc['type']!r} (bpekit reads BPE models)")
        vocab = get(doc, "vocab", dict, where)
        for tok, tid in vocab.items():
            if not isinstance(tid, int) or isinstance(tid, bool) or tid < 0:
                raise FormatError(f"{where}.vocab: id of {tok!r} must be a non-negative int, got {tid!r}")
        raw = get(doc, "merges", list, where)
        merges, as_pairs = _read_merges(raw, where)
        dropout = get(doc, "dropout", (float, int, type(None)), where, None)
        opt_str = (str, type(None))
        return cls(
            vocab,
            merges,
            dropout=None if dropout is None else float(dropout),
            unk_token=get(doc, "unk_token", opt_str, where, None),
            continuing_subword_prefix=get(doc, "continuing_subword_prefix", opt_str, where, None),
            end_of_word_suffix=get(doc, "end_of_word_suffix", opt_str, where, None),
            fuse_unk=get(doc, "fuse_unk", bool, where, False),
            byte_fallback=get(doc, "byte_fallback", bool, where, False),
            ignore_merges=get(doc, "ignore_merges", bool, where, False),
            merges_as_pairs=as_pairs,
            seed=seed,
        )

    def to_json(self) -> dict[str, Any]:
        merges: list[Any] = (
            [[a, b] for a, b in self.merges] if self.merges_as_pairs else [f"{a} {b}" for a, b in self.merges]
        )
        return {
            "type": "BPE",
            "dropout": self.dropout,
            "unk_token": self.unk_token,
            "continuing_subword_prefix": self.continuing_subword_prefix,
            "end_of_word_suffix": self.end_of_word_suffix,
            "fuse_unk": self.fuse_unk,
            "byte_fallback": self.byte_fallback,
            "ignore_merges": self.ignore_merges,
            "vocab": dict(sorted(self.vocab.items(), key=lambda x: x[1])),
            "merges": merges,
        }


def _read_merges(raw: list[Any], where: str) -> tuple[list[tuple[str, str]], bool]:
    """Merges as ``"a b"`` strings (legacy) or ``[a, b]`` pairs; the list must use one form."""
    if not raw:
        return [], True
    as_pairs = isinstance(raw[0], list)
    out: list[tuple[str, str]] = []
    for n, item in enumerate(raw):
        if as_pairs:
            if not (isinstance(item, list) and len(item) == 2 and all(isinstance(x, str) for x in item)):
                raise FormatError(f"{where}.merges[{n}]: expected a [left, right] pair of strings, got {item!r:.60}")
            out.append((item[0], item[1]))
        else:
            if not isinstance(item, str):
                raise FormatError(f"{where}.merges[{n}]: expected an 'a b' string, got {item!r:.60}")
            if item.startswith("#version"):
                continue
            parts = item.split(" ")
            if len(parts) != 2:
                raise FormatError(f"{where}.merges[{n}]: {item!r} is not two tokens separated by one space")
            out.append((parts[0], parts[1]))
    return out, as_pairs

