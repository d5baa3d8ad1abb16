"""`Encoding`: tiktoken's API and semantics over bpekit's Rust core.

Python decides (argument checks, the special-token policy, error messages); Rust loops (splitting,
merging, decoding) with the GIL released. Every method behaves as tiktoken 0.14's does, token for
token; bpekit adds ``count``, ``encode_batch_to_numpy`` and ``split``.
"""

from __future__ import annotations

import functools
import operator
import sys
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, AbstractSet, Any, Literal, NoReturn

from bpekit import _core, limits, specials
from bpekit.errors import (
    DisallowedSpecialError,
    IdRangeError,
    InputTypeError,
    InvalidTokenError,
    VocabError,
)

if TYPE_CHECKING:
    import numpy as np
    import regex
    import numpy.typing as npt

AllowedSpecial = Literal["all"] | AbstractSet[str]
DisallowedSpecial = Literal["all"] | Collection[str]
# The special-token policies the core checks in one call (src/py/calls.rs ``Policy``: type, size
# limit, lone surrogates, and for REFUSE any special token refused), by their codes.
_REFUSE, _ALLOW_ALL, _ORDINARY = 0, 1, 2
# The classes of an empty ``allowed_special`` (``disallowed_special``) that take those paths.
_EMPTY_SETS = (set, frozenset)
_EMPTY_COLLECTIONS = (tuple, list, set, frozenset)
# The methods an instance binds to ``_core.EncodingCalls`` (no Python frame; any call the core does
# not take goes back to the method defined here, so results and errors are the same).
_BOUND_CALLS = (
    "encode", "encode_to_numpy", "count", "decode", "decode_bytes", "decode_single_token_bytes", "decode_tokens_bytes",
    "decode_with_offsets", "encode_single_token",
)
# The core's batch arguments (allowed specials, refuse) of each policy: [] none, None all.
_BATCH_ARGS: dict[int, tuple[list[str] | None, bool]] = {
    _REFUSE: ([], True), _ALLOW_ALL: (None, False), _ORDINARY: ([], False)
}


def _fast_policy(allowed_special: object, disallowed_special: object) -> int | None:
    """The policy code of a fast call, or ``None`` for the general path (as ``Policy::of``)."""
    # classes first: no user __bool__ / __eq__ runs here (an array would raise on truth testing)
    disallowed_all = disallowed_special.__class__ is str and disallowed_special == "all"
    disallowed_none = disallowed_special.__class__ in _EMPTY_COLLECTIONS and not disallowed_special
    if allowed_special.__class__ in _EMPTY_SETS and not allowed_special:
        if disallowed_all:
            return _REFUSE
        if disallowed_none:
            return _ORDINARY
    elif allowed_special.__class__ is str and allowed_special == "all" and (disallowed_all or disallowed_none):
        return _ALLOW_ALL
    return None


def _only_specials(allowed_special: object, disallowed_special: object) -> list[str] | None:
    """``allowed_special`` as a list when it is a set or frozenset of strings and
    ``disallowed_special`` is ``"all"``: the core then matches those (the special ones among them)
    and refuses every other special token, in the batch's threads (src/py/calls.rs ``Policy::Only``)."""
    if allowed_special.__class__ not in _EMPTY_SETS or disallowed_special.__class__ is not str:
        return None
    if disallowed_special != "all" or any(s.__class__ is not str for s in allowed_special):  # type: ignore[attr-defined]
        return None
    return list(allowed_special)  # type: ignore[call-overload]


