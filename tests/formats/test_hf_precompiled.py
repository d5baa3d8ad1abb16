"""The ``Precompiled`` normalizer (``bpekit.pipeline.precompiled``, ``src/precompiled.rs``)
against ``tokenizers.normalizers.Precompiled``: every code point alone and in context, the
cluster boundaries it depends on (a made-up map that shows them), grapheme-heavy text, every
corpus, random text; offsets through a trained tokenizer as ``transformers`` converts a
SentencePiece model; corrupt blobs."""

from __future__ import annotations

import base64
import functools
import json
import struct

import pytest
from bpekit.errors import FormatError
from bpekit.formats.hf import from_document
from bpekit.formats.sentencepiece.model import SentencePieceModel
from bpekit.pipeline import normalizers as ours_normalizers
from bpekit.pipeline.aligned import Aligned
from bpekit.pipeline.precompiled import Precompiled
from formats.test_sentencepiece_support import SPM_DIR, corpus_lines, require, spm
from hypothesis import given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, trainers

SEP = "\x00"  # a cluster of its own (a control) where every lookup stops: no map changes it
MARK = "\u0301"


@functools.cache
def nmt_nfkc() -> bytes:
    """The map of the shared models (SentencePiece's default, ``nmt_nfkc``)."""
    blob = SentencePieceModel.load(require(SPM_DIR / "bpe_multi_nofb_3000.model")).precompiled_charsmap
    assert blob is not None
    return blob


@functools.cache
def nmt_nfkc_cf() -> bytes:
    """``nmt_nfkc_cf`` (case folded as well: ASCII capitals are rules too), from a tiny model."""
    import io

    out = io.BytesIO()
    lines = list(corpus_lines()["tinyshakespeare.txt"][:300])
    spm().SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=out, model_type="bpe", vocab_size=300,
        normalization_rule_name="nmt_nfkc_cf", num_threads=1, minloglevel=2,
    )  # fmt: skip
    blob = SentencePieceModel.load(out.getvalue()).precompiled_charsmap
    assert blob is not None and blob != nmt_nfkc()
    return blob


MAPS = {"nmt_nfkc": nmt_nfkc, "nmt_nfkc_cf": nmt_nfkc_cf}


def charsmap(rules: dict[bytes, str]) -> bytes:
    """A ``precompiled_charsmap`` blob of ``rules`` (key bytes -> replacement), in the layout
    Darts-clone writes (a test helper: one block of 256 units per trie node, the value of a key
    at its node's base, where label 0 would be)."""
    children: list[dict[int, int]] = [{}]
    values: list[int | None] = [None]
    pool = bytearray()
    for key, replacement in rules.items():
        node = 0
        for b in key:
            if b not in children[node]:
                children[node][b] = len(children)
                children.append({})
                values.append(None)
            node = children[node][b]
        values[node] = len(pool)
        pool += replacement.encode("utf-8") + b"\0"
    units = [0] * (256 * (len(children) + 1))
    units[0] = 256 << 10  # the root's base
    for k, kids in enumerate(children):
        base = 256 * (k + 1)
        for b, child in kids.items():
            units[base ^ b] = ((base ^ b ^ 256 * (child + 1)) << 10) | b | (values[child] is not None) << 8
        if values[k] is not None:
            units[base] = values[k] | 0x80000000  # type: ignore[operator]
    return struct.pack(f"<I{len(units)}I", 4 * len(units), *units) + bytes(pool)


# every byte that starts a character is a rule of its own: each cluster of fewer than 6 bytes
# becomes one "#", a longer one one "#" per character, so the output counts the clusters
CLUSTERS = charsmap({bytes([b]): "#" for b in [*range(1, 0x80), *range(0xC2, 0xF5)]})


def theirs(blob: bytes, text: str) -> str:
    return tokenizers.normalizers.Precompiled(blob).normalize_str(text)  # type: ignore[no-any-return]


def same_items(blob: bytes, items: list[str], what: str) -> None:
    """Each of ``items`` normalizes as in ``tokenizers`` (many per call, split back at SEP)."""
    ours = Precompiled(blob)
    for i in range(0, len(items), 50_000):
        chunk = items[i : i + 50_000]
        joined = SEP.join(chunk)
        want, got = theirs(blob, joined), ours.normalize(joined)
        if got != want:
            pairs = zip(chunk, got.split(SEP), want.split(SEP), strict=True)
            bad = [(t, g, w) for t, g, w in pairs if g != w]
            raise AssertionError(f"{what}: {len(bad)} differ, first {bad[:5]!r}")


