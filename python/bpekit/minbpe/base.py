"""What every minbpe tokenizer shares: merges, vocabulary, special tokens, decoding, merging ids.

State (the same attributes as minbpe's ``Tokenizer``):

* ``merges``: ``{(left_id, right_id): new_id}`` in training order; merge ``i`` makes id ``256 + i``;
* ``pattern``: the split pattern (``""`` for BasicTokenizer);
* ``special_tokens`` / ``inverse_special_tokens``: ``{str: id}`` and ``{id: str}``;
* ``vocab``: ``{id: bytes}`` for the 256 bytes and the merged tokens.

Unlike minbpe, ``decode`` always knows the special tokens (minbpe's GPT4Tokenizer could not decode
them, and a loaded RegexTokenizer used a stale table), and an unknown id raises
:class:`~bpekit.errors.InvalidTokenError` naming it.
"""

from __future__ import annotations

import heapq
import operator
from collections.abc import Iterable

from bpekit.errors import EncodeError, FormatError, InputTypeError, InvalidTokenError, VocabError
from bpekit.minbpe import model_file
from bpekit.minbpe.trainer import learn_merges
from bpekit.specials import check_map

Merges = dict[tuple[int, int], int]


def build_vocab(merges: Merges) -> dict[int, bytes]:
    """Bytes 0..255, then each merge's bytes in merge order (minbpe's ``_build_vocab`` minus specials)."""
    vocab = {i: bytes([i]) for i in range(256)}
    for (left, right), idx in merges.items():
        vocab[idx] = vocab[left] + vocab[right]
    return vocab


def apply_merges(ids: list[int], merges: Merges) -> list[int]:
    """minbpe's encode loop: repeatedly merge every occurrence of the lowest-id mergeable pair.

    minbpe recounts all pairs after each merge (quadratic on long inputs, e.g. BasicTokenizer on a
    whole file). This version keeps a heap of ``(merge id, position)`` over a linked list and does
    the same merges: occurrences of one pair are taken left to right, skipping any that an
    earlier one consumed (``aaa`` -> ``[X, a]``), and a merge only creates pairs containing the new
    id, whose merges (if any) come later, so the order of merge ids is never violated.
    """
    n = len(ids)
    if n < 2:
        return list(ids)
    ids = list(ids)
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    prv = list(range(-1, n - 1))
    heap = [(m, i) for i in range(n - 1) if (m := merges.get((ids[i], ids[i + 1]))) is not None]
    heapq.heapify(heap)
    while heap:
        idx, p = heapq.heappop(heap)
        q = nxt[p]
        if ids[p] < 0 or q < 0 or merges.get((ids[p], ids[q])) != idx:
            continue  # consumed or changed by an earlier merge
        ids[p] = idx
        ids[q] = -1
        r = nxt[q]
        nxt[p] = r
        if r >= 0:
            prv[r] = p
            if (m := merges.get((idx, ids[r]))) is not None:
                heapq.heappush(heap, (m, p))
        lp = prv[p]
        if lp >= 0 and (m := merges.get((ids[lp], idx))) is not None:
            heapq.heappush(heap, (m, lp))
    return [t for t in ids if t >= 0]


def utf8(text: object) -> bytes:
    """``text`` as UTF-8: InputTypeError if it is not a str, EncodeError for a lone surrogate."""
    if not isinstance(text, str):
        raise InputTypeError(f"text must be a str, got {type(text).__name__}")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise EncodeError(f"text has a lone surrogate at position {exc.start}; it has no UTF-8 form") from None


def check_vocab_size(vocab_size: object) -> int:
    """``vocab_size`` as an int >= 256: InputTypeError or VocabError otherwise (minbpe asserts)."""
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise InputTypeError(f"vocab_size must be an integer >= 256, got {vocab_size!r}")
    if vocab_size < 256:
        raise VocabError(f"vocab_size must be an integer >= 256 (the 256 byte tokens), got {vocab_size!r}")
    if vocab_size > 2**32:
        raise VocabError(f"vocab_size must be an integer <= 2**32 (token ids are 32-bit), got {vocab_size!r}")
    return vocab_size


def _token_id(idx: object) -> int:
    """A token id to decode as an int: ints, bools and numpy integers; InputTypeError otherwise."""
    try:
        return operator.index(idx)  # type: ignore[arg-type]
    except TypeError:
        raise InputTypeError(f"token ids must be integers, got {type(idx).__name__} {idx!r:.40}") from None


def _check_specials(special_tokens: dict[str, int], vocab: dict[int, bytes]) -> None:
    """Special tokens must be non-empty UTF-8 strings with distinct ids outside the vocabulary."""
    check_map(special_tokens, "special tokens")
    seen: dict[int, str] = {}
    for text, idx in special_tokens.items():
        if idx in vocab:
            raise VocabError(f"special token {text!r} has id {idx}, which is already a byte or merged token")
        if idx in seen:
            raise VocabError(f"special tokens {seen[idx]!r} and {text!r} share the id {idx}")
        seen[idx] = text


