"""Hand-made SentencePiece models: the shared ``hm_*`` files with results worked out by hand
(derivations beside them), and random small models checked against sentencepiece."""

from __future__ import annotations

import json

import pytest
from bpekit.errors import BpekitError
from bpekit.formats.sentencepiece import SentencePieceBPE
from formats.test_sentencepiece_support import (
    CONTROL,
    NORMAL,
    SPECIALS,
    SPM_DIR,
    UNUSED,
    USER_DEFINED,
    build,
    byte_pieces,
    require,
    spm,
)
from hypothesis import given
from hypothesis import strategies as st


def _hm(name: str) -> tuple[SentencePieceBPE, dict[str, int]]:
    tok = SentencePieceBPE.load(require(SPM_DIR / f"{name}.model"))
    listed = json.loads((SPM_DIR / f"{name}.vocab.json").read_text(encoding="utf-8"))["pieces"]
    return tok, {piece: i for i, (piece, _, _) in enumerate(listed)}


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        # ab, bc, cd score 0.0; abc -1. "abc": ab (left 0) and bc (left 1) tie, the leftmost wins;
        # then ab+c = abc (-1) is the only candidate.
        ("abc", ["abc"]),
        # bc (left 0) beats ab (left 2); bc+a is no piece; then ab.
        ("bcab", ["bc", "ab"]),
        # ab first; then cd (0.0) beats abc (-1); abc is stale once c is in cd; ab+cd is no piece.
        ("abcd", ["ab", "cd"]),
        ("dcba", ["d", "c", "b", "a"]),
        # identity normalizer, no dummy prefix: " ab" -> "▁ab"; ▁ is no piece here, so it is unknown.
        (" ab", ["\u2581", "ab"]),
        # a run of unknown symbols is one unknown piece
        (" x ", ["\u2581x\u2581"]),
    ],
)
def test_equal_scores_take_the_leftmost_pair(text: str, pieces: list[str]) -> None:
    tok, ids = _hm("hm_equal_scores")
    assert tok.encode(text, out_type=str) == pieces
    assert tok.encode(text) == [ids.get(p, ids["<unk>"]) for p in pieces]


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("abc", ["abc"]),  # bc (-1) beats ab (-2) although ab is further left; then a+bc = abc (-3)
        ("abab", ["ab", "ab"]),  # two equal ab pairs: leftmost first; ab+a is no piece
        ("bcab", ["bc", "ab"]),
    ],
)
def test_a_higher_score_on_the_right_wins(text: str, pieces: list[str]) -> None:
    tok, ids = _hm("hm_higher_right")
    assert tok.encode(text, out_type=str) == pieces
    assert tok.encode(text) == [ids[p] for p in pieces]


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        # ab (0, UNUSED) then ab+c = abc (-1, UNUSED) then abc+d = abcd (-4, NORMAL): merging goes
        # through unused pieces, and abcd is kept.
        ("abcd", ["abcd"]),
        # ab, then abc; abc is UNUSED, so it is split into ab + c, and ab into a + b.
        ("abc", ["a", "b", "c"]),
        # ab; ab+d is no piece; ab is UNUSED: a + b.
        ("abd", ["a", "b", "d"]),
        # ab, abc (-1); cd is stale; de (-3); abc+de = abcde (-0.5, NORMAL).
        ("abcde", ["abcde"]),
    ],
)
def test_unused_pieces_are_resegmented(text: str, pieces: list[str]) -> None:
    tok, ids = _hm("hm_unused")
    assert tok.encode(text, out_type=str) == pieces
    assert tok.encode(text) == [ids[p] for p in pieces]


def test_byte_fallback_spells_unknown_characters_in_bytes() -> None:
    tok, ids = _hm("hm_bytefb")
    marker = ["<0xE2>", "<0x96>", "<0x81>"]  # ▁ is unknown here: its three UTF-8 bytes
    pieces = ["ab", *marker, "<0x78>", *marker, "ab"]
    assert tok.encode("ab x ab", out_type=str) == pieces
    assert tok.encode("ab x ab") == [ids[p] for p in pieces]
    assert tok.decode(tok.encode("ab x ab")) == "ab\u2581x\u2581ab"  # byte pieces decode to a literal ▁
    assert tok.encode("e\u0301\u00e9", out_type=str) == ["<0x65>", "<0xCC>", "<0x81>", "\u00e9"]
    assert tok.encode("a<sep>b<sep>", out_type=str) == ["a", "<sep>", "b", "<sep>"]  # frozen: no a+b
    assert tok.decode([ids["<0xC3>"], ids["a"], ids["<0xA9>"]]) == "\ufffda\ufffd"


