"""The pre-tokenizers ``BertPreTokenizer``, ``CharDelimiterSplit`` and ``FixedLength`` and the
decoders ``WordPiece`` and ``CTC``, held to ``tokenizers``: each stage's pieces and offsets on
edge cases, every code point and random text; whole pipelines trained with the ``tokenizers`` API
on multilingual lines (ids, offsets, decoded text, decoding of random ids); the documents bpekit
writes; the fields it refuses."""

from __future__ import annotations

import json
import random
import string
import unicodedata

import pytest
from bpekit.errors import FormatError
from bpekit.formats.hf import document, from_document
from bpekit.pipeline import decoders as our_decoders
from bpekit.pipeline import pre_tokenizers as ours
from bpekit.pipeline.aligned import Aligned
from bpekit.pipeline.fast import (
    core_model,
    core_splitter,
    isolated_config,
    split_config,
)
from datapaths import DATA
from formats.test_clip_layout import same_batches
from formats.test_hf_errors import changed
from formats.test_hf_stages import EDGE, same, train
from hypothesis import given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import decoders, models, normalizers, pre_tokenizers, processors

# every character Python calls a space (U+001C..U+001F too, which Rust's is_whitespace is not)
SPACES = "".join(c for c in map(chr, range(0x3001)) if c.isspace())
# every punctuation character of the BMP, the ASCII symbols Rust counts as punctuation and two
# characters whose category the tables of ``tokenizers`` and Python disagree on (U+2E45, U+1E95E)
PUNCTUATION = (string.punctuation + "".join(c for c in map(chr, range(0x10000)) if unicodedata.category(c)[0] == "P")
               + "\u2e45\U0001e95e")
MORE = [
    "", " ", "  ", SPACES, "a" + "b".join(SPACES) + "c", PUNCTUATION, "x" + " ".join(PUNCTUATION[:200]) + "y",
    "Hey friend!     How are you?!?", "野口里佳 Noguchi Rika", "日本語、テキスト。「引用」", "emoji 👍🏽👨‍👩‍👧 ok!",
    "e\u0301\u0302 x\u20dd ﬁ", "a\x1cb\x1fc\x85d", "¿Qué? ¡Sí! «quote» „x“ 'y' — 1–2", "||a||b|", "<pad><pad>a<pad>",
    "do not don't I'm it 's", "x--y---z", "xxx", "x", "😀😀x😀", "٣٤٥ १२३ ① ²", "\u2028\u2029\u200b\ufeff",
]


def multilingual_lines() -> list[str]:
    """150 lines of the English corpus and 25 of each of 14 Tatoeba languages (skips the test
    without the shared data)."""
    english = DATA / "corpora" / "taylorswift.txt"
    if not english.is_file():
        pytest.skip(f"{english} not found (set BPEKIT_TEST_DATA)")
    out = english.read_text(encoding="utf-8").splitlines()[:150]
    for lang in ("rus", "jpn", "cmn", "kor", "ell", "hin", "ara", "heb", "tha", "kat", "amh", "vie", "tur", "deu"):
        path = DATA / "corpora" / "tatoeba" / f"tatoeba.{lang}-eng.{lang}"
        if path.is_file():
            out += path.read_text(encoding="utf-8").splitlines()[:25]
    return out


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return multilingual_lines()


# (bpekit's stage, tokenizers' stage), with their names
PRE_PAIRS = {
    "bert": (ours.BertPreTokenizer(), pre_tokenizers.BertPreTokenizer()),
    "delimiter space": (ours.CharDelimiterSplit(" "), pre_tokenizers.CharDelimiterSplit(" ")),
    "delimiter x": (ours.CharDelimiterSplit("x"), pre_tokenizers.CharDelimiterSplit("x")),
    "delimiter emoji": (ours.CharDelimiterSplit("😀"), pre_tokenizers.CharDelimiterSplit("😀")),
    "fixed 1": (ours.FixedLength(1), pre_tokenizers.FixedLength(1)),
    "fixed 3": (ours.FixedLength(3), pre_tokenizers.FixedLength(3)),
    "fixed default": (ours.FixedLength(), pre_tokenizers.FixedLength()),
    "fixed 64": (ours.FixedLength(64), pre_tokenizers.FixedLength(64)),
    "sequence": (
        ours.Sequence([ours.CharDelimiterSplit("-"), ours.BertPreTokenizer(), ours.FixedLength(3)]),
        pre_tokenizers.Sequence([pre_tokenizers.CharDelimiterSplit("-"), pre_tokenizers.BertPreTokenizer(),
                                 pre_tokenizers.FixedLength(3)]),
    ),
    "fixed then bert": (
        ours.Sequence([ours.FixedLength(4), ours.BertPreTokenizer()]),
        pre_tokenizers.Sequence([pre_tokenizers.FixedLength(4), pre_tokenizers.BertPreTokenizer()]),
    ),
}


