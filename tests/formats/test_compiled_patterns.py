"""The compiled pre-tokenizer matcher (``src/pretokenize/compiled/``, session 21): the patterns it
takes split exactly as the regex engine does, through ``Split(Isolated)`` stages (llama.cpp's
families) and tiktoken-style encodings with a pattern of one's own (against tiktoken itself);
``bpekit.patterns.engine`` says which splitter a pattern gets."""

from __future__ import annotations

import functools
import sysconfig
from pathlib import Path

import bpekit
import pytest
from bpekit import _core
from bpekit.errors import PatternError
from bpekit.formats import llamacpp
from bpekit.patterns import GPT2, O200K, engine
from bpekit.pipeline.fast import SPELLED_OUT
from formats.test_sentencepiece_support import corpus_lines
from hardening.hostile import HOSTILE
from hypothesis import given, settings
from hypothesis import strategies as st

# llama.cpp's families whose stages the compiled matcher splits when each stands alone, and those
# that keep fancy-regex for a stage (a repetition of a group of more than one char, `\b`, a
# lookahead of more than one char)
COMPILED = ["chameleon", "deepseek-coder", "deepseek-llm", "default", "falcon", "granite-embed-multi-97m", "jais-2",
            "laguna", "minicpm5", "poro-chat", "spark2_5", "ufakzeka", "viking", "youtu"]  # fmt: skip
REGEX = {"tiny_aya": 0, "superbpe": 1}
# lists one hand-written splitter stands for as a whole (sessions 22 to 24): since session 24,
# every list above
HAND_LISTS = {"chameleon", "deepseek-llm", "deepseek-coder", "default", "falcon", "granite-embed-multi-97m", "jais-2",
              "laguna", "minicpm5", "poro-chat", "spark2_5", "superbpe", "ufakzeka", "viking", "youtu"}  # fmt: skip
# every list whose split is checked against the stages on the regex engine
SPLIT = [*COMPILED, "superbpe"]


def _stages(name: str) -> tuple[str, ...]:
    return llamacpp.PRE_TOKENIZERS[name].regexes


@functools.cache
def _texts() -> list[str]:
    """Every third line of every corpus file, blocks of 8 lines, and every 40th module of the
    Python standard library, whole."""
    lines = [line for file_lines in corpus_lines().values() for line in file_lines[::3]]
    root = Path(sysconfig.get_paths()["stdlib"])
    stdlib = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts and "test" not in p.parts)[::40]
    code = [p.read_text(encoding="utf-8", errors="replace") for p in stdlib]
    return lines + ["\n".join(lines[i : i + 8]) for i in range(0, len(lines), 37)] + code


# stages of those families that are split by hand when they stand alone: Youtu's second (o200k
# with ASCII contractions and single digits, session 23), and the single stages of session 24
# (viking's first stage is poro-chat's list)
HAND_STAGES = {"youtu": 1, "granite-embed-multi-97m": 0, "jais-2": 0, "poro-chat": 0, "ufakzeka": 0, "viking": 0}


def test_families_get_the_compiled_matcher() -> None:
    for name in COMPILED:
        engines = _core.IsolatedSplit(list(_stages(name))).engines
        want = ["hand"] * len(engines) if name in HAND_LISTS else ["compiled"] * len(engines)
        if name in HAND_STAGES:
            want[HAND_STAGES[name]] = "hand"
        assert engines == want, (name, engines)
        for i, stage in enumerate(_stages(name)):
            alone = "hand" if HAND_STAGES.get(name) == i else "compiled"
            assert _core.IsolatedSplit([stage]).engines == [alone], (name, stage)
    for name, stage in REGEX.items():
        assert _core.IsolatedSplit([_stages(name)[stage]]).engines == ["regex"], name
        engines = _core.IsolatedSplit(list(_stages(name))).engines
        assert (set(engines) == {"hand"}) if name in HAND_LISTS else (engines[stage] == "regex"), (name, engines)
    assert _core.IsolatedSplit(list(_stages("deepseek-llm")), regex_only=True).engines == ["regex"] * 6
    # EXAONE MoE's phrases (a repeated group of more than one char) are split by hand (session 23)
    for stage in (_stages("exaone-moe")[0], llamacpp.upstream_regexes(llamacpp.PRE_TOKENIZERS["exaone-moe"])[0]):
        assert _core.IsolatedSplit([stage]).engines == ["hand"]
        assert engine(stage).startswith("hand-written (exaone")
    assert _core.IsolatedSplit(list(_stages("deepseek-v3"))).engines == ["hand"] * 3


