"""The fast trainer learns exactly the textbook trainer's merges: on over 2 MB of real text to
vocab 2,000, on a multilingual sample, with several patterns, thread counts and special tokens,
and on random small word tables (which exercise overlapping runs and re-spelled tokens)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpekit.patterns import resolve_pattern
from bpekit.train import WordCounts, count, train, train_from_counts

SPECIAL = "<|endoftext|>"


def test_english_2mb_to_vocab_2000_with_specials(english_docs, textbook, count_in_python, tmp_path: Path):
    text = SPECIAL.join(english_docs)
    assert len(text.encode()) >= 2_000_000
    pattern = resolve_pattern("cl100k")
    want = textbook(count_in_python([text], pattern, [SPECIAL]), 2000 - 1)
    assert len(want) > 1500
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text, encoding="utf-8")
    for threads in (1, 2):
        tok = train(
            corpus, vocab_size=2000, pattern="cl100k", special_tokens=[SPECIAL], threads=threads, show_progress=False
        )
        assert tok.merges == want, f"threads={threads}"
        assert tok.special_tokens == {SPECIAL: 1999}
        assert tok.training["corpus"]["specials"] == len(english_docs) - 1
    # the same text as an iterator of documents, split at the special tokens
    tok = train(iter(english_docs), vocab_size=2000, pattern="cl100k", special_tokens=[SPECIAL], show_progress=False)
    assert tok.merges == want


def test_multilingual_sample(multilingual_docs, textbook, count_in_python):
    pattern = resolve_pattern("o200k")
    counts = count(iter(multilingual_docs), pattern="o200k", show_progress=False)
    python = count_in_python(multilingual_docs, pattern)
    assert counts.to_dict() == python  # the Rust pre-tokenizer and counter agree with `regex`
    want = textbook(python, 1000)
    for threads in (1, 2):
        tok = train_from_counts(counts, vocab_size=1000, threads=threads, show_progress=False)
        assert tok.merges == want


@pytest.mark.parametrize("pattern", ["gpt2", "o200k", "llama3", "qwen2"])
def test_patterns(pattern, english_docs, textbook, count_in_python):
    docs = [d[:50_000] for d in english_docs]
    want = textbook(count_in_python(docs, resolve_pattern(pattern)), 600)
    tok = train(iter(docs), vocab_size=600, pattern=pattern, show_progress=False, threads=2)
    assert tok.merges == want
    assert len(tok.ranks) == 600


def test_min_frequency_and_max_token_length(english_docs, textbook, count_in_python):
    docs = [english_docs[1][:80_000]]
    words = count_in_python(docs, resolve_pattern("gpt2"))
    tok = train(iter(docs), vocab_size=20_000, pattern="gpt2", min_frequency=5, show_progress=False)
    assert tok.merges == textbook(words, 20_000, min_frequency=5)
    assert not tok.training["reached_vocab_size"] and tok.training["last_merge_count"] >= 5
    tok = train(iter(docs), vocab_size=1000, pattern="gpt2", max_token_length=4, show_progress=False)
    assert max(len(t) for t in tok.ranks) == 4


def test_agrees_with_bpekit_reference_when_available(english_docs):
    reference = pytest.importorskip("bpekit.reference.train", reason="bpekit.reference.train is not in this tree")
    docs = [english_docs[1][:30_000], english_docs[0][:20_000]]
    merges, ranks = reference.train(docs, 400, resolve_pattern("cl100k"), special_tokens=[SPECIAL])
    tok = train(iter(docs), vocab_size=400, pattern="cl100k", special_tokens=[SPECIAL], show_progress=False)
    assert tok.merges == merges
    assert tok.ranks == ranks


words_strategy = st.dictionaries(
    st.text(alphabet="aab\u00e9 ", min_size=1, max_size=12).map(str.encode), st.integers(1, 5), min_size=1, max_size=12
)


@given(words=words_strategy, extra=st.integers(0, 40), min_frequency=st.integers(1, 3))
def test_random_word_tables(words, extra, min_frequency, textbook):
    counts = WordCounts.from_dict(words, pattern=resolve_pattern("gpt2"))
    tok = train_from_counts(counts, vocab_size=256 + extra, min_frequency=min_frequency, threads=1, show_progress=False)
    assert tok.merges == textbook(words, 256 + extra, min_frequency)