def same_pieces(pair, text: str) -> None:
    """bpekit's pieces of ``text`` and their spans (``pre_tokenize_aligned``) are ``tokenizers'``."""
    mine, theirs = pair
    want = theirs.pre_tokenize_str(text)
    got = [(a.text, a.span(0, len(a))) for a, _ in mine.pre_tokenize_aligned([(Aligned.of(text), True)])]
    assert got == want, repr(text[:80])
    assert mine.pre_tokenize_str(text) == [p for p, _ in want], repr(text[:80])


@pytest.mark.parametrize("name", PRE_PAIRS)
def test_pieces_and_offsets_on_edge_cases(name):
    for text in [*EDGE, *MORE]:
        same_pieces(PRE_PAIRS[name], text)


def test_bert_pre_tokenizer_on_every_code_point():
    """Whitespace removed, punctuation isolated, as ``tokenizers`` tests each code point (Rust's
    ``is_whitespace``, ASCII punctuation and its ``unicode_categories`` tables)."""
    text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    same_pieces(PRE_PAIRS["bert"], text)


@settings(max_examples=150, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
       | st.lists(st.sampled_from([*" \t\n\u3000\u00a0\x1c.,!?-'|x😀a日é\u0301", "<pad>", "##"]),
                  max_size=30).map("".join))
def test_pieces_and_offsets_on_random_text(text):
    for pair in PRE_PAIRS.values():
        same_pieces(pair, text)


def test_no_fast_path_takes_the_new_stages():
    """``BertPreTokenizer`` is a ``Sequence`` (of ``WhitespaceSplit`` and ``Punctuation``); the
    Rust splitters, which look into sequences, turn it and the others down."""
    bert = ours.BertPreTokenizer()
    assert isinstance(bert, ours.Sequence) and bert.pretokenizers == [ours.WhitespaceSplit(), ours.Punctuation()]
    byte_level = ours.ByteLevel(add_prefix_space=False, use_regex=False)
    for pre in [bert, ours.CharDelimiterSplit(" "), ours.FixedLength(),
                ours.Sequence([bert, byte_level]), ours.Sequence([ours.FixedLength(4), byte_level]),
                ours.Sequence([ours.CharDelimiterSplit(" "), byte_level])]:
        assert split_config(pre) is None and isolated_config(pre) is None and core_splitter(pre) is None, pre


# (bpekit's decoder, tokenizers' decoder), with their names
DECODER_PAIRS = {
    "wordpiece": (our_decoders.WordPiece(), decoders.WordPiece()),
    "wordpiece raw": (our_decoders.WordPiece("##", False), decoders.WordPiece("##", False)),
    "wordpiece #": (our_decoders.WordPiece("#", True), decoders.WordPiece("#", True)),
    "wordpiece empty": (our_decoders.WordPiece("", True), decoders.WordPiece("", True)),
    "ctc": (our_decoders.CTC(), decoders.CTC()),
    "ctc raw": (our_decoders.CTC(cleanup=False), decoders.CTC(cleanup=False)),
    "ctc empty": (our_decoders.CTC("", "", True), decoders.CTC("", "", True)),
    "ctc a space": (our_decoders.CTC("a", " ", True), decoders.CTC("a", " ", True)),
    "ctc ##": (our_decoders.CTC("<pad>", "##", True), decoders.CTC("<pad>", "##", True)),
}
# pieces of tokens: what the cleanup rules, prefixes, pads and delimiters look for, and others
FRAGMENTS = ["", " ", ".", "?", "!", ",", "'", " ' ", "do", " do", "not", " not", "n't", "'m", "'s", "'ve", "'re",
             "s", "m", "##", "#", "a", "<pad>", "|", "e", "é", "日", "😀"]