@pytest.mark.parametrize("name", SPLIT)
def test_compiled_stages_split_as_the_regex_engine(name: str) -> None:
    ours = _core.IsolatedSplit(list(_stages(name)))
    theirs = _core.IsolatedSplit(list(_stages(name)), regex_only=True)
    alone = [(_core.IsolatedSplit([s]), _core.IsolatedSplit([s], regex_only=True)) for s in _stages(name)]
    for text in _texts():
        assert ours.split(text) == theirs.split(text), (name, text)
        assert ours.count(text) == len(theirs.split(text))
        if name in HAND_LISTS:  # the compiled programs of the stages, which the list does not use
            for stage, regex in alone:
                assert stage.split(text) == regex.split(text), (name, text)


ODD = st.sampled_from(
    ["'s", "'S", "'\u017f", "\u212a", " ", "  ", "\n", "\r\n", "\t", "\u00a0", "\u3000", "\u2028", "\x85", "12345",
     "\u0661\u0662", "\u00be", "a\u0301", "\u00df", "\u01c5", "\u4e2d\u6587", "\u3042", "\uac00", "\U0001f600",
     "!?", "...", "\uff01", "\u2019", "IMGIMGAZ", "<sentinel:7>", "    "]
)  # fmt: skip


@settings(max_examples=80)
@given(text=st.lists(st.one_of(ODD, st.text(max_size=4)), max_size=24).map("".join))
def test_compiled_stages_split_random_text_as_the_regex_engine(text: str) -> None:
    for name in SPLIT:
        ours = _core.IsolatedSplit(list(_stages(name)))
        assert ours.split(text) == _core.IsolatedSplit(list(_stages(name)), regex_only=True).split(text), name


# tiktoken-style patterns of one's own: an encoding built on cl100k's ranks with each
CUSTOM = [
    llamacpp.JAIS2,
    llamacpp.UFAKZEKA,
    llamacpp.GRANITE_EMB_MULTI,
    llamacpp.MINICPM5_2,
    llamacpp.TINY_AYA_2,
    r"\s+$|\s?\p{L}+|\p{N}{1,3}|\s?[^\s\p{L}\p{N}]+|\s+",
    r" ?\p{L}+| ?\p{N}+",  # drops what it does not match, as tiktoken does
]


@functools.cache
def _pair(pattern: str):
    tiktoken = pytest.importorskip("tiktoken")
    ranks = bpekit.get_encoding("cl100k_base")._mergeable_ranks
    ours = bpekit.Encoding(name="custom", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    theirs = tiktoken.Encoding(name="custom", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    return ours, theirs


@pytest.mark.parametrize("pattern", CUSTOM)
def test_an_encoding_with_a_compiled_pattern_gives_tiktokens_ids(pattern: str) -> None:
    # Tiny Aya's second stage is o200k with ASCII contractions: hand-written since session 23;
    # ufakzeka's pattern since session 24 (jais-2's hand splitter is for `Split(Isolated)` only)
    hand = {llamacpp.TINY_AYA_2: "o200kascii", llamacpp.UFAKZEKA: "ufakzeka", llamacpp.GRANITE_EMB_MULTI: "granitemulti"}
    assert engine(pattern) == (f"hand-written ({hand[pattern]})" if pattern in hand else "compiled")
    ours, theirs = _pair(pattern)
    for text in _texts()[::3]:
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text), text


def test_engine_names_the_splitter() -> None:
    assert engine("o200k") == "hand-written (o200k)" == engine(O200K)
    assert engine(GPT2) == "hand-written (gpt2)"
    assert engine(r"\s?\p{L}+|\p{N}") == "compiled"
    why = engine(r"\d{1,3}(?=(?:\d{3})*\b)")
    assert why.startswith("regex (") and "lookaround" in why
    assert "repetition" in engine(r"(?:ab)+")
    with pytest.raises(PatternError):
        engine("(")


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_text_through_compiled_patterns(kind: str) -> None:
    """Every hostile text of ``hardening/hostile.py`` (32 kB): the compiled families' stages and
    the lists split in one hand-written pass split as the regex engine does, and encodings built
    on compiled patterns give tiktoken's ids.
    A text the matcher spends its budget on goes on with the engine (jais-2's whitespace)."""
    text = HOSTILE[kind](32 << 10)
    if not any("\ud800" <= c <= "\udfff" for c in text):  # (a Rust &str holds none; the encoders replace them)
        for name in ("jais-2", "poro-chat", "youtu", "exaone-moe", "tiny_aya", *sorted(HAND_LISTS)):
            stages = [SPELLED_OUT.get(stage, stage) for stage in _stages(name)]  # (Tiny Aya's `\b` for fancy-regex)
            # fancy-regex is quadratic on a run of digits under superbpe's and Tiny Aya's
            # lookaheads (32 kB: 32 s and 8 s; the hand-written pass: under 10 ms): 8 kB there
            same = text[: 8 << 10] if kind == "digits" and name in ("superbpe", "tiny_aya") else text
            assert _core.IsolatedSplit(stages).split(same) == _core.IsolatedSplit(stages, regex_only=True).split(same), name
    for pattern in CUSTOM[:4]:
        ours, theirs = _pair(pattern)
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text), pattern