class Tokenizer:
    """The shared state of the minbpe tokenizers and their decoding; see the module docstring."""

    def __init__(self) -> None:
        self.merges: Merges = {}
        self.pattern = ""
        self.special_tokens: dict[str, int] = {}
        self.inverse_special_tokens: dict[int, str] = {}
        self.vocab: dict[int, bytes] = build_vocab(self.merges)

    def _set_merges(self, merges: Merges) -> None:
        vocab = build_vocab(merges)
        _check_specials(self.special_tokens, vocab)
        self.merges, self.vocab = merges, vocab

    def _set_specials(self, special_tokens: dict[str, int]) -> None:
        special_tokens = check_map(special_tokens, "special tokens")
        _check_specials(special_tokens, self.vocab)
        self.special_tokens = special_tokens
        self.inverse_special_tokens = {v: k for k, v in special_tokens.items()}

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of ``ids`` joined; special ids give their text in UTF-8.

        ``ids`` is an iterable of ints (bools and numpy integers count as ints); bytes, a str, a
        float id or a nested list raise InputTypeError, an unknown id InvalidTokenError.
        """
        if isinstance(ids, (str, bytes, bytearray, memoryview)):
            raise InputTypeError(f"ids must be a list of int token ids, got {type(ids).__name__}")
        try:
            ids = iter(ids)
        except TypeError:
            raise InputTypeError(f"ids must be a list of int token ids, got {type(ids).__name__}") from None
        vocab, specials = self.vocab, self.inverse_special_tokens
        parts = []
        for idx in ids:
            if type(idx) is not int:
                idx = _token_id(idx)
            if idx in vocab:
                parts.append(vocab[idx])
            elif idx in specials:
                parts.append(specials[idx].encode("utf-8"))
            else:
                raise InvalidTokenError(f"invalid token id: {idx}")
        return b"".join(parts)

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids`` (invalid UTF-8 becomes U+FFFD, as in minbpe)."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def save_vocab(self, vocab_file: str) -> None:
        """Write minbpe's human-readable ``.vocab`` listing (never read back)."""
        path = model_file.file_path(vocab_file, "vocab_file")
        model_file.write_vocab(path, self.vocab, self.merges, self.special_tokens)

    def _save(self, file_prefix: str) -> None:
        """Write ``file_prefix.model`` and ``file_prefix.vocab``, both or neither."""
        prefix = model_file.file_path(file_prefix, "file_prefix")
        model = model_file.model_text(self.pattern, self.special_tokens, self.merges)
        vocab = model_file.vocab_text(self.vocab, self.merges, self.special_tokens)
        model_file.write_files([(prefix + ".model", model), (prefix + ".vocab", vocab)])

    def _read(self, path: str, with_pattern: bool) -> tuple[str, dict[str, int], Merges]:
        """Read and check a ``.model`` file: ``(pattern, special_tokens, merges)``.

        A BasicTokenizer model has an empty pattern line and a RegexTokenizer model a pattern;
        loading one as the other would encode differently from the saved tokenizer, so it is
        refused (minbpe silently ignores the pattern, or keeps its own).
        """
        pattern, special_tokens, merges = model_file.read_model(path)
        if with_pattern and not pattern:
            raise FormatError(f"{path} has no split pattern (a BasicTokenizer model); load it with BasicTokenizer")
        if not with_pattern and pattern:
            raise FormatError(f"{path} has a split pattern (a RegexTokenizer model); load it with RegexTokenizer")
        try:
            _check_specials(special_tokens, build_vocab(merges))
        except (VocabError, InputTypeError) as exc:
            raise FormatError(f"{path}: {exc}") from None
        return pattern, special_tokens, merges

    def _restore(self, special_tokens: dict[str, int], merges: Merges) -> None:
        """Set merges, vocab and special tokens together (already checked by ``_read``)."""
        self.merges, self.vocab = merges, build_vocab(merges)
        self.special_tokens = special_tokens
        self.inverse_special_tokens = {v: k for k, v in special_tokens.items()}

    def _train(self, words: list[bytes], weights: list[int], vocab_size: int, verbose: bool) -> None:
        """Learn ``vocab_size - 256`` merges from distinct chunks and their counts (see trainer.py)."""
        vocab = build_vocab({})

        def report(i: int, left: int, right: int, count: int) -> None:
            vocab[256 + i] = vocab[left] + vocab[right]
            print(
                f"merge {i + 1}/{num_merges}: ({left}, {right}) -> {256 + i} ({vocab[256 + i]!r}) "
                f"had {count} occurrences"
            )

        num_merges = check_vocab_size(vocab_size) - 256
        learned = learn_merges(words, weights, num_merges, on_merge=report if verbose else None)
        self._set_merges({(left, right): 256 + i for i, (left, right, _) in enumerate(learned)})
