"""SentencePiece's ``Normalizer::Normalize``: charsmap rules, user-defined pass-through, whitespace.

The text is cut into *prefixes*, each the longest user-defined piece at that point, else the
longest charsmap rule (its replacement may be empty), else one character as is (a malformed
byte becomes U+FFFD). The replacements are then joined: leading spaces dropped, a prefix's leading
spaces removed when the previous one ended with a space, trailing spaces dropped (all three only
with ``remove_extra_whitespaces``), ``' '`` written as ``'▁'`` (``escape_whitespaces``) and one
space symbol added in front, or at the end with ``treat_whitespace_as_suffix``
(``add_dummy_prefix``).

Two cutters produce the same prefixes. ``_byte_prefixes`` follows sentencepiece byte for byte
and is the only one that can see malformed UTF-8 (``bytes`` input). ``_text_prefixes`` works on
``str`` and skips, with one regex search, the runs of characters at which no rule can start (most
text), running the exact trie walk only elsewhere; it hands over to the byte cutter in the cases
it cannot represent (a rule that ends inside a character). Measured on tinyshakespeare with
the stock ``nmt_nfkc`` map: 6.4 MB/s against 0.5 MB/s for the byte cutter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import accumulate

from bpekit.errors import EncodeError, FormatError, InternalError
from bpekit.formats.sentencepiece.charsmap import CharsMap, _utf8_length

SPACE_SYMBOL = "\u2581"
_SPACES = re.compile(" {2,}")
_RUN_PARTS = re.compile(" |[^ ]+")
_MAX_UD_ALTERNATIVES = 64  # beyond this, scan for their first characters instead of the pieces
_SURROGATE = re.compile("[\ud800-\udfff]")


class _NeedBytes(Exception):
    """The str cutter met a rule it cannot represent; the byte cutter must do this text."""


class Normalizer:
    """One ``NormalizerSpec`` plus the model's user-defined pieces (matched before any rule)."""

    def __init__(
        self,
        *,
        charsmap: CharsMap | None,
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        treat_whitespace_as_suffix: bool = False,
        user_defined: Iterable[str] = (),
    ) -> None:
        self.charsmap = charsmap
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix
        self._ud = frozenset(user_defined)
        self._ud_lengths = sorted({len(p) for p in self._ud}, reverse=True)
        self._ud_bytes = frozenset(p.encode("utf-8") for p in self._ud)
        self._ud_byte_lengths = sorted({len(p) for p in self._ud_bytes}, reverse=True)
        self._ud_first = frozenset(p[0] for p in self._ud)
        self._decoded: dict[int, str] = {}
        self._build_scanner()

    def _build_scanner(self) -> None:
        """Prepares the str cutter: which characters need a closer look.

        A character needs one when a rule is that character alone, or it starts a user-defined
        piece (``_singles``), or it starts longer rules and the next character can continue one
        of them (``_follow``); the regex finds candidates, ``_follow`` then checks them exactly.
        Every other character is its own prefix, copied as is. When some rule ends inside a
        character (``_fast`` False) only the byte cutter is exact.
        """
        rules: set[str] = set()
        follow: dict[str, set[str]] = {}
        self._fast = True
        if self.charsmap is not None:
            rules, follow, partial = self.charsmap.start_rules()
            self._fast = not partial
        self._map_first = frozenset(rules | follow.keys())
        self._singles = frozenset(rules | self._ud_first)
        self._follow = {c: frozenset(v) for c, v in follow.items() if c not in rules}
        parts = [_char_class(rules)] if rules else []
        if 0 < len(self._ud) <= _MAX_UD_ALTERNATIVES:
            parts.append("|".join(re.escape(p) for p in sorted(self._ud, key=len, reverse=True)))
        elif self._ud:
            parts.append(_char_class(self._ud_first))
        if self._follow:
            after = set().union(*self._follow.values())
            parts.append(_char_class(self._follow) + "(?=" + _char_class(after) + ")")
        self._scanner = re.compile("|".join(parts)) if parts else None

    def normalize(self, text: str | bytes) -> str:
        """The normalized text; ``bytes`` may be malformed UTF-8 (each bad byte gives U+FFFD)."""
        if isinstance(text, bytes | bytearray | memoryview):
            return self._join(self._byte_prefixes(bytes(text)))
        if not isinstance(text, str):
            raise EncodeError(f"text to normalize must be str or bytes, not {type(text).__name__}")
        if not text:
            return ""
        if self._fast and (text.isascii() or not _SURROGATE.search(text)):
            try:
                prefixes, simple = self._text_prefixes(text, split_spaces=False)
                if simple:
                    return self._join_simple(prefixes)
                return self._join(self._text_prefixes(text, split_spaces=True)[0])
            except _NeedBytes:
                pass
        return self._join(self._byte_prefixes(_utf8(text)))

    def normalize_with_origins(self, text: str) -> tuple[str, list[int]]:
        """The normalized text and, for each of its chars and once more at its end, the index of
        the char of ``text`` it comes from: sentencepiece's ``norm_to_orig`` in chars (a char a
        rule or user-defined piece writes: where that prefix starts; the dummy prefix: after the
        leading spaces removed; the end: the input consumed), for offsets."""
        prefixes: list[str] | None = None
        used: list[tuple[int, bool]] = []
        if self._fast and not _SURROGATE.search(text):
            try:
                prefixes = self._text_prefixes(text, split_spaces=True, used=used)[0]
            except _NeedBytes:
                used.clear()
        if prefixes is None:  # the byte cutter: its prefixes' bytes counted in chars
            from bpekit.pipeline.aligned import byte_chars  # (not at import: the pipeline package costs 70 ms)

            sizes: list[int] = []
            prefixes = self._byte_prefixes(_utf8(text), sizes)
            char_of = byte_chars(text) + [len(text)]
            ends = list(accumulate(sizes))
            used = [(char_of[e] - char_of[e - n], False) for e, n in zip(ends, sizes)]
        return self._join_origins(prefixes, used)

    def normalize_reference(self, text: str | bytes) -> str:
        """The byte-level cutter alone (for tests of the fast path)."""
        data = bytes(text) if not isinstance(text, str) else _utf8(text)
        return self._join(self._byte_prefixes(data))

    def _join_simple(self, prefixes: list[str]) -> str:
        """``_join`` for prefixes that are all spaces-free, or ``" "``, or runs of such prefixes.

        Then removing extra whitespace is collapsing runs of spaces and stripping both ends.
        """
        text = "".join(prefixes)
        space = SPACE_SYMBOL if self.escape_whitespaces else " "
        if self.remove_extra_whitespaces:
            collapsed = _SPACES.sub(" ", text).strip(" ")
            if not collapsed and all(p and not p.strip(" ") for p in prefixes):
                return ""  # only spaces: no dummy prefix either
            text = collapsed
        if self.escape_whitespaces:
            text = text.replace(" ", SPACE_SYMBOL)
        if self.add_dummy_prefix and not self.treat_whitespace_as_suffix:
            text = space + text
        if self.remove_extra_whitespaces:
            text = text.rstrip(space)
        if self.add_dummy_prefix and self.treat_whitespace_as_suffix:
            text += space
        return text

    def _join(self, prefixes: list[str]) -> str:
        return self._join_origins(prefixes, None)[0]

    def _join_origins(self, prefixes: list[str], used: list[tuple[int, bool]] | None) -> tuple[str, list[int]]:
        """The prefixes joined as sentencepiece joins them (leading spaces dropped, a prefix's
        spaces after one that ended with a space dropped, trailing space symbols removed, the
        dummy prefix, spaces escaped), and each output char's origin (see
        :meth:`normalize_with_origins`) from ``used``: each prefix's input chars and whether it
        is a run of plain chars, each its own prefix (``None``: origins not wanted, all 0)."""
        used = used if used is not None else [(0, False)] * len(prefixes)
        remove, escape = self.remove_extra_whitespaces, self.escape_whitespaces
        space = SPACE_SYMBOL if escape else " "
        consumed = k = 0
        if remove:  # leading spaces
            while k < len(prefixes) and prefixes[k] == " ":
                consumed += used[k][0]
                k += 1
        if k == len(prefixes):
            return "", [consumed]
        out: list[str] = []
        origins: list[int] = []
        if self.add_dummy_prefix and not self.treat_whitespace_as_suffix:
            out.append(space)
            origins.append(consumed)
        prev_space = remove
        for piece, (n, plain) in zip(prefixes[k:], used[k:]):
            if plain and piece != " ":  # plain chars, no space: each its own prefix, as it is
                out.append(piece)
                origins.extend(range(consumed, consumed + n))
                consumed += n
                prev_space = False
                continue
            if prev_space:
                piece = piece.lstrip(" ")
            if piece:
                out.append(piece.replace(" ", SPACE_SYMBOL) if escape else piece)
                origins.extend([consumed] * len(piece))
                prev_space = piece.endswith(" ")
            consumed += n
            if not remove:
                prev_space = False
        normalized = "".join(out)
        if remove and normalized.endswith(space):  # trailing spaces: the end is where the first came from
            kept = len(normalized.rstrip(space))
            normalized, consumed = normalized[:kept], origins[kept]
            del origins[kept:]
        if self.add_dummy_prefix and self.treat_whitespace_as_suffix:
            normalized += space
            origins.append(consumed)
        origins.append(consumed)
        return normalized, origins

    def _replacement(self, value: int) -> str:
        found = self._decoded.get(value)
        if found is None:
            raw = self._rules().replacement(value)
            try:
                found = self._decoded[value] = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise FormatError(
                    f"precompiled_charsmap replacement at offset {value} is not valid UTF-8: {raw!r}"
                ) from e
        return found

    def _rules(self) -> CharsMap:
        if self.charsmap is None:  # callers only get here after a charsmap matched
            raise InternalError("normalizer used a charsmap rule without a charsmap")
        return self.charsmap

    def _byte_prefixes(self, data: bytes, used_out: list[int] | None = None) -> list[str]:
        """The prefixes of ``data``; with ``used_out``, how many bytes each consumed."""
        out: list[str] = []
        pos, n = 0, len(data)
        charsmap = self.charsmap
        while pos < n:
            used = 0
            if self._ud_bytes:
                for length in self._ud_byte_lengths:
                    if data[pos : pos + length] in self._ud_bytes:
                        out.append(data[pos : pos + length].decode("utf-8"))
                        used = length
                        break
            if not used and charsmap is not None:
                used, value = charsmap.longest_match(data, pos)
                if used:
                    out.append(self._replacement(value))
            if not used:
                char, used = _one_char(data, pos)
                out.append(char)
            if used_out is not None:
                used_out.append(used)
            pos += used
        return out

    def _text_prefixes(self, text: str, *, split_spaces: bool,
                       used: list[tuple[int, bool]] | None = None) -> tuple[list[str], bool]:
        """Prefixes of ``text``, runs of plain characters kept together (split at spaces when
        ``split_spaces``), and whether ``_join_simple`` may join them (no prefix with a space
        that is not exactly ``" "``); with ``used``, each piece's characters consumed and
        whether it is a run of plain characters (each its own prefix) is appended to it."""
        out: list[str] = []
        simple = True
        pos = scan = 0
        search = self._scanner.search if self._scanner is not None else None
        while search is not None:
            m = search(text, scan)
            if m is None:
                break
            at = m.start()
            char = text[at]
            if char not in self._singles:  # rules and user-defined first characters
                nexts = self._follow.get(char)
                if nexts is None or at + 1 == len(text) or text[at + 1] not in nexts:
                    scan = at + 1  # an astral character, or a starter not followed by a rule
                    continue
            if at > pos:
                self._add_run(out, text[pos:at], split_spaces, used)
            piece, n = self._text_prefix(text, at)
            out.append(piece)
            if used is not None:
                used.append((n, False))
            if simple and " " in piece and piece != " ":
                simple = False
            pos = scan = at + n
        if pos < len(text):
            self._add_run(out, text[pos:], split_spaces, used)
        return out, simple

    @staticmethod
    def _add_run(out: list[str], run: str, split_spaces: bool, used: list[tuple[int, bool]] | None = None) -> None:
        parts = _RUN_PARTS.findall(run) if split_spaces and " " in run else [run]
        out.extend(parts)
        if used is not None:
            used.extend((len(p), True) for p in parts)

    def _text_prefix(self, text: str, at: int) -> tuple[str, int]:
        char = text[at]
        if char in self._ud_first:
            for length in self._ud_lengths:
                if text[at : at + length] in self._ud:
                    return text[at : at + length], length
        if char in self._map_first:
            used, value, whole = self._rules().longest_match_chars(text, at)
            if not whole:
                raise _NeedBytes
            if used:
                return self._replacement(value), used
        return char, 1


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise EncodeError(f"text is not encodable as UTF-8 (lone surrogate at index {e.start})") from e


