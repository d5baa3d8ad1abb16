"""The rank merge: hand-worked pieces; rank_merge == heap_merge == tiktoken on random vocabs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpekit.errors import EncodeError
from bpekit.reference import heap_merge, merge_steps, rank_merge
from bpekit.reference.train import byte_ranks

MERGES = (rank_merge, heap_merge)


def vocab(*tokens: str) -> dict[bytes, int]:
    """Single bytes (id = byte value), then ``tokens`` with ranks 256, 257, ..."""
    ranks = byte_ranks()
    for token in tokens:
        ranks[token.encode()] = len(ranks)
    return ranks


@pytest.mark.parametrize("merge", MERGES)
def test_abracadabra(merge) -> None:
    # ranks: ab 256, ra 257, abra 258, ca 259, ad 260, cad 261
    ranks = vocab("ab", "ra", "abra", "ca", "ad", "cad")
    # a b r a c a d a b r a   pairs in vocab: ab@0 256, ra@2 257, ca@4 259, ad@5 260, ab@7, ra@9
    # 256 twice -> leftmost first, then the other:   ab r a c a d ab r a
    # 257 twice (r+a) -> leftmost, then the other:   ab ra c a d ab ra
    # 258 (ab+ra) twice, leftmost first:             abra c a d abra
    # 259 ca beats 260 ad:                           abra ca d abra
    # 261 ca+d:                                      abra cad abra; "abracad" is no token: stop
    steps = [b"|".join(parts) for parts in merge_steps(b"abracadabra", ranks)]
    assert steps[1] == b"ab|r|a|c|a|d|a|b|r|a"
    assert steps[5] == b"abra|c|a|d|ab|ra"
    assert steps[-1] == b"abra|cad|abra"
    assert merge(b"abracadabra", ranks) == [258, 261, 258]


@pytest.mark.parametrize("merge", MERGES)
def test_wikipedia_pieces(merge) -> None:
    # tiktoken educational's ranks for "aaabdaaabac": aa 256, aaa 257, aaab 258
    ranks = vocab("aa", "aaa", "aaab")
    # a a a b d a a a b a c -> aa a b d a a a b a c (leftmost aa) -> aa a b d aa a b a c
    # -> aaa b d aa a b a c -> aaa b d aaa b a c -> aaab d aaa b a c -> aaab d aaab a c
    assert merge(b"aaabdaaabac", ranks) == [258, ord("d"), 258, ord("a"), ord("c")]


@pytest.mark.parametrize("merge", MERGES)
def test_leftmost_tie(merge) -> None:
    ranks = vocab("aa", "aaaa")
    assert merge(b"aaa", ranks) == [256, ord("a")]  # a a a -> (aa) a: leftmost pair first
    assert merge(b"aaaaa", ranks) == [257, ord("a")]  # aa a a a -> aa aa a -> aaaa a


@pytest.mark.parametrize("merge", MERGES)
def test_whole_piece_shortcut(merge) -> None:
    # ab 256, bcd 257, abcd 258: merging stops at "ab c d" ("ab" took the b that "bcd" needed),
    # but the whole piece is a token, so it is emitted as such (tiktoken's behaviour).
    ranks = vocab("ab", "bcd", "abcd")
    assert list(merge_steps(b"abcd", ranks))[-1] == [b"ab", b"c", b"d"]
    assert merge(b"abcd", ranks) == [258]
    assert merge(b"xabcd", ranks) == [ord("x"), 256, ord("c"), ord("d")]


@pytest.mark.parametrize("merge", MERGES)
def test_missing_byte(merge) -> None:
    ranks = {b"a": 0, b"ab": 1}  # no token for b"b" or b"c"
    assert merge(b"", ranks) == []
    assert merge(b"aab", ranks) == [0, 1]  # the lone b is merged away, so every part is a token
    with pytest.raises(EncodeError, match="no token for the bytes b'c'"):
        merge(b"abc", ranks)
    with pytest.raises(EncodeError, match="b'b'"):
        merge(b"ba", ranks)


ALPHABET = b"abcd"


@st.composite
def small_vocab(draw: st.DrawFn, all_bytes: bool = True) -> dict[bytes, int]:
    """Random multi-byte tokens over a 4-letter alphabet with random distinct ranks."""
    token = st.binary(min_size=2, max_size=5).map(lambda b: bytes(ALPHABET[x % 4] for x in b))
    tokens = draw(st.lists(token, max_size=30, unique=True))
    ranks = byte_ranks()  # single bytes never compete with pairs, so their ranks can stay fixed
    if not all_bytes:
        del ranks[b"d"]  # "d" may still occur inside longer tokens
    order = draw(st.permutations(range(len(tokens))))
    ranks.update((token, 256 + i) for token, i in zip(tokens, order, strict=True))
    return ranks


pieces = st.binary(max_size=150).map(lambda b: bytes(ALPHABET[x % 4] for x in b))


@given(small_vocab(all_bytes=False), pieces)
def test_rank_merge_equals_heap_merge(ranks: dict[bytes, int], piece: bytes) -> None:
    try:
        expected = rank_merge(piece, ranks)
    except EncodeError:
        with pytest.raises(EncodeError):
            heap_merge(piece, ranks)
        return
    assert heap_merge(piece, ranks) == expected


@given(small_vocab(), pieces.filter(bool))  # tiktoken's core panics on an empty piece
def test_rank_merge_equals_tiktoken(ranks: dict[bytes, int], piece: bytes) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    enc = tiktoken.Encoding("toy", pat_str=r"\S+", mergeable_ranks=ranks, special_tokens={})
    assert rank_merge(piece, ranks) == enc._encode_single_piece(piece)
