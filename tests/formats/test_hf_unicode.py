"""The Unicode normalizers (NFC, NFD, NFKC, NFKD, StripAccents, Lowercase) give Hugging Face's
text, character for character, and the Digits and Punctuation pre-tokenizers split where it does
(Rust's ``is_numeric``, ``unicode_categories``' punctuation; Python's tables differ both ways),
and a ``single_word`` added token is refused inside a word as there (the ``regex`` crate's
``\\w``, not ``str.isalnum``).
For the forms: its tables are Unicode 9.0, where Python's ``unicodedata`` is newer and also reorders
and composes marks assigned since (U+1DF6, Unicode 10), so bpekit computes the forms in Rust with
the crate ``tokenizers`` uses; the Rust pipelines apply them without a Python call, a whole
tokenizer encodes such text as ``tokenizers`` does, and lone surrogates (Python-only text) pass
through."""

from __future__ import annotations

import json
import unicodedata

import pytest
from bpekit import _core
from bpekit.formats.hf import from_document
from bpekit.pipeline import normalizers as ours
from hypothesis import given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import models, normalizers, pre_tokenizers, trainers
from bpekit.pipeline import pre_tokenizers as our_pre

FORMS = ["NFC", "NFD", "NFKC", "NFKD"]
# base letters, marks old and new (U+1DF6 and U+1DFA are Unicode 10 and 14, U+1E947 Adlam 9,
# U+11F00 Kawi 15), Hangul jamo, compatibility characters, and letters that compose
POOL = ("aeoAEO u\u0301\u0300\u0323\u0308\u1df6\u1dfa\U0001e947\U00011f00\U00011f41\u1100\u1161\u11a8"
        "\ufb01\u2460\u00b2\u212b\u2126\u0915\u093c\u0958\u00e9\u1ea1\u3099\u304b\u0654\u0627\u05b4\u05b7")
NEWER_THAN_9 = "a\u1df6\u0323 \u1ea1\u1df6 x\u1dfa\u0323 e\u0301\u1df6"


def hf_form(name: str):
    return getattr(normalizers, name)()


@pytest.mark.parametrize("form", FORMS)
def test_marks_newer_than_unicode_9_stay_where_hugging_face_leaves_them(form: str) -> None:
    want = hf_form(form).normalize_str(NEWER_THAN_9)
    assert getattr(ours, form)().normalize(NEWER_THAN_9) == want
    if form == "NFC":
        assert unicodedata.normalize("NFC", NEWER_THAN_9) != want  # what the Python path gave


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=POOL, max_size=40), st.sampled_from(FORMS))
def test_every_form_equals_hugging_face(text: str, form: str) -> None:
    assert getattr(ours, form)().normalize(text) == hf_form(form).normalize_str(text)


MARKS = POOL + "\u093e\u0903\u20dd\u0488\u1ab0\u0e31"  # Mc, Mc, Me, Me, and Mn of several scripts


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=MARKS, max_size=40))
def test_strip_accents_removes_every_mark_hugging_face_knows(text: str) -> None:
    """Every General_Category Mark (Mn, Mc, Me) of Unicode 9.0 goes, as in ``tokenizers``; before
    session 18 only Mn went, by Python's newer tables (a Devanagari vowel sign, Mc, stayed)."""
    want = normalizers.StripAccents().normalize_str(text)
    assert ours.StripAccents().normalize(text) == want
    seq = ours.Sequence([ours.NFD(), ours.StripAccents()])
    assert seq.normalize(text) == normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents()]).normalize_str(text)


def test_strip_accents_cases() -> None:
    assert ours.StripAccents().normalize("\u0915\u093e a\u20dd e\u0301 x\u1df6") == "\u0915 a e x\u1df6"
    assert ours.StripAccents().normalize("e\u0301\ud800\u0301") == "e\ud800"


CASES = "ABCΣΑΣσİIΩ\u1c89\ua7cb\ua7dc\U00010d50\u1e9e\u0345\u01c5 éÉ"  # Greek, Turkish, Unicode 16 pairs


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=CASES, max_size=30))
def test_lowercase_is_rusts_per_character(text: str) -> None:
    """Per character by Rust's tables, as ``tokenizers``: no final sigma, and case pairs newer
    than Python's tables (U+1C89, Unicode 16) lowered too (Python's ``str.lower`` kept them)."""
    assert ours.Lowercase().normalize(text) == normalizers.Lowercase().normalize_str(text)


