"""Fitting: the incremental trainer equals the recount-everything reference, and the edge cases
of ubpe's loop (overshoot, idf weights, empty documents, corpora without pairs, rearrangement)."""

from __future__ import annotations

import math

import pytest
from datapaths import DATA
from hypothesis import given
from hypothesis import strategies as st

from bpekit.errors import EncodeError, InputTypeError, UsageError
from bpekit.ubpe import UBPE, SplitMode, UBPEClassic
from bpekit.ubpe.fitting import fast_merges
from bpekit.ubpe.rearrange import classic_deletions, rearrange
from bpekit.ubpe.reference import reference_merges

parts_st = st.lists(st.integers(0, 3), min_size=1, max_size=12)
docs_st = st.lists(st.lists(parts_st, min_size=1, max_size=3), min_size=1, max_size=6)


@given(docs=docs_st, n_tokens=st.integers(4, 30), n_candidates=st.integers(1, 8))
def test_fast_trainer_equals_reference(docs, n_tokens, n_candidates) -> None:
    # a 4-symbol alphabet gives many ties, (x, x) runs and border-rule rejections
    assert fast_merges(docs, 4, n_tokens, n_candidates) == reference_merges(
        docs, 4, n_tokens, n_candidates
    )


def test_fast_trainer_equals_reference_on_text() -> None:
    text = "the cat sat on the mat. the dog and the cat. a mat, a cat and a dog! " * 3
    alphabet = {c: i for i, c in enumerate(sorted(set(text)))}
    docs = [[[alphabet[c] for c in line]] for line in text.split(".") if line]
    for n_candidates in (1, 5, 50):
        expected = reference_merges(docs, len(alphabet), 200, n_candidates)
        assert fast_merges(docs, len(alphabet), 200, n_candidates) == expected
        assert len(expected) > 20


def test_one_batch_overshoots_n_tokens() -> None:
    # (a,b) and (c,d) both count 2 and do not touch: one iteration makes ids 4 and 5
    merges = reference_merges([[[0, 1, 2, 3]], [[0, 1], [2, 3]]], 4, 4, 50)
    assert [m[0] for m in merges] == [4, 5]
    model = UBPE(alphabet="abcd ", n_tokens=5, break_tokens=" ")
    model.fit(["abcd", "ab cd"], rearrange_tokens=False)
    assert model.n_tokens == 7  # asked for 5, the batch made ids 5 and 6
    model = UBPE(alphabet="abcd ", n_tokens=5)
    model.fit(["abcd", "ab cd"], split_mode=SplitMode.NONE, rearrange_tokens=False)
    # equal count and df: the larger pair (c, d) first; the spaces do not block (a, b)
    assert model.tokens_mapper["backward"] == {5: (2, 3), 6: (0, 1)}


def test_border_rule_rejects_a_pair_that_follows_an_accepted_one() -> None:
    # (c,d) x2 is rejected after (a,b) x3 because (d,a) also occurs 2 times
    docs = [[[0, 1, 2, 3, 0, 1]], [[2, 3, 0, 1]]]
    first = reference_merges(docs, 4, 4, 50)
    assert [(left, right) for _, left, right, _ in first] == [(0, 1)]
    assert fast_merges(docs, 4, 4, 50) == first


def test_ties_prefer_lower_df_then_larger_pair() -> None:
    # (0,1) and (2,3) both count 2; (2,3) is in one document, (0,1) in two
    docs = [[[0, 1, 2, 3, 2, 3]], [[0, 1]]]
    (_, left, right, df), *_ = reference_merges(docs, 4, 4, 1)
    assert (left, right, df) == (2, 3, 1)
    docs = [[[0, 1]], [[2, 3]]]  # count 1, df 1 each: the larger pair wins
    assert reference_merges(docs, 4, 4, 1)[0][1:3] == (2, 3)


def test_weights_are_idf_and_zero_for_one_document() -> None:
    model = UBPE(alphabet="abc", n_tokens=6)
    model.fit(["abcabc", "ab", "c"], rearrange_tokens=False)
    for w in model.tokens_weights.values():
        assert 0.0 <= w <= math.log(4 / 2)
    single = UBPEClassic(alphabet="abc", n_tokens=8)
    single.fit(["abcabcaab"])
    assert set(single.tokens_weights.values()) == {0.0}


def test_empty_document_is_refused_only_when_a_pass_runs() -> None:
    with pytest.raises(EncodeError, match="document 1"):
        UBPE(alphabet="ab", n_tokens=4).fit(["ab", "", "ba"])
    with pytest.raises(EncodeError, match="document 0"):  # separators only: no parts
        UBPE(alphabet="ab ", n_tokens=4, break_tokens=" ").fit(["  ", "ab"])
    lonely = UBPE(alphabet="ab", n_tokens=4)  # no pair anywhere: no pass, no error
    lonely.fit(["a", "", "b"], rearrange_tokens=False)
    assert lonely.is_fitted and lonely.n_tokens == 2 and not lonely.tokens_weights
    assert lonely.encode("abba") == [([0, 1, 1, 0], 0.0)]


