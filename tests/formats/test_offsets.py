"""``encode_with_offsets``: the ids and each id's span of the input, equal to Hugging Face
``tokenizers``' ``Encoding.offsets`` on real files (GPT-NeoX's tokenizer.json, the GGUF
vocabularies' tokenizer.json documents, cl100k and o200k exported), and checked by their meaning
(``text[start:end]`` holds the token's bytes) on hostile text. The stage-by-stage comparison with
``tokenizers`` is in ``test_hf_stages.py`` (every stage test checks offsets too)."""

from __future__ import annotations

import json
from pathlib import Path

import bpekit
import pytest
from bpekit import Tokenizer
from bpekit.errors import DisallowedSpecialError, EncodeError, InputTypeError, UsageError
from bpekit.formats.gguf.to_hf import tokenizer_json
from bpekit.offsets import char_at_byte
from bpekit.pipeline import normalizers
from bpekit.tokenizer_export import hf_tokenizer_json
from datapaths import DATA
from formats.test_gguf_support import BPE_NAMES, corpus_sample, vocab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")

EDGE = [
    "", " ", "  two  spaces  ", "Hello, World! It's 2024: 12345 apples.", "tab\tand\nnewline\r\n  \n",
    "naïve café ÉCOLE ΣΟΦΟΣ straße", "e\u0301 ﬁ ① ² \u1e9b\u0323 ｶﾞ 한", "日本語のテキスト", "emoji 👍🏽 ok 🇫🇷",
    "<|endoftext|> x <|im_start|>user", "don't  I'LL we've", "   \n\n x  \t\r\n 12345678 Cửa Việt ſ 'S 'll",
    "ends with space ", " starts", "\u3000ideographic\u3000space", "a" * 300 + " " + "é" * 200,
]


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return corpus_sample(stride=6, per_file=6) + EDGE


def spelled(tok, text, ids, offsets):
    """Each token's bytes are in the UTF-8 of its span, and the spans go left to right."""
    data = tok.decode_bytes if hasattr(tok, "decode_bytes") else None
    last = 0
    for i, (start, end) in zip(ids, offsets):
        assert 0 <= start <= end <= len(text) and start >= last - 1, (text, offsets)
        if data is not None and end > start:
            assert data([i]) in text[start:end].encode("utf-8", "surrogatepass") or start < last, (i, text[start:end])
        last = max(last, start)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_rank_encodings_give_hugging_face_offsets(name, lines):
    """tiktoken encodings: the offsets ``tokenizers`` gives on the exported tokenizer.json (whose
    ByteLevel post-processor does not trim), specials allowed."""
    enc = bpekit.get_encoding(name)
    doc = hf_tokenizer_json(enc._mergeable_ranks, enc._special_tokens, enc._pat_str)
    hf = tokenizers.Tokenizer.from_str(json.dumps(doc))
    for text in lines:
        want = hf.encode(text, add_special_tokens=False)
        ids, offsets = enc.encode_with_offsets(text, allowed_special="all")
        assert ids == want.ids, repr(text[:60])
        assert offsets == want.offsets, repr(text[:60])
        spelled(enc, text, ids, offsets)
    tok = Tokenizer.from_encoding(enc)
    text = "Hello <|endoftext|> wörld"
    assert tok.encode_with_offsets(text, allowed_special="all") == enc.encode_with_offsets(text, allowed_special="all")
    with pytest.raises(DisallowedSpecialError):
        enc.encode_with_offsets("<|endoftext|>")


