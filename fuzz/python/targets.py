"""The bodies of bpekit's Python parser fuzz targets, without atheris.

``fuzz/python/parsers.py`` runs them under atheris (coverage-guided); the test suite's smoke run
(``tests/hardening/test_fuzz_smoke.py``) runs them on the seeds and on mutations of them. Each
takes the fuzzer's bytes; an exception that is not a ``BpekitError`` is a crash.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import bpekit
from bpekit.formats import gguf
from bpekit.formats import hf as hf_format
from bpekit.formats.sentencepiece import SentencePieceBPE, SentencePieceModel
from bpekit.minbpe import RegexTokenizer
from bpekit.pipeline import normalizers
from bpekit.pipeline.aligned import Aligned

SAMPLE = "Hello world, héllo  wörld!\n\t12345 <|endoftext|> 日本語 🙂"
# what the Unicode stages see differently from Python's tables: marks newer than Unicode 9,
# marks, numbers and connectors next to letters, new case pairs, new digits
MARKS = "a\u1df6\u0323 x\u0301ab ²ab ‿ab \u1c89 \U0001e4f0 e\u0301"
SCRATCH = Path(tempfile.mkdtemp(prefix="bpekit-fuzz-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)


def tiktoken(data: bytes) -> None:
    ranks = bpekit._core.parse_tiktoken_ranks(data, "fuzz")
    if ranks:
        enc = bpekit.Encoding("fuzz", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
        enc.decode_bytes(list(ranks.values())[:50])


def minbpe(data: bytes) -> None:
    path = SCRATCH / "f.model"
    path.write_bytes(b"minbpe v1\n" + data)
    RegexTokenizer().load(str(path))


def sentencepiece(data: bytes) -> None:
    model = SentencePieceModel.load(data)
    if model.model_type == "BPE":  # then it must encode and decode (the Rust normalizer and merge)
        tok = SentencePieceBPE(model)
        for text in (SAMPLE, SAMPLE.encode("utf-8")[:-3] + b"\xff\xfe"):
            ids = tok.encode(text)
            tok.encode([text, text], num_threads=2)
            tok.encode(text, out_type=str)
            tok.decode(ids)


def json_doc(data: bytes) -> None:
    path = SCRATCH / "t.json"
    path.write_bytes(data)
    bpekit.Tokenizer.load(path)


def hf(data: bytes) -> None:
    path = SCRATCH / "tokenizer.json"
    path.write_bytes(data)
    exercise(hf_format.load(path))


def gguf_file(data: bytes) -> None:
    vocab = gguf.GGUFVocab.from_file(gguf.container.parse(data), "fuzz.gguf")
    gguf.container.serialize(vocab.to_file())
    exercise(gguf.to_tokenizer(vocab))


def exercise(tok: bpekit.Tokenizer) -> None:
    """What a loaded tokenizer must then do without an untyped error: encode (with the
    post-processor) and decode (with and without special tokens; a decoder's Rust table, where it
    has one, as the Python decoders); and its batches, as lists, as
    one flat array (the post-processor's ids added in Rust where it only adds ids around the
    text) and as counts, must give what ``encode`` gives."""
    ids = tok.encode(SAMPLE, add_special_tokens=True)
    for skip in (False, True):
        text = tok.decode(ids, skip_special_tokens=skip)
        if tok.encoding is None and tok.decoder is not None and tok._decode_ids() is not None:
            kept = [i for i in ids if not skip or i not in tok._special_id_set()]
            if text != tok.decoder.decode([tok.id_to_token(i) for i in kept]):
                raise AssertionError("the decoder's Rust table differs from the decoders")
    texts = [SAMPLE, "", "ab", MARKS]
    want = [ids, *(tok.encode(t, add_special_tokens=True) for t in texts[1:])]
    for text, wanted in zip(texts, want):
        offsets_of(tok, text, wanted)
    if tok.encode_batch_with_offsets(texts, True, num_threads=2) != [tok.encode_with_offsets(t, True) for t in texts]:
        raise AssertionError("encode_batch_with_offsets differs from encode_with_offsets")
    if tok.encode_batch(texts, True, num_threads=2) != want:
        raise AssertionError("encode_batch differs from encode")
    flat, offsets = tok.encode_batch_to_numpy(texts, True, num_threads=2)
    if [flat[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] != want:
        raise AssertionError("encode_batch_to_numpy differs from encode")
    if tok.count_batch(texts, True, num_threads=2) != [len(w) for w in want]:
        raise AssertionError("count_batch differs from encode")


def offsets_of(tok: bpekit.Tokenizer, text: str, ids: list[int]) -> None:
    """``encode_with_offsets`` must give ``encode``'s ids with one span each, inside the text; a
    normalizer the Rust program runs must align the text in Rust as its Python stages do
    (``normalizers.InRust``)."""
    got, spans = tok.encode_with_offsets(text, add_special_tokens=True)
    if got != ids or len(spans) != len(ids):
        raise AssertionError("encode_with_offsets differs from encode")
    if any(not 0 <= a <= b <= len(text) for a, b in spans):
        raise AssertionError(f"a span outside the text: {spans}")
    program = normalizers.core_normalizer(tok.normalizer) if tok.normalizer is not None else None
    if isinstance(program, bpekit._core.Normalizer):
        plain = Aligned.of(text)
        want, fast = tok.normalizer.align(plain), normalizers.InRust(tok.normalizer, program).align(plain)
        if (fast.text, fast.spans) != (want.text, want.spans):
            raise AssertionError("the Rust alignment differs from the Python stages'")


TARGETS: dict[str, Callable[[bytes], None]] = {
    "tiktoken": tiktoken,
    "minbpe": minbpe,
    "sentencepiece": sentencepiece,
    "json": json_doc,
    "hf": hf,
    "gguf": gguf_file,
}
