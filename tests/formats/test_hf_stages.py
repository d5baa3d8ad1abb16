"""Every supported stage and option, in small tokenizer.json documents built with the
``tokenizers`` Python API, encodes (ids and offsets) and decodes in bpekit exactly as in
``tokenizers`` itself."""

from __future__ import annotations

import json

import pytest
from bpekit.formats.hf import from_document
from datapaths import DATA

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, processors, trainers

EDGE = [
    "", " ", "  two  spaces  ", "Hello, World! It's 2024: 12345 apples.", "tab\tand\nnewline\r\n",
    "naïve café ÉCOLE ΣΟΦΟΣ straße", "e\u0301 ﬁ ① ²", "日本語のテキスト", "emoji 👍🏽 ok", "a<s>b </s> <mask>c",
    "don't  I'LL we've", "x--y---z", "<unk> [UNK] <0x41>", "ends with space ", " starts", "Zürich\u00a0nbsp",
    "a\u1df6\u0323 x\u1dfa\u0323 e\u0301\u1df6",  # marks newer than Hugging Face's Unicode 9 tables
]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    path = DATA / "corpora" / "taylorswift.txt"
    if not path.is_file():
        pytest.skip(f"{path} not found (set BPEKIT_TEST_DATA)")
    return path.read_text(encoding="utf-8").splitlines()[:400]


def train(model, pre, texts, *, normalizer=None, vocab_size=400, **trainer_options):
    tok = tokenizers.Tokenizer(model)
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False, **trainer_options)
    tok.train_from_iterator(texts, trainer)
    return tok


def same(hf, texts, *, add_special_tokens=False, skip_special_tokens=False):
    ours = from_document(json.loads(hf.to_str()))
    every = [*EDGE, *texts[:60]]
    for text in every:
        encoding = hf.encode(text, add_special_tokens=add_special_tokens)
        ids = encoding.ids
        assert ours.encode(text, add_special_tokens) == ids, repr(text)
        assert ours.encode_with_offsets(text, add_special_tokens) == (ids, encoding.offsets), repr(text)
        assert ours.decode(ids, skip_special_tokens=skip_special_tokens) == hf.decode(
            ids, skip_special_tokens=skip_special_tokens
        ), repr(text)
    want = [e.ids for e in hf.encode_batch(every, add_special_tokens=add_special_tokens)]
    assert ours.encode_batch(every, add_special_tokens, num_threads=2) == want
    return ours


def test_byte_level_prefix_space_template_and_added_tokens(texts):
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    hf = train(models.BPE(), pre_tokenizers.ByteLevel(add_prefix_space=True), texts,
               normalizer=normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]),
               initial_alphabet=alphabet, special_tokens=["<s>", "</s>"])
    hf.decoder = decoders.ByteLevel()
    hf.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1", special_tokens=[("<s>", 0), ("</s>", 1)]
    )
    hf.add_tokens([tokenizers.AddedToken("<mask>", lstrip=True, rstrip=True, normalized=False),
                   tokenizers.AddedToken("apples", single_word=True, normalized=True),
                   tokenizers.AddedToken("ÉCOLE", normalized=True)])
    same(hf, texts, add_special_tokens=True)
    same(hf, texts, skip_special_tokens=True)


