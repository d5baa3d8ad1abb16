"""`Encoding.truncate` (src/core.rs `CoreBpe::truncate`): the text of the first ``k`` ids of a text's
encoding, ``k`` the largest up to ``max_tokens`` whose text ends on a character boundary, found by
encoding only that prefix.

The oracle is the whole encoding: the text of ``encode(text)[:k]`` must be the answer, for every
budget, on random texts full of special tokens, multi-byte characters, digits, whitespace runs and
lone surrogates, through a small test vocabulary with a regex pattern and the real ones (their
hand-written splitters). Then: the answer encodes to at most ``max_tokens`` ids (not always the
same ids: a run of spaces at the end of the cut text is one piece, where the whole text left its
last space to the next word); disallowed special tokens raise only inside the prefix; bad
arguments raise typed errors.
"""

from __future__ import annotations

import random

import bpekit
import pytest
from bpekit import errors
from datapaths import DATA

SPECIALS = {"<|end|>": 300, "<|fim|>": 301}
MERGES = [b"th", b"he", b"the", b" t", b"in", b"er", b"an", b" the", b"\xc3\xa9", b"  ", b"\xe6\x97"]
PATTERN = r"""'s|'t| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
ALPHABET = ["a", "e", "t", "h", "the", " ", "  ", "\n", "\r\n", "é", "日", "😀", "\ud800", "<|end|>", "<|fim|>",
            "x", "1", "123", "'s", "'T", ".", "Hello", " world"]  # fmt: skip


@pytest.fixture(scope="module", params=["test", "cl100k_base", "o200k_base", "r50k_base"])
def enc(request: pytest.FixtureRequest) -> bpekit.Encoding:
    if request.param != "test":
        return bpekit.get_encoding(request.param)
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({m: 256 + i for i, m in enumerate(MERGES)})
    return bpekit.Encoding("truncate-test", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens=SPECIALS)


def texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(40))) for _ in range(n)]


def expected(enc: bpekit.Encoding, text: str, n: int, **policy: object) -> str:
    """The oracle: the text of the first ``k`` ids of the whole encoding, ``k`` the largest up to
    the budget that ends on a character boundary; the budget starts at ``n`` and shrinks by the
    excess while that text encodes to more than ``n`` ids."""
    ids = enc.encode(text, **policy)  # type: ignore[arg-type]
    data = bpekit._core.fix_surrogates(text).encode()
    budget, retries = n, 0
    while True:
        for k in range(min(budget, len(ids)), -1, -1):
            try:
                prefix = data[: len(enc.decode_bytes(ids[:k]))].decode("utf-8")
                break
            except UnicodeDecodeError:
                continue  # the k-th id ends inside a character
        if len(enc.encode(prefix, **policy)) <= n:  # type: ignore[arg-type]
            return prefix
        # one id at a time, then (past TRUNCATE_RETRIES = 8 in src/core.rs) doubling steps
        budget = max(0, budget - (1 if retries < 8 else 1 << min(retries - 8 + 1, 40)))
        retries += 1


@pytest.mark.parametrize("policy", [{"allowed_special": "all"}, {"disallowed_special": ()}])
def test_truncate_is_the_first_ids_of_the_encoding(enc: bpekit.Encoding, policy: dict) -> None:
    fix = bpekit._core.fix_surrogates
    for text in texts(150, seed=3) + ["", "日本語のテキスト", "a" * 300, " " * 50 + "x", "1234567"]:
        fixed = fix(text)
        total = len(enc.encode(text, **policy))
        for n in sorted({0, 1, 2, 3, total - 1, total, total + 1, total // 2} - {-1}):
            got = enc.truncate(text, n, **policy)
            assert got == expected(enc, text, n, **policy), (text, n)
            assert fixed.startswith(got)
            assert len(enc.encode(got, **policy)) <= n, (text, n)
        assert enc.truncate(text, total, **policy) == fixed


@pytest.mark.parametrize(("text", "n"), [(" చింంచテ", 2), (" トి👍ింవ", 4), (" 😀אدవ్ののאింవ", 9)])
def test_a_token_ending_inside_a_character_is_left_out(text: str, n: int) -> None:
    """The ``n``-th id of these texts (o200k) ends inside a character; cut back to that character's
    start, the bytes left of the token merge into more tokens than the budget (first found by the
    ``round_trip`` fuzz target on a smaller vocabulary). The token is left out instead."""
    enc = bpekit.get_encoding("o200k_base")
    ids = enc.encode(text)
    lossy = enc.decode_bytes(ids[:n]).decode("utf-8", errors="ignore")
    assert len(enc.encode(lossy)) > n  # what cutting back inside the token gives
    got = enc.truncate(text, n)
    assert got == expected(enc, text, n) and len(enc.encode(got)) <= n and len(got) < len(lossy)


def test_a_prefix_that_splits_into_more_ids_is_cut_further() -> None:
    """o200k's contraction suffix makes ``" I'T"`` one piece (one id here); alone, ``" I'"`` is two
    pieces and two ids (first found by the ``round_trip`` fuzz target): the budget shrinks."""
    enc = bpekit.get_encoding("o200k_base")
    text = " I'T went"
    assert len(enc.encode(" I'")) == 2 and enc.split(text)[0] == " I'T"
    for n in range(len(enc.encode(text)) + 1):
        got = enc.truncate(text, n)
        assert got == expected(enc, text, n) and len(enc.encode(got)) <= n


def test_the_budget_shrinks_one_id_at_a_time() -> None:
    """Every ``"xy'T"`` is one piece of two ids (``"xy'"``, ``"T"``), and ``"xy'"`` alone is three
    (``"x"``, ``"y"``, ``"'"``): every odd budget cuts where the prefix takes two ids more.
    Shrinking by that excess would only meet odd budgets, down to the empty text; one id less
    fits."""
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({b"y'": 256, b"xy'": 257})
    enc = bpekit.Encoding("xy", pat_str=r"[a-z]+(?:'T)?|.", mergeable_ranks=ranks, special_tokens={})
    text = "xy'T" * 30
    assert enc.encode(text) == [257, ord("T")] * 30 and len(enc.encode("xy'")) == 3
    for n in range(61):
        got = enc.truncate(text, n)
        assert got == "xy'T" * (n // 2) == expected(enc, text, n), n


@pytest.mark.parametrize("policy", [{"allowed_special": "all"}, {"disallowed_special": ()}])
def test_truncate_from_the_left_keeps_the_longest_suffix_that_fits(enc: bpekit.Encoding, policy: dict) -> None:
    """``side="left"`` keeps the end: a suffix that fits, where one character more does not (the
    binary search's invariant), counted only over a window from the end."""
    fix = bpekit._core.fix_surrogates
    for text in texts(100, seed=4) + ["", "日本語のテキスト", "a" * 300, "x" + " " * 50]:
        fixed = fix(text)
        total = len(enc.encode(text, **policy))
        for n in sorted({0, 1, 2, total // 2, total - 1, total, total + 1} - {-1}):
            got = enc.truncate(text, n, side="left", **policy)
            assert fixed.endswith(got) and len(enc.encode(got, **policy)) <= n, (text, n)
            longer = fixed[len(fixed) - len(got) - 1 :]
            assert got == fixed or len(enc.encode(longer, **policy)) > n, (text, n)
    with pytest.raises(errors.InputTypeError, match="side must be"):
        enc.truncate("abc", 1, side="middle")


def test_a_piece_too_long_to_merge_whole_is_cut_by_search() -> None:
    """A piece of 64 KiB or more (a text with no split point) is not merged whole to keep a few
    of its ids: the cut is searched from its start (``CoreBpe::longest_cut``). It fits, and one
    character more does not; before that piece the cut is the exact one."""
    enc = bpekit.get_encoding("o200k_base")
    rng = random.Random(3)
    letters = "".join(rng.choice("abcdefghijklmnopqrstuvwxyzéß日") for _ in range(200_000))
    text = "Some words first, " + letters + " and a tail <|endoftext|> after."
    head = len(enc.encode("Some words first, "))
    for n in [0, 1, head - 1, head, head + 1, head + 7, 1000, 30_000]:
        got = enc.truncate(text, n, disallowed_special=())
        assert text.startswith(got) and len(enc.encode(got, disallowed_special=())) <= n, n
        if n < head:
            assert got == expected(enc, text, n, disallowed_special=()), n
        else:
            assert len(enc.encode(text[: len(got) + 1], disallowed_special=())) > n, n
    assert enc.truncate(text, 10**9, allowed_special="all") == text


def test_truncate_refuses_disallowed_specials_only_in_the_prefix(enc: bpekit.Encoding) -> None:
    special = next(iter(enc.special_tokens_set))
    text = f"one two three {special} four"
    n = len(enc.encode_ordinary("one two three"))
    assert enc.truncate(text, n) == "one two three"
    with_it = len(enc.encode_ordinary(f"one two three {special}"))  # (the special as plain text)
    part = enc.truncate(text, with_it - 1)  # part of the special's text: no error
    assert special not in part and text.startswith(part) and len(part) > len("one two three")
    with pytest.raises(errors.DisallowedSpecialError):
        enc.truncate(text, with_it)
    with pytest.raises(errors.DisallowedSpecialError):
        enc.truncate(text, 1000, disallowed_special={special})
    allowed = enc.truncate(text, n + 2, allowed_special="all")  # " " and the special token
    assert allowed == expected(enc, text, n + 2, allowed_special="all") and allowed.endswith(special)


@pytest.mark.parametrize("bad", [-1, 1.5, "3", None, True])
def test_truncate_argument_errors(enc: bpekit.Encoding, bad: object) -> None:
    with pytest.raises(errors.InputTypeError, match="max_tokens"):
        enc.truncate("some text", bad)  # type: ignore[arg-type]
    with pytest.raises(errors.InputTypeError, match="must be a str"):
        enc.truncate(b"some text", 3)  # type: ignore[arg-type]


def test_tokenizer_truncate_of_a_rank_model_is_the_encodings() -> None:
    enc = bpekit.get_encoding("cl100k_base")
    tok = bpekit.Tokenizer.from_encoding(enc)
    assert tok.truncate("hello world, again", 2) == enc.truncate("hello world, again", 2) == "hello world"
    assert tok.truncate(TEXT_WITH_SPECIAL, 40, allowed_special="all") == TEXT_WITH_SPECIAL
    with pytest.raises(errors.DisallowedSpecialError):
        tok.truncate(TEXT_WITH_SPECIAL, 40)


TEXT_WITH_SPECIAL = "a <|endoftext|> b"
PIPELINES = {
    "neox": DATA / "hf" / "gpt-neox-20b.tokenizer.json",  # NFC, added tokens
    "llama3": DATA / "gguf" / "ggml-vocab-llama-bpe.gguf",
    "qwen2": DATA / "gguf" / "ggml-vocab-qwen2.gguf",
    "spm": DATA / "gguf" / "ggml-vocab-llama-spm.gguf",
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_pipeline_truncate_is_the_longest_cut_that_fits(name: str) -> None:
    """A pipeline's truncation searches the prefix (its ids do not map back to the text): the cut
    fits the budget and one character more does not, on random texts with added tokens,
    combining marks (NFC), CJK, emoji, surrogates; and a long text costs a window, not all of it."""
    path = PIPELINES[name]
    if not path.is_file():
        pytest.skip(f"{path} not found (set BPEKIT_TEST_DATA)")
    tok = bpekit.Tokenizer.from_file(path)
    rng = random.Random(9)
    words = ["hello", " world", " ", "\n", "e\u0301", "é", "日本語", "😀", "\ud800", "<|endoftext|>", "123", "'s", "  "]
    fix = bpekit._core.fix_surrogates
    for _ in range(60):
        text = "".join(rng.choice(words) for _ in range(rng.randrange(1, 40)))
        total = len(tok.encode(text))
        for n in {0, 1, 2, total // 2, total - 1, total, total + 3}:
            if n < 0:
                continue
            got = tok.truncate(text, n)
            fixed = fix(text)
            assert fixed.startswith(got) and len(tok.encode(got)) <= n, (text, n)
            assert got == fixed or len(tok.encode(fixed[: len(got) + 1])) > n, (text, n)
            end = tok.truncate(text, n, side="left")
            assert fixed.endswith(end) and len(tok.encode(end)) <= n, (text, n)
            assert end == fixed or len(tok.encode(fixed[len(fixed) - len(end) - 1 :])) > n, (text, n)
    with pytest.raises(errors.InputTypeError, match="max_tokens"):
        tok.truncate("x", -1)
    # a long text: the result is the same as for its first part
    long = "The quick brown fox jumps over the lazy dog. " * 20_000
    assert tok.truncate(long, 50) == tok.truncate(long[:2000], 50)
    assert tok.truncate(long, 50, side="left") == tok.truncate(long[-2000:], 50, side="left")
