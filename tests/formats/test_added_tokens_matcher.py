"""The added tokens' literal matcher (Rust Aho-Corasick, leftmost-longest) against the ``regex``
alternation of the literals sorted longest first, which it replaced: the same matches on random
literal sets and texts, lone surrogates through the alternation, and pickling."""

from __future__ import annotations

import pickle

from bpekit.pipeline.added_tokens import AddedToken, AddedVocabulary, _Matcher
from hypothesis import given
from hypothesis import strategies as st

_ALPHABET = st.sampled_from(["a", "b", "ab", "é", "\u4e2d", "\U0001f600", " ", "<", ">", "|", "\u00f8"])
LITERAL = st.lists(_ALPHABET, min_size=1, max_size=4).map("".join)
TEXT = st.lists(_ALPHABET, max_size=40).map("".join)


def _reference(matcher: _Matcher, text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in matcher.pattern.finditer(text)]


@given(literals=st.lists(LITERAL, min_size=1, max_size=12, unique=True), text=TEXT)
def test_rust_matches_equal_the_alternation(literals: list[str], text: str) -> None:
    ordered = sorted(literals, key=lambda s: (-len(s), s))
    table = {s: AddedToken(i, s) for i, s in enumerate(literals)}
    matcher = _Matcher(ordered, table)
    got = [(s, e, t.content) for s, e, t in matcher.find(text)]
    assert got == _reference(matcher, text)
    assert all(text[s:e] == content for s, e, content in got)


def test_lone_surrogates_take_the_alternation() -> None:
    vocab = AddedVocabulary([AddedToken(7, "<x>"), AddedToken(8, "ø")])
    assert vocab.split("a\ud800<x>ø", None) == [("a\ud800", None, True), ("<x>", 7, False), ("ø", 8, False)]
    assert vocab.split("a<x>b", None) == [("a", None, True), ("<x>", 7, False), ("b", None, False)]


def test_vocabularies_pickle() -> None:
    vocab = AddedVocabulary([AddedToken(7, "<x>"), AddedToken(8, "ø", single_word=True)])
    again = pickle.loads(pickle.dumps(vocab))
    for text in ["a<x>b ø", "aø <x>", "<x><x>"]:
        assert again.split(text, None) == vocab.split(text, None)
