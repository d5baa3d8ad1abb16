"""Every golden case of ubpe-native 0.3.0 (../shared/data/ubpe/vectors.json), reproduced exactly.

Success cases: the fitted model's ``dumps`` (break/stop tokens compared as sets: ubpe writes
them in hash-seed-dependent set order), ``n_tokens`` after fitting, every encoding (ids and
weights, bit for bit) and decoding. Where ubpe raises, bpekit must raise a bpekit error that keeps
ubpe's built-in base where one exists (KeyError, ValueError, TypeError).
"""

from __future__ import annotations

import json

import pytest
from datapaths import DATA

from bpekit.errors import BpekitError, EncodeError, UsageError
from bpekit.ubpe import UBPE, SplitMode, UBPEClassic

VECTORS = DATA / "ubpe" / "vectors.json"
MISSING = f"ubpe golden vectors not found at {VECTORS} (set BPEKIT_TEST_DATA)"
CLASSES = {"UBPE": UBPE, "UBPEClassic": UBPEClassic}
BUILTIN = {"KeyError": KeyError, "ValueError": ValueError, "TypeError": TypeError}


def _load() -> dict:
    return json.loads(VECTORS.read_text(encoding="utf-8"))["v0_3"] if VECTORS.is_file() else {}


V03 = _load()


def _params(items: list, name) -> list:
    if not V03:
        return [pytest.param(None, marks=pytest.mark.skip(reason=MISSING))]
    return [pytest.param(item, id=name(item)) for item in items]


def _normalised(dump: str) -> dict:
    data = json.loads(dump)
    for key in ("break_tokens", "stop_tokens"):
        if key in data:
            data[key] = sorted(data[key])
    return data


def assert_same_dump(ours: str, theirs: str) -> None:
    assert list(json.loads(ours)) == list(json.loads(theirs))  # key order
    if "break_tokens" in theirs or "stop_tokens" in theirs:
        assert _normalised(ours) == _normalised(theirs)
        assert json.dumps(_normalised(ours)) == json.dumps(_normalised(theirs))
    else:
        assert ours == theirs


def assert_raises_like(call, expected: dict, *fragments: str) -> None:
    with pytest.raises(BpekitError) as info:
        call()
    base = BUILTIN.get(expected["error"])
    if base is not None:
        assert isinstance(info.value, base), (type(info.value), expected)
    for fragment in fragments:
        assert fragment in str(info.value)


def build(case: dict):
    cls = CLASSES[case["class"]]
    if "loads" in case:
        token_type = {"str": str, "int": int}[case["loads"]["token_type"]]
        model = cls.loads(case["loads"]["dump"], token_type=token_type)
        assert model.dumps() == case["dumps_after_loads"]
        return model
    init = dict(case["init"])
    if case["init_alphabet_kind"] == "dict":
        init["alphabet"] = {symbol: i for symbol, i in init["alphabet"]}
    model = cls(**init)
    fit = case["fit"]
    model.fit(
        fit["corpus"], n_candidates=fit["n_candidates"], rearrange_tokens=fit["rearrange_tokens"]
    )
    assert_same_dump(model.dumps(), case["dumps"])
    assert model.n_tokens == case["n_tokens_after_fit"]
    return model


CASES = V03.get("cases", [])


@pytest.mark.parametrize("case", _params(CASES, lambda c: c["id"]))
def test_fit_and_dumps(case: dict) -> None:
    build(case)


ENCODINGS = [(c, e) for c in CASES for e in c.get("encode", [])]


def _encode_id(case_and_item) -> str:
    case, item = case_and_item
    return f"{case['id']}-{item['input']!r}-{item.get('split_mode', '')}-{item.get('top_n', '')}"