def with_probe(decoder, kind):
    """``decoder`` then a WordPiece whose prefix no token has, which puts a space before every
    string after the first: the decoded text shows the list ``decode_chain`` gave, which the next
    decoder of a ``Sequence`` sees."""
    return kind.Sequence([decoder, kind.WordPiece("\x00", False)])


def same_decoded(tokens: list[str]) -> None:
    for name, (mine, theirs) in DECODER_PAIRS.items():
        assert mine.decode(tokens) == theirs.decode(tokens), (name, tokens)
        assert with_probe(mine, our_decoders).decode(tokens) == with_probe(theirs, decoders).decode(tokens), (
            name, tokens)


def test_decoders_on_token_lists():
    same_decoded([])
    same_decoded(["##a", "b", "##c", "####d", "e##", "##"])
    same_decoded(["<pad>", "<pad>", "h", "e", "e", "l", "l", "<pad>", "l", "o", "o", "o", "<pad>", "|", "|", "w",
                  "o", "r", "<pad>", "l", "l", "d"])
    same_decoded(["i", "do", "not", "know", "'", "s", "it", " 's", "fine", ".", "?", "!", ",", "n't", "'m", "'ve",
                  "'re", " ' ", "a ' b", " do not", "x .", "|", "||", "<pad>|<pad>", "a|b", "a|b", "x ' n't"])
    same_decoded(["", "", "x", "", "##", "<pad>"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(FRAGMENTS), max_size=4).map("".join), max_size=12))
def test_decoders_on_random_token_lists(tokens):
    same_decoded(tokens)


def full_parity(hf, lines: list[str], *, add_special_tokens: bool = False):
    """``same`` (the edge texts, 60 lines, one by one) and then every line in one batch: ids,
    offsets, decoded text."""
    ours_tok = same(hf, [*MORE, *lines], add_special_tokens=add_special_tokens)
    if not add_special_tokens:
        same_batches(hf, ours_tok, lines)
    ids = [e.ids for e in hf.encode_batch(lines, add_special_tokens=add_special_tokens)]
    assert ours_tok.encode_batch(lines, add_special_tokens) == ids
    for skip in (False, True):
        assert ours_tok.decode_batch(ids, skip_special_tokens=skip) == hf.decode_batch(ids, skip_special_tokens=skip)
    return ours_tok


def random_ids(hf, n: int = 300, seed: int = 0) -> list[list[int]]:
    """Id lists with runs of one id (as CTC output has) and the low ids (the special tokens)."""
    rng = random.Random(seed)
    size = hf.get_vocab_size()
    out = []
    for _ in range(n):
        ids: list[int] = []
        while len(ids) < rng.randrange(0, 40):
            ids += [rng.choice([rng.randrange(size), rng.randrange(4)])] * rng.choice([1, 1, 2, 3])
        out.append(ids)
    return out


def same_decoding(hf, decoder, lines: list[str], seed: int = 0) -> None:
    """With ``decoder`` in both pipelines, the lines' ids and random id lists decode alike (with
    and without the special tokens)."""
    hf.decoder = decoder
    ours_tok = from_document(json.loads(hf.to_str()))
    batches = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)] + random_ids(hf, 200, seed)
    for skip in (False, True):
        assert ours_tok.decode_batch(batches, skip_special_tokens=skip) == hf.decode_batch(
            batches, skip_special_tokens=skip)


def test_bert_layout_with_wordpiece_decoder(lines):
    """BERT's pre-tokenizer, a BPE with the ``##`` subword prefix and the WordPiece decoder."""
    model = models.BPE(unk_token="[UNK]", continuing_subword_prefix="##")
    norm = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()])
    hf = train(model, pre_tokenizers.BertPreTokenizer(), lines, normalizer=norm, vocab_size=900,
               special_tokens=["[UNK]", "[CLS]", "[SEP]", "[PAD]"], continuing_subword_prefix="##", limit_alphabet=400)
    hf.post_processor = processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1))
    hf.decoder = decoders.WordPiece(prefix="##")
    ours_tok = full_parity(hf, lines)
    full_parity(hf, lines, add_special_tokens=True)
    assert isinstance(ours_tok.pre_tokenizer, ours.BertPreTokenizer) and ours_tok._splitter is None
    for cleanup in (True, False):
        same_decoding(hf, decoders.WordPiece(prefix="##", cleanup=cleanup), lines)


