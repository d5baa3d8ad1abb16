"""ReferenceEncoding: tiktoken's ``Encoding`` semantics in plain Python, built from the pieces here.

``encode`` = disallowed-special check on the whole text, then: find the next allowed special
(:mod:`.special`), split the text before it with the pattern (:mod:`.pretokenize`), rank-merge
each piece (:mod:`.merge`), emit the special's id, and go on after it. Text holding lone
surrogates is re-encoded first (UTF-16 with ``surrogatepass``, decoded with ``replace``), exactly
as tiktoken does, so lone surrogates become U+FFFD and split surrogate pairs are joined.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Literal

from bpekit.errors import InputTypeError, InvalidTokenError, VocabError
from bpekit.reference.merge import rank_merge
from bpekit.reference.pretokenize import compile_pattern, split
from bpekit.reference.special import check_disallowed, find_special


def utf8_safe(text: str) -> str:
    """``text`` unchanged if it encodes as UTF-8, else with surrogates resolved as tiktoken does."""
    if not isinstance(text, str):
        raise InputTypeError(f"expected text as a str, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class ReferenceEncoding:
    """A slow, obviously-correct tokenizer with tiktoken's ``Encoding`` interface and results."""

    def __init__(
        self,
        name: str,
        pat_str: str,
        mergeable_ranks: Mapping[bytes, int],
        special_tokens: Mapping[str, int] | None = None,
    ) -> None:
        special_tokens = dict(special_tokens or {})
        self.name = name
        self.pat_str = pat_str
        compile_pattern(pat_str)  # fail now (PatternError) rather than at the first encode
        self.mergeable_ranks = dict(mergeable_ranks)
        self.special_tokens = special_tokens
        self._decoder = {rank: token for token, rank in self.mergeable_ranks.items()}
        if len(self._decoder) != len(self.mergeable_ranks):
            raise VocabError("two mergeable tokens have the same rank")
        if "" in special_tokens:
            raise VocabError("a special token is the empty string")
        self._special_decoder: dict[int, bytes] = {}
        for text, token in special_tokens.items():  # specials may share an id: the first decodes
            self._special_decoder.setdefault(token, text.encode("utf-8"))

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self.special_tokens)

    @property
    def max_token_value(self) -> int:
        ranks = max(self.mergeable_ranks.values(), default=0)
        return max(ranks, max(self.special_tokens.values(), default=0))

    @property
    def n_vocab(self) -> int:
        return self.max_token_value + 1

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of ``text`` with no special-token handling (special strings are plain text)."""
        return self._encode_chunk(utf8_safe(text))

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Token ids of ``text``; allowed specials become their ids, disallowed ones raise."""
        if allowed_special == "all":
            allowed = frozenset(self.special_tokens)
        elif isinstance(allowed_special, str):
            raise InputTypeError(f"allowed_special must be 'all' or a set, got {allowed_special!r}")
        else:
            allowed = frozenset(allowed_special)
        if disallowed_special == "all":
            disallowed = frozenset(self.special_tokens) - allowed
        elif isinstance(disallowed_special, str):
            raise InputTypeError(
                f"disallowed_special must be 'all' or a set, got {disallowed_special!r}"
            )
        else:
            disallowed = frozenset(disallowed_special)
        check_disallowed(text, disallowed)
        text = utf8_safe(text)

        ids: list[int] = []
        start = 0
        while True:
            found = find_special(text, start, self.special_tokens, allowed)
            ids += self._encode_chunk(text[start : len(text) if found is None else found.start])
            if found is None:
                return ids
            ids.append(self.special_tokens[found.token])
            start = found.end

    def _encode_chunk(self, text: str) -> list[int]:
        ids: list[int] = []
        for piece in split(self.pat_str, text):
            ids += rank_merge(piece.encode("utf-8"), self.mergeable_ranks)
        return ids

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token id (mergeable first, then special)."""
        if token in self._decoder:
            return self._decoder[token]
        if token in self._special_decoder:
            return self._special_decoder[token]
        raise InvalidTokenError(f"Invalid token for decoding: {token}")

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list[bytes]:
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_bytes(self, tokens: Iterable[int]) -> bytes:
        return b"".join(self.decode_tokens_bytes(tokens))

    def decode(self, tokens: Iterable[int], errors: str = "replace") -> str:
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def __repr__(self) -> str:
        return f"<ReferenceEncoding {self.name!r}>"
