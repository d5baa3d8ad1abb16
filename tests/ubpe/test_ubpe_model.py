"""Constructor checks, the splitting pipeline, the JSON format and the errors that replace
ubpe's crashes. Expected values are worked out by hand in the comments."""

from __future__ import annotations

import json

import pytest

from bpekit.errors import (
    EncodeError,
    FormatError,
    InputTypeError,
    InvalidTokenError,
    PatternError,
    UnknownIdError,
    UsageError,
    VocabError,
)
from bpekit.ubpe import UBPE, SplitMode, UBPEClassic


# ----------------------------------------------------------------- constructor
def test_alphabet_forms() -> None:
    assert UBPE(alphabet="ba").alphabet == {"b": 0, "a": 1}
    assert UBPE(alphabet={"x": 1, "y": 0}).inverse_alphabet == {1: "x", 0: "y"}
    assert UBPE(alphabet=range(3)).alphabet == {0: 0, 1: 1, 2: 2}


@pytest.mark.parametrize(
    ("alphabet", "error", "fragment"),
    [
        (None, InputTypeError, "must be specified"),
        ([], VocabError, "non-empty"),
        (["a", 1], InputTypeError, "same type"),
        ([1, 2.5], InputTypeError, "float, int"),
        ({"a": 0, "b": 2}, VocabError, "0..1"),
        ({"a": "0"}, VocabError, "ints"),
        (["a", "b", "a"], VocabError, r"'a' twice"),
        ([["a"]], InputTypeError, "hashable"),
        (5, InputTypeError, "dict or an iterable"),
    ],
)
def test_alphabet_errors(alphabet, error, fragment) -> None:
    with pytest.raises(error, match=fragment):
        UBPE(alphabet=alphabet)


def test_known_words() -> None:
    model = UBPE(alphabet="abc", known_words=["ab", "cab"])
    assert model.known_words == {3: "ab", 4: "cab"} and model.first_token_id == 5
    assert UBPE(alphabet="abc", known_words={"ab": 3}).known_words == {3: "ab"}
    assert UBPE(alphabet="abc", known_words={3: "ab"}).known_words == {3: "ab"}
    assert UBPE(alphabet="abc", known_words=[]).known_words is None
    with pytest.raises(VocabError, match=r"3\.\.3"):
        UBPE(alphabet="abc", known_words={"ab": 4})
    with pytest.raises(InputTypeError, match="str or tuple symbols"):
        UBPE(alphabet=[0, 1], known_words=[[0, 1]])
    with pytest.raises(VocabError, match="empty"):
        UBPE(alphabet="abc", known_words=[""])
    with pytest.raises(VocabError, match="twice"):
        UBPE(alphabet="abc", known_words=["ab", "ab"])
    for mixed in ({"ab": 3, 4: "bc"}, {3: "ab", "bc": 4}, {"ab": True}, {"ab": "3"}):
        with pytest.raises(InputTypeError, match="must map every word to an int id"):
            UBPE(alphabet="abc", known_words=mixed)


def test_separators_and_regex() -> None:
    model = UBPE(alphabet="ab .", break_tokens=" x", stop_tokens=[".", "?"])
    assert model.break_tokens == [" "] and model.stop_tokens == ["."]
    assert UBPE(alphabet="ab", break_tokens="xy").break_tokens is None
    assert UBPE(alphabet="ab", regex_str="").regex_str is None
    with pytest.raises(PatternError, match="not a valid pattern"):
        UBPE(alphabet="ab", regex_str="(")
    with pytest.raises(PatternError, match="2 groups"):
        UBPE(alphabet="ab", regex_str="(a)(b)")
    with pytest.raises(InputTypeError, match="regex_str"):
        UBPE(alphabet="ab", regex_str=3)
    with pytest.raises(UsageError, match="n_tokens"):
        UBPE(alphabet="ab", n_tokens=0)


# -------------------------------------------------------------------- pipeline
def test_pipeline_steps() -> None:
    model = UBPEClassic(
        alphabet="abc .", known_words=["ab", "abc"], break_tokens=" ", stop_tokens="."
    )
    # a b c " " . = 0..4; "abcab c.a": the longest known word "abc" (6), then "ab" (5),
    # " " breaks (3), "c" (2), "." stops (4), "a" (0)
    assert model.split("abcab c.a") == [[6], [5], [3], [2], [4], [0]]
    assert model.split("abcab c.a", leave_separators=False) == [[2], [0]]
    assert model.split("abcab c.a", split_mode=SplitMode.NONE) == [[0, 1, 2, 0, 1, 3, 2, 4, 0]]
    assert model.split("ca b", split_mode=SplitMode.KNOWN_WORDS) == [[2, 0, 3, 1]]
    assert model.split("") == []  # break or stop tokens configured: no part
    assert UBPE(alphabet="ab").split("") == [[]]  # none configured: one empty part
    assert model.split(["a", "b", "c"]) == [[6]]  # lists become tuples, words still match