def test_added_tokens_cut_in_rust(texts):
    """Added tokens without ``single_word`` are cut in Rust (``PairBPE.encode_added``): raw and
    normalized ones, ``lstrip`` / ``rstrip`` over every whitespace character, on the edge texts,
    the corpus and texts made of added tokens; the same ids as ``tokenizers`` and as the Python
    cut (``AddedVocabulary.split``)."""
    from bpekit import _core
    from bpekit.pipeline.normalizers import WHITESPACE

    assert frozenset(_core.ADDED_WHITESPACE) == WHITESPACE
    assert WHITESPACE == {chr(c) for c in range(0x110000) if chr(c).isspace()} - {"\x1c", "\x1d", "\x1e", "\x1f"}
    hf = train(models.BPE(), pre_tokenizers.ByteLevel(add_prefix_space=False), texts, normalizer=normalizers.NFKC(),
               initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=["<s>"])
    hf.add_tokens([tokenizers.AddedToken("<mask>", lstrip=True, rstrip=True, normalized=False),
                   tokenizers.AddedToken("  ", normalized=True), tokenizers.AddedToken("ÉCOLE", normalized=True),
                   tokenizers.AddedToken("\n\n", rstrip=True, normalized=False),
                   tokenizers.AddedToken("[x]", lstrip=True, normalized=True)])
    ours = same(hf, texts)
    assert ours.added_tokens.rust_matchers is not None
    hostile = [" " * 5001, "<mask>" * 3000, " <mask>\u3000\t<mask> " * 500, "\n\n\n" * 2000 + "x",
               "ﬁ[x] \u2003[x]ÉCOLE\u00a0" * 300, "<s>" * 1000 + "a<mask>b"]
    assert ours.encode_batch(hostile * 3 + EDGE, num_threads=2) == [
        e.ids for e in hf.encode_batch(hostile * 3 + EDGE, add_special_tokens=False)]
    for text in hostile + EDGE:
        ids = hf.encode(text, add_special_tokens=False).ids
        assert ours.encode(text) == ids, repr(text[:40])
        python = [i for part, tid, _ in ours._segments(text, True)
                  for i in (ours._fast.encode(part) if tid is None else [tid])]
        assert python == ids, repr(text[:40])
    # lone surrogates (not UTF-8) are fixed as tiktoken does, in single calls and batches
    bad = ["a\ud800 <mask>\udfff b", "\ud83d\ude00\ud800  x"]
    fixed = ["a\ufffd <mask>\ufffd b", "\U0001f600\ufffd  x"]
    assert [ours.encode(t) for t in bad] == [hf.encode(t, add_special_tokens=False).ids for t in fixed]
    assert ours.encode_batch(bad + fixed) == [ours.encode(t) for t in fixed + fixed]
    # a normalizer that changes ASCII text runs on every part
    hf.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    hf.add_tokens([tokenizers.AddedToken("ÉCOLE", normalized=True)])
    ours = same(hf, texts)
    assert ours.added_tokens.rust_matchers is not None and not ours.normalizer.ascii_invariant


def test_ascii_invariant_normalizers_leave_ascii_as_it_is():
    """The pipelines skip the normalizer on ASCII parts when it says ``ascii_invariant``
    (``PairBPE.encode_added``): the claim holds for every ASCII character, and a ``Sequence``
    makes it only when all its normalizers do."""
    from bpekit.pipeline import normalizers as n

    ascii_text = "".join(map(chr, range(128))) * 2
    claims = {name: cls for name, cls in vars(n).items()
              if isinstance(cls, type) and issubclass(cls, n.Normalizer) and cls.ascii_invariant is True}
    assert set(claims) >= {"NFC", "NFD", "NFKC", "NFKD"}
    for name, cls in claims.items():
        if name.startswith("_"):
            continue
        assert cls().normalize(ascii_text) == ascii_text, name
    assert n.Sequence([n.NFC(), n.NFKD()]).ascii_invariant
    assert not n.Sequence([n.NFC(), n.Lowercase()]).ascii_invariant
    assert not n.Lowercase().ascii_invariant


def test_split_regex_ignore_merges_nfc(texts):
    pattern = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+$|\s+"
    pre = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(pattern), "isolated"),
                                   pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    hf = train(models.BPE(ignore_merges=True), pre, texts, normalizer=normalizers.NFC(),
               initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=["<|end|>"])
    hf.decoder = decoders.ByteLevel()
    ours = same(hf, texts)
    # "\s+$" is no known pattern, but one both engines read alike (Ruby's and (?m)'s `$` is an end
    # of line): split in Rust since session 24 (`onig.portable`), ids equal to tokenizers' above
    assert ours._splitter is not None


def test_metaspace_byte_fallback_unk_and_spm_decoders(texts):
    for scheme, split in [("always", True), ("first", False), ("never", True)]:
        model = models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True)
        pre = pre_tokenizers.Metaspace(prepend_scheme=scheme, split=split)
        hf = train(model, pre, texts, special_tokens=["<unk>"] + [f"<0x{b:02X}>" for b in range(0x20, 0x80)],
                   limit_alphabet=40)
        hf.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                        decoders.Strip(" ", 1, 0)])
        hf.normalizer = normalizers.Sequence([normalizers.Strip(), normalizers.Replace("  ", " "),
                                              normalizers.Prepend("▁")])
        same(hf, texts)
        hf.decoder = decoders.Metaspace(prepend_scheme=scheme, split=split)
        hf.normalizer = None
        same(hf, texts)


