"""The Rust pipelines' normalizer program (``_core.Normalizer``, ``src/normalizer.rs``) against the
Python stages it stands for and against ``tokenizers``' normalizers, on random sequences of steps
and random text (the Llama-2-style pipelines it serves: ``test_char_bpe.py``)."""

from __future__ import annotations

import pytest
from bpekit import _core
from bpekit.errors import BpekitError
from bpekit.formats.hf import from_document
from bpekit.pipeline import normalizers as ours
from bpekit.pipeline.base import Pattern
from bpekit.pipeline.normalizers import core_normalizer
from hypothesis import given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")
hf_norm = tokenizers.normalizers

# characters the steps treat differently: marks, case pairs, compatibility forms, white space,
# the marker, astral characters
ALPHABET = "aAbB \t\n\u00a0\u3000e\u0301\u00e9\u00c5\u212b\ufb01\u1e9e\u03a3\u0130\u2581\u1df6\U0001f600"
TEXTS = st.text(alphabet=st.sampled_from(list(ALPHABET)) | st.characters(exclude_categories=("Cs",)), max_size=40)
LITERALS = st.text(alphabet=st.sampled_from(list("a \u2581\u00e9e")), min_size=1, max_size=3)


@st.composite
def steps(draw: st.DrawFn) -> tuple[ours.Normalizer, object]:
    """One normalizer step: ours and ``tokenizers``'."""
    kind = draw(st.sampled_from(["NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Strip", "Replace", "Prepend"]))
    if kind == "Strip":
        left, right = draw(st.booleans()), draw(st.booleans())
        return ours.Strip(left, right), hf_norm.Strip(left=left, right=right)
    if kind == "Replace":
        a, b = draw(LITERALS), draw(st.text(alphabet=st.sampled_from(list("x \u2581")), max_size=2))
        return ours.Replace(Pattern(a, False), b), hf_norm.Replace(a, b)
    if kind == "Prepend":
        # (not empty: tokenizers 0.23.3 panics on ``Prepend("")`` before a step that changes
        # non-ASCII text; ours leaves the text as it is)
        p = draw(st.text(alphabet=st.sampled_from(list("\u2581 x")), min_size=1, max_size=2))
        return ours.Prepend(p), hf_norm.Prepend(p)
    return getattr(ours, kind)(), getattr(hf_norm, kind)()


@settings(deadline=None, max_examples=300)
@given(program=st.lists(steps(), min_size=1, max_size=4), text=TEXTS)
def test_a_program_normalizes_as_the_stages_and_tokenizers(program, text) -> None:
    seq = ours.Sequence([o for o, _ in program])
    core = core_normalizer(seq)
    assert isinstance(core, _core.Normalizer)
    want = hf_norm.Sequence([h for _, h in program]).normalize_str(text)
    assert core.normalize(text) == want
    assert seq.normalize(text) == want


def test_an_empty_prepend_changes_nothing() -> None:
    assert _core.Normalizer([("prepend", ""), ("lowercase",)]).normalize("\u3000\u03a3") == "\u3000\u03c3"
    assert ours.Sequence([ours.Prepend(""), ours.Lowercase()]).normalize("\u3000\u03a3") == "\u3000\u03c3"


def test_unchanged_text_is_the_same_object() -> None:
    core = _core.Normalizer([("form", "NFC"), ("lowercase",), ("replace", "x", "y")])
    text = "already normal \u00e9"
    assert core.normalize(text) is text


@pytest.mark.parametrize(
    "bad",
    [[("form", "NFX")], [("lowercase", 1)], [("strip", True)], [("replace", "a")], [("upper",)], [()], [("prepend", 3)]],
)
def test_bad_steps_are_value_errors(bad) -> None:
    with pytest.raises(ValueError):
        _core.Normalizer(bad)


def test_python_only_stages_keep_the_python_call() -> None:
    """A regex Replace the core may read otherwise (a class by Unicode property: the engines'
    Unicode versions differ; ``\\s+`` runs in Rust, tests/formats/test_clip_layout.py)."""
    regex_replace = ours.Replace(Pattern(r"\d+", True), " ")
    assert regex_replace.core_steps() is None
    assert ours.Sequence([ours.NFC(), regex_replace]).core_steps() is None
    assert core_normalizer(regex_replace) == regex_replace.normalize
    assert core_normalizer(None) is None


def test_bad_normalizer_steps_in_a_file_are_format_errors() -> None:
    """A Replace with a pattern that is neither a string nor a regex is refused when read."""
    doc = {"version": "1.0", "added_tokens": [], "normalizer": {"type": "Replace", "pattern": {"Glob": "*"}, "content": ""},
           "pre_tokenizer": None, "post_processor": None, "decoder": None,
           "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}
    with pytest.raises(BpekitError, match="pattern"):
        from_document(doc)
