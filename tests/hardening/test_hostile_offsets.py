"""Hostile text through ``encode_with_offsets``: every kind of ``hardening/hostile.py`` (one
character repeated, no split point, NUL, lone surrogates, special-token look-alikes, random code
points of every plane...) gives the ids of ``encode`` and spans that stay inside the text, in
order, and equal the peers' spans where a peer takes the text (``tokenizers`` for cl100k's
exported ``tokenizer.json``, GPT-NeoX's and CLIP- and Falcon-layout ones, sentencepiece for a byte-fallback model; neither
takes lone surrogates). The Rust SentencePiece spans equal the Python reference's.

Sizes: ``$BPEKIT_HOSTILE_BYTES`` (default 32 kB) for bpekit alone, a quarter of it against the
peers (``tokenizers`` on some of these texts takes seconds per 100 kB). Speed is
``benches/offsets.py``'s, not measured here.
"""

from __future__ import annotations

import json
import os

import pytest

import bpekit
from bpekit import Tokenizer
from bpekit.errors import EncodeError
from bpekit.offsets import char_at_byte
from bpekit.tokenizer_export import hf_tokenizer_json
from datapaths import DATA
from hardening.hostile import HOSTILE

SIZE = int(os.environ.get("BPEKIT_HOSTILE_BYTES", str(32 << 10)))
PEER_SIZE = SIZE // 4
NEOX = DATA / "hf" / "gpt-neox-20b.tokenizer.json"
SPM = DATA / "spm" / "bpe_multi_bytefb_3000.model"


def _in_order(offsets: list[tuple[int, int]], n: int) -> None:
    assert all(0 <= a <= b <= n for a, b in offsets), "a span outside the text"
    assert all(p[0] <= q[0] and p[1] <= q[1] for p, q in zip(offsets, offsets[1:])), "spans out of order"


def _peer_takes(kind: str) -> bool:
    return "surrogate" not in kind and kind != "random_unicode"  # (lone surrogates: no str for Rust)


@pytest.fixture(scope="module")
def cl100k():
    tokenizers = pytest.importorskip("tokenizers")
    enc = bpekit.get_encoding("cl100k_base")
    doc = hf_tokenizer_json(enc._mergeable_ranks, enc._special_tokens, enc._pat_str)
    return enc, tokenizers.Tokenizer.from_str(json.dumps(doc))


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_rank_offsets_cover_the_text(cl100k, kind: str) -> None:
    """A rank encoding's tokens spell the text: the spans start at 0, end at its length, and
    each starts no later than the one before ends; equal to ``tokenizers``' on what it takes."""
    enc, peer = cl100k
    text = HOSTILE[kind](SIZE)
    ids, offsets = enc.encode_with_offsets(text, disallowed_special=())
    assert ids == enc.encode(text, disallowed_special=())
    _in_order(offsets, len(text))
    assert offsets[0][0] == 0 and offsets[-1][1] == len(text)
    assert all(q[0] <= p[1] for p, q in zip(offsets, offsets[1:])), "a gap between spans"
    if _peer_takes(kind):
        small = HOSTILE[kind](PEER_SIZE)
        want = peer.encode(small, add_special_tokens=False)
        # (the peer matches special tokens as added tokens)
        assert enc.encode_with_offsets(small, allowed_special="all") == (want.ids, want.offsets), kind


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_pipeline_offsets_equal_tokenizers(kind: str) -> None:
    """GPT-NeoX's ``tokenizer.json`` (NFC, ByteLevel with ``trim_offsets``, added tokens for
    runs of spaces): the ids of ``encode``, and ``tokenizers``' spans."""
    tokenizers = pytest.importorskip("tokenizers")
    if not NEOX.is_file():
        pytest.skip(f"{NEOX} not found (set BPEKIT_TEST_DATA)")
    ours = _load(NEOX, Tokenizer.from_file)
    text = HOSTILE[kind](SIZE)
    ids, offsets = ours.encode_with_offsets(text)
    assert ids == ours.encode(text)
    _in_order(offsets, len(text))
    if _peer_takes(kind):
        peer = _load(("hf", NEOX), lambda p: tokenizers.Tokenizer.from_file(str(p[1])))
        small = HOSTILE[kind](PEER_SIZE)
        want = peer.encode(small, add_special_tokens=False)
        assert ours.encode_with_offsets(small) == (want.ids, want.offsets), kind