def test_rank_model_in_a_pipeline(lines):
    """A rank model composed into a pipeline of stages (``RankBPE`` after a ``Split`` and a
    ``ByteLevel``) spans its ids as the ``Encoding`` does."""
    from bpekit.pipeline import pre_tokenizers
    from bpekit.pipeline.base import Pattern
    from bpekit.pipeline.rank_model import RankBPE
    from bpekit.tokenizer_export import onig_pattern

    enc = bpekit.get_encoding("o200k_base")
    pre = pre_tokenizers.Sequence([pre_tokenizers.Split(Pattern(onig_pattern(enc._pat_str), True), "Isolated"),
                                   pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok = Tokenizer(RankBPE(enc), pre_tokenizer=pre)
    for text in lines[::3]:
        assert tok.encode_with_offsets(text) == enc.encode_with_offsets(text, disallowed_special=()), text[:60]


def test_batches_give_each_text_its_offsets(neox, lines):
    """``encode_batch_with_offsets``: each text's ``encode_with_offsets``, for an encoding (ids
    in parallel), a rank ``Tokenizer`` and a pipeline; a batch that is not a list of str is
    refused."""
    enc = bpekit.get_encoding("cl100k_base")
    sample = [*lines[::5], "a\ud800 b", ""]
    want = [enc.encode_with_offsets(t, disallowed_special=()) for t in sample]
    assert enc.encode_batch_with_offsets(sample, num_threads=2, disallowed_special=()) == want
    assert Tokenizer.from_encoding(enc).encode_batch_with_offsets(sample, disallowed_special=()) == want
    ours, _ = neox
    assert ours.encode_batch_with_offsets(sample[:20], True) == [ours.encode_with_offsets(t, True) for t in sample[:20]]
    with pytest.raises(InputTypeError):
        ours.encode_batch_with_offsets("not a list")  # type: ignore[arg-type]
    with pytest.raises(InputTypeError):
        enc.encode_batch_with_offsets([b"bytes"])  # type: ignore[list-item]


def test_gpt_neox_tokenizer_json(neox, lines):
    """NFC, ByteLevel with trim_offsets, added tokens of runs of spaces (normalized): the offsets
    of ``tokenizers``, with and without the post-processor's special tokens."""
    ours, hf = neox
    for text in lines:
        for special in (False, True):
            want = hf.encode(text, add_special_tokens=special)
            assert ours.encode_with_offsets(text, special) == (want.ids, want.offsets), repr(text[:60])


@pytest.mark.parametrize("name", BPE_NAMES)
def test_gguf_vocabularies_as_tokenizer_json(name, lines):
    """llama.cpp's byte-level vocabularies as Hugging Face pipelines (formats.md §5.8: GPT-2,
    Llama 3, Qwen 2 with NFC, DeepSeek's split sequence): bpekit loading that document gives the
    offsets ``tokenizers`` gives on it."""
    doc = tokenizer_json(vocab(name))
    hf = tokenizers.Tokenizer.from_str(json.dumps(doc))
    ours = Tokenizer.from_str(json.dumps(doc))
    for text in lines:
        for special in (False, True):
            want = hf.encode(text, add_special_tokens=special)
            assert ours.encode_with_offsets(text, special) == (want.ids, want.offsets), (name, text[:60])


def test_lone_surrogates_count_in_the_text_as_given():
    """A text with lone surrogates is encoded with them fixed (a pair joined, U+FFFD for the
    rest); its offsets still index the text as given."""
    enc = bpekit.get_encoding("cl100k_base")
    text = "a\ud83d\ude00b\ud800c \udfff"
    fixed = "a\U0001f600b\ufffdc \ufffd"
    # each char of the fixed text and its span of the text (the emoji: both of its surrogates)
    spans = [(0, 1), (1, 3), (3, 4), (4, 5), (5, 6), (6, 7), (7, 8)]

    def mapped(offsets):
        return [(spans[a][0], spans[b - 1][1]) for a, b in offsets]

    fixed_ids, fixed_offsets = enc.encode_with_offsets(fixed)
    assert enc.encode_with_offsets(text) == (fixed_ids, mapped(fixed_offsets))
    neox = DATA / "hf" / "gpt-neox-20b.tokenizer.json"
    if neox.is_file():
        tok = Tokenizer.from_file(neox)
        fixed_ids, fixed_offsets = tok.encode_with_offsets(fixed)
        assert tok.encode_with_offsets(text) == (fixed_ids, mapped(fixed_offsets))


SPM = sorted((DATA / "spm").glob("*.model")) if (DATA / "spm").is_dir() else []


@pytest.mark.parametrize("path", SPM, ids=lambda p: p.name)
def test_sentencepiece_models_give_sentencepiece_offsets(path, lines):
    """Every shared SentencePiece model (byte fallback, unknown runs, user-defined pieces, no
    dummy prefix, whitespace as suffix, identity normalization): each piece's ``begin`` / ``end``
    that sentencepiece gives (``return_type="proto"``, in bytes), in characters, through
    ``SentencePieceBPE`` and through ``Tokenizer.from_file``."""
    sentencepiece = pytest.importorskip("sentencepiece")
    from bpekit.formats.sentencepiece import SentencePieceBPE

    ref = sentencepiece.SentencePieceProcessor(model_file=str(path))
    ours, tok = SentencePieceBPE.load(path), Tokenizer.from_file(path)
    for text in [*lines, "   ", "  Hello  wörld 日本 ", "ＡＢＣ ｶﾞ\tx\n"]:
        pieces = ref.encode(text, return_type="proto").pieces
        at = char_at_byte(text)
        want = ([p.id for p in pieces], [(at[p.begin], at[p.end]) for p in pieces])
        assert ours.encode_with_offsets(text) == want, (path.name, text[:60])
        assert tok.encode_with_offsets(text) == want, (path.name, text[:60])
        assert ours.encode_with_offsets_reference(text) == want, (path.name, text[:60])
    # the Python reference's byte cutter (malformed input's, and rules the text cutter cannot
    # take) gives the same
    ours._normalizer._fast = False
    for text in lines[::4]:
        assert ours.encode_with_offsets_reference(text) == tok.encode_with_offsets(text), (path.name, text[:60])


SPM_TEXT = st.text(
    st.sampled_from("ab \t\n\u3000\u2581ｶﾞＡé\u0301日本😀\x00\ufffd<s>")
    | st.characters()
    | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    max_size=40,
)


@pytest.mark.skipif(not SPM, reason="no SentencePiece models in the shared data")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(SPM_TEXT, min_size=1, max_size=4))
def test_sentencepiece_offsets_in_rust_equal_the_reference(texts):
    """The Rust origins and spans equal the Python reference's on random text (runs of spaces,
    full-width chars the charsmap rewrites, combining marks, emoji under byte fallback, lone
    surrogates, the space symbol itself), for every shared model."""
    from bpekit.formats.sentencepiece import SentencePieceBPE

    for path in SPM:
        ours = _spm(path, SentencePieceBPE)
        for text in texts:
            if any(0xD800 <= ord(c) < 0xE000 for c in text):  # (refused, as by encode)
                for call in (ours.encode, ours.encode_with_offsets, ours.encode_with_offsets_reference):
                    with pytest.raises(EncodeError, match="lone surrogate"):
                        call(text)
                continue
            assert ours.encode_with_offsets(text) == ours.encode_with_offsets_reference(text), (path.name, text)


_SPM_LOADED: dict[Path, object] = {}


def _spm(path, cls):
    if path not in _SPM_LOADED:
        _SPM_LOADED[path] = cls.load(path)
    return _SPM_LOADED[path]


@pytest.mark.parametrize("name", ["llama-spm", "phi-3"])
def test_gguf_sentencepiece_vocabularies(name, lines):
    """llama.cpp's SentencePiece vocabularies (no reference gives offsets for them): the ids of
    ``encode``, spans in order inside the text, and each piece that is plain text spans it."""
    from bpekit.formats import gguf
    from formats.test_gguf_support import gguf_path

    tok = gguf.load(gguf_path(name))
    spm = tok.model.spm
    for text in lines:
        ids, offsets = tok.encode_with_offsets(text)
        assert ids == tok.encode(text)
        assert all(0 <= a <= b <= len(text) for a, b in offsets) and offsets == sorted(offsets)
        for i, (a, b) in zip(ids, offsets):
            piece = spm.id_to_piece(i)
            if piece.isalpha():
                assert text[a:b] == piece, (name, piece, text[a:b])


def test_an_added_token_of_many_spaces(neox_path):
    """An added token longer than the fast table's counts (70,000 spaces): its span, trimmed as
    ``tokenizers`` trims it."""
    doc = json.loads(Path(neox_path).read_text(encoding="utf-8"))
    doc["added_tokens"].append({"id": 50277, "content": " " * 70_000, "single_word": False, "lstrip": False,
                                "rstrip": False, "normalized": False, "special": False})
    ours, hf = Tokenizer.from_str(json.dumps(doc)), tokenizers.Tokenizer.from_str(json.dumps(doc))
    text = "a" + " " * 70_000 + "b"
    want = hf.encode(text, add_special_tokens=False)
    assert ours.encode_with_offsets(text) == (want.ids, want.offsets)


def test_byte_level_offsets_of_a_whole_text_at_once(neox_path):
    """A byte-level pipeline takes a text's ids in one call and its spans from one table when
    its ids spell it (no segment walk), lone surrogates fixed first; an ``lstrip`` / ``rstrip``
    added token that took whitespace (whose span ``trim_offsets`` then trims by its match, as
    Hugging Face does) and text that the normalizer changes take the segments. Both equal
    ``tokenizers``."""
    from unittest import mock

    from bpekit.pipeline.added_tokens import AddedVocabulary

    doc = json.loads(Path(neox_path).read_text(encoding="utf-8"))
    doc["added_tokens"].append({"id": 50277, "content": "<mask>", "single_word": False, "lstrip": True,
                                "rstrip": True, "normalized": False, "special": True})
    ours, hf = Tokenizer.from_str(json.dumps(doc)), tokenizers.Tokenizer.from_str(json.dumps(doc))
    walked = []
    real = AddedVocabulary.split_aligned

    def spy(self, text, normalizer):
        walked.append(text.text)
        return real(self, text, normalizer)

    cases = {"def f(x):\n        return x  # <|endoftext|>": False, "Café  ok": False,
             "a <mask> b": True, "a  <mask>  b": True, "<mask>": False, "Cafe\u0301": True, "ﬁne \ud800 x": False}
    with mock.patch.object(AddedVocabulary, "split_aligned", spy):
        for text, segments in cases.items():
            walked.clear()
            ids, offsets = ours.encode_with_offsets(text)
            assert bool(walked) == segments, text
            if "\ud800" not in text:
                want = hf.encode(text, add_special_tokens=False)
                assert (ids, offsets) == (want.ids, want.offsets), text
            assert ids == ours.encode(text)
    # the Python stages (a prefix space before every piece): the same trim by the match
    doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": " ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"},
         "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": False}]}
    ours, hf = Tokenizer.from_str(json.dumps(doc)), tokenizers.Tokenizer.from_str(json.dumps(doc))
    assert ours._byte_offsets() is None
    for text in ["a <mask> b", "a  <mask>  b", "<mask> b", "hello world  x"]:
        want = hf.encode(text, add_special_tokens=False)
        assert ours.encode_with_offsets(text) == (want.ids, want.offsets), text