def test_positive_zero_outranks_negative_zero() -> None:
    # sentencepiece 0.2.3 orders scores by their float32 bits: +0.0 > -0.0 (no tie), so "ba"
    # (+0.0, right) beats "ab" (-0.0, left).
    data = build([*SPECIALS, ("a", -1.0, NORMAL), ("b", -1.0, NORMAL), ("ab", -0.0, NORMAL), ("ba", 0.0, NORMAL)])
    tok = SentencePieceBPE.load(data)
    assert tok.encode("aba", out_type=str) == ["a", "ba"]
    assert tok.encode("bab", out_type=str) == ["ba", "b"]


def test_reserved_and_unused_symbols_left_over_are_unknown() -> None:
    # A final symbol that is a CONTROL piece, or an UNUSED piece that no merge made, is unknown
    # and joins the run of unknown symbols around it.
    data = build([*SPECIALS, ("x", 0.0, CONTROL), ("z", 0.0, UNUSED), ("a", -1.0, NORMAL)])
    tok = SentencePieceBPE.load(data)
    assert tok.encode("xqz", out_type=str) == ["xqz"]
    assert tok.encode("axa") == [5, 0, 5]  # ids: <unk> <s> </s> x z a


# Random models over a small alphabet: pieces of 1-4 symbols, every type, tied scores and
# signed zeros, random normalizer flags. Loading must fail exactly when sentencepiece's fails.
_SYMBOLS = ["a", "b", "c", "\u2581", "\u00e9"]
_PIECE = st.lists(st.sampled_from(_SYMBOLS), min_size=1, max_size=4).map("".join)
_SCORE = st.sampled_from([0.0, -0.0, -1.0, -2.0, -1.5, 3.0, float("-inf")])
_TYPE = st.sampled_from([NORMAL, NORMAL, NORMAL, USER_DEFINED, UNUSED, CONTROL])


@st.composite
def _models(draw: st.DrawFn) -> bytes:
    entries = draw(st.lists(st.tuples(_PIECE, _SCORE, _TYPE), min_size=1, max_size=14, unique_by=lambda e: e[0]))
    if draw(st.integers(0, 9)) == 0:  # now and then a duplicate piece, or a second UNKNOWN
        entries.append(draw(st.sampled_from([(entries[0][0], -1.0, NORMAL), ("<unk2>", 0.0, 2)])))
    pieces = [("<unk>", 0.0, 2), *entries]
    fallback = draw(st.booleans())
    if fallback:
        pieces += byte_pieces()
    order = draw(st.permutations(range(len(pieces))))
    names = ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces", "treat_whitespace_as_suffix")
    flags = draw(st.fixed_dictionaries({k: st.booleans() for k in names}))
    return build([pieces[i] for i in order], byte_fallback=fallback, **flags)


@given(data=_models(), texts=st.lists(st.text("abcé x▁", max_size=10), min_size=1, max_size=4))
def test_random_models_match_sentencepiece(data: bytes, texts: list[str]) -> None:
    try:
        sp = spm().SentencePieceProcessor(model_proto=data)
    except RuntimeError:
        with pytest.raises(BpekitError):
            SentencePieceBPE.load(data)
        return
    tok = SentencePieceBPE.load(data)
    for text in texts:
        assert tok.normalize(text) == sp.normalize(text)
        assert tok.encode_pieces_and_ids(text) == (sp.encode(text, out_type=str), sp.encode(text))
        assert tok.encode(text) == tok.encode(text) == sp.encode(text)  # the cached chunk path
        assert tok.encode(text, alpha=1.0) == sp.encode(text, enable_sampling=True, alpha=1.0, nbest_size=-1)
        ids = sp.encode(text)
        assert tok.decode(ids) == sp.decode(ids)
    everything = list(range(tok.vocab_size()))
    assert tok.decode(everything) == sp.decode(everything)


def test_undoing_unused_merges_stops_100_levels_deep() -> None:
    # c0 c1 ... c102 merge left to right into UNUSED prefixes s1 = c0c1, s2 = s1c2, ...; undoing
    # s102 goes one level per piece, so s1 is reached 101 levels down and kept: its own id.
    chars = [chr(0x4E00 + i) for i in range(103)]
    prefixes = ["".join(chars[: k + 1]) for k in range(1, 103)]
    pieces = [*SPECIALS, *((c, -1000.0, NORMAL) for c in chars)]
    pieces += [(p, -float(k), UNUSED) for k, p in enumerate(prefixes)]
    tok, sp = SentencePieceBPE.load(build(pieces)), spm().SentencePieceProcessor(model_proto=build(pieces))
    text = "".join(chars)
    assert tok.encode(text, out_type=str) == sp.encode(text, out_type=str)
    assert tok.encode(text, out_type=str)[:2] == [chars[0] + chars[1], chars[2]]
    assert tok.encode(text)[:2] == [3 + 103, 3 + 2]  # ids: 3 specials, 103 chars, then s1, s2, ...
    assert tok.encode(text) == sp.encode(text)