@pytest.mark.parametrize("layout", ["clip", "falcon"])
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_trained_layouts_offsets_equal_tokenizers(kind: str, layout: str) -> None:
    """CLIP's layout (a regex ``Replace`` and ``Lowercase``, a split that drops whitespace, ``</w>``
    tokens; ``formats/test_clip_layout.py``) and Falcon's pre-tokenizer (``Punctuation``,
    ``ByteLevel``, then ``Digits`` and digit groups over the byte-level characters;
    ``formats/test_falcon_layout.py``), both in Rust, trained with ``tokenizers``: the ids of
    ``encode`` and ``tokenizers``' spans; lone surrogates are fixed as ``encode`` fixes them."""
    pytest.importorskip("tokenizers")
    from formats.test_clip_layout import clip_like, corpus_lines
    from formats.test_falcon_layout import falcon_like

    build = {"clip": clip_like, "falcon": falcon_like}[layout]
    peer = _load(layout, lambda _: build(corpus_lines(english_only=True)))
    ours = _load((layout, "ours"), lambda _: Tokenizer.from_str(peer.to_str()))
    text = HOSTILE[kind](SIZE)
    ids, offsets = ours.encode_with_offsets(text)
    assert ids == ours.encode(text)
    _in_order(offsets, len(text))
    if _peer_takes(kind):
        small = HOSTILE[kind](PEER_SIZE)
        want = peer.encode(small, add_special_tokens=False)
        assert ours.encode_with_offsets(small) == (want.ids, want.offsets), kind


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_sentencepiece_offsets_equal_sentencepiece(kind: str) -> None:
    """A byte-fallback SentencePiece model: the Rust spans equal the Python reference's on the
    whole text, and sentencepiece's (bytes made characters) where it takes the text. Lone
    surrogates: ``SentencePieceBPE`` refuses them in both calls, as in ``encode``; the
    ``Tokenizer`` of the model encodes them fixed, its offsets indexing the text as given."""
    if not SPM.is_file():
        pytest.skip(f"{SPM} not found (set BPEKIT_TEST_DATA)")
    from bpekit.formats.sentencepiece import SentencePieceBPE

    ours = _load(SPM, SentencePieceBPE.load)
    text = HOSTILE[kind](SIZE)
    tok = _load(("tokenizer", SPM), lambda p: Tokenizer.from_file(p[1]))
    ids, offsets = tok.encode_with_offsets(text)
    assert ids == tok.encode(text)
    _in_order(offsets, len(text))
    if any(0xD800 <= ord(c) < 0xE000 for c in text):
        for call in (ours.encode, ours.encode_with_offsets, ours.encode_with_offsets_reference):
            with pytest.raises(EncodeError, match="lone surrogate"):
                call(text)
        return
    assert (ids, offsets) == ours.encode_with_offsets(text) == ours.encode_with_offsets_reference(text)
    if _peer_takes(kind):
        sentencepiece = pytest.importorskip("sentencepiece")
        peer = _load(("sp", SPM), lambda p: sentencepiece.SentencePieceProcessor(model_file=str(p[1])))
        small = HOSTILE[kind](PEER_SIZE)
        pieces = peer.encode(small, return_type="proto").pieces
        at = char_at_byte(small)
        assert ours.encode_with_offsets(small) == ([p.id for p in pieces], [(at[p.begin], at[p.end]) for p in pieces])


_LOADED: dict[object, object] = {}


def _load(key, load):  # type: ignore[no-untyped-def]
    if key not in _LOADED:
        _LOADED[key] = load(key)
    return _LOADED[key]


def test_an_id_far_beyond_the_vocabulary_stays_small():
    """One token with the id 777,777,796 in a 95-token byte-level vocabulary (found by the ``hf``
    atheris target, session 35): the core's tables are by id, so building the Rust model asked
    for 18 GB and the offsets' length tables for 2.9 GB. Such a model now encodes and gives offsets
    through the Python merge, in a process whose address space is capped at 2 GB."""
    import subprocess
    import sys

    vocab = {chr(c): c - 33 for c in range(33, 127)}
    vocab["ab"] = 777_777_796
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": {"type": "NFC"},
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
           "post_processor": None, "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                               "use_regex": True},
           "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                     "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                     "vocab": vocab, "merges": [["a", "b"]]}}
    code = f"""
import resource, json
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from bpekit import Tokenizer
tok = Tokenizer.from_str({json.dumps(json.dumps(doc))})
text = "abc ab? ABab"
ids = tok.encode(text)
assert 777777796 in ids, ids
assert tok.encode_with_offsets(text)[0] == ids
assert tok.encode_batch_with_offsets([text, "ab"], num_threads=2) == [tok.encode_with_offsets(t) for t in [text, "ab"]]
print("ok", ids)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stderr[-2000:]
