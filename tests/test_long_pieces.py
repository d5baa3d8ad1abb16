"""Long pieces (the linear backtracking merge) against tiktoken's plain merge.

Each case is a stream of long pieces (64 bytes to 4.1 kB, past the linear merge's threshold)
over a random alphabet: a few lowercase letters, all of them, mixed case, digits, Cyrillic, CJK,
code points from every plane, emoji with joiners, a few arbitrary bytes. A fresh encoder sees more than the 16 kB of long pieces after which it
builds tables over a piece's own bytes (16-bit ids when under 65,535 tokens); then it is fed the
256 kB after which it builds the full tables (32-bit ids for cl100k and o200k), so both widths
run. The alphabets and lengths come from a seeded generator;
``BPEKIT_LONG_PIECE_CASES`` sets how many alphabets (default 5 per encoding, about 15 s in all).
"""

from __future__ import annotations

import os
import random

import pytest
from bpekit import Encoding, registry
from peers import tiktoken_encoding

CASES = int(os.environ.get("BPEKIT_LONG_PIECE_CASES", "5"))
ENCODINGS = ["cl100k_base", "o200k_base"]

LOWER = "abcdefghijklmnopqrstuvwxyz"
ALPHABETS = {
    "few lowercase": lambda rng: rng.sample(LOWER, rng.randint(2, 6)),
    "lowercase": lambda rng: list(LOWER),
    "mixed case": lambda rng: list(LOWER + LOWER.upper()),
    "digits": lambda rng: list("0123456789"),
    "cyrillic": lambda rng: [chr(c) for c in range(0x430, 0x450)],
    "cjk": lambda rng: [chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(rng.randint(3, 40))],
    "cjk many": lambda rng: [chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(2000)],
    "few bytes": lambda rng: [bytes([b]) for b in rng.sample(range(256), rng.randint(2, 5))],
    # code points from every plane (no surrogates): runs of 2- to 4-byte characters
    "code points": lambda rng: [
        chr(rng.choice([rng.randrange(0x80, 0x800), rng.randrange(0xE000, 0x10000), rng.randrange(0x10000, 0x110000)]))
        for _ in range(rng.randint(2, 60))
    ],
    "emoji": lambda rng: rng.sample([chr(c) for c in range(0x1F600, 0x1F650)], rng.randint(2, 12))
    + ["\u200d", "\U0001F3FD", "\u2764\ufe0f"],
}


def fresh(name: str) -> Encoding:
    """A new encoder (no linear-merge tables yet), not the registry's shared one."""
    return registry.CONSTRUCTORS[name]()


def pieces(rng: random.Random, alphabet: list, total: int, sizes: tuple = (64, 65, 100, 700, 2000, 4100)) -> list[bytes]:
    """Long pieces over ``alphabet`` (characters or single bytes) of about ``total`` bytes."""
    out, size = [], 0
    while size < total:
        n = rng.choice(sizes)
        piece = b"".join(s if isinstance(s, bytes) else s.encode() for s in rng.choices(alphabet, k=n))
        out.append(piece)
        size += len(piece)
    return out


def check(enc: Encoding, tk, what: str, batch: list[bytes]) -> None:
    for piece in batch:
        got, want = enc._encode_single_piece(piece), tk._encode_single_piece(piece)
        assert got == want, f"{what}: {len(piece)} bytes differ from tiktoken"


@pytest.mark.parametrize("name", ENCODINGS)
def test_long_pieces_match_tiktoken(name: str) -> None:
    tk = tiktoken_encoding(name)
    rng = random.Random(f"long pieces {name}")
    enc = fresh(name)
    fixed = ["lowercase", "few bytes", "cjk many", "code points", "emoji"]
    kinds = fixed[:CASES] + [rng.choice(sorted(ALPHABETS)) for _ in range(CASES - len(fixed))]
    for kind in kinds:  # 40 kB each: past the sub-vocabulary threshold
        alphabet = ALPHABETS[kind](rng)
        check(enc, tk, f"{name} {kind} {alphabet[:8]}", pieces(rng, alphabet, 40_000))
    # pieces over too many bytes for tables of their own, until the full tables are built; then
    # pieces under 4 kB use those
    for piece in pieces(rng, [chr(c) for c in range(0x21, 0x7F)], 270_000, sizes=(64, 80, 100)):
        enc._encode_single_piece(piece)
    check(enc, tk, f"{name} lowercase, full tables", pieces(rng, list(LOWER), 40_000))


@pytest.mark.parametrize("name", ENCODINGS)
def test_long_words_in_text_match_tiktoken(name: str) -> None:
    """Through the pre-tokenizer: long runs of letters or CJK between spaces stay one piece."""
    tk = tiktoken_encoding(name)
    rng = random.Random(f"long words {name}")
    enc = fresh(name)
    for kind in ["lowercase", "cyrillic", "cjk", "few lowercase"]:
        alphabet = ALPHABETS[kind](rng)
        words = [p.decode() for p in pieces(rng, alphabet, 30_000)]
        text = " ".join(words)
        assert enc.encode_ordinary(text) == tk.encode_ordinary(text), f"{name} {kind}"
