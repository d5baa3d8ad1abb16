"""The textbook trainer: hand-worked corpora, ties, specials, determinism, golden vectors."""

from __future__ import annotations

import base64
import json
import random

import pytest

from bpekit.errors import PatternError, UsageError, VocabError
from bpekit.reference import rank_merge, special_token_ids, split, train

WORDS = r"\S+"  # one pre-token per run of non-space characters


def texts(merges: list[tuple[bytes, bytes]]) -> list[str]:
    return [(a + b).decode() for a, b in merges]


def test_aaabdaaabac_both_tie_rules() -> None:
    # One pre-token "aaabdaaabac" = a a a b d a a a b a c.
    # Pair counts: aa 4, ab 2, bd 1, da 1, ba 1, ac 1 -> merge aa (256):
    #   aa a b d aa a b a c: (aa,a) 2, (a,b) 2, (b,d) 1, (d,aa) 1, (b,a) 1, (a,c) 1
    # Tie at 2. By bytes, (b"a", b"b") < (b"aa", b"a") -> ab (257); first seen: (aa, a) -> aaa.
    #   bytes:      aa ab d aa ab a c -> (aa,ab) 2 -> aaab (258); then every pair occurs once.
    #   first seen: aaa b d aaa b a c -> (aaa,b) 2 -> aaab (258).
    merges, ranks = train(["aaabdaaabac"], 1000, WORDS)
    assert texts(merges) == ["aa", "ab", "aaab"]  # min_frequency=2 stops at the count-1 pairs
    assert ranks[b"aa"] == 256 and ranks[b"ab"] == 257 and ranks[b"aaab"] == 258
    assert len(ranks) == 259
    merges, _ = train(["aaabdaaabac"], 259, WORDS, tie="first_seen")
    assert texts(merges) == ["aa", "aaa", "aaab"]  # minbpe's result (Wikipedia example)
    merges, _ = train(["aaabdaaabac"], 1000, WORDS, min_frequency=1)
    assert len(merges) == 3 + 4  # then: count-1 pairs until the word is a single token
    assert b"".join(merges[-1]) == b"aaabdaaabac"


# The Hugging Face course corpus: hug x10, pug x5, pun x12, bun x4, hugs x5, in that order.
HUG = ["hug"] * 10 + ["pug"] * 5 + ["pun"] * 12 + ["bun"] * 4 + ["hugs"] * 5


def test_hug_pug_pun_bun() -> None:
    # pairs: hu 15, ug 20, pu 17, un 16, bu 4, gs 5          -> ug
    # h ug | p ug | p u n | b u n | h ug s: h+ug 15, p+ug 5, pu 12, un 16, bu 4, ug+s 5 -> un
    # h+ug 15, p+ug 5, p+un 12, b+un 4, ug+s 5               -> hug
    # p+ug 5, p+un 12, b+un 4, hug+s 5                        -> pun
    # p+ug 5, b+un 4, hug+s 5: a tie at 5
    #   bytes: (b"hug", b"s") < (b"p", b"ug")                 -> hugs, then pug (5), bun (4)
    #   first seen: "pug" comes before "hugs" in the corpus   -> pug, then hugs, bun
    merges, ranks = train(HUG, 300, WORDS)
    assert texts(merges) == ["ug", "un", "hug", "pun", "hugs", "pug", "bun"]
    assert len(ranks) == 256 + 7  # every word is one token: no pair is left
    merges, _ = train(HUG, 300, WORDS, tie="first_seen")
    assert texts(merges) == ["ug", "un", "hug", "pun", "pug", "hugs", "bun"]
    merges, _ = train(HUG, 256 + 4, WORDS)  # vocab_size counts every token
    assert texts(merges) == ["ug", "un", "hug", "pun"]
    merges, _ = train(HUG, 300, WORDS, min_frequency=5)
    assert texts(merges) == ["ug", "un", "hug", "pun", "hugs", "pug"]  # "bun" occurs 4 times


def test_merges_and_ranks_encode_the_training_words() -> None:
    _, ranks = train(HUG, 300, WORDS)
    assert rank_merge(b"hugs", ranks) == [ranks[b"hugs"]]
    assert rank_merge(b"bug", ranks) == [ord("b"), ranks[b"ug"]]  # "bug" was never seen
    assert rank_merge(b"pugs", ranks) == [ranks[b"pug"], ord("s")]  # p ug s -> pug s


