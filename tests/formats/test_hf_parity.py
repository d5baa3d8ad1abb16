"""GPT-NeoX-20B's tokenizer.json through bpekit's pipeline gives the ids and text of Hugging Face
``tokenizers`` on every corpus (a stride of lines; BPEKIT_FULL_PARITY=1 for every line) and on
random text; the Rust pre-tokenizer fast path gives the pieces of the Python one."""

from __future__ import annotations

import os

import pytest
from bpekit import errors
from bpekit.patterns import PATTERNS
from bpekit.pipeline import pre_tokenizers
from bpekit.pipeline.byte_level import to_chars
from bpekit.pipeline.fast import core_splitter
from bpekit.tokenizer_export import onig_pattern
from datapaths import DATA, corpus_files
from hypothesis import given, settings
from hypothesis import strategies as st

FULL = os.environ.get("BPEKIT_FULL_PARITY") == "1"
LINES_PER_FILE = 8


def corpus_lines() -> list[str]:
    files = corpus_files()
    if not files:
        pytest.skip(f"no corpora under {DATA}")
    lines: list[str] = []
    for f in files:
        text = f.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        lines.extend(text if FULL else text[:: max(1, len(text) // LINES_PER_FILE)][:LINES_PER_FILE])
    return lines


def test_neox_is_on_the_fast_split_path(neox):
    ours, _ = neox
    assert ours._splitter is not None and ours.vocab_size == 50277


def test_corpora_ids_and_text(neox):
    ours, hf = neox
    lines = corpus_lines()
    assert len(lines) > 1000
    expected = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
    for line, ids in zip(lines, expected):
        assert ours.encode(line) == ids, repr(line)
    for ids in expected[::10]:
        assert ours.decode(ids) == hf.decode(ids, skip_special_tokens=False)


SPECIAL_TEXT = st.sampled_from(["<|endoftext|>", "<|padding|>", "  ", "    ", "\n", "'s", "Ġ", "1234", "é", "e\u0301"])


EXAMPLES = int(os.environ.get("BPEKIT_HYPOTHESIS_EXAMPLES", "40"))


@settings(max_examples=EXAMPLES)
@given(st.lists(st.one_of(st.text(), SPECIAL_TEXT), max_size=8).map("".join))
def test_random_text(neox, text):
    ours, hf = neox
    ids = hf.encode(text, add_special_tokens=False).ids
    assert ours.encode(text) == ids
    assert ours.decode(ids) == hf.decode(ids, skip_special_tokens=False)


FAST_PRE = [pre_tokenizers.ByteLevel(add_prefix_space=p) for p in (False, True)] + [
    pre_tokenizers.Sequence(
        [pre_tokenizers.Split(pre_tokenizers.Pattern(onig_pattern(p), True), "Isolated"),
         pre_tokenizers.ByteLevel(add_prefix_space=prefix, use_regex=False)]
    )
    for p in dict.fromkeys(PATTERNS.values())
    for prefix in (False, True)
] + [
    # HF's Digits then ByteLevel's GPT-2 regex (SmolLM, StarCoder 2), Digits in a Split sequence
    pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=i), pre_tokenizers.ByteLevel(add_prefix_space=False)])
    for i in (False, True)
] + [
    pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True),
         pre_tokenizers.Split(pre_tokenizers.Pattern(onig_pattern(PATTERNS["llama3"]), True), "Isolated"),
         pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )
]


# Characters this Python's Unicode tables (14.0) assign: Oniguruma and fancy-regex treat later
# ones (e.g. U+323B0, Unicode 15) as unassigned, the ``regex`` module as letters (docs/formats/hf.md)
ASSIGNED = st.characters(codec="utf-8", exclude_categories=("Cn", "Cs"))


@given(st.text(alphabet=ASSIGNED), st.sampled_from(range(len(FAST_PRE))))
def test_rust_split_equals_python_split(text, which):
    pre = FAST_PRE[which]
    split = core_splitter(pre)
    assert split is not None
    assert [to_chars(p.encode()) for p in split(text)] == pre.pre_tokenize_str(text)


