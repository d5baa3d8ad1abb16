"""bpekit.minbpe against every minbpe vector (made by running minbpe itself).

Where minbpe's recorded behaviour is one of its bugs (AssertionError, a stale pattern after
``load``, special ids that do not decode) the test states minbpe's result and checks the fix.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from bpekit.errors import DisallowedSpecialError, EncodeError, InvalidTokenError, VocabError
from bpekit.minbpe import GPT2_SPLIT_PATTERN, BasicTokenizer, RegexTokenizer

from minbpe.minbpe_data import VECTORS, needs_vectors, vector_text

pytestmark = needs_vectors
MINBPE = VECTORS.get("minbpe", {})
TRAINING = MINBPE.get("training", [])
SPECIAL = MINBPE.get("special", [])
EDUCATIONAL = VECTORS.get("tiktoken_educational", {}).get("train", [])


def make(name: str) -> BasicTokenizer | RegexTokenizer:
    if name == "BasicTokenizer":
        return BasicTokenizer()
    if name == "RegexTokenizer":
        return RegexTokenizer()
    if name == "RegexTokenizer/gpt2pat":
        return RegexTokenizer(GPT2_SPLIT_PATTERN)
    raise AssertionError(f"unknown tokenizer in the vectors: {name}")


@pytest.mark.parametrize("case", TRAINING, ids=[f"{c['tokenizer']}-{c['text_id']}" for c in TRAINING])
def test_training_vector(case: dict[str, Any]) -> None:
    tok = make(case["tokenizer"])
    tok.train(vector_text(case), case["vocab_size"])
    assert [[a, b, idx] for (a, b), idx in tok.merges.items()] == case["merges"]
    for enc in case["encode"]:
        ids = tok.encode(enc["input"])
        assert ids == enc["ids"], enc["input"]
        assert tok.decode(ids) == enc["input"]


@pytest.mark.parametrize("case", EDUCATIONAL, ids=[c["data_id"] for c in EDUCATIONAL])
def test_educational_training_vector(case: dict[str, Any]) -> None:
    """tiktoken's _educational trainer has minbpe's rule: same merges with its pattern."""
    tok = RegexTokenizer(case["pat_str"])
    tok.train(vector_text(case), case["vocab_size"])
    new_ranks = [(base64.b64decode(b64), rank) for b64, rank in case["new_ranks_b64"]]
    assert [(tok.vocab[idx], idx) for idx in tok.merges.values()] == new_ranks
    for text, ids in case["encode"].items():
        assert tok.encode(text) == ids


@pytest.fixture(scope="module")
def special_tok() -> RegexTokenizer:
    """RegexTokenizer on taylorswift[:2000], 64 merges, the four specials of ``special_context``."""
    context = MINBPE["special_context"]
    tok = RegexTokenizer()
    tok.train(vector_text({"text_id": "taylorswift_first_2000_chars"}), 256 + len(context["merges"]))
    assert [[a, b, idx] for (a, b), idx in tok.merges.items()] == context["merges"]
    tok.register_special_tokens(context["special_tokens"])
    return tok


def _allowed(case: dict[str, Any]) -> object:
    kind = case["allowed_special_type"]
    value = case["allowed_special"]
    return {"str": str, "set": set, "list": list, "frozenset": frozenset}[kind](value)


@pytest.mark.parametrize("case", SPECIAL, ids=[f"{c['allowed_special_type']}-{c['allowed_special']}" for c in SPECIAL])
def test_allowed_special_vector(special_tok: RegexTokenizer, case: dict[str, Any]) -> None:
    allowed = _allowed(case)
    result = case["result"]
    if "ok" in result:
        assert special_tok.encode(case["input"], allowed) == result["ok"]
        assert special_tok.decode(result["ok"]) == case["input"]
    elif result["error"] == "AssertionError":  # minbpe's bare assert for none_raise
        with pytest.raises(DisallowedSpecialError, match="<|endoftext|>"):
            special_tok.encode(case["input"], allowed)
    elif isinstance(allowed, frozenset):  # minbpe refused a frozenset; any set is accepted here
        assert special_tok.encode(case["input"], allowed) == special_tok.encode(case["input"], set(allowed))
    else:
        with pytest.raises(EncodeError, match="not understood") as info:
            special_tok.encode(case["input"], allowed)
        assert str(info.value).startswith(result["message"])


def test_default_is_none_raise(special_tok: RegexTokenizer) -> None:
    ids = MINBPE["none_raise_clean_text"]["ok"]
    text = special_tok.decode(ids)
    assert special_tok.encode(text) == ids
    with pytest.raises(DisallowedSpecialError):
        special_tok.encode(text + "<|end|>")


def test_special_decode(special_tok: RegexTokenizer) -> None:
    case = MINBPE["special_decode"]
    assert special_tok.decode(case["ids"]) == case["result"]["ok"]
    unknown = MINBPE["special_decode_unknown"]
    with pytest.raises(InvalidTokenError) as info:  # minbpe: ValueError with the same message
        special_tok.decode([999999])
    assert str(info.value) == unknown["message"]


def test_save_format(special_tok: RegexTokenizer, tmp_path: Path) -> None:
    fmt = MINBPE["save_format"]
    special_tok.save(str(tmp_path / "tok"))
    lines = (tmp_path / "tok.model").read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""  # every line ends with \n
    assert lines[: len(fmt["model_file_head"])] == fmt["model_file_head"]
    assert len(lines) - 1 == fmt["n_lines"]
    loaded = RegexTokenizer()
    loaded.load(str(tmp_path / "tok.model"))
    assert loaded.merges == special_tok.merges
    assert loaded.special_tokens == special_tok.special_tokens
    for case in SPECIAL:
        if "ok" in case["result"]:
            assert loaded.encode(case["input"], _allowed(case)) == case["result"]["ok"]


def test_load_applies_saved_pattern(tmp_path: Path) -> None:
    """minbpe kept the default compiled pattern after load (ids_after_load); the fix uses the file's."""
    case = MINBPE["load_keeps_default_compiled_pattern"]
    tok = RegexTokenizer(case["saved_pattern"])
    tok.train(case["input"], 259)
    assert tok.encode(case["input"]) == case["ids_original"]
    tok.save(str(tmp_path / "p"))
    loaded = RegexTokenizer()
    loaded.load(str(tmp_path / "p.model"))
    assert loaded.pattern == case["loaded_pattern_attr"]
    assert loaded.encode(case["input"]) == case["ids_original"]
    stale = RegexTokenizer()  # what minbpe did: the loaded merges with the default pattern
    stale.merges = loaded.merges
    assert stale.encode(case["input"]) == case["ids_after_load"]


def test_training_errors() -> None:
    errors = MINBPE["training_errors"]
    assert errors["basic_vocab_too_small"]["error"] == "AssertionError"
    with pytest.raises(VocabError, match="vocab_size must be an integer >= 256"):
        BasicTokenizer().train("abc", 255)
    for key in ("basic_runs_out_of_pairs", "regex_runs_out_of_pairs", "regex_chunks_block_pairs"):
        assert errors[key]["error"] == "ValueError"  # minbpe: max() of an empty dict
    with pytest.raises(VocabError, match="no pairs left after 2 merges"):
        BasicTokenizer().train("abc", 259)
    with pytest.raises(VocabError, match="no pairs left after 1 merges"):
        RegexTokenizer().train("ab", 258)
    with pytest.raises(VocabError, match="no pairs left after 0 merges"):
        RegexTokenizer().train("a1!", 257)  # three chunks of one byte each
    tok = BasicTokenizer()
    tok.train("abc", 256)
    assert tok.encode("abc") == errors["basic_zero_merges_then_encode"]["ok"]