def test_regex_keeps_only_matches_and_leaves_separators_alone() -> None:
    model = UBPE(alphabet="ab1 ", regex_str="[ab]+", break_tokens=" ")
    assert model.split("ab1 ba") == [[0, 1], [3], [1, 0]]  # "1" is dropped, " " kept
    assert model.split("ab1 ba", leave_separators=False) == [[0, 1], [1, 0]]


def test_unknown_symbol_is_a_key_error() -> None:
    model = UBPE(alphabet="ab")
    with pytest.raises(InvalidTokenError, match="'z'") as info:
        model.split("abz")
    assert isinstance(info.value, KeyError)


# ------------------------------------------------------------ encode and decode
def _toy(cls):
    model = cls(alphabet="abc", n_tokens=20)  # no trimming: the classic cascade could empty it
    model.fit(["abcab", "cabca", "bcabc", "aab"], n_candidates=5)
    return model


def test_document_types() -> None:
    classic, universal = _toy(UBPEClassic), _toy(UBPE)
    assert classic.encode(("a", "b")) == classic.encode(["a", "b"]) == classic.encode("ab")
    with pytest.raises(EncodeError, match="str or list, not tuple") as info:
        universal.encode(("a", "b"))
    assert isinstance(info.value, ValueError)
    with pytest.raises(EncodeError, match="not bytes"):
        classic.encode(b"ab")
    with pytest.raises(UsageError, match="top_n"):
        universal.encode("ab", top_n=0)
    with pytest.raises(InputTypeError, match="top_n"):
        universal.encode("ab", top_n=1.0)
    with pytest.raises(UsageError, match="not fitted"):
        UBPEClassic(alphabet="ab").encode("ab")


def test_decode_errors() -> None:
    model = _toy(UBPE)
    with pytest.raises(UsageError, match="empty"):
        model.decode([])
    with pytest.raises(UnknownIdError, match="Unknown token 99") as info:
        model.decode([0, 99])
    assert isinstance(info.value, ValueError) and isinstance(info.value, KeyError)
    with pytest.raises(UnknownIdError, match="'a'"):
        model.decode(["a"])
    with pytest.raises(InputTypeError):
        model.decode("ab")
    assert model.decode((0, 1)) == "ab"


def test_universal_refuses_a_document_that_is_one_known_word() -> None:
    kw = dict(alphabet="abc", n_tokens=8, known_words=["ab"])
    universal, classic = UBPE(**kw), UBPEClassic(**kw)
    for model in (universal, classic):
        model.fit(["abcab", "cabca", "bcabc"], n_candidates=5)
    assert classic.encode("ab") == [([3], 0.0)]
    with pytest.raises(EncodeError, match="exactly one known word"):
        universal.encode("ab")
    assert universal.encode("ab", split_mode=SplitMode.NONE)[0][0] != [3]
    assert universal.encode("abab")[0][0] == [3, 3]  # two parts: each appended as is


def test_several_parts_top_n_one_adds_part_weights() -> None:
    model = UBPE(alphabet="abc ", n_tokens=8, break_tokens=" ")
    model.fit(["abc abc", "ab ca", "cab"], n_candidates=5)
    ((ids, weight),) = model.encode("abc ab")
    ((ids1, w1),) = model.encode("abc")
    ((ids2, w2),) = model.encode("ab")
    assert ids == [*ids1, 3, *ids2] and weight == 0.0 + w1 + w2


# --------------------------------------------------------------- serialisation
def test_dump_round_trip_and_layout() -> None:
    for cls in (UBPE, UBPEClassic):
        model = cls(alphabet=[0, 1, 2], n_tokens=12)
        model.fit([[0, 1, 2, 0, 1], [2, 0, 1, 2]], n_candidates=3)
        dump = model.dumps()
        assert list(json.loads(dump)) == ["n_tokens", "alphabet", "mapper", "weights"]
        again = cls.loads(dump)
        assert again.dumps() == dump
        assert again.encode([0, 1, 2, 0]) == model.encode([0, 1, 2, 0])
        with pytest.raises(UsageError, match="only once"):
            again.fit([[0, 1]])


