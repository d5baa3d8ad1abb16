"""``Split`` regexes of one's own in Rust (session 24): a pattern made only of constructs that
Oniguruma (``tokenizers``) and fancy-regex read alike, and that the Rust core's hand-written
splitters or compiled matcher take (``bpekit.pipeline.onig.portable``), is split by the Rust core
instead of Python's ``regex``; patterns drawn from that grammar split as ``tokenizers`` splits."""

from __future__ import annotations

import dataclasses

import pytest
from bpekit import _core
from bpekit.pipeline.base import Pattern
from bpekit.pipeline.fast import isolated_config
from bpekit.pipeline.onig import onig_to_regex, portable
from bpekit.pipeline.pre_tokenizers import ByteLevel, Sequence, Split
from datapaths import DATA
from formats.test_sentencepiece_support import corpus_lines
from hypothesis import assume, given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")

# Constructs the two engines read otherwise, or whose matching the Rust core leaves to fancy-regex
# (an empty match, lookbehind, a repeated group): each keeps the pattern in Python.
NOT_PORTABLE = [r"\w+", r"\d+\b", r"\W", r"(?i:ab)", r"(?m:a.)", r"(?x)a b", r"\p{Alpha}+", r"[[:alpha:]]+",
                r"a{,3}", r"\h+", r"\Aa", r"(a)\1", r"(?<=a)b", r"a*", r"(?:ab)+", r"a&&b", r"\K", r"(?<n>a)",
                r"\p{Lu}{1,3}+"]  # fmt: skip
PORTABLE = [r"\s?\p{L}+|\p{N}{1,2}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+", r"\d+|\s", r"\p{Han}+|\P{L}",
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|\p{L}+|\p{N}", r"[\r\n]+|[^\r\n]+", r"\x41\u0042+|."]  # fmt: skip


def test_portable_takes_only_constructs_both_engines_read_alike() -> None:
    for pattern in NOT_PORTABLE:
        assert not portable(pattern), pattern
    for pattern in PORTABLE:
        assert portable(pattern), pattern
    seq = Sequence([Split(Pattern(PORTABLE[0], True), "Isolated"), ByteLevel(False, False, False)])
    config = isolated_config(seq)
    assert config is not None and config[0] == ["(?m)" + PORTABLE[0]]


# the grammar: alternatives of an optional prefix and a class or literal run, and a trailing
# whitespace rule; classes and chars that the engines' tables might class differently included
CLASSES = [r"\p{L}", r"\p{N}", r"\p{Lu}", r"\p{Ll}", r"\p{M}", r"\p{P}", r"\p{S}", r"\p{Han}", r"\s", r"\S", r"\d",
           r"[^\s\p{L}\p{N}]", r"[^\r\n\p{L}\p{N}]", r"[\r\n]", r"[a-z]", r"[A-Z0-9_]", r"[\p{L}\p{M}]", ".", " ", "'",
           "a", "\u00e9", r"\u00e9", r"\x41", r"[.,!?]", r"\p{Zs}", r"\p{Nd}",
           r"\w", r"\W", r"[\w']"]  # fmt: skip
# (the last three are not portable: Oniguruma's `\w` holds `²³¹¼½¾`, fancy-regex's does not; if
# `portable` let them through, the comparison below would see texts with `²` split otherwise)
COUNTS = ["", "?", "+", "*", "{1,3}", "{2}", "{1,3}+", "++", "?+", "{2,}"]
ALTERNATIVE = st.builds(
    lambda prefix, cls, count: (f"{prefix}?" if prefix else "") + cls + count,
    st.sampled_from(["", " ", r"[^\r\n\p{L}\p{N}]", r"\s", "'"]),
    st.sampled_from(CLASSES),
    st.sampled_from(COUNTS),
)
PATTERN = st.builds(
    lambda alts, tail: "|".join(alts + tail),
    st.lists(ALTERNATIVE, min_size=1, max_size=5),
    st.sampled_from([[], [r"\s+(?!\S)", r"\s+"], [r"\s*[\r\n]+"], [r"\s+$"]]),
)
CHARS = ["a", "Z", "\u00e9", "\u017f", "\u212a", "\u00df", "1", "\u0663", "\u00b2", "\u2167", " ", "  ", "\t", "\n",
         "\r\n", "\u00a0", "\u3000", "\u2028", "\x85", "\x0b", "!", "'", "_", "\u4e2d", "\uff71", "\u0301", "\U0001f600",
         "\u200d", "-", "'s", "A", "\u01c5", "\u0378", "\U000e0001"]  # fmt: skip
TEXT = st.lists(st.one_of(st.sampled_from(CHARS), st.text(max_size=3)), max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(pattern=PATTERN, texts=st.lists(TEXT, min_size=1, max_size=4))
def test_portable_patterns_split_as_tokenizers(pattern: str, texts: list[str]) -> None:
    assume(portable(pattern))
    ours = _core.IsolatedSplit(["(?m)" + onig_to_regex(pattern)])
    theirs = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), "isolated")
    for text in texts + ["a\u00e9 'S 12\u0663 \u4e2d\u6587!!  \n\n x\u0301 \u3000y\t\u00b2"]:
        assert ours.split(text) == [p for p, _ in theirs.pre_tokenize_str(text)], (pattern, text)


LLAMA_BPE = DATA / "gguf" / "ggml-vocab-llama-bpe.gguf"


@pytest.mark.skipif(not LLAMA_BPE.is_file(), reason="Llama 3's GGUF vocabulary not found")
def test_a_split_of_ones_own_encodes_in_rust_as_in_python() -> None:
    """Llama 3's vocabulary with a pre-tokenizer of one's own (Llama 3's pattern with numbers in
    twos): the Rust pipeline, whose pieces and ids equal the Python stages'."""
    from bpekit.formats.gguf import to_tokenizer
    from bpekit.formats.gguf.vocab import GGUFVocab

    pattern = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,2}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    tok = to_tokenizer(dataclasses.replace(GGUFVocab.read(LLAMA_BPE), pre="llama-bpe"))
    tok.pre_tokenizer = Sequence([Split(Pattern(pattern, True), "Isolated"), ByteLevel(False, False, False)])
    tok._refresh()
    assert isinstance(tok._fast, _core.PairBPE)
    lines = [line for file_lines in corpus_lines().values() for line in file_lines[::40]]
    texts = lines + ["1234567 and 12,345.6", "x  \n\n  y\u3000z \u00b2\u00b3"]
    fast = [tok.encode(t) for t in texts]
    assert fast == tok.encode_batch(texts)
    tok._fast = None  # the Python stages (until the next pipeline change)
    assert fast == [tok.encode(t) for t in texts]
