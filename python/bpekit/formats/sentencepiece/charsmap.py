"""The precompiled character map of a ``NormalizerSpec``: a Darts-clone double array, read safely.

Blob layout (``formats.md`` 4.3): little-endian uint32 ``trie_size``, ``trie_size`` bytes of
double-array units (uint32 each), then a pool of NUL-terminated replacement strings. A lookup is
the longest key of the trie that prefixes the input bytes; its value is an offset into the pool.

Every unit index and pool offset is bounds-checked, so a hostile blob raises FormatError instead
of reading outside the arrays (sentencepiece itself trusts the blob).
"""

from __future__ import annotations

import struct
import sys
from array import array

from bpekit.errors import FormatError

_LEAF_BIT = 1 << 8
_UNIT_TYPECODE = "I" if array("I").itemsize == 4 else "L"  # a 32-bit unsigned array


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & 0x200) >> 6)


class CharsMap:
    """Longest-prefix replacement rules decoded from a ``precompiled_charsmap`` blob."""

    def __init__(self, blob: bytes) -> None:
        if len(blob) <= 4:
            raise FormatError(f"precompiled_charsmap is broken: {len(blob)} bytes, need more than 4")
        (trie_size,) = struct.unpack_from("<I", blob, 0)
        if trie_size >= len(blob):
            raise FormatError(
                f"precompiled_charsmap is broken: trie size {trie_size} exceeds the blob size {len(blob)}"
            )
        n_units = trie_size // 4  # sentencepiece ignores a trailing partial unit
        units = array(_UNIT_TYPECODE)
        trie = blob[4 : 4 + 4 * n_units]  # the declared trie may run past the blob's end
        units.frombytes(trie[: len(trie) // 4 * 4])
        if sys.byteorder == "big":
            units.byteswap()
        if n_units == 0:
            raise FormatError("precompiled_charsmap is broken: its trie has no units")
        self._units = units
        self._pool = blob[4 + trie_size :]
        self._replacements: dict[int, bytes] = {}
        self._child_table: dict[int, list[int]] | None = None
        self._root = _offset(self._unit(0))

    def _unit(self, index: int) -> int:
        if index >= len(self._units):
            raise FormatError(
                f"precompiled_charsmap is corrupt: trie unit {index} is outside its {len(self._units)} units"
            )
        return self._units[index]

    def replacement(self, value: int) -> bytes:
        """The NUL-terminated pool string at offset ``value``."""
        found = self._replacements.get(value)
        if found is None:
            end = self._pool.find(b"\0", value)
            if value >= len(self._pool) or end < 0:
                raise FormatError(
                    f"precompiled_charsmap is corrupt: replacement offset {value} has no NUL-terminated "
                    f"string in its {len(self._pool)}-byte pool"
                )
            found = self._replacements[value] = self._pool[value:end]
        return found

    def longest_match(self, data: bytes, start: int) -> tuple[int, int]:
        """``(length, value)`` of the longest key at ``data[start:]``; length 0 when none matches.

        This is Darts ``commonPrefixSearch`` from the root, keeping the longest result.
        """
        units = self._units
        n = len(units)
        node = self._root
        best_len, best_value = 0, 0
        for i in range(start, len(data)):
            c = data[i]
            node ^= c
            if node >= n:
                raise FormatError(f"precompiled_charsmap is corrupt: trie unit {node} is outside its {n} units")
            unit = units[node]
            if (unit & 0x800000FF) != c:
                break
            node ^= _offset(unit)
            if unit & _LEAF_BIT:
                best_len, best_value = i + 1 - start, self._unit(node) & 0x7FFFFFFF
        return best_len, best_value

    def longest_match_chars(self, text: str, start: int) -> tuple[int, int, bool]:
        """``longest_match`` on ``text[start:]`` counted in characters: ``(chars, value, whole)``.

        ``whole`` is False when the longest key ends inside a character (then the caller must
        work on bytes). Reads only as many characters as the trie follows.
        """
        units = self._units
        n = len(units)
        node = self._root
        best_chars, best_value, whole = 0, 0, True
        for j in range(start, len(text)):
            code = ord(text[j])
            encoded = (code,) if code < 0x80 else text[j].encode("utf-8")
            last = len(encoded) - 1
            for k, c in enumerate(encoded):
                node ^= c
                if node >= n:
                    raise FormatError(f"precompiled_charsmap is corrupt: trie unit {node} is outside its {n} units")
                unit = units[node]
                if (unit & 0x800000FF) != c:
                    return best_chars, best_value, whole
                node ^= (unit >> 10) << ((unit & 0x200) >> 6)
                if unit & _LEAF_BIT:
                    best_chars, best_value, whole = j + 1 - start, self._unit(node) & 0x7FFFFFFF, k == last
        return best_chars, best_value, whole

    def _children(self, node: int) -> list[tuple[int, int, int]]:
        """``(byte, next node, unit)`` for every byte that continues a key at ``node``."""
        table = self._child_table
        if table is None:
            # Unit j holds the child for byte ``label`` of the node whose base is ``j ^ label``;
            # one pass over the units inverts that (leaf units have bit 31 set: never a label).
            table = {}
            for j, unit in enumerate(self._units):
                if not unit & 0x80000000:
                    table.setdefault(j ^ (unit & 0xFF), []).append(j)
            self._child_table = table
        return [(j ^ node, j ^ _offset(self._units[j]), self._units[j]) for j in table.get(node, ())]

    def _complete_chars(self, node: int) -> tuple[list[tuple[str, int, int]], bool]:
        """The whole characters readable from ``node``: ``(char, node after it, its last unit)``.

        The flag tells whether a leaf sits inside a character (after a proper prefix of its bytes).
        """
        found: list[tuple[str, int, int]] = []
        partial = False
        stack: list[tuple[int, bytes]] = [(node, b"")]
        while stack:
            at, prefix = stack.pop()
            for byte, nxt, unit in self._children(at):
                if prefix and not 0x80 <= byte <= 0xBF:
                    continue
                key = prefix + bytes([byte])
                need = _utf8_length(key[0])
                if need == 0:
                    continue  # cannot start a character in valid text
                if len(key) == need:
                    try:
                        found.append((key.decode("utf-8"), nxt, unit))
                    except UnicodeDecodeError:
                        pass  # a surrogate or overlong form is never in a str
                    continue
                partial = partial or bool(unit & _LEAF_BIT)
                stack.append((nxt, key))
        return found, partial

    def start_rules(self) -> tuple[set[str], dict[str, set[str]], bool]:
        """Where a match can begin in valid text, for the str fast path of the normalizer.

        Returns the characters that are keys by themselves, then for each character that only
        begins longer keys the characters that can follow it, and a flag set when some key ends
        inside a character (no real charsmap has one; then only byte-level matching is exact).
        """
        rules: set[str] = set()
        follow: dict[str, set[str]] = {}
        firsts, partial = self._complete_chars(self._root)
        for char, node, unit in firsts:
            if unit & _LEAF_BIT:
                rules.add(char)
                continue
            seconds, inner = self._complete_chars(node)
            partial = partial or inner
            nexts = {c for c, _, _ in seconds}
            if nexts:
                follow[char] = nexts
        return rules, follow, partial


def _utf8_length(lead: int) -> int:
    """Length of the UTF-8 sequence that ``lead`` starts; 0 for a byte that cannot start one."""
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0