def test_ctc_decoder_and_fixed_length(lines):
    """A character-level pipeline as CTC models have: spaces become ``|``, chunks of 4 characters,
    the CTC decoder (runs of one token collapse, ``<pad>`` dropped, ``|`` a space)."""
    model = models.BPE(unk_token="<unk>")
    hf = train(model, pre_tokenizers.FixedLength(4), lines, normalizer=normalizers.Replace(" ", "|"),
               vocab_size=700, special_tokens=["<pad>", "<unk>", "<s>", "</s>"], limit_alphabet=300)
    hf.decoder = decoders.CTC()
    full_parity(hf, lines)
    for ctc in (decoders.CTC(), decoders.CTC(cleanup=False), decoders.CTC("<s>", "e", True)):
        same_decoding(hf, ctc, lines)


def test_char_delimiter_split_and_decoder_sequences(lines):
    """``CharDelimiterSplit`` as the whole pre-tokenizer, and the two decoders inside ``Sequence``
    decoders, where the next decoder sees their list of strings."""
    hf = train(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##"), pre_tokenizers.CharDelimiterSplit(" "),
               lines, vocab_size=700, special_tokens=["[UNK]", "<pad>", "|"], continuing_subword_prefix="##",
               limit_alphabet=300)
    hf.decoder = decoders.WordPiece()
    full_parity(hf, lines)
    sequences = [
        decoders.Sequence([decoders.WordPiece(), decoders.Replace(" ", "_"), decoders.Strip("_", 1, 1)]),
        decoders.Sequence([decoders.CTC(), decoders.Strip(" ", 0, 1), decoders.Fuse()]),
        decoders.Sequence([decoders.Replace("a", "|"), decoders.CTC(cleanup=False), decoders.WordPiece("", True)]),
        decoders.Sequence([decoders.CTC(word_delimiter_token="##"), decoders.WordPiece("##", False),
                           decoders.BPEDecoder("e")]),
    ]
    for seed, decoder in enumerate(sequences):
        same_decoding(hf, decoder, lines, seed)


