"""The trainer (bpekit's Rust trainer in minbpe's tie mode) and the heap encoder agree with minbpe's literal loops, and with the
other first-seen trainers (tiktoken's ``_educational``, ``bpekit.reference.train``) on real text.

minbpe's rule (``max(stats, key=stats.get)`` over pairs in first-seen order) is reproduced
exactly, ties included; the random tests use tiny alphabets, where ties are the common case.
"""

from __future__ import annotations

import io
from collections import Counter
from contextlib import redirect_stdout

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from bpekit.errors import VocabError
from bpekit.minbpe import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, BasicTokenizer, RegexTokenizer
from bpekit.minbpe.base import apply_merges
from bpekit.minbpe.trainer import learn_merges

from minbpe.minbpe_data import corpus, naive_encode, naive_merges

small_text = st.text(alphabet="ab c\n", min_size=0, max_size=80)


@given(small_text, st.integers(0, 40))
def test_basic_matches_minbpe_loop(text: str, num_merges: int) -> None:
    expected = naive_merges([text.encode()], num_merges)
    tok = BasicTokenizer()
    if expected is None:
        with pytest.raises(VocabError, match="no pairs left"):
            tok.train(text, 256 + num_merges)
        return
    tok.train(text, 256 + num_merges)
    assert list(tok.merges) == expected
    assert tok.encode(text) == naive_encode(list(text.encode()), tok.merges)


@given(
    st.text(alphabet="aab b c'1\n", max_size=80),
    st.integers(0, 30),
    st.sampled_from([GPT4_SPLIT_PATTERN, GPT2_SPLIT_PATTERN]),
)
def test_regex_matches_minbpe_loop(text: str, num_merges: int, pattern: str) -> None:
    chunks = [c.encode() for c in regex.findall(pattern, text)]
    expected = naive_merges(chunks, num_merges)
    tok = RegexTokenizer(pattern)
    if expected is None:
        with pytest.raises(VocabError, match="no pairs left"):
            tok.train(text, 256 + num_merges)
        return
    tok.train(text, 256 + num_merges)
    assert list(tok.merges) == expected
    expected_ids = [i for c in chunks for i in naive_encode(list(c), tok.merges)]
    assert tok.encode(text, allowed_special="none") == expected_ids


@given(st.lists(st.lists(st.integers(0, 3), max_size=12), max_size=12), st.data())
def test_weights_equal_repeated_words(words: list[list[int]], data: st.DataObject) -> None:
    """A word of weight k trains like k copies at its first place (the deduplication rule)."""
    weights = [data.draw(st.integers(1, 4)) for _ in words]
    counts: Counter[tuple[int, ...]] = Counter()
    for word, w in zip(words, weights):
        counts[tuple(word)] += w
    expanded = [bytes(w) for w, k in zip(words, weights) for _ in range(k)]
    num_merges = data.draw(st.integers(0, 10))
    expected = naive_merges(expanded, num_merges)
    distinct = [bytes(w) for w in counts]
    if expected is None:
        with pytest.raises(VocabError):
            learn_merges(distinct, list(counts.values()), num_merges)
    else:
        got = learn_merges(distinct, list(counts.values()), num_merges)
        assert [(a, b) for a, b, _ in got] == expected


@given(st.lists(st.integers(0, 5), max_size=60), st.integers(0, 12), st.integers(0, 2**16))
def test_heap_encoder_matches_minbpe_loop(ids: list[int], num_merges: int, seed: int) -> None:
    """apply_merges equals minbpe's encode loop for merges learned on other text."""
    import random

    rng = random.Random(seed)
    train = bytes(rng.choice(range(6)) for _ in range(40))
    learned = naive_merges([train], num_merges) or []
    merges = {pair: 256 + i for i, pair in enumerate(learned)}
    assert apply_merges(ids, merges) == naive_encode(ids, merges)


def test_wikipedia_example_by_hand() -> None:
    """Worked by hand. a a a b d a a a b a c: (a,a) occurs 4 times -> Z=256, giving
    Z a b d Z a b a c. Now (Z,a) and (a,b) both occur twice; (Z,a) is seen first -> Y=257, giving
    Y b d Y b a c. (Y,b) occurs twice -> X=258; the ids are X d X a c. (Wikipedia's article
    breaks the second tie the other way.)"""
    tok = BasicTokenizer()
    tok.train("aaabdaaabac", 259)
    assert tok.merges == {(97, 97): 256, (256, 97): 257, (257, 98): 258}
    assert tok.encode("aaabdaaabac") == [258, 100, 258, 97, 99]


@pytest.mark.parametrize(
    ("name", "start", "size", "vocab_size"),
    [
        ("taylorswift.txt", 0, 10_000, 330),
        ("tinyshakespeare.txt", 100_000, 10_000, 330),
        ("tatoeba/tatoeba.jpn-eng.jpn", 0, 6_000, 300),
        ("bible/Cherokee-NT.txt", 0, 8_000, 300),
    ],
)
def test_regex_matches_educational_trainer(name: str, start: int, size: int, vocab_size: int) -> None:
    """tiktoken's _educational.bpe_train, an independent implementation of the same rule."""
    educational = pytest.importorskip("tiktoken._educational")
    text = corpus(name)[start : start + size]
    ranks = educational.bpe_train(text, vocab_size, GPT4_SPLIT_PATTERN)
    tok = RegexTokenizer()
    tok.train(text, vocab_size)
    assert [tok.vocab[idx] for idx in tok.merges.values()] == sorted(
        (t for t in ranks if ranks[t] >= 256), key=ranks.__getitem__
    )


@pytest.mark.parametrize(
    ("name", "size", "vocab_size"),
    [
        ("tinyshakespeare.txt", 80_000, 450),
        ("bible/Gujarati-NT.txt", 100_000, 450),
        ("tatoeba/tatoeba.rus-eng.rus", 20_000, 360),
        ("tatoeba/tatoeba.kor-eng.kor", 10_000, 340),
    ],
)
def test_regex_matches_reference_trainer(name: str, size: int, vocab_size: int) -> None:
    """bpekit.reference.train with minbpe's tie rule, on larger texts (merges compared as bytes)."""
    reference = pytest.importorskip("bpekit.reference.train")
    text = corpus(name)[:size]
    ref_merges, _ = reference.train(text, vocab_size, GPT4_SPLIT_PATTERN, min_frequency=1, tie="first_seen")
    tok = RegexTokenizer()
    tok.train(text, vocab_size)
    assert [(tok.vocab[a], tok.vocab[b]) for a, b in tok.merges] == ref_merges


def test_basic_matches_minbpe_loop_on_text() -> None:
    text = corpus("taylorswift.txt")[:12_000]
    tok = BasicTokenizer()
    tok.train(text, 256 + 60)
    assert list(tok.merges) == naive_merges([text.encode()], 60)
    assert tok.encode(text) == naive_encode(list(text.encode()), tok.merges)


def test_verbose_reports_each_merge() -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        BasicTokenizer().train("aaabdaaabac", 259, verbose=True)
    assert out.getvalue().splitlines() == [
        "merge 1/3: (97, 97) -> 256 (b'aa') had 4 occurrences",
        "merge 2/3: (256, 97) -> 257 (b'aaa') had 2 occurrences",
        "merge 3/3: (257, 98) -> 258 (b'aaab') had 2 occurrences",
    ]
