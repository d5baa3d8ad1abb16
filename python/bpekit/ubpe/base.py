"""What both UBPE models share: the alphabet and known words, splitting, fitting, tf-idf
weights, rearrangement, decoding and the ubpe 0.3.0 JSON format.

Ids: alphabet symbols get ``0..A-1``, known words ``A..A+K-1``, and tokens made by fitting
start at ``A+K``. ``tokens_mapper["backward"]`` maps a token to a tuple of ids (a pair in the
classic model, the whole alphabet expansion in the universal one); ``tokens_weights`` maps it to
its idf weight ``ln((1 + N) / (1 + df))`` (N documents, df of them containing the pair).
"""

from __future__ import annotations

import math
import operator
import sys
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, ClassVar

from bpekit.errors import InputTypeError, UnknownIdError, UsageError
from bpekit.ubpe import options, serialize
from bpekit.ubpe.fitting import fast_merges
from bpekit.ubpe.rearrange import rearrange
from bpekit.ubpe.split import SplitMode, SplitPipeline

Symbol = Hashable


class UBPEBase(ABC):
    """Alphabet, splitting pipeline, fitting and serialisation; subclasses add encode/decode."""

    classic: ClassVar[bool]

    def __init__(
        self,
        *,
        alphabet: dict[Symbol, int] | Iterable[Symbol] | None = None,
        n_tokens: int = 1024,
        known_words: Iterable | dict | None = None,
        break_tokens: Iterable[Symbol] | None = None,
        regex_str: str | None = None,
        stop_tokens: Iterable[Symbol] | None = None,
    ) -> None:
        self.alphabet = options.check_alphabet(alphabet)
        self.inverse_alphabet = {i: s for s, i in self.alphabet.items()}
        self.known_words = options.check_known_words(known_words, self.alphabet)
        self.break_tokens = options.check_separators("break_tokens", break_tokens, self.alphabet)
        self.regex_str = options.check_regex(regex_str)
        self.stop_tokens = options.check_separators("stop_tokens", stop_tokens, self.alphabet)
        self.n_tokens = options.check_positive("n_tokens", n_tokens)
        self.tokens_mapper: dict[str, dict[Any, Any]] = {"backward": {}, "forward": {}}
        self.tokens_weights: dict[int, float] = {}
        self._fitted = False
        self._pipeline = SplitPipeline(
            self.alphabet, self.known_words, self.break_tokens, self.regex_str, self.stop_tokens
        )

    # ------------------------------------------------------------------ state
    @property
    def first_token_id(self) -> int:
        """The first id fitting can give: alphabet size plus the number of known words."""
        return len(self.alphabet) + len(self.known_words or ())

    @property
    def is_fitted(self) -> bool:
        """True once :meth:`fit` has finished or the model came from :meth:`loads` (a fit may
        leave no token: a corpus without pairs, or a classic trim that deleted them all)."""
        return self._fitted

    def _check_fitted(self) -> None:
        if not self.is_fitted:
            raise UsageError("the tokenizer is not fitted: call fit() or loads() first")

    def _check_split_mode(self, split_mode: object) -> SplitMode:
        if not isinstance(split_mode, SplitMode):
            raise InputTypeError(f"`split_mode` must be a SplitMode, not {split_mode!r}")
        return split_mode

    def split(
        self,
        doc: str | Sequence,
        *,
        split_mode: SplitMode = SplitMode.FULL,
        leave_separators: bool = True,
    ) -> list[list[int]]:
        """The parts (lists of ids) the pipeline makes of ``doc``."""
        options.check_document(doc, (str, list, tuple), "a document")
        mode = self._check_split_mode(split_mode)
        return self._pipeline(doc, mode, leave_separators)  # type: ignore[arg-type]

    # ---------------------------------------------------------------- fitting
    def fit(
        self,
        corpus: Iterable[str | Sequence],
        *,
        n_candidates: int = 50,
        rearrange_tokens: bool = True,
        quiet: bool = True,
        split_mode: SplitMode = SplitMode.FULL,
    ) -> None:
        """Learn tokens from ``corpus`` (documents: str, list or tuple of symbols).

        Each iteration merges a batch of non-conflicting frequent pairs, so the vocabulary can
        overshoot ``n_tokens``; with ``rearrange_tokens`` it is then trimmed back (classic models
        may trim more, see :mod:`bpekit.ubpe.rearrange`) and renumbered by weight. Progress goes
        to stderr unless ``quiet``.
        """
        if self.is_fitted:
            raise UsageError("this tokenizer is already fitted: it can be fitted only once")
        n_candidates = options.check_positive("n_candidates", n_candidates)
        mode = self._check_split_mode(split_mode)
        if isinstance(corpus, (str, bytes)) or not isinstance(corpus, Iterable):
            raise InputTypeError("`corpus` must be an iterable of documents (str, list or tuple)")
        docs = []
        for i, doc in enumerate(corpus):
            options.check_document(doc, (str, list, tuple), f"document {i} of the corpus")
            docs.append(self._pipeline(doc, mode, False))
        progress = None if quiet else _print_progress
        merges = fast_merges(docs, self.first_token_id, self.n_tokens, n_candidates, progress)
        backward: dict[int, tuple[int, ...]] = {}
        weights: dict[int, float] = {}
        for new, left, right, df in merges:
            if self.classic:
                backward[new] = (left, right)
            else:
                backward[new] = backward.get(left, (left,)) + backward.get(right, (right,))
            weights[new] = math.log((1 + len(docs)) / (1 + df))
        if rearrange_tokens:
            if not weights:
                raise UsageError(
                    "the corpus has no pair of adjacent symbols, so fitting made no tokens and "
                    "there is nothing to rearrange (ubpe: 'Tokenizer is not fitted')"
                )
            backward, weights = rearrange(
                backward, weights, self.first_token_id, self.n_tokens, self.classic
            )
        self._install(backward, weights)
        self._fitted = True
        if not quiet:
            print(f"ubpe: {len(weights)} tokens, n_tokens = {self.n_tokens}", file=sys.stderr)

    def rearrange_tokens(self, *, n_tokens: int | None = None, quiet: bool = True) -> None:
        """Trim to ``n_tokens`` (default: the current size) and renumber by descending weight."""
        self._check_fitted()
        target = self.n_tokens if n_tokens is None else options.check_positive("n_tokens", n_tokens)
        backward, weights = rearrange(
            self.tokens_mapper["backward"],
            self.tokens_weights,
            self.first_token_id,
            target,
            self.classic,
        )
        self._install(backward, weights)
        if not quiet:
            print(f"ubpe: {len(weights)} tokens after rearrangement", file=sys.stderr)

    def _install(self, backward: dict[int, tuple[int, ...]], weights: dict[int, float]) -> None:
        self.tokens_weights = weights
        self.n_tokens = self.first_token_id + len(weights)
        self._set_mapper(backward)

    def _set_mapper(self, backward: dict[int, tuple[int, ...]]) -> None:
        forward: dict[tuple[int, ...], int] = {}
        for token, tup in backward.items():
            forward[tup] = token  # a tuple made twice keeps the later id
        self.tokens_mapper = {"backward": backward, "forward": forward}
        self._build_cache()

    @abstractmethod
    def _build_cache(self) -> None:
        """Rebuild the encoder's lookup structures from ``tokens_mapper``."""

    # --------------------------------------------------------------- decoding
    @abstractmethod
    def _expand(self, tokens: list[int]) -> list[int]:
        """``tokens`` with every artificial id replaced by the alphabet ids it stands for."""

    def decode(self, tokens: Sequence[int]) -> str | list:
        """Symbols of ``tokens``: a str when the symbols are str (joined), else a list."""
        if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
            raise InputTypeError(f"`tokens` must be a list of ids, not {type(tokens).__name__}")
        if len(tokens) == 0:
            raise UsageError("cannot decode an empty list of ids (ubpe raises IndexError here)")
        ids = []
        for token in tokens:
            try:
                ids.append(operator.index(token))
            except TypeError:
                raise UnknownIdError(f"Unknown token {token!r}: ids are ints") from None
        inverse = self.inverse_alphabet
        words = self.known_words or {}
        symbols: list = []
        for token in self._expand(ids):
            symbol = inverse.get(token, _MISSING)
            if symbol is not _MISSING:
                symbols.append(symbol)
            elif token in words:
                symbols.extend(words[token])
            else:
                raise UnknownIdError(f"Unknown token {token}")
        if isinstance(symbols[0], str):
            return "".join(symbols)
        return symbols

    # ---------------------------------------------------------- serialisation
    def dumps(self) -> str:
        """The model as ubpe 0.3.0's JSON string."""
        return serialize.dumps(self)

    @classmethod
    def loads(cls, dump: str, token_type: type | Any = int) -> UBPEBase:
        """A model from :meth:`dumps` output; ``token_type`` converts the alphabet's JSON keys
        (``int`` by default, as in ubpe: str alphabets need ``token_type=str``)."""
        return serialize.loads(cls, dump, token_type)


_MISSING = object()


def _print_progress(iteration: int, newest: int, live_pairs: int) -> None:
    print(f"ubpe: iteration {iteration}, newest id {newest}, {live_pairs} pairs", file=sys.stderr)
