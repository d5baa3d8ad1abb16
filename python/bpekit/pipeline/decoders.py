"""Decoders: token strings -> text. Each one maps the list of token strings to a new list; the
decoded text is their concatenation (formats.md §3.6). ``tokenizer.json`` shapes: ByteLevel,
Metaspace, ByteFallback, Fuse, Replace, Strip, BPEDecoder, WordPiece, CTC, Sequence.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bpekit import _core
from bpekit.errors import FormatError
from bpekit.pipeline.base import (
    ByteLevelOptions,
    Pattern,
    Stage,
    build,
    build_list,
    get,
    registry,
)
from bpekit.pipeline.byte_level import BYTE_TO_CHAR, to_bytes

DECODERS, _register = registry("decoder")
_HEX = frozenset("0123456789abcdefABCDEF")


class Decoder(Stage):
    def decode_chain(self, tokens: list[str]) -> list[str]:
        return tokens

    def decode(self, tokens: list[str]) -> str:
        return "".join(self.decode_chain(tokens))


@_register
class ByteLevel(ByteLevelOptions, Decoder):
    """Tokens in the byte alphabet become their bytes (others their UTF-8), decoded lossily."""

    def decode_chain(self, tokens: list[str]) -> list[str]:
        data = b"".join(b if (b := to_bytes(t)) is not None else t.encode("utf-8") for t in tokens)
        return [data.decode("utf-8", "replace")]

    def decode_table(self, tokenizer: Any) -> _core.ByteLevelIds | None:
        """This decoding for every id of ``tokenizer`` at once (its model's ``vocab_r`` and its
        added tokens): ``decode(ids, skip_special)`` gives ``decode_chain``'s text in one Rust
        call (src/py/decode.rs); ``None`` for a model without ``vocab_r`` or absurdly sparse ids."""
        ids = _table_ids(tokenizer)
        if type(self) is not ByteLevel or ids is None:
            return None
        vocab_r, strings, n = ids
        return _core.ByteLevelIds(n, vocab_r, strings, list(tokenizer._special_id_set()), list(BYTE_TO_CHAR))


def _table_ids(tokenizer: Any) -> tuple[dict[int, str], dict[int, str], int] | None:
    """What a decoder's Rust table covers: the model's ``vocab_r``, the added tokens' strings and
    the number of ids; ``None`` for a model without ``vocab_r`` or absurdly sparse ids."""
    vocab_r = getattr(tokenizer.model, "vocab_r", None)
    if not isinstance(vocab_r, dict):
        return None
    strings = tokenizer.added_tokens.strings
    n = max(max(vocab_r, default=-1), max(strings, default=-1)) + 1
    if n > 2 * (len(vocab_r) + len(strings)) + (1 << 20):
        return None
    return vocab_r, strings, n


@_register
class Metaspace(Decoder):
    """``▁`` -> space; in the first token every ``▁`` is dropped (unless the scheme is never)."""

    def __init__(self, replacement: str = "\u2581", prepend_scheme: str = "always", split: bool = True) -> None:
        if prepend_scheme not in ("always", "first", "never"):
            raise FormatError(f"Metaspace prepend_scheme must be always, first or never, got {prepend_scheme!r}")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = split

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for i, tok in enumerate(tokens):
            drop = i == 0 and self.prepend_scheme != "never"
            out.append(tok.replace(self.replacement, "" if drop else " "))
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Metaspace:
        scheme = get(doc, "prepend_scheme", str, where, "always")
        if get(doc, "add_prefix_space", bool, where, True) is False:
            scheme = "never"
        return cls(get(doc, "replacement", str, where), scheme, get(doc, "split", bool, where, True))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Metaspace", "replacement": self.replacement, "prepend_scheme": self.prepend_scheme,
                "split": self.split}


def _byte_token(tok: str) -> int | None:
    """The byte of a ``<0xHH>`` token (Rust's ``from_str_radix`` also takes ``+H``)."""
    if len(tok) != 6 or not tok.startswith("<0x") or not tok.endswith(">"):
        return None
    hh = tok[3:5]
    if all(c in _HEX for c in hh) or (hh[0] == "+" and hh[1] in _HEX):
        return int(hh, 16)
    return None


@_register
class ByteFallback(Decoder):
    """Runs of ``<0xHH>`` tokens become text; an invalid run gives one U+FFFD per byte."""

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        run = bytearray()

        def flush() -> None:
            if run:
                try:
                    out.append(run.decode("utf-8"))
                except UnicodeDecodeError:
                    out.extend("\ufffd" * len(run))
                run.clear()

        for tok in tokens:
            b = _byte_token(tok)
            if b is None:
                flush()
                out.append(tok)
            else:
                run.append(b)
        flush()
        return out


@_register
class Fuse(Decoder):
    def decode_chain(self, tokens: list[str]) -> list[str]:
        return ["".join(tokens)]


@_register
class Strip(Decoder):
    """Removes up to ``start`` leading and ``stop`` trailing ``content`` characters per token."""

    def __init__(self, content: str = " ", start: int = 0, stop: int = 0) -> None:
        if len(content) != 1:
            raise FormatError(f"Strip content must be one character, got {content!r}")
        self.content = content
        self.start = start
        self.stop = stop

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for tok in tokens:
            a = 0
            while a < min(self.start, len(tok)) and tok[a] == self.content:
                a += 1
            b = len(tok)
            while len(tok) - b < self.stop and b > 0 and tok[b - 1] == self.content:
                b -= 1
            out.append(tok[a:b] if a <= b else "")
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Strip:
        return cls(get(doc, "content", str, where), get(doc, "start", int, where), get(doc, "stop", int, where))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Strip", "content": self.content, "start": self.start, "stop": self.stop}


@_register
class Replace(Decoder):
    def __init__(self, pattern: Pattern | str, content: str) -> None:
        self.pattern = pattern if isinstance(pattern, Pattern) else Pattern(pattern, False)
        self.content = content

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return [self.pattern.compiled.sub(lambda _: self.content, t) for t in tokens]

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Replace:
        return cls(Pattern.from_json(get(doc, "pattern", dict, where), where), get(doc, "content", str, where))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Replace", "pattern": self.pattern.to_json(), "content": self.content}


@_register
class BPEDecoder(Decoder):
    """The end-of-word suffix becomes a space (nothing after the last token)."""

    def __init__(self, suffix: str = "</w>") -> None:
        self.suffix = suffix

    def decode_chain(self, tokens: list[str]) -> list[str]:
        last = len(tokens) - 1
        return [t.replace(self.suffix, "" if i == last else " ") for i, t in enumerate(tokens)]

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> BPEDecoder:
        return cls(get(doc, "suffix", str, where, "</w>"))

    def to_json(self) -> dict[str, Any]:
        return {"type": "BPEDecoder", "suffix": self.suffix}


# Hugging Face's WordPiece ``cleanup`` (also CTC's): these replacements, in this order
_CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
            (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def _cleanup(text: str) -> str:
    """Spaces before punctuation and English contractions removed, as ``tokenizers`` does."""
    for old, new in _CLEANUP:
        text = text.replace(old, new)
    return text


@_register
class WordPiece(Decoder):
    """Each token after the first loses its ``prefix`` if it starts with it, else gets a leading
    space; each token is then cleaned up (:func:`_cleanup`) when ``cleanup`` is set."""

    def __init__(self, prefix: str = "##", cleanup: bool = True) -> None:
        self.prefix = prefix
        self.cleanup = cleanup

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for i, tok in enumerate(tokens):
            if i:
                tok = tok[len(self.prefix):] if tok.startswith(self.prefix) else " " + tok
            out.append(_cleanup(tok) if self.cleanup else tok)
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> WordPiece:
        return cls(get(doc, "prefix", str, where), get(doc, "cleanup", bool, where))

    def to_json(self) -> dict[str, Any]:
        return {"type": "WordPiece", "prefix": self.prefix, "cleanup": self.cleanup}


@_register
class CTC(Decoder):
    """Connectionist Temporal Classification output: runs of one token become one, ``pad_token``
    is removed from each token; with ``cleanup``, each token is cleaned up (:func:`_cleanup`) and
    ``word_delimiter_token`` becomes a space (without it the delimiter stays, as in Hugging Face).
    Tokens left empty are dropped."""

    def __init__(self, pad_token: str = "<pad>", word_delimiter_token: str = "|", cleanup: bool = True) -> None:
        self.pad_token = pad_token
        self.word_delimiter_token = word_delimiter_token
        self.cleanup = cleanup

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for i, tok in enumerate(tokens):
            if i and tok == tokens[i - 1]:
                continue
            tok = tok.replace(self.pad_token, "")
            if self.cleanup:
                tok = _cleanup(tok).replace(self.word_delimiter_token, " ")
            if tok:
                out.append(tok)
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> CTC:
        return cls(get(doc, "pad_token", str, where), get(doc, "word_delimiter_token", str, where),
                   get(doc, "cleanup", bool, where))

    def to_json(self) -> dict[str, Any]:
        return {"type": "CTC", "pad_token": self.pad_token, "word_delimiter_token": self.word_delimiter_token,
                "cleanup": self.cleanup}


@_register
class Sequence(Decoder):
    def __init__(self, decoders: list[Decoder]) -> None:
        self.decoders = list(decoders)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        for d in self.decoders:
            tokens = d.decode_chain(tokens)
        return tokens

    def decode_table(self, tokenizer: Any) -> _core.FusedIds | None:
        """For ``Replace`` stages, an optional ``ByteFallback``, ``Fuse`` and an optional ``Strip``
        (the Llama-2 / Mistral decoder), this decoding for every id of ``tokenizer`` in one Rust
        call (``_core.FusedIds``, src/py/decode.rs): each id's token string replaced here once
        (``Replace`` maps each token alone), byte tokens and ``Strip`` in Rust. ``None`` for any
        other sequence (or subclass), a model without ``vocab_r``, absurdly sparse ids or token
        strings that are not valid Unicode."""
        stages = list(self.decoders)
        replaces = []
        while stages and type(stages[0]) is Replace:
            replaces.append(stages.pop(0))
        fallback = bool(stages) and type(stages[0]) is ByteFallback
        stages = stages[fallback:]
        if type(self) is not Sequence or not stages or type(stages.pop(0)) is not Fuse:
            return None
        strip = stages.pop(0) if stages and type(stages[0]) is Strip else None
        ids = _table_ids(tokenizer)
        if stages or ids is None:
            return None
        if strip is not None and not (0 <= strip.start < 2**32 and 0 <= strip.stop < 2**32):
            return None  # (a file's absurd counts: the Python decoder takes them)
        vocab_r, added, n = ids
        tokens: list[str | None] = [None] * n
        for table in (vocab_r, added):  # (an added token's string wins, as in ``id_to_token``)
            for i, t in table.items():
                for r in replaces:
                    t = r.decode_chain([t])[0]
                tokens[i] = t
        byte = [b if fallback and t is not None and (b := _byte_token(t)) is not None else -1 for t in tokens]
        special = [False] * n
        for i in tokenizer._special_id_set():
            special[i] = True
        try:
            return _core.FusedIds(tokens, byte, special, (strip.content, strip.start, strip.stop) if strip else None)
        except UnicodeEncodeError:  # a token string with a lone surrogate: the Python decoders
            return None

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> Sequence:
        return cls(build_list("decoder", DECODERS, get(doc, "decoders", list, where), f"{where}.decoders"))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Sequence", "decoders": [d.to_json() for d in self.decoders]}


def from_json(doc: Any, where: str = "decoder") -> Decoder | None:
    """The decoder of a ``tokenizer.json`` ``"decoder"`` value (``None`` for null)."""
    return build("decoder", DECODERS, doc, where)  # type: ignore[no-any-return]