@pytest.mark.parametrize("case_and_item", _params(ENCODINGS, _encode_id))
def test_encode(case_and_item, models={}) -> None:  # noqa: B006 - cache of fitted models
    case, item = case_and_item
    model = models.get(case["id"]) or models.setdefault(case["id"], build(case))
    doc = tuple(item["input"]) if item.get("input_is_tuple") else item["input"]
    kwargs = {}
    if "split_mode" in item:
        kwargs["split_mode"] = SplitMode[item["split_mode"]]
    if "top_n" in item:
        kwargs["top_n"] = item["top_n"]
    if "raises" in item:
        fragment = item["raises"]["message"] if item["raises"]["error"] == "KeyError" else ""
        assert_raises_like(lambda: model.encode(doc, **kwargs), item["raises"], fragment)
        return
    got = model.encode(doc, **kwargs)
    expected = [(ids, weight) for ids, weight in item["output"]]
    assert [ids for ids, _ in got] == [ids for ids, _ in expected]
    for (_, ours), (_, theirs) in zip(got, expected, strict=True):
        assert ours == theirs  # bit for bit (the check allows 1e-12; we match exactly)
        assert type(ours) is type(theirs)  # an empty classic word weighs int 0, as in ubpe


DECODINGS = [(c, d) for c in CASES for d in c.get("decode", [])]


@pytest.mark.parametrize(
    "case_and_item", _params(DECODINGS, lambda cd: f"{cd[0]['id']}-{cd[1]['input']}")
)
def test_decode(case_and_item, models={}) -> None:  # noqa: B006 - cache of fitted models
    case, item = case_and_item
    model = models.get(case["id"]) or models.setdefault(case["id"], build(case))
    if "raises" in item:
        numbers = [str(t) for t in item["input"]]
        assert_raises_like(lambda: model.decode(item["input"]), item["raises"], *numbers)
        return
    assert model.decode(item["input"]) == item["output"]


# ---------------------------------------------------------------- the "errors" section
# The vectors record ubpe's exception per scenario, not the inputs; each scenario is rebuilt here.
def _fitted(cls=UBPE, **kw):
    model = cls(alphabet="abc", n_tokens=6, **kw)
    model.fit(["abcab", "cabca", "bcabc"], n_candidates=5)
    return model


def _known_word_model():
    return UBPE.loads(V03["errors"]["known_words_model_dump"], token_type=str)


def _classic_known_word():
    model = UBPEClassic(alphabet="abc", n_tokens=8, known_words=["ab"])
    model.fit(["abccab", "cabcab", "acca"], n_candidates=5)
    return model.encode("ab")


SCENARIOS = {
    "encode_before_fit": lambda: UBPE(alphabet="abc").encode("ab"),
    "alphabet_missing": lambda: UBPE(),
    "alphabet_empty": lambda: UBPE(alphabet=[]),
    "alphabet_mixed_types": lambda: UBPE(alphabet=["a", 1]),
    "alphabet_ids_not_dense": lambda: UBPE(alphabet={"a": 0, "b": 2}),
    "fit_twice": lambda: _fitted().fit(["abc"]),
    "top_n_zero": lambda: _fitted().encode("abc", top_n=0),
    "tuple_input_UBPE": lambda: _fitted().encode(("a", "b")),
    "unknown_symbol": lambda: _fitted().encode("abz"),
    "decode_unknown_id": lambda: _fitted().decode([0, 77]),
    "decode_empty": lambda: _fitted().decode([]),
    "n_candidates_zero": lambda: UBPE(alphabet="abc").fit(["abc"], n_candidates=0),
    "UBPE_doc_is_exactly_one_known_word": lambda: _known_word_model().encode("ab"),
    "UBPEClassic_doc_is_exactly_one_known_word": _classic_known_word,
    "UBPE_two_known_words": lambda: _known_word_model().encode("abab"),
    "known_words_model_dump": lambda: _known_word_model().dumps(),
}
# ubpe crashes with IndexError in these; bpekit says why with a ValueError-based error.
INDEX_ERRORS = {"decode_empty": UsageError, "UBPE_doc_is_exactly_one_known_word": EncodeError}


@pytest.mark.parametrize("name", _params(sorted(V03.get("errors", {})), str))
def test_error_scenarios(name: str) -> None:
    expected = V03["errors"][name]
    scenario = SCENARIOS[name]  # a new scenario in the vectors needs a builder here
    if isinstance(expected, str):  # a dump: loading and writing it back is the identity
        assert scenario() == expected
    elif "ok" in expected:
        assert scenario() == [(ids, w) for ids, w in expected["ok"]]
    elif expected["error"] == "IndexError":
        with pytest.raises(INDEX_ERRORS[name]):
            scenario()
    else:
        fragment = expected["message"] if expected["error"] == "KeyError" else ""
        assert_raises_like(scenario, expected, fragment)