def test_corpus_without_pairs_cannot_be_rearranged() -> None:
    with pytest.raises(UsageError, match="no pair"):
        UBPE(alphabet="ab", n_tokens=4).fit(["a", "b"])


def test_fit_argument_checks() -> None:
    with pytest.raises(UsageError, match="n_candidates"):
        UBPE(alphabet="ab").fit(["ab"], n_candidates=0)
    with pytest.raises(InputTypeError, match="corpus"):
        UBPE(alphabet="ab").fit("abab")
    with pytest.raises(EncodeError, match="document 1"):
        UBPE(alphabet="ab").fit(["ab", 12])
    with pytest.raises(InputTypeError, match="split_mode"):
        UBPE(alphabet="ab").fit(["ab"], split_mode="FULL")
    model = UBPE(alphabet="ab", n_tokens=3)
    model.fit(["abab"])
    with pytest.raises(UsageError, match="only once"):
        model.fit(["abab"])


def test_progress_goes_to_stderr(capsys) -> None:
    UBPE(alphabet="ab", n_tokens=4).fit(["abab", "ba"], quiet=False)
    captured = capsys.readouterr()
    assert captured.out == "" and "iteration 1" in captured.err


# ---------------------------------------------------------------- rearrangement
def test_universal_rearrangement_deletes_lowest_weights_earliest_first() -> None:
    backward = {3: (0, 1), 4: (1, 2), 5: (0, 1, 2), 6: (2, 0)}
    weights = {3: 0.5, 4: 0.1, 5: 0.5, 6: 0.1}
    new_backward, new_weights = rearrange(backward, weights, 3, 5, classic=False)
    # q = 4 - 5 + 3 = 2 deletes 4 and 6 (weight 0.1, 4 made first); survivors 5 then 3
    assert new_backward == {3: (0, 1, 2), 4: (0, 1)}
    assert new_weights == {3: 0.5, 4: 0.5}


def test_classic_cascade_deletes_dependants_and_can_overshoot() -> None:
    buf = [(3, (0, 1)), (4, (3, 2)), (5, (4, 4)), (6, (1, 2))]  # ascending weight
    assert classic_deletions(buf, 1) == {3, 4, 5}
    assert classic_deletions(buf, 0) == set()
    backward = dict(buf)
    weights = {3: 0.1, 4: 0.2, 5: 0.3, 6: 0.4}
    new_backward, _ = rearrange(backward, weights, 3, 6, classic=True)
    assert new_backward == {3: (1, 2)}


def test_classic_trim_can_delete_every_token() -> None:
    # one document: every weight is 0, so the first token is deleted first, and all are built
    # on it; the model is fitted but has no token left
    model = UBPEClassic(alphabet=[0, 1], n_tokens=3)
    model.fit([[0, 1, 0, 1]])
    assert model.is_fitted and model.tokens_mapper["backward"] == {} and model.n_tokens == 2
    assert model.encode([0, 1, 0, 1]) == [([0, 1, 0, 1], 0.0)]


def test_classic_survivor_ids_are_remapped_inside_pairs() -> None:
    backward = {3: (0, 1), 4: (3, 3)}
    weights = {3: 0.1, 4: 0.9}
    new_backward, new_weights = rearrange(backward, weights, 2 + 1, 100, classic=True)
    assert new_backward == {3: (4, 4), 4: (0, 1)}  # "rarest first": a token before its part
    assert new_weights == {3: 0.9, 4: 0.1}


def test_public_rearrange_tokens() -> None:
    model = UBPE(alphabet="abcdr", n_tokens=40)
    model.fit(["abracadabra", "abcabc", "cabra"], rearrange_tokens=False)
    before = dict(model.tokens_weights)
    model.rearrange_tokens(n_tokens=model.first_token_id + 2)
    assert model.n_tokens == model.first_token_id + 2
    assert sorted(model.tokens_weights.values()) == sorted(before.values())[-2:]
    assert model.decode(model.encode("abracadabra")[0][0]) == "abracadabra"
    with pytest.raises(UsageError):
        model.rearrange_tokens(n_tokens=0)
    with pytest.raises(UsageError, match="not fitted"):
        UBPE(alphabet="ab").rearrange_tokens()


# ---------------------------------------------------------------- scale (no timing)
def test_fit_one_megabyte_of_real_text() -> None:
    path = DATA / "corpora" / "tinyshakespeare.txt"
    if not path.is_file():
        pytest.skip(f"corpus not found at {path} (set BPEKIT_TEST_DATA)")
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line]
    assert sum(map(len, lines)) > 900_000
    model = UBPE(alphabet=sorted(set("".join(lines))), n_tokens=400)
    model.fit(lines)
    assert model.n_tokens == 400
    sample = lines[::997]
    for line in sample:
        ((ids, weight),) = model.encode(line)
        assert model.decode(ids) == line and weight >= 0.0
    encoded = sum(len(model.encode(line)[0][0]) for line in sample)
    assert encoded < 0.6 * sum(map(len, sample))  # the tokens do compress the text