def test_vocabulary_and_batch(neox):
    ours, hf = neox
    assert ours.vocab_size == hf.get_vocab_size() and ours.n_vocab == 50277
    for token in ["<|endoftext|>", "<|padding|>", " " * 24, "Ġthe", "hello", "Ġ", "no such token"]:
        assert ours.token_to_id(token) == hf.token_to_id(token), token
    for i in [0, 1, 2, 253, 50253, 50254, 50276]:
        assert ours.id_to_token(i) == hf.id_to_token(i)
    texts = ["a <|padding|>b", "", "   x", "tschüß"]
    assert ours.encode_batch(texts) == [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]


def test_pair_rank_is_not_rank_of_result():
    """Why a tokenizer.json's merges stay in Python: one merge per token, ids rising with merge
    order, and still Hugging Face (pair rank) and tiktoken (rank of the result) differ."""
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {"a": 0, "b": 1, "c": 2, "bc": 3, "ab": 4, "abc": 5, "x": 6}
    merges = [("b", "c"), ("a", "b"), ("ab", "c")]
    hf = tokenizers.Tokenizer(tokenizers.models.BPE(vocab, merges))
    from bpekit import Encoding
    from bpekit.pipeline import BPE

    assert BPE(vocab, merges).tokenize("xabc") == hf.encode("xabc").ids == [6, 0, 3]
    ranks = {t.encode(): i for t, i in vocab.items()}
    rank_bpe = Encoding("x", pat_str=r"\w+", mergeable_ranks=ranks, special_tokens={})
    assert rank_bpe._encode_single_piece(b"xabc") == [6, 5]


@settings(max_examples=EXAMPLES)
@given(st.lists(st.integers(0, 50276), max_size=40), st.booleans())
def test_random_ids_decode_like_hugging_face(neox, ids, skip):
    """Any ids (special ones and partial UTF-8 included) through the ByteLevel decode in Rust
    (`Tokenizer._decode_ids`): Hugging Face's text, and the Python decoder's."""
    ours, hf = neox
    assert ours._decode_ids() is not None  # the fast path is the one under test
    want = hf.decode(ids, skip_special_tokens=skip)
    assert ours.decode(ids, skip_special_tokens=skip) == want
    assert ours.decode(tuple(ids), skip_special_tokens=skip) == want
    kept = [i for i in ids if not skip or i not in ours._special_id_set()]
    assert ours.decoder.decode([ours.id_to_token(i) for i in kept]) == want


def test_flags_must_be_bools(neox):
    # Hugging Face's encode(text, pair): the second text was taken for a true add_special_tokens
    ours, _ = neox
    calls = [lambda f: ours.encode("a", f), lambda f: ours.count("a", f), lambda f: ours.encode_batch(["a"], f),
             lambda f: ours.count_batch(["a"], f), lambda f: ours.encode_to_numpy("a", f),
             lambda f: ours.encode_batch_to_numpy(["a"], f), lambda f: ours.decode([510], skip_special_tokens=f),
             lambda f: ours.decode_batch([[510]], skip_special_tokens=f)]
    for call in calls:
        for flag in ("b", None, 1):
            with pytest.raises(errors.InputTypeError, match="must be True or False"):
                call(flag)
        call(True)
        call(False)
    assert ours.encode("a", True) == ours.encode("a", add_special_tokens=True)


def test_decode_odd_ids_take_the_python_path(neox):
    ours, _ = neox
    for bad in ([50277], [10**6], [-1], [2**40], ["x"]):
        with pytest.raises(Exception) as fast:
            ours.decode(bad)
        with pytest.raises(type(fast.value)):
            ours.decoder.decode([ours.id_to_token(i) for i in bad])
    for bad, error in ((-1, errors.IdRangeError), (2**40, errors.IdRangeError), (50277, errors.InvalidTokenError),
                       ("x", errors.InputTypeError)):
        with pytest.raises(error):
            ours.decode([510, bad])
    with pytest.raises(errors.IdRangeError, match="token id -1 is out of range"):
        ours.decode([-1])  # a negative id is an OverflowError, as in Hugging Face's decode
    for not_ids in ("ab", b"ab", None, [[510, 187]]):  # a str was decoded as a list of its characters
        with pytest.raises(errors.InputTypeError):
            ours.decode(not_ids)
    np = pytest.importorskip("numpy")
    with pytest.raises(errors.InputTypeError):
        ours.decode(np.array([[510, 187]]))  # unhashable ids raised a bare TypeError
    want = ours.decoder.decode([ours.id_to_token(i) for i in (510, 187)])
    assert ours.decode(iter([510, 187])) == ours.decode(np.array([510, 187])) == ours.decode([510, 187]) == want