CODE_POINTS = [chr(c) for c in range(1, 0x110000) if not 0xD800 <= c <= 0xDFFF]


@pytest.mark.parametrize("name", MAPS)
def test_every_code_point_alone_and_in_context(name):
    """Each code point alone, after ``a`` and before a mark, before a mark, doubled, and after
    a prepended concatenation mark (U+0600, which begins the cluster: only the scan finds c)."""
    blob = MAPS[name]()
    same_items(blob, CODE_POINTS, f"{name} alone")
    same_items(blob, [f"a{c}{MARK}b" for c in CODE_POINTS], f"{name} a+c+mark")
    same_items(blob, [c + MARK for c in CODE_POINTS], f"{name} c+mark")
    same_items(blob, [c + c for c in CODE_POINTS], f"{name} c+c")
    same_items(blob, [f"\u0600{c}{MARK}" for c in CODE_POINTS], f"{name} prepend+c+mark")


# one character of each kind the cluster rules tell apart (UAX #29), at most 2 bytes where one
# exists, so that most pairs stay under the 6 bytes that a whole cluster may have
PARTNERS = [
    "a", "\r", "\n", "\x01", MARK, "\u0903", "\u200d", "\U0001f1e6", "\u0600", "\u1100", "\u1161", "\u11a8",
    "\uac00", "\uac01", "\u00a9", "\u0915", "\u094d", "\u0e33",
]  # fmt: skip


def test_cluster_boundaries_of_every_code_point():
    """Where ``unicode-segmentation`` cuts: half the code points before each partner, the other
    half after it, through the map that shows each cluster (``CLUSTERS``)."""
    items = [c + p for p in PARTNERS for c in CODE_POINTS[::4]] + [p + c for p in PARTNERS for c in CODE_POINTS[2::4]]
    same_items(CLUSTERS, items, "clusters")


GRAPHEMES = [
    "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466", "\U0001f44d\U0001f3fd", "\u2764\ufe0f",
    "\U0001f3f3\ufe0f\u200d\U0001f308", "\U0001f1ef\U0001f1f5\U0001f1eb\U0001f1f7\U0001f1e6", "a\U0001f1e6\U0001f1e6b",
    "\u1100\u1161\u11a8", "\u1100\u1161", "\uac00\u11a8", "\u1100\u1100\u1161", "\u1112\u1161\u11ab\u1100\u116e\u11a8",
    "\u0915\u094d\u0937", "\u0915\u094d\u200d\u0937", "\u0915\u094d\u0937\u093f", "\u0b95\u0bcd\u0bb7", "\u0e01\u0e33",
    "\r\n", "\r\r\n\n", "a\r\nb", "\u0600a", "\u0600\u0600x", "e\u0301", "e\u0301\u0302", "\uff21\u0301", "A\u0301\u0301\u0301",
    "\ufb01", "\u2460\u0301", "\u00a0\u0301", "\uff76\uff9e", "\u3000a", "x\u0338", "\u0928\u093c", "\u1e9b\u0323",
    "\t\u0301", "\u0600\uff21\u0301", "\u0600\u0600e\u0301", "a\u200d\u0301", "\u200d", "\u0301\u0301", "\U0001d400\u0301", "\u2126\u0301", "\ufdfa", "\u3300",
]  # fmt: skip


@pytest.mark.parametrize("name", [*MAPS, "clusters"])
def test_grapheme_heavy_text(name):
    blob = CLUSTERS if name == "clusters" else MAPS[name]()
    items = [*GRAPHEMES, *(a + b for a in GRAPHEMES for b in GRAPHEMES), "".join(GRAPHEMES), "xy".join(GRAPHEMES)]
    same_items(blob, items, name)
    ours = Precompiled(blob)
    for text in GRAPHEMES:  # one call each (the scan starts at the text's own first byte)
        assert ours.normalize(text) == theirs(blob, text), repr(text)