# digits and punctuation of many ages: U+1E4F0 (Unicode 15) and U+16D70 (16) are numeric for
# Rust; U+2E45 (10) and U+1E95E (9) are punctuation for Python's tables but not for tokenizers'
CLASSES = "a1²③\u0660\u2160\U0001e4f0\U00016d70,.!?$§¶\u2e45\u2e50\U0001e95e\u00bf\u3001 -_()«» x"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=CLASSES, max_size=30), st.booleans(), st.sampled_from(["Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"]))
def test_digits_and_punctuation_split_as_hugging_face(text: str, individual: bool, behavior: str) -> None:
    def ours(pre) -> list[str]:
        return [t for t, _ in pre.pre_tokenize([(text, True)])]

    def theirs(pre) -> list[str]:
        return [t for t, _ in pre.pre_tokenize_str(text)]

    assert ours(our_pre.Digits(individual)) == theirs(pre_tokenizers.Digits(individual_digits=individual))
    snake = "".join("_" + c.lower() if c.isupper() else c for c in behavior).lstrip("_")
    assert ours(our_pre.Punctuation(behavior)) == theirs(pre_tokenizers.Punctuation(snake))


@pytest.fixture(scope="module")
def single_word():
    """A tiny model with two ``single_word`` added tokens, in ``tokenizers`` and in bpekit."""
    from tokenizers import AddedToken

    chars = ["a", "b", "x", "\u0301", "\u00b2", "\u203f", " ", "_", "1", "\u0660", "\u2160", "\u200d", "é", "[UNK]"]
    hf = tokenizers.Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(chars)}, merges=[], unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.add_tokens([AddedToken("ab", single_word=True), AddedToken("xb", single_word=True, lstrip=True)])
    return hf, from_document(json.loads(hf.to_str()))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["ab", "xb", "a", "x", "\u0301", "\u00b2", "\u203f", " ", "_", "1", "\u0660", "\u2160", "\u200d", "é"]), max_size=10))
def test_single_word_tokens_match_where_hugging_face_matches(single_word, parts: list[str]) -> None:
    hf, ours = single_word
    text = "".join(parts)
    assert ours.encode(text) == hf.encode(text, add_special_tokens=False).ids


def test_an_empty_text_gets_no_prefix() -> None:
    """Metaspace and ByteLevel prepend nothing to an empty text, as ``tokenizers``' own
    ``pre_tokenize_str`` (a whole pipeline never hands them one)."""
    for mine, theirs in [(our_pre.Metaspace("\u2581", "always", True), pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")),
                         (our_pre.ByteLevel(add_prefix_space=True), pre_tokenizers.ByteLevel(add_prefix_space=True))]:
        assert mine.pre_tokenize([("", True)]) == [] == theirs.pre_tokenize_str("")
        assert [t for t, _ in mine.pre_tokenize([("a b", True)])] == [t for t, _ in theirs.pre_tokenize_str("a b")]


def test_lone_surrogates_pass_through_and_the_runs_between_are_normalized() -> None:
    text = "e\u0301\ud800a\u1df6\u0323\udfff\udc00\u00c5"
    got = ours.NFD().normalize(text)
    assert got == "e\u0301\ud800a\u1df6\u0323\udfff\udc00A\u030a"
    assert ours.NFC().normalize("e\u0301\ud800") == "\u00e9\ud800"
    assert ours.NFC().normalize("déjà") == "déjà"
    assert ours.Lowercase().normalize("A\ud800\u1c89") == "a\ud800\u1c8a"


def test_a_tokenizer_with_nfc_encodes_newer_marks_as_hugging_face() -> None:
    """A byte-level BPE with an NFC normalizer and an added token, through every call path
    (one text, the bound call, batches of lists, flat arrays and counts on 2 threads)."""
    texts = ["naïve café " * 20, "x y z " * 30, NEWER_THAN_9 * 3]
    hf = tokenizers.Tokenizer(models.BPE())
    hf.normalizer = normalizers.NFC()
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=300, show_progress=False, special_tokens=["<x>"],
                                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = from_document(json.loads(hf.to_str()))
    assert isinstance(tok._normalize[0], _core.Normalizer)  # the Rust pipeline applies the form itself
    docs = [NEWER_THAN_9, "<x>" + NEWER_THAN_9 + "<x>e\u0301", "plain ascii", "ạ\u1df6 \u00c5\u212b"]
    want = [e.ids for e in hf.encode_batch(docs, add_special_tokens=False)]
    assert [tok.encode(d) for d in docs] == want
    assert tok.encode_batch(docs, num_threads=2) == want
    flat, offsets = tok.encode_batch_to_numpy(docs, num_threads=2)
    assert [flat[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == want
    assert tok.count_batch(docs, num_threads=2) == [len(w) for w in want]
    assert [tok.count(d * 400) for d in docs] == [len(hf.encode(d * 400).ids) for d in docs]  # counted in Rust


def test_a_subclass_that_normalizes_otherwise_is_called() -> None:
    class Upper(ours.NFC):
        def normalize(self, text: str) -> str:
            return super().normalize(text).upper()

    assert ours.NFC().core_steps() == [("form", "NFC")] and Upper().core_steps() is None
    assert ours.Lowercase().core_steps() == [("lowercase",)]
    assert ours.Sequence([ours.Lowercase(), Upper()]).core_steps() is None