def test_dump_with_every_optional_field() -> None:
    model = UBPEClassic(
        alphabet="ab .",
        n_tokens=9,
        known_words=["ab"],
        break_tokens=" ",
        regex_str="[ab]+|[.]",
        stop_tokens=".",
    )
    model.fit(["aab bba.", "abba ba."], n_candidates=4)
    data = json.loads(model.dumps())
    assert list(data) == [
        "n_tokens",
        "alphabet",
        "known_words",
        "break_tokens",
        "regex_str",
        "stop_tokens",
        "mapper",
        "weights",
    ]
    assert data["known_words"] == {"4": "ab"} and data["break_tokens"] == [" "]
    again = UBPEClassic.loads(model.dumps(), token_type=str)
    assert again.dumps() == model.dumps() and again.known_words == {4: "ab"}


@pytest.mark.parametrize(
    ("dump", "fragment"),
    [
        ("{", "invalid JSON"),
        ("[]", "not an object"),
        ('{"alphabet": {"a": 0}}', "missing n_tokens, mapper, weights"),
        ('{"n_tokens": 3, "alphabet": {"a": 0}, "mapper": {}, "weights": {}}', "token_type=str"),
    ],
)
def test_loads_rejects_what_is_not_a_model(dump: str, fragment: str) -> None:
    with pytest.raises(FormatError, match=fragment):
        UBPE.loads(dump)


@pytest.mark.parametrize(
    ("cls", "mapper", "weights", "fragment"),
    [
        (UBPEClassic, {"2": [0, 1]}, {"3": 1.0}, "different ids"),
        (UBPEClassic, {"2": [0, 1]}, {"2": "x"}, "number"),
        (UBPEClassic, {"1": [0, 0]}, {"1": 1.0}, "below 2"),
        (UBPEClassic, {"2": [0, 1, 1]}, {"2": 1.0}, "must be a pair"),
        (UBPEClassic, {"2": [0, 7]}, {"2": 1.0}, "unknown id"),
        (UBPEClassic, {"2": [3, 0], "3": [2, 1]}, {"2": 1.0, "3": 1.0}, "contains itself"),
        (UBPE, {"2": [0, 2]}, {"2": 1.0}, "alphabet ids"),
        (UBPE, {"2": [0]}, {"2": 1.0}, "2 or more"),
        (UBPE, {"x": [0, 1]}, {"x": 1.0}, "int ids"),
        (UBPEClassic, {"2": "01"}, {"2": 1.0}, "must be a list of int ids"),  # not ids 0 and 1
        (UBPEClassic, {"2": [0, 1.0]}, {"2": 1.0}, "must be a list of int ids"),
        (UBPEClassic, {"2": [0, 1]}, {"2": float("nan")}, "finite number"),
        (UBPEClassic, {"2": [0, 1]}, {"2": float("inf")}, "finite number"),
        (UBPE, {"2": [0, 1]}, {"2": float("-inf")}, "finite number"),
        (UBPEClassic, {"2": [0, 1]}, {"2": 10**400}, "finite number"),  # no float holds it
    ],
)
def test_loads_checks_tokens(cls, mapper, weights, fragment) -> None:
    dump = json.dumps(
        {"n_tokens": 3, "alphabet": {"0": 0, "1": 1}, "mapper": mapper, "weights": weights}
    )
    with pytest.raises(FormatError, match=fragment):
        cls.loads(dump)


def test_classic_ids_must_fit_in_characters() -> None:
    dump = json.dumps(
        {
            "n_tokens": 3,
            "alphabet": {"0": 0, "1": 1},
            "mapper": {"1114112": [0, 1]},
            "weights": {"1114112": 1.0},
        }
    )
    with pytest.raises(VocabError, match="below 1114112"):
        UBPEClassic.loads(dump)
    assert UBPE.loads(dump).decode([1114112]) == [0, 1]  # universal models have no such limit


def test_symbols_that_json_cannot_hold() -> None:
    model = UBPE(alphabet=[(0,), (1,)], n_tokens=4)
    model.fit([[(0,), (1,), (0,), (1,)]])
    with pytest.raises(FormatError, match="tuple"):
        model.dumps()