def test_nul_is_never_looked_up():
    """``tokenizers`` stops a lookup at a NUL byte; a NUL is a cluster of its own, so only a
    key that starts with one could match, and none does."""
    blob = charsmap({b"a\x00b": "X", b"\x00": "Y", b"c": "C", b"d": "D"})
    for text in ["a\x00b", "\x00", "c\x00d", "a\x00bc", "\x00\x00a"]:
        assert Precompiled(blob).normalize(text) == theirs(blob, text), repr(text)
    assert theirs(blob, "a\x00bc\x00") == "a\x00bC\x00"


@pytest.mark.parametrize("name", MAPS)
def test_every_corpus(name):
    blob = MAPS[name]()
    lines = [line for file_lines in corpus_lines().values() for line in file_lines]
    same_items(blob, lines, name)


_PIECES = st.sampled_from(
    [*"aeiou AB\t\n\r", "  ", "\x00", "\x01", MARK, "\u0308", "\u200d", "\ufe0f", "\uff21", "\uff76", "\uff9e", "\ufb01",
     "\u2460", "\u3000", "\u00a0", "\u1100", "\u1161", "\u11a8", "\uac00", "\U0001f1e6", "\U0001f468", "\U0001f3fd",
     "\u0915", "\u094d", "\u0937", "\u0600", "\U0001d400", "\u2581", "\u0130", "\u00df", "\u03a3", "\u0345"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join), st.sampled_from([*MAPS, "clusters"]))
def test_random_text(text, name):
    blob = CLUSTERS if name == "clusters" else MAPS[name]()
    ours = Precompiled(blob)
    assert ours.normalize(text) == theirs(blob, text)
    # the changes give back the normalized text and one change per character of it
    normalized, changes = ours._changes(text)
    assert normalized == theirs(blob, text)
    assert len(changes) == len(normalized) or (normalized is text and not changes)


# replacements of every size: deletions (of a letter, of a mark), growth, shrinking clusters
SHAPES = charsmap({b"d": "", b"e": "XY", b"g": "XYZ", MARK.encode(): "", "\uff21".encode(): "A", b"\r": "", b"o": "o"})


def hf_spans(blob: bytes, text: str) -> tuple[str, list[tuple[int, int]]]:
    """``tokenizers``' normalized text and the span of each of its characters (a character per
    token: a BPE model with no merges)."""
    normalized = theirs(blob, text)
    tok = tokenizers.Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(sorted({*normalized, "a"}))}, merges=[]))
    tok.normalizer = normalizers.Precompiled(blob)
    encoding = tok.encode(text, add_special_tokens=False)
    assert "".join(encoding.tokens) == normalized
    return normalized, encoding.offsets


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_PIECES, st.sampled_from("deg")), max_size=20).map("".join),
       st.sampled_from([*MAPS, "clusters", "shapes"]))  # fmt: skip
def test_span_of_every_character(text, name):
    """Each character's span after the normalizer (``Precompiled.align``) is ``tokenizers``'."""
    blob = {"clusters": CLUSTERS, "shapes": SHAPES}.get(name) or MAPS[name]()
    aligned = Precompiled(blob).align(Aligned.of(text))
    assert (aligned.text, aligned.map([(i, i + 1) for i in range(len(aligned.text))])) == hf_spans(blob, text)


def spm_converted(blob: bytes, lines: list[str]):
    """A BPE tokenizer trained on ``lines`` with the pipeline ``transformers`` gives a converted
    SentencePiece model (``SpmConverter``): ``Precompiled``, ``Strip`` right, spaces runs to
    ``▁``; ``Metaspace``."""
    tok = tokenizers.Tokenizer(models.BPE(unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence(
        [normalizers.Precompiled(blob), normalizers.Strip(left=False, right=True), normalizers.Replace(Regex(" {2,}"), "\u2581")]
    )
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=1500, special_tokens=["<unk>"], show_progress=False))
    return tok


EDGE = [
    "", " ", "\uff21\u0301b", "e\u0301\u0302 x", "\ufb01ne \u2460\u2461 \u3300", "a\tb\u00a0c\u3000d", "  two  \u3000 ",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467 ok", "\u1100\u1161\u11a8 \uac00\u11a8", "\u0915\u094d\u0937 \ufdfa",
    "x\x01y\x00z", "\u2126\u0301 \u1e9b\u0323", "\uff76\uff9e\uff8a\uff9f", "A\u0301\u0301\u0301B", "\u00bd\u2044",
]  # fmt: skip