def test_fixed_length_before_byte_level_runs_in_python(lines):
    """``FixedLength`` cuts characters, then ``ByteLevel`` maps each piece's bytes: no Rust
    splitter takes it; offsets of multi-byte characters stay whole."""
    pre = pre_tokenizers.Sequence([pre_tokenizers.FixedLength(3),
                                   pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    hf = train(models.BPE(), pre, lines, vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    hf.decoder = decoders.ByteLevel()
    ours_tok = full_parity(hf, lines)
    assert ours_tok._splitter is None and core_model(ours_tok.pre_tokenizer, ours_tok.model) is None


def test_nested_sequence_pipeline(lines):
    pre = PRE_PAIRS["sequence"][1]
    hf = train(models.BPE(unk_token="[UNK]"), pre, lines, vocab_size=500, special_tokens=["[UNK]"], limit_alphabet=200)
    hf.decoder = decoders.WordPiece(prefix="", cleanup=True)
    full_parity(hf, lines)


@pytest.mark.parametrize("pre, decoder", [
    (pre_tokenizers.BertPreTokenizer(), decoders.WordPiece("##", True)),
    (pre_tokenizers.CharDelimiterSplit("😀"), decoders.CTC("<pad>", "|", False)),
    (pre_tokenizers.FixedLength(7), decoders.WordPiece("@@", False)),
    (pre_tokenizers.FixedLength(), decoders.CTC("[PAD]", "▁", True)),
    (PRE_PAIRS["sequence"][1], decoders.Sequence([decoders.CTC(), decoders.WordPiece()])),
])
def test_documents_round_trip(pre, decoder):
    """bpekit writes the stages as ``tokenizers`` does; what it writes reads back equal, and
    ``tokenizers`` reads it back to the same stages."""
    hf = tokenizers.Tokenizer(models.BPE(vocab={"a": 0, "b": 1, "ab": 2}, merges=[("a", "b")]))
    hf.pre_tokenizer, hf.decoder = pre, decoder
    doc = json.loads(hf.to_str())
    ours_tok = from_document(doc)
    written = document(ours_tok)
    assert written["pre_tokenizer"] == doc["pre_tokenizer"] and written["decoder"] == doc["decoder"]
    again = from_document(json.loads(json.dumps(written)))
    assert again.pre_tokenizer == ours_tok.pre_tokenizer and again.decoder == ours_tok.decoder
    assert json.loads(tokenizers.Tokenizer.from_str(json.dumps(written)).to_str())["decoder"] == doc["decoder"]
    # a stage changed in bpekit is written anew
    ours_tok.pre_tokenizer = ours.FixedLength(9)
    ours_tok.decoder = our_decoders.CTC("p", "d", False)
    assert document(ours_tok)["pre_tokenizer"] == {"type": "FixedLength", "length": 9}
    assert document(ours_tok)["decoder"] == {"type": "CTC", "pad_token": "p", "word_delimiter_token": "d",
                                             "cleanup": False}


def test_defaults_and_ignored_keys():
    assert ours.from_json({"type": "FixedLength"}) == ours.FixedLength(5)
    assert ours.from_json({"type": "BertPreTokenizer", "extra": 1}) == ours.BertPreTokenizer()
    assert repr(ours.BertPreTokenizer()) == "BertPreTokenizer()"
    assert ours.from_json({"type": "FixedLength", "length": 2**64 - 1}).length == 2**64 - 1
    assert our_decoders.from_json({"type": "CTC", "pad_token": "", "word_delimiter_token": "", "cleanup": True}).decode(
        ["a", "", "b"]) == decoders.CTC("", "", True).decode(["a", "", "b"])


BAD_PRE = [
    {"type": "CharDelimiterSplit"}, {"type": "CharDelimiterSplit", "delimiter": ""},
    {"type": "CharDelimiterSplit", "delimiter": "ab"}, {"type": "CharDelimiterSplit", "delimiter": 1},
    {"type": "CharDelimiterSplit", "delimiter": None},
    {"type": "FixedLength", "length": -1}, {"type": "FixedLength", "length": 2.0},
    {"type": "FixedLength", "length": True}, {"type": "FixedLength", "length": "5"},
    {"type": "FixedLength", "length": None}, {"type": "FixedLength", "length": 2**64},
]
BAD_DECODERS = [
    {"type": "WordPiece"}, {"type": "WordPiece", "prefix": "##"}, {"type": "WordPiece", "cleanup": True},
    {"type": "WordPiece", "prefix": 1, "cleanup": True}, {"type": "WordPiece", "prefix": "##", "cleanup": 1},
    {"type": "WordPiece", "prefix": None, "cleanup": True},
    {"type": "CTC"}, {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|"},
    {"type": "CTC", "pad_token": "<pad>", "cleanup": True},
    {"type": "CTC", "word_delimiter_token": "|", "cleanup": True},
    {"type": "CTC", "pad_token": 0, "word_delimiter_token": "|", "cleanup": True},
    {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": ["|"], "cleanup": True},
    {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": "yes"},
]


@pytest.mark.parametrize("key, bad", [("pre_tokenizer", b) for b in BAD_PRE] + [("decoder", b) for b in BAD_DECODERS])
def test_bad_fields_are_format_errors_as_tokenizers_refuses_them(key, bad):
    doc = changed(key, bad)
    with pytest.raises(FormatError, match=bad["type"]):
        from_document(doc)
    with pytest.raises(Exception, match="did not match any variant|invalid"):
        tokenizers.Tokenizer.from_str(json.dumps(doc))


def test_fixed_length_zero_is_refused():
    """``tokenizers`` 0.23 loads a length of 0 and panics on the first non-empty text; bpekit
    refuses the file."""
    with pytest.raises(FormatError, match="FixedLength"):
        from_document(changed("pre_tokenizer", {"type": "FixedLength", "length": 0}))
    with pytest.raises(FormatError):
        ours.FixedLength(0)
    with pytest.raises(FormatError):
        ours.CharDelimiterSplit("ab")