def cache_budget(value: object) -> int:
    """``value`` as a cache budget in bytes (``pretoken_cache_bytes``), or ``InputTypeError``."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= sys.maxsize:
        raise InputTypeError(f"pretoken_cache_bytes must be an int from 0 to {sys.maxsize}, got {value!r}")
    return value


class Encoding:
    """A byte-level BPE encoding: a pre-tokenizer pattern, mergeable ranks and special tokens."""

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
    ) -> None:
        _check_type("name", name, str)
        _check_type("pat_str", pat_str, str)
        _check_type("mergeable_ranks", mergeable_ranks, dict)
        special_tokens = specials.check_map(special_tokens)
        try:
            core = _core.CoreBPE(mergeable_ranks, list(special_tokens.items()), pat_str)
        except (TypeError, OverflowError) as e:
            raise InputTypeError(f"mergeable_ranks must map bytes -> int in 0..2**32: {e}") from e
        self._init(name, pat_str, core, special_tokens, mergeable_ranks)
        if explicit_n_vocab:
            if len(mergeable_ranks) + len(special_tokens) != explicit_n_vocab:
                raise VocabError(
                    f"explicit_n_vocab={explicit_n_vocab} but there are {len(mergeable_ranks)} "
                    f"mergeable and {len(special_tokens)} special tokens"
                )
            if self.max_token_value != explicit_n_vocab - 1:
                raise VocabError(
                    f"explicit_n_vocab={explicit_n_vocab} but the largest token id is {self.max_token_value}"
                )

    @classmethod
    def _from_core(
        cls, name: str, pat_str: str, core: _core.CoreBPE, special_tokens: dict[str, int]
    ) -> Encoding:
        """An encoding over an already built core (the fast load path; ranks materialised lazily)."""
        self = cls.__new__(cls)
        self._init(name, pat_str, core, special_tokens, None)
        return self

    def _init(
        self,
        name: str,
        pat_str: str,
        core: _core.CoreBPE,
        special_tokens: dict[str, int],
        mergeable_ranks: dict[bytes, int] | None,
    ) -> None:
        self.name = name
        self._pat_str = pat_str
        self._core_bpe = core
        self._special_tokens = dict(special_tokens)
        self._ranks_cache = mergeable_ranks
        max_ordinary = core.max_rank() or 0
        cls = type(self)
        if cls.encode_ordinary is Encoding.encode_ordinary:  # not overridden by a subclass
            # the same checks, result and errors as the method, less one Python call (~0.08 µs)
            self.encode_ordinary = core.encode_ordinary_str  # type: ignore[method-assign]
        calls = _core.EncodingCalls(core, self)
        for method in _BOUND_CALLS:
            if getattr(cls, method) is getattr(Encoding, method):
                setattr(self, method, calls.method(method))
        self.max_token_value = max(max_ordinary, max(special_tokens.values(), default=0))

    @property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        if self._ranks_cache is None:
            self._ranks_cache = self._core_bpe.mergeable_ranks()
        return self._ranks_cache

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    # ------------------------------------------------------------------ encoding

    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes text, treating special-token text as ordinary text."""
        return self._core_bpe.encode_ordinary_str(text)

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = set(),  # noqa: B006 (tiktoken's signature)
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        """Encodes text; special tokens are refused unless allowed (tiktoken's policy)."""
        if (policy := _fast_policy(allowed_special, disallowed_special)) is not None:
            return self._core_bpe.encode_str(text, policy)
        text = _check_text(text)
        allowed = self._check_special(text, allowed_special, disallowed_special)
        return _valid_text(self._core_bpe.encode, text, allowed)

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = set(),  # noqa: B006
        disallowed_special: DisallowedSpecial = "all",
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """:meth:`encode` and, for each id, the span ``(start, end)`` of ``text`` it stands for, in
        characters (``text[start:end]``). A token holding only some bytes of a character spans
        that whole character, as in Hugging Face's offsets (``bpekit.offsets``)."""
        from bpekit.offsets import of_rank_ids

        ids = self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return ids, of_rank_ids(text, ids, self._core_bpe.char_offsets)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = set(),  # noqa: B006
        disallowed_special: DisallowedSpecial = "all",
    ) -> npt.NDArray[np.uint32]:
        """As :meth:`encode`, as a ``uint32`` numpy array (no intermediate list)."""
        if (policy := _fast_policy(allowed_special, disallowed_special)) is not None:
            return self._core_bpe.encode_to_numpy_str(text, policy)
        text = _check_text(text)
        allowed = self._check_special(text, allowed_special, disallowed_special)
        return _valid_text(self._core_bpe.encode_to_numpy, text, allowed)

    def count(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = set(),  # noqa: B006
        disallowed_special: DisallowedSpecial = "all",
    ) -> int:
        """``len(encode(text, ...))`` without building the list."""
        if (policy := _fast_policy(allowed_special, disallowed_special)) is not None:
            return self._core_bpe.count_str(text, policy)
        text = _check_text(text)
        allowed = self._check_special(text, allowed_special, disallowed_special)
        return _valid_text(self._core_bpe.count, text, allowed)

    def truncate(
        self,
        text: str,
        max_tokens: int,
        *,
        side: str = "right",
        allowed_special: AllowedSpecial = set(),  # noqa: B006
        disallowed_special: DisallowedSpecial = "all",
    ) -> str:
        """Cuts ``text`` to at most ``max_tokens`` tokens: it returns a part of ``text`` that
        encodes to at most ``max_tokens`` ids, and only that part is encoded, so cutting a long
        document costs what the budget's tokens cost, where ``decode(encode(text)[:n])`` encodes
        it all (a piece of 64 KiB or more, a text with no split point, is cut by a search as for
        ``side="left"``, not merged whole).

        ``side="right"`` (the default) cuts the end: the text of the first ``max_tokens`` ids of
        ``encode(text, ...)``, a last id that ends inside a character left out (cut inside it,
        the bytes left could take more ids than the budget), and fewer in the rare case where the
        prefix alone splits into more ids (o200k's ``" I'T"`` is one piece, ``" I'"`` two).
        ``side="left"`` cuts the start (a chat history's last turns): the longest suffix that
        fits, found by counting a window from the end that doubles until it takes more, then
        cutting it by binary search over characters.

        A disallowed special token raises as in ``encode`` if it is in the part kept. Text with
        lone surrogates is fixed first, as ``encode`` fixes it; the result is then part of the
        fixed text."""
        text = _check_text(text)
        max_tokens = _check_cut(max_tokens, side)
        allowed = self._check_special("", allowed_special, disallowed_special)

        def cut(text: str) -> str:
            if side == "right":
                return text[: self._core_bpe.truncate(text, allowed, max_tokens)]
            return longest_cut(text, max_tokens, lambda part: self._core_bpe.count(part, allowed), from_end=True)

        try:
            out = cut(text)
        except UnicodeEncodeError:  # lone surrogates (in the part looked at) are not UTF-8
            out = cut(_fix_surrogates(text))
        self._check_special(out, allowed_special, disallowed_special)
        return out

    def encode_ordinary_batch(self, text: list[str], *, num_threads: int = 8) -> list[list[int]]:
        """Encodes many texts in parallel (Rust threads, GIL released)."""
        return self._core_bpe.encode_batch_lists(text, num_threads, [], False)

    def encode_batch(
        self,
        text: list[str],
        *,
        num_threads: int = 8,
        allowed_special: AllowedSpecial = set(),  # noqa: B006
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[list[int]]:
        """Encodes many texts in parallel, with :meth:`encode`'s special-token policy."""
        return self._batch(self._core_bpe.encode_batch_lists, text, num_threads, allowed_special, disallowed_special)

    def encode_batch_with_offsets(
        self,
        text: list[str],
        *,
        num_threads: int = 8,
        allowed_special: AllowedSpecial = set(),  # noqa: B006
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[tuple[list[int], list[tuple[int, int]]]]:
        """:meth:`encode_with_offsets` of each text: the ids encoded in parallel as
        :meth:`encode_batch` encodes them, each text's spans from the core in turn."""
        from bpekit.offsets import of_rank_ids

        batch = self.encode_batch(text, num_threads=num_threads, allowed_special=allowed_special,
                                  disallowed_special=disallowed_special)
        spans = self._core_bpe.char_offsets
        return [(ids, of_rank_ids(t, ids, spans)) for t, ids in zip(text, batch)]

    def count_batch(
        self,
        text: list[str],
        *,
        num_threads: int = 8,
        allowed_special: AllowedSpecial = set(),  # noqa: B006
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        """``[len(ids) for ids in encode_batch(text, ...)]`` without building the lists: the texts
        are counted in parallel (Rust threads, GIL released), with one reused buffer per thread
        and no Python object per id. The special-token policy is :meth:`encode`'s."""
        return self._batch(self._core_bpe.count_batch, text, num_threads, allowed_special, disallowed_special)

    def encode_batch_to_numpy(
        self,
        text: list[str],
        *,
        num_threads: int = 8,
        allowed_special: AllowedSpecial = set(),  # noqa: B006
        disallowed_special: DisallowedSpecial = "all",
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
        """Encodes many texts into one flat ``uint32`` array and ``int64`` offsets (``len + 1``).

        The ids of text ``i`` are ``flat[offsets[i]:offsets[i + 1]]``.
        """
        return self._batch(self._core_bpe.encode_batch_numpy, text, num_threads, allowed_special, disallowed_special)

    def _batch(self, call: Any, text: Any, num_threads: Any, allowed_special: AllowedSpecial,
               disallowed_special: DisallowedSpecial) -> Any:
        """A core batch call (``call(texts, threads, allowed, refuse)``) under :meth:`encode`'s
        special-token policy: the common policies go straight to Rust, which checks the texts
        and the thread count; any other is resolved here over the whole batch first."""
        if (policy := _fast_policy(allowed_special, disallowed_special)) is not None:
            return call(text, num_threads, *_BATCH_ARGS[policy])
        if (only := _only_specials(allowed_special, disallowed_special)) is not None:
            return call(text, num_threads, only, True)
        texts = _check_batch(text)
        threads = _check_threads(num_threads)
        return call(texts, threads, self._check_special_batch(texts, allowed_special, disallowed_special), False)

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = set(),  # noqa: B006
        disallowed_special: DisallowedSpecial = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """The stable tokens of ``text`` and every token sequence that could complete the rest."""
        text = _check_text(text)
        allowed = self._check_special(text, allowed_special, disallowed_special)
        return _valid_text(self._core_bpe.encode_with_unstable, text, allowed)

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of one whole token (ordinary bytes or a special token's text); ``KeyError`` if none."""
        if isinstance(text_or_bytes, str):
            if (special := self._special_tokens.get(text_or_bytes)) is not None:
                b = text_or_bytes.encode("utf-8")
                if (t := self._core_bpe.encode_single_token(b)) is not None:
                    return t
                return special
            as_bytes = text_or_bytes.encode("utf-8")
        elif isinstance(text_or_bytes, (bytes, bytearray)):
            as_bytes = bytes(text_or_bytes)
        else:
            raise InputTypeError(f"expected str or bytes, got {type(text_or_bytes).__name__}")
        if (t := self._core_bpe.encode_single_token(as_bytes)) is not None:
            return t
        if (special := self._special_tokens.get(as_bytes.decode("utf-8", "replace"))) is not None:
            return special
        raise InvalidTokenError(as_bytes)

    # ------------------------------------------------------------------ decoding

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of a token sequence; an unknown id raises ``KeyError``."""
        tokens = _check_tokens(tokens)
        try:
            return self._core_bpe.decode_bytes(tokens)
        except OverflowError as e:
            raise _out_of_range([tokens], e) from e
        except TypeError as e:
            raise InputTypeError(f"token ids must be ints: {e}") from e

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """Decodes to text; invalid UTF-8 is handled by ``errors`` (lossy by default, as tiktoken)."""
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (ordinary or special)."""
        if not isinstance(token, int) or isinstance(token, bool):
            raise InputTypeError(f"a token id must be an int, got {type(token).__name__}")
        if not 0 <= token < 2**32:
            raise IdRangeError(f"token id {token} is out of range (0..2**32)")
        b = self._core_bpe.token_bytes(token)
        if b is None:
            raise InvalidTokenError(str(token))
        return b

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token."""
        tokens = _check_tokens(tokens)
        try:
            return [self.decode_single_token_bytes(t) for t in tokens]
        except IdRangeError as e:
            raise _out_of_range([tokens], e) from None

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text and the character offset at which each token starts (strict UTF-8)."""
        token_bytes = self.decode_tokens_bytes(tokens)
        text_len = 0
        offsets = []
        for token in token_bytes:
            offsets.append(max(0, text_len - (0x80 <= token[0] < 0xC0)))
            text_len += sum(1 for c in token if not 0x80 <= c < 0xC0)
        text = b"".join(token_bytes).decode("utf-8", errors="strict")
        return text, offsets

    def decode_batch(
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        """Decodes many token sequences."""
        if (texts := self._core_bpe.decode_batch_str(batch, errors, num_threads)) is not None:
            return texts  # type: ignore[no-any-return]  # lists/tuples of ints: one core call
        return [b.decode("utf-8", errors=errors) for b in self.decode_bytes_batch(batch, num_threads=num_threads)]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        """Decodes many token sequences to bytes, in parallel."""
        if isinstance(batch, (str, bytes)):
            raise InputTypeError(f"a batch must be a list of token sequences, got {type(batch).__name__}")
        seqs = [_check_tokens(t) for t in batch]
        threads = _check_threads(num_threads)  # (outside the try: its error is not about the ids)
        try:
            return self._core_bpe.decode_bytes_batch(seqs, threads)
        except OverflowError as e:
            raise _out_of_range(seqs, e) from e
        except TypeError as e:
            raise InputTypeError(f"token ids must be ints: {e}") from e

    # ------------------------------------------------------------------ misc

    def token_byte_values(self) -> list[bytes]:
        """Every ordinary token's bytes, sorted."""
        return self._core_bpe.token_byte_values()

    def split(self, text: str) -> list[str]:
        """The pre-tokenizer's pieces of ``text`` (what BPE merges independently)."""
        text = _check_text(text)
        return _valid_text(self._core_bpe.split, text)

    @property
    def pretoken_cache_bytes(self) -> int:
        """Byte budget of the per-thread pre-token cache (piece -> ids); 0 means off.

        On by default (256 KiB per thread and encoder: a table that stays in the CPU's L2 cache;
        larger budgets measured slower). The memory is fixed by the budget, whatever the text.
        The cache never changes results, only speed; set it to 0 to turn it off.
        """
        return self._core_bpe.cache_capacity()

    @pretoken_cache_bytes.setter
    def pretoken_cache_bytes(self, value: int) -> None:
        self._core_bpe.set_cache_capacity(cache_budget(value))

    @property
    def eot_token(self) -> int:
        return self._special_tokens["<|endoftext|>"]

    @functools.cached_property
    def special_tokens_set(self) -> set[str]:
        return set(self._special_tokens.keys())

    @functools.cached_property
    def _special_token_values(self) -> frozenset[int]:
        return frozenset(self._special_tokens.values())

    def is_special_token(self, token: int) -> bool:
        if not isinstance(token, int):
            raise InputTypeError(f"a token id must be an int, got {type(token).__name__}")
        return token in self._special_token_values

    @property
    def n_vocab(self) -> int:
        """``max_token_value + 1`` (counts unused ids, as tiktoken does)."""
        return self.max_token_value + 1

    # ------------------------------------------------------------------ private (tiktoken's)

    def _encode_single_piece(self, text_or_bytes: str | bytes) -> list[int]:
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        return self._core_bpe.encode_single_piece(_check_bytes(text_or_bytes))

    def _encode_only_native_bpe(self, text: str) -> list[int]:
        import regex  # only here and for the special-token scan: `import bpekit` stays light

        out: list[int] = []
        for piece in regex.findall(_fancy_to_regex(self._pat_str), text):
            out.extend(self._core_bpe.encode_single_piece(piece.encode("utf-8")))
        return out

    def _encode_bytes(self, text: bytes) -> list[int]:
        return self._core_bpe.encode_bytes(_check_bytes(text))

    def _check_special(self, text: str, allowed_special: Any, disallowed_special: Any) -> list[str] | None:
        """Applies tiktoken's policy: raises if ``text`` holds a disallowed special token.

        Returns the allowed special strings for the core (``None`` = all of them). Searching for
        disallowed special tokens runs in Rust (one Aho-Corasick pass) unless the caller names
        strings that are not special tokens, which go through a regex as in tiktoken.
        """
        if allowed_special == "all":
            if disallowed_special != "all" and disallowed_special:
                self._raise_if_found(text, disallowed_special)
            return None
        if not isinstance(allowed_special, (set, frozenset, AbstractSet)):
            if isinstance(allowed_special, str):  # read as a set of its characters, before
                raise InputTypeError(
                    f"allowed_special must be 'all' or a set of strings, not the string {allowed_special!r}"
                    + (f" (write {{{allowed_special!r}}})" if allowed_special else "")
                )
            try:
                allowed_special = set(allowed_special)
            except TypeError:
                raise InputTypeError(
                    f"allowed_special must be 'all' or a collection of strings, got {type(allowed_special).__name__}"
                ) from None
        if disallowed_special == "all":
            if not allowed_special:
                if found := self._first_special(text, None):
                    raise_disallowed_special_token(found)
                return []
            disallowed_special = self.special_tokens_set - allowed_special
        if disallowed_special:
            self._raise_if_found(text, disallowed_special)
        return [s for s in allowed_special if s in self._special_tokens]

    def _raise_if_found(self, text: str, disallowed: Collection[str]) -> None:
        if isinstance(disallowed, str):
            raise InputTypeError("disallowed_special must be 'all' or a collection of strings, not one string")
        try:
            disallowed = frozenset(disallowed)
        except TypeError:
            raise InputTypeError(
                f"disallowed_special must be 'all' or a collection of strings, got {type(disallowed).__name__}"
            ) from None
        if disallowed <= self.special_tokens_set:
            found = self._first_special(text, list(disallowed))
        else:
            m = _special_token_regex(disallowed).search(text)
            found = m.group() if m else None
        if found:
            raise_disallowed_special_token(found)

    def _first_special(self, text: str, names: list[str] | None) -> str | None:
        return _valid_text(self._core_bpe.first_special, text, names)

    def _check_special_batch(self, texts: list[str], allowed_special: Any, disallowed_special: Any) -> list[str] | None:
        allowed = self._check_special("", allowed_special, disallowed_special)
        for t in texts:
            self._check_special(t, allowed_special, disallowed_special)
        return allowed

    # ------------------------------------------------------------------ pickling

    def __getstate__(self) -> object:
        from bpekit import registry

        if self is registry.ENCODINGS.get(self.name):
            return self.name
        return {
            "name": self.name,
            "pat_str": self._pat_str,
            "mergeable_ranks": self._mergeable_ranks,
            "special_tokens": self._special_tokens,
        }

    def __setstate__(self, value: object) -> None:
        from bpekit import registry

        if isinstance(value, str):
            self.__dict__ = registry.get_encoding(value).__dict__
            return
        if not isinstance(value, dict):
            raise InputTypeError(f"cannot unpickle an Encoding from {type(value).__name__}")
        self.__init__(**value)  # type: ignore[misc]


# ---------------------------------------------------------------------- helpers


@functools.lru_cache(maxsize=128)
def _special_token_regex(tokens: frozenset[str]) -> regex.Pattern[str]:
    import regex

    inner = "|".join(regex.escape(t) for t in sorted(tokens, key=len, reverse=True))
    return regex.compile(f"({inner})")


def raise_disallowed_special_token(token: str) -> NoReturn:
    raise DisallowedSpecialError(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n",
        token,
    )


def _valid_text(fn: Callable[..., Any], text: str, *args: Any) -> Any:
    """Calls ``fn(text, *args)``; text with lone surrogates is fixed first (it cannot be UTF-8)."""
    try:
        return fn(text, *args)
    except UnicodeEncodeError:
        return fn(_fix_surrogates(text), *args)


def _fix_surrogates(text: str) -> str:
    # Lone surrogates cannot be UTF-8: join valid pairs, replace the rest by U+FFFD, as tiktoken's
    # text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"), which calls an error
    # handler per lone surrogate (3.8x benign text); src/py/text.rs does it in one pass.
    return _core.fix_surrogates(text)


def _fancy_to_regex(pattern: str) -> str:
    return pattern.replace(r"\s++$", r"\s++\Z")


def _check_type(what: str, value: object, typ: type) -> None:
    if not isinstance(value, typ):
        raise InputTypeError(f"{what} must be a {typ.__name__}, got {type(value).__name__}")


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise InputTypeError(
            f"text must be a str, got {type(text).__name__}"
            + (" (decode bytes first, or use _encode_bytes)" if isinstance(text, (bytes, bytearray)) else "")
        )
    limits.check_texts((text,))
    return text


def _check_bytes(data: object) -> bytes:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InputTypeError(f"expected bytes, got {type(data).__name__}")
    limits.check_bytes(len(data))
    return bytes(data)


def _check_batch(texts: object) -> list[str]:
    if isinstance(texts, (str, bytes, bytearray)) or not isinstance(texts, Sequence):
        raise InputTypeError(f"a batch must be a list of str, got {type(texts).__name__}")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise InputTypeError(f"batch item {i} must be a str, got {type(t).__name__}")
    limits.check_texts(texts)
    return list(texts)


def _check_cut(max_tokens: object, side: object) -> int:
    """The arguments of a ``truncate`` call: the budget (returned) and the side."""
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 0:
        raise InputTypeError(f"max_tokens must be an int >= 0, got {max_tokens!r}")
    if side not in ("right", "left"):
        raise InputTypeError(f"side must be 'right' (keep the start) or 'left' (keep the end), got {side!r}")
    return min(max_tokens, sys.maxsize)  # no text has more tokens: a bigger budget keeps it whole


def longest_cut(text: str, max_tokens: int, count: Callable[[str], int], from_end: bool = False) -> str:
    """The longest prefix (``from_end``: suffix) of ``text`` that ``count`` takes to at most
    ``max_tokens``, cut between characters: a window that doubles until ``count`` says it takes
    more (or it is the whole text, which fits), then a binary search for a cut that fits where one
    character more does not. The work depends on the budget, not on the length of the text; the
    cut may stop short of the longest that fits where adding characters lowers the count."""

    def fits(width: int) -> bool:
        return count(text[len(text) - width :] if from_end else text[:width]) <= max_tokens

    lo, hi = 0, min(len(text), 8 * max_tokens + 64)
    while fits(hi):
        if hi == len(text):
            return text
        lo, hi = hi, min(len(text), 2 * hi)
    while hi - lo > 1:  # fits(lo), not fits(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return text[len(text) - lo :] if from_end else text[:lo]


def _check_threads(n: object) -> int:
    """A ``num_threads`` argument: an int >= 0 (0 = one per core). The core starts at most one
    thread per core, so a count past 64 bits is taken as "every core" rather than refused."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise InputTypeError(f"num_threads must be an int >= 0 (0 = one per core), got {n!r}")
    return min(n, 1 << 20)


def _out_of_range(seqs: list[list[int]], error: Exception) -> Exception:
    """An :class:`IdRangeError` naming the first id of ``seqs`` outside 0..2**32 and where it is
    (``error`` itself if there is none)."""
    for k, seq in enumerate(seqs):
        for i, t in enumerate(seq):
            try:
                t = operator.index(t)
            except TypeError:
                continue
            if not 0 <= t < 2**32:
                where = f"index {i}" + (f" of sequence {k}" if len(seqs) > 1 else "")
                return IdRangeError(f"token id {t} at {where} is out of range (0..2**32)")
    return error


def _has_surrogates(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (has no UTF-8 bytes)."""
    if text.isascii():  # a flag CPython keeps on every str: no scan
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check_tokens(tokens: object) -> list[int]:
    if isinstance(tokens, (str, bytes)):
        raise InputTypeError(f"tokens must be a sequence of int, got {type(tokens).__name__}")
    try:
        return list(tokens)  # type: ignore[call-overload]
    except TypeError as e:
        raise InputTypeError(f"tokens must be a sequence of int, got {type(tokens).__name__}") from e