def test_offsets_through_a_converted_tokenizer():
    """ids, offsets and decoded text of a trained ``SpmConverter`` pipeline on a few hundred
    lines of 30 languages: the offsets go through ``Precompiled.align``."""
    tatoeba = {name: lines for name, lines in corpus_lines().items() if name.startswith("tatoeba/")}
    names = sorted(tatoeba)[:: max(1, len(tatoeba) // 30)]
    lines = [line for name in names for line in tatoeba[name][:12] if line]
    hf = spm_converted(nmt_nfkc(), [line for name in names for line in tatoeba[name][20:80]])
    doc = json.loads(hf.to_str())
    assert doc["normalizer"]["normalizers"][0]["type"] == "Precompiled"
    ours = from_document(doc)
    for text in [*EDGE, *lines]:
        encoding = hf.encode(text, add_special_tokens=False)
        assert ours.encode_with_offsets(text, False) == (encoding.ids, encoding.offsets), repr(text)
        assert ours.encode(text, False) == encoding.ids, repr(text)
        assert ours.decode(encoding.ids, skip_special_tokens=True) == hf.decode(encoding.ids), repr(text)
    assert ours.encode_batch(lines, False, num_threads=2) == [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]


def test_rust_pipelines_run_it():
    """``Sequence[Precompiled, Strip, Replace]`` is a program of the Rust normalizer (no Python
    call per text), which normalizes as the Python stages do; a subclass stays a Python call."""
    from bpekit import _core

    stage = ours_normalizers.Sequence([
        Precompiled(nmt_nfkc()), ours_normalizers.Strip(False, True),
        ours_normalizers.from_json({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"}),
    ])  # fmt: skip
    program = ours_normalizers.core_normalizer(stage)
    assert isinstance(program, _core.Normalizer) and "Precompiled(240007 bytes)" in repr(program)
    lines = [line for name, lines in corpus_lines().items() if name.startswith("tatoeba/") for line in lines[:20]]
    for text in [*EDGE, *GRAPHEMES, *lines]:
        assert program.normalize(text) == stage.normalize(text), repr(text)

    class Mine(Precompiled):
        def normalize(self, text: str) -> str:
            return super().normalize(text).upper()

    assert Mine(nmt_nfkc()).core_steps() is None


def test_align_keeps_spans_and_surrogates():
    ours = Precompiled(nmt_nfkc())
    plain = Aligned.of("abc", 7)
    assert ours.align(plain) is plain
    aligned = ours.align(Aligned.of("\ufb01x\uff21\u0301y", 3))
    assert aligned.text == "fixAy"
    # f replaces ﬁ and i is inserted after it; x; A replaces Ａ and removes the mark; y
    assert aligned.spans == [(3, 4), (3, 4), (4, 5), (5, 6), (7, 8)]
    lone = "\ufb01\ud800\uff21"
    assert ours.normalize(lone) == "fi\ud800A"
    assert ours.align(Aligned.of(lone)).text == "fi\ud800A"
    assert ours._changes(lone) == ("fi\ud800A", [0, 1, 0, 0])


def test_json_round_trip_and_base64_forms():
    blob = nmt_nfkc()
    encoded = base64.b64encode(blob).decode()
    doc = {"type": "Precompiled", "precompiled_charsmap": encoded}
    stage = ours_normalizers.from_json(doc)
    assert isinstance(stage, Precompiled) and stage.precompiled_charsmap == blob
    assert stage.to_json() == doc and stage == Precompiled(blob)
    assert not stage.ascii_invariant  # (tab and the controls are rules)
    assert "240007-byte" in repr(stage)
    small = charsmap({"\u00e9".encode(): "e"})
    assert Precompiled(small).ascii_invariant and Precompiled(small).normalize("abc \u00e9") == "abc e"
    # padding optional or partial (not more), as tokenizers' base64 decoder takes it
    for text in [base64.b64encode(small).decode().rstrip("="), base64.b64encode(small + b"x").decode().rstrip("=") + "="]:
        assert ours_normalizers.from_json({"type": "Precompiled", "precompiled_charsmap": text}) is not None


def hf_loads(doc: dict) -> bool:
    """Whether ``tokenizers`` reads the normalizer (it panics on some bad values)."""
    full = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": doc,
            "pre_tokenizer": None, "post_processor": None, "decoder": None,
            "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}  # fmt: skip
    try:
        tokenizers.Tokenizer.from_str(json.dumps(full))
        return True
    except BaseException:  # noqa: BLE001  (pyo3's PanicException is no Exception)
        return False


def hostile_blobs():
    good = charsmap({b"a": "b", "\u00e9".encode(): "e", "\uff21".encode(): "A"})
    (trie_size,) = struct.unpack_from("<I", good)
    pool = good[4 + trie_size :]
    yield "truncated inside the trie", good[: trie_size // 2]
    yield "trie size past the end", good[: 4 + trie_size - 8]
    yield "trie size not whole units", struct.pack("<I", trie_size - 2) + good[4:]
    yield "pool not UTF-8", good[:-3] + b"\xff\x00" + good[-1:]
    yield "no NUL at the end of the pool", good[:-1]
    yield "a value past the pool", good[: 4 + trie_size] + pool[:2]
    yield "root outside the trie", good[:4] + struct.pack("<I", (1 << 20) << 10) + good[8:]
    at = 4 + 4 * (256 ^ ord("a"))  # the unit of the root's child "a"
    yield "a child outside the trie", good[:at] + struct.pack("<I", 1 << 30 | 1 << 8 | ord("a")) + good[at + 4 :]
    yield "no units", struct.pack("<I", 0) + b"abc"
    yield "empty", b""
    yield "four bytes", struct.pack("<I", 0)
    real = nmt_nfkc()
    yield "the real map cut", real[: len(real) // 3]
    yield "the real map's pool cut in a character", real[: len(real) - 5]


@pytest.mark.parametrize("what,blob", list(hostile_blobs()), ids=[w for w, _ in hostile_blobs()])
def test_hostile_blobs_are_format_errors_at_load(what, blob):
    doc = {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(blob).decode()}
    with pytest.raises(FormatError, match=r"normalizer\.Precompiled\.precompiled_charsmap: precompiled_charsmap is"):
        ours_normalizers.from_json(doc)
    if what in ("pool not UTF-8", "trie size past the end", "empty", "the real map cut"):
        assert not hf_loads(doc)  # (tokenizers refuses these too; the others it reads, then may panic)


def test_every_cut_of_a_blob_loads_or_fails_cleanly():
    good = charsmap({b"a": "b", "\u00e9".encode(): "e", b"ab": "c"})
    outcomes = set()
    for cut in range(len(good)):
        try:
            Precompiled(good[:cut]).normalize("ab\u00e9")
            outcomes.add("ok")
        except FormatError:
            outcomes.add("error")
    assert "error" in outcomes
    for bad in [1, 255, 0x80000000]:  # a flipped unit anywhere in the first blocks
        for at in range(4, 4 * 600, 4):
            blob = good[:at] + struct.pack("<I", struct.unpack_from("<I", good, at)[0] ^ bad) + good[at + 4 :]
            try:
                Precompiled(blob).normalize("ab\u00e9 x")
            except FormatError:
                pass


@pytest.mark.parametrize(
    "value,message",
    [
        (None, "must be str"), (7, "must be str"), ("QQ=!", "outside the standard alphabet"), ("QU JD", "outside"),
        ("QUJD\n", "outside"), ("QUJD-_", "outside"), ("QQ===", "too much padding"), ("QUJD=", "too much padding"),
        ("Q", "partial byte"), ("QR==", "bits set"), ("QU=D", "outside"), ("", "4"),
    ],
)  # fmt: skip
def test_bad_base64_is_a_format_error(value, message):
    doc = {"type": "Precompiled", "precompiled_charsmap": value}
    with pytest.raises(FormatError, match="precompiled_charsmap") as info:
        ours_normalizers.from_json(doc)
    assert message in str(info.value)
    assert not hf_loads(doc)


def test_missing_field():
    with pytest.raises(FormatError, match="missing key 'precompiled_charsmap'"):
        ours_normalizers.from_json({"type": "Precompiled"})