def _one_char(data: bytes, pos: int) -> tuple[str, int]:
    """The character at ``data[pos]`` and its length; a malformed byte is U+FFFD of length 1."""
    length = _utf8_length(data[pos])
    if length:
        try:
            return data[pos : pos + length].decode("utf-8"), length
        except UnicodeDecodeError:
            pass
    return "\ufffd", 1


def _char_class(chars: Iterable[str]) -> str:
    """A regex class of the BMP characters of ``chars``, plus all astral ones if any is there.

    Performance: ``re`` tests BMP characters against a bitmap, but astral ranges one by one
    (measured: 0.5 us per character with nmt_nfkc's ~100 astral ranges, 0.1 us with one). The
    caller checks each hit exactly, so a wider class only costs the rare astral hits.
    """
    codes = sorted(ord(c) for c in chars)
    bmp = [c for c in codes if c < 0x10000]
    astral = "\\U00010000-\\U0010ffff" if len(bmp) < len(codes) else ""
    return _ranges_class(bmp)[:-1] + astral + "]"


def _ranges_class(codes: list[int]) -> str:
    parts: list[str] = []
    i = 0
    while i < len(codes):
        j = i
        while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
            j += 1
        parts.append(_esc(codes[i]) if i == j else f"{_esc(codes[i])}-{_esc(codes[j])}")
        i = j + 1
    return "[" + "".join(parts) + "]"


def _esc(code: int) -> str:
    return f"\\U{code:08x}"