def test_unk_without_fuse(texts):
    hf = train(models.BPE(unk_token="[UNK]"), pre_tokenizers.Whitespace(), texts,
               special_tokens=["[UNK]"], limit_alphabet=30)
    same(hf, texts)


@pytest.mark.parametrize("behavior", ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"])
def test_split_behaviors_digits_punctuation(texts, behavior):
    pre = pre_tokenizers.Sequence([
        pre_tokenizers.Split("-", behavior),
        pre_tokenizers.Split(Regex(r"\s+"), behavior, invert=True),
        pre_tokenizers.Digits(individual_digits=behavior == "isolated"),
        pre_tokenizers.Punctuation(behavior),
        pre_tokenizers.WhitespaceSplit(),
    ])
    hf = train(models.BPE(unk_token="[UNK]"), pre, texts, special_tokens=["[UNK]"])
    same(hf, texts)


def test_subword_prefix_suffix_and_bert_roberta(texts):
    model = models.BPE(unk_token="[UNK]", continuing_subword_prefix="##", end_of_word_suffix="</w>")
    hf = train(model, pre_tokenizers.Whitespace(), texts, special_tokens=["[UNK]", "[CLS]", "[SEP]"],
               continuing_subword_prefix="##", end_of_word_suffix="</w>")
    hf.decoder = decoders.BPEDecoder(suffix="</w>")
    hf.post_processor = processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1))
    same(hf, texts, add_special_tokens=True)
    hf.post_processor = processors.RobertaProcessing(("[SEP]", 2), ("[CLS]", 1))
    same(hf, texts, add_special_tokens=True)
    hf.post_processor = processors.Sequence([processors.ByteLevel(), processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1))])
    same(hf, texts, add_special_tokens=True)


def test_nfd_nfkd_strip_accents(texts):
    norm = normalizers.Sequence([normalizers.NFKD(), normalizers.StripAccents(), normalizers.NFD()])
    hf = train(models.BPE(unk_token="[UNK]"), pre_tokenizers.Whitespace(), texts, normalizer=norm,
               special_tokens=["[UNK]"])
    same(hf, texts)


def test_dropout_is_seeded_and_full_dropout_matches(texts):
    hf = train(models.BPE(), pre_tokenizers.ByteLevel(), texts, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    hf.decoder = decoders.ByteLevel()
    doc = json.loads(hf.to_str())
    doc["model"]["dropout"] = 1.0
    hf_all = tokenizers.Tokenizer.from_str(json.dumps(doc))
    ours = from_document(doc)
    for text in texts[:20]:
        assert ours.encode(text) == hf_all.encode(text).ids
    doc["model"]["dropout"] = 0.3
    runs = [[from_document(doc, seed=7).encode(t) for t in texts[:20]] for _ in range(2)]
    assert runs[0] == runs[1]
    plain = [hf.encode(t).ids for t in texts[:20]]
    assert runs[0] != plain and sum(map(len, runs[0])) > sum(map(len, plain))
    assert [from_document(doc).decode(r) for r in runs[0]] == [hf.decode(p) for p in plain]


def test_replacing_a_stage_takes_effect(texts):
    hf = train(models.BPE(), pre_tokenizers.ByteLevel(add_prefix_space=True), texts,
               initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    hf.add_tokens([tokenizers.AddedToken("straße", normalized=True)])
    ours = same(hf, texts)
    assert ours._splitter is not None
    from bpekit.pipeline import normalizers as ours_normalizers
    from bpekit.pipeline import pre_tokenizers as ours_pre

    ours.pre_tokenizer = ours_pre.Whitespace()
    ours.normalizer = ours_normalizers.Lowercase()
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.normalizer = normalizers.Lowercase()
    for text in [*EDGE, *texts[:30]]:
        assert ours.encode(text) == hf.encode(text).ids, repr(text)
    assert ours._splitter is None
