"""Hostile texts shared by the hardening tests and ``benches/hostile.py``, with a benign twin each.

Each generator makes text of about ``n`` UTF-8 bytes. The benign twin of every hostile text is
ordinary prose of the same size (sliced from the shared corpus when present, else a fixed
sentence), so that time and memory per byte can be compared.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from datapaths import DATA


def _repeat(unit: str, n: int) -> str:
    return unit * max(1, n // len(unit.encode("utf-8", "surrogatepass")))


def _random_letters(n: int) -> str:
    rng = random.Random(7)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(n))


def _random_cjk(n: int) -> str:
    rng = random.Random(8)
    return "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(n // 3))


def _random_unicode(n: int) -> str:
    """Code points from every plane, lone surrogates and controls included (about n/3 chars)."""
    rng = random.Random(9)
    out = []
    for _ in range(n // 3):
        plane = rng.random()
        if plane < 0.3:
            out.append(chr(rng.randrange(0, 0x80)))
        elif plane < 0.8:
            out.append(chr(rng.randrange(0x80, 0x10000)))
        else:
            out.append(chr(rng.randrange(0x10000, 0x110000)))
    return "".join(out)


HOSTILE: dict[str, Callable[[int], str]] = {
    "one_char_a": lambda n: _repeat("a", n),
    "one_char_e_acute": lambda n: _repeat("\u00e9", n),
    "no_split_letters": _random_letters,
    "no_split_cjk": _random_cjk,
    "spaces": lambda n: _repeat(" ", n),
    "newlines": lambda n: _repeat("\n", n),
    "space_newline": lambda n: _repeat(" \n", n),
    "digits": lambda n: _repeat("1234567890", n),
    "nul": lambda n: _repeat("\0", n),
    "nul_mixed": lambda n: _repeat("a\0 \0", n),
    "punctuation": lambda n: _repeat("!", n),
    "contractions": lambda n: _repeat("'s", n),
    "emoji_zwj": lambda n: _repeat("\U0001f468\u200d\U0001f469\u200d\U0001f467", n),
    "combining_marks": lambda n: "a" + _repeat("\u0301", n),
    "lone_surrogates": lambda n: _repeat("\ud800a\udfff", n),
    "special_like": lambda n: _repeat("<|endoftext", n),
    "special_nested": lambda n: _repeat("<|endo<|endoftext|>ftext|>", n),
    "random_unicode": _random_unicode,
}


def benign(n: int) -> str:
    """Ordinary English prose of about ``n`` bytes."""
    path = Path(DATA) / "corpora" / "tinyshakespeare.txt"
    base = path.read_text(encoding="utf-8") if path.is_file() else "It was a bright cold day in April. " * 100
    return (base * (n // len(base) + 1))[:n]


def natural(n: int, block: int = 20_000) -> str:
    """About ``n`` bytes of natural text that does not repeat: blocks of ``block`` characters
    taken in turn from the 46 bible translations of the shared corpus (57 MB; Latin, Cyrillic,
    Armenian, Gujarati, Syriac, Coptic, Cherokee scripts), as a service sees many documents.
    Falls back to :func:`benign` when the corpus is absent."""
    files = sorted((Path(DATA) / "corpora" / "bible").glob("*.txt"))
    if not files:
        return benign(n)
    texts = [f.read_text(encoding="utf-8", errors="replace") for f in files]
    parts, size, at = [], 0, 0
    while size < n and at < max(len(t) for t in texts):
        for t in texts:
            part = t[at : at + block]
            parts.append(part)
            size += len(part.encode("utf-8"))
            if size >= n:
                break
        at += block
    return "".join(parts)