def test_what_cannot_give_offsets_says_why():
    class Shout(normalizers.Normalizer):
        def normalize(self, text: str) -> str:
            return text.upper()

    doc = tokenizer_json(vocab("gpt-2"))
    tok = Tokenizer.from_str(json.dumps(doc))
    tok.normalizer = Shout()
    assert tok.encode_with_offsets("ABC DEF")[0] == tok.encode("ABC DEF")  # unchanged text: fine
    with pytest.raises(UsageError, match="align"):
        tok.encode_with_offsets("abc")
    with pytest.raises(InputTypeError):
        tok.encode_with_offsets(b"abc")  # type: ignore[arg-type]
    with pytest.raises(InputTypeError):
        bpekit.get_encoding("cl100k_base").encode_with_offsets(None)  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_random_text_matches_tokenizers(text):
    """Random Unicode (marks, compatibility characters, controls) through GPT-NeoX (NFC) and
    Qwen 2's vocabulary (NFC, its split pattern): the offsets of ``tokenizers``."""
    for ours, hf in _random_pairs():
        want = hf.encode(text, add_special_tokens=False)
        assert ours.encode_with_offsets(text) == (want.ids, want.offsets)


_PAIRS: list = []


def _random_pairs():
    if not _PAIRS:
        neox = DATA / "hf" / "gpt-neox-20b.tokenizer.json"
        if neox.is_file():
            _PAIRS.append((Tokenizer.from_file(neox), tokenizers.Tokenizer.from_file(str(neox))))
        doc = json.dumps(tokenizer_json(vocab("qwen2")))
        _PAIRS.append((Tokenizer.from_str(doc), tokenizers.Tokenizer.from_str(doc)))
    return _PAIRS



