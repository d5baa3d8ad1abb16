"""Falcon's ``tokenizer.json`` pre-tokenizer in Rust: ``Punctuation(Contiguous)``, ``ByteLevel``
with its regex, then ``Digits`` and a ``Split`` of digit groups over the byte-level characters
(where the second byte of ``²``, 0xB2, is the character ``²``, numeric to ``Digits``), held to
``tokenizers``."""

from __future__ import annotations

import json
import random

import pytest
from bpekit import _core
from bpekit.formats.hf import from_document
from bpekit.pipeline import pre_tokenizers as ours
from bpekit.pipeline.fast import AFTER_BYTE_LEVEL, PUNCTUATION_STAGE, isolated_config
from formats.test_clip_layout import corpus_lines, same_batches, same_on_long
from formats.test_hf_stages import EDGE, same

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, decoders, models, pre_tokenizers, trainers  # noqa: E402

# numbers whose UTF-8 holds bytes that are numeric byte-level characters (0xB2 ², 0xB3 ³, 0xB9 ¹,
# 0xBC-0xBE ¼½¾), next to ASCII digits and punctuation
BYTES_AS_DIGITS = ["x²³ 1234567 ½ 12,345.678 ¹2 ²1234", "Ҳ1234 Ҽ99 ǳ000", "€1,000.00!!! ...", "1²3¼4½5¾6¹7 ٣٤٥ 12345",
                   "a...b!?c«d»e—f", "''' \"\" (([[]])) 3.14159265358979"]


def falcon_like(lines: list[str]) -> tokenizers.Tokenizer:
    """A tokenizer with Falcon's pre-tokenizer, trained on ``lines``."""
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Punctuation(behavior="contiguous"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True),
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.Split(Regex("[0-9][0-9][0-9]"), behavior="isolated", invert=False)])
    trainer = trainers.BpeTrainer(vocab_size=600, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[">>TITLE<<"])
    tok.train_from_iterator(lines, trainer)
    # merges across the cuts the stages after ByteLevel make, first in rank, so that a pipeline
    # that skipped them would merge there: the bytes of ² (Â + ²), digits past a group of three
    doc = json.loads(tok.to_str())
    vocab, merges = doc["model"]["vocab"], doc["model"]["merges"]
    extra = [("Â", "²"), ("Â", "½"), ("Ò", "²"), ("²", "1"), ("1", "2"), ("12", "3"), ("123", "4"), ("3", "4")]
    for a, b in extra:
        for t in (a, b, a + b):
            vocab.setdefault(t, len(vocab))
    pairs = [m if isinstance(m, list) else m.split(" ") for m in merges]
    doc["model"]["merges"] = [[a, b] for a, b in extra] + [m for m in pairs if tuple(m) not in extra]
    tok = tokenizers.Tokenizer.from_str(json.dumps(doc))
    tok.decoder = decoders.ByteLevel()
    return tok


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return corpus_lines()


def test_falcon_layout_runs_in_rust_as_tokenizers(lines):
    hf = falcon_like(lines)
    ours_tok = same(hf, [*BYTES_AS_DIGITS, *lines])
    ours_tok._refresh()
    assert isinstance(ours_tok._fast, _core.PairBPE)
    stages, _ = isolated_config(ours_tok.pre_tokenizer)
    assert stages[0] == PUNCTUATION_STAGE + "+" and all(p.startswith(AFTER_BYTE_LEVEL) for p in stages[2:])
    assert len(stages) == 4
    same_batches(hf, ours_tok, [*EDGE, *BYTES_AS_DIGITS, *lines])


def test_falcon_layout_on_long_and_hostile_text(lines):
    hf = falcon_like(lines)
    rng = random.Random(3)
    texts = ["".join(rng.choice("0123456789²³¹¼½¾") for _ in range(20_000)), "9" * 30_000, "!" * 20_000,
             "".join(rng.choice("abc.,!? 12") for _ in range(20_000)),
             "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(5_000))]
    same_on_long(hf, texts)


@pytest.mark.parametrize("behavior", ["contiguous", "isolated"])
def test_punctuation_stage_on_every_code_point(behavior):
    """The Rust ``Punctuation`` stage's characters are ``tokenizers``' (its ``unicode_categories``
    tables, not the regex engine's newer ones)."""
    text = "x".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000) + "!!??x..."
    want = [p for p, _ in pre_tokenizers.Punctuation(behavior).pre_tokenize_str(text)]
    split = _core.IsolatedSplit([PUNCTUATION_STAGE + ("+" if behavior == "contiguous" else "")])
    assert split.engines == ["hand"]
    assert split.split(text) == want
    python = ours.Punctuation(behavior.capitalize())
    assert [p for p, _ in python.pre_tokenize([(text, True)])] == want


def test_stages_after_byte_level_that_rust_cannot_run_stay_in_python(lines):
    """A stage after ``ByteLevel`` that drops text, or a second ``ByteLevel``, leaves the whole
    pre-tokenizer to Python, which still gives ``tokenizers``' ids."""
    hf = falcon_like(lines)
    for after in (pre_tokenizers.Split(Regex(r"\d+"), behavior="removed", invert=True),
                  pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)):
        hf.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Punctuation(behavior="contiguous"),
                                                    pre_tokenizers.ByteLevel(add_prefix_space=False), after])
        tok = from_document(json.loads(hf.to_str()))
        assert isolated_config(tok.pre_tokenizer) is None
        for text in BYTES_AS_DIGITS[:3]:
            assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids
