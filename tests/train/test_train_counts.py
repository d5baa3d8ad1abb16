"""WordCounts: counting a stream in blocks is exact, and tables save, load and add up."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpekit import _core
from bpekit.errors import ChecksumError, FormatError, PatternError
from bpekit.patterns import PATTERNS, resolve_pattern
from bpekit.train import WordCounts, count

# text made of what decides where pieces end: spaces, line breaks, '/', letters, digits,
# punctuation, contractions, combining marks, non-Latin letters, other whitespace
FRAGMENTS = [" ", "  ", "\n", "\n\n", " \n", "\r\n", "\t", "/", "a", "Zé", "'s", "9", "123", ".", ",!", "-_",
             "\u0301", "\u4e2d\u6587", "\u0645", "\u00a0", "\u3000", "x", "The"]
TRICKY = st.lists(st.sampled_from(FRAGMENTS), max_size=80).map("".join)


_COUNTERS: dict[str, object] = {}


def rust_counts(pattern: str, text: str, blocks: list[int] | None = None) -> dict[bytes, int]:
    counter = _COUNTERS.get(pattern)  # reused: take_counts() empties it
    if counter is None:
        counter = _COUNTERS[pattern] = _core.WordCounter(pattern, [], 2)
    if blocks is None:
        counter.add_documents([text])
    else:
        data, pos, i = text.encode(), 0, 0
        while pos < len(data):
            size = blocks[i % len(blocks)]
            counter.feed(data[pos : pos + size])
            pos, i = pos + size, i + 1
        counter.end_stream()
    return dict(counter.take_counts().most_common())


@pytest.mark.parametrize("name", sorted(set(PATTERNS) - {"r50k", "p50k"}))
@given(text=TRICKY, blocks=st.lists(st.integers(1, 40), min_size=1, max_size=5))
def test_stream_cut_into_blocks_counts_like_the_whole_text(name, text, blocks):
    pattern = resolve_pattern(name)
    assert rust_counts(pattern, text, blocks) == rust_counts(pattern, text)


def test_stream_matches_python_regex(english_docs, count_in_python):
    pattern = resolve_pattern("cl100k")
    text = english_docs[0][:300_000]
    assert rust_counts(pattern, text, [4099, 65536, 7]) == count_in_python([text], pattern)


def _counts(docs: list[str], **kw) -> WordCounts:
    return count(iter(docs), pattern="gpt2", show_progress=False, **kw)


def test_save_load_round_trip(tmp_path: Path):
    wc = _counts(["hello world, hello there", "naïve café \x00\U0001f600 <|x|> 12345"], special_tokens=["<|x|>"])
    path = tmp_path / "a.counts"
    wc.save(path)
    back = WordCounts.load(path)
    assert back == wc
    assert back.special_tokens == ("<|x|>",) and back.pattern == resolve_pattern("gpt2")
    assert back.stats == wc.stats and wc.stats["specials"] == 1 and wc.stats["documents"] == 2
    assert back.to_bytes() == wc.to_bytes()  # canonical: the same table gives the same bytes
    assert back[" hello"] == 1 and back["hello"] == 1 and back.total() == wc.total()


def test_tables_add_up():
    a, b = ["the cat sat", "on the mat"], ["the dog", "sat on the log"]
    total = _counts(a) + _counts(b)
    assert total == _counts(a + b)
    assert total.stats["documents"] == 4
    acc = _counts(a)
    acc += _counts(b)
    assert acc == total
    assert total.most_common(3) == [(b" the", 2), (b"the", 2), (b" cat", 1)]  # ties in byte order


def test_tables_of_different_settings_do_not_add():
    with pytest.raises(PatternError, match="patterns"):
        _counts(["a"]) + count(iter(["a"]), pattern="cl100k", show_progress=False)
    with pytest.raises(PatternError, match="special tokens"):
        _counts(["a"]) + _counts(["a"], special_tokens=["<s>"])


def test_damaged_files_are_rejected(tmp_path: Path):
    data = _counts(["some words and more words"]).to_bytes()
    with pytest.raises(FormatError, match="truncated"):
        WordCounts.from_bytes(data[:-3])
    with pytest.raises(ChecksumError):
        WordCounts.from_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(FormatError, match="magic"):
        WordCounts.from_bytes(b"hello")
    with pytest.raises(FormatError, match="version"):
        WordCounts.from_bytes(data.replace(b'"version": 1', b'"version": 7'))
    with pytest.raises(FormatError):
        WordCounts.from_dict({"a": -1}, pattern=r"\S+")