def test_special_tokens_are_never_counted() -> None:
    text = "ab<|sp|>ab<|sp|><|sp|>ab"
    merges, ranks = train([text], 1000, WORDS, special_tokens=["<|sp|>"])
    assert merges == [(b"a", b"b")]  # the words are ab, ab, ab; "<|" never appears as text
    assert special_token_ids(ranks, ["<|sp|>"]) == {"<|sp|>": 257}
    merges, _ = train([text], 1000, WORDS)  # without the special: one long word, "<|" counted
    assert (b"<", b"|") in merges
    merges, ranks = train(HUG, 256 + 3, WORDS, special_tokens=["<a>", "<b>"])
    assert len(ranks) == 257  # 256 bytes + 1 merge + 2 specials = vocab_size
    assert special_token_ids(ranks, ["<a>", "<b>"]) == {"<a>": 257, "<b>": 258}


def test_byte_tie_rule_ignores_corpus_order() -> None:
    lines = [w for line in ("the cat sat on the mat", "a hat that fits") for w in [line] * 3]
    expected = train(lines, 280, r" ?\w+|\s+")
    shuffled = lines[:]
    for seed in range(3):
        random.Random(seed).shuffle(shuffled)
        assert train(shuffled, 280, r" ?\w+|\s+") == expected
    assert train(lines, 280, r" ?\w+|\s+") == expected  # and the same on a second run


def test_utf8_bytes_and_str_input() -> None:
    merges, _ = train("héllo héllo", 300, WORDS)  # a single str is one document
    assert merges[0] == (b"h", b"\xc3")  # é is two bytes: 0xC3 0xA9; (h, C3) is the smallest pair


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"vocab_size": 255}, "vocab_size"),
        ({"vocab_size": 257, "special_tokens": ["a", "b"]}, "vocab_size"),
        ({"special_tokens": ["a", "a"]}, "distinct"),
        ({"special_tokens": [""]}, "non-empty"),
        ({"special_tokens": "<s>"}, "not one string"),
        ({"min_frequency": 0}, "min_frequency"),
        ({"tie": "random"}, "tie"),
    ],
)
def test_bad_arguments(kwargs: dict, message: str) -> None:
    args = {"texts": ["x"], "vocab_size": 300, "pattern": WORDS} | kwargs
    error = UsageError if message in ("min_frequency", "tie") else VocabError
    with pytest.raises(error, match=message):
        train(**args)


def test_bad_pattern() -> None:
    with pytest.raises(PatternError):
        train(["x"], 300, "[")


def _vectors(data_dir) -> dict:
    path = data_dir / "minbpe" / "vectors.json"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return json.loads(path.read_text(encoding="utf-8"))


def _text(data_dir, case: dict) -> str:
    if case.get("text", case.get("data")) is not None:
        return case.get("text", case.get("data"))
    n = int(case["text_id" if "text_id" in case else "data_id"].split("_")[-2])
    return (data_dir / "corpora" / "taylorswift.txt").read_text(encoding="utf-8")[:n]


def test_tiktoken_educational_vectors(data_dir) -> None:
    """tie="first_seen", min_frequency=1 reproduces tiktoken's educational trainer."""
    for case in _vectors(data_dir)["tiktoken_educational"]["train"]:
        text = _text(data_dir, case)
        _, ranks = train(
            [text], case["vocab_size"], case["pat_str"], min_frequency=1, tie="first_seen"
        )
        new = {base64.b64decode(b): r for b, r in case["new_ranks_b64"]}
        assert {t: r for t, r in ranks.items() if r >= 256} == new, case["data_id"]
        for sample, ids in case["encode"].items():
            pieces = [p.encode() for p in split(case["pat_str"], sample)]
            assert [i for p in pieces for i in rank_merge(p, ranks)] == ids


def test_minbpe_vectors(data_dir) -> None:
    """minbpe's BasicTokenizer = one pre-token per text, tie="first_seen", min_frequency=1."""
    for case in _vectors(data_dir)["minbpe"]["training"]:
        if case["tokenizer"] != "BasicTokenizer":
            continue  # RegexTokenizer uses minbpe's own patterns, not stored in the vectors
        merges, ranks = train(
            [_text(data_dir, case)],
            case["vocab_size"],
            r"(?s).+",
            min_frequency=1,
            tie="first_seen",
        )
        assert [[ranks[a], ranks[b], ranks[a + b]] for a, b in merges] == case["merges"]