def test_byte_level_model_missing_bytes_gives_offsets():
    """A byte-level BPE whose vocabulary lacks some bytes (no unk: Hugging Face drops them) gave
    ``ValueError: the ids do not spell the text`` from ``encode_with_offsets`` (found by the
    ``hf`` atheris target once it asked for offsets, session 35); the segment's spans now come
    from the Python stages, as ``tokenizers`` gives them."""
    from tokenizers import models, pre_tokenizers

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    kept = sorted(c for c in alphabet if c not in "éöÃ©" and ord(c) % 7)  # (some ASCII and UTF-8 bytes gone)
    vocab = {c: i for i, c in enumerate(kept)}
    merges = [("h", "e"), ("l", "l"), ("he", "ll")]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    for normalizer in (None, {"type": "NFC"}):
        hf = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=merges))
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        doc = json.loads(hf.to_str())
        doc["normalizer"] = normalizer
        hf = tokenizers.Tokenizer.from_str(json.dumps(doc))
        ours = Tokenizer.from_str(json.dumps(doc))
        for text in ["hello wörld", "Caf\u00e9 e\u0301 \u65e5\u672c 12345", "", "hello", "\U0001f642 ok \ud800"]:
            got = ours.encode_with_offsets(text)
            assert got[0] == ours.encode(text), repr(text)
            if "\ud800" not in text:
                want = hf.encode(text, add_special_tokens=False)
                assert got == (want.ids, want.offsets), repr(text)


@pytest.mark.parametrize("pattern", [r"[\p{Lu}a$[^\p{Han}]]+", r"[\`{Ll}\p{Lm}\p{Lo}\^&M&}[{p\p{Han}]]+", r"[a[bc]d]+|\s+",
                                     r"[^a[bc]]+", r"[a||[b]]+", r"[a~~[b]]+", r"[a-c[x-z]]+", r"(?i:[A[b]])+",
                                     r"[\[a[b]]+", r"[[:alpha:]]+"])
def test_nested_class_in_a_split_regex_as_tokenizers(pattern):
    """Found by the ``hf`` atheris target's offsets check (session 35): a ``Split`` regex with
    ``[...[^\\p{Han}]]`` (Oniguruma: the union of both classes) and a byte-level vocabulary missing
    bytes gave ``encode_with_offsets`` ids other than ``encode``'s: the Python stage (Python's
    ``regex`` module, V0, reads the inner ``[`` as a character) cut otherwise than the Rust one.
    Now such a pattern compiles for V1, its ``--``, ``||`` and ``~~`` kept as characters."""
    from bpekit.pipeline import pre_tokenizers as ours_pre
    from bpekit.pipeline.base import Pattern
    from tokenizers import Regex, pre_tokenizers

    for text in ["world \u65e5\u672c W", "abcd ebx-y", "x||y ~~b AbB [a --"]:
        want = [piece for piece, _ in pre_tokenizers.Split(Regex(pattern), "isolated").pre_tokenize_str(text)]
        assert [p for p, _ in ours_pre.Split(Pattern(pattern, True), "Isolated").pre_tokenize([(text, True)])] == want
