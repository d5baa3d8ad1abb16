"""Coverage-guided fuzzing of bpekit's Python-side file parsers with atheris (libFuzzer).

Targets: ``tiktoken`` (.tiktoken rank text, parsed in Rust, then built into an Encoding),
``minbpe`` (minbpe ``.model``), ``sentencepiece`` (SentencePiece ``.model`` protobuf), ``json``
(bpekit tokenizer JSON), ``hf`` (Hugging Face ``tokenizer.json``) and ``gguf`` (llama.cpp GGUF
tokenizer metadata). The last two go on from a file that loads to encoding and decoding (and
GGUF to writing the file back). Any exception that is not a ``BpekitError`` is a crash. Seeds: fuzz/corpus/py_<target>/
(written by fuzz/make_corpus.py). Usage (the limits are the ones docs/reliability.md ran with):

    python fuzz/python/parsers.py TARGET -timeout=10 -rss_limit_mb=2048 fuzz/corpus/py_TARGET
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["bpekit"]):
    import bpekit
    from bpekit.errors import BpekitError
    from bpekit.formats import gguf
    from bpekit.formats import hf as hf_format
    from bpekit.formats.sentencepiece import SentencePieceModel
    from bpekit.minbpe import RegexTokenizer

SAMPLE = "Hello world, héllo  wörld!\n\t12345 <|endoftext|> 日本語 🙂"
SCRATCH = Path(tempfile.mkdtemp(prefix="bpekit-fuzz-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None))


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
    SentencePieceModel.load(data)


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
    post-processor) and decode (with and without special tokens)."""
    ids = tok.encode(SAMPLE, add_special_tokens=True)
    tok.decode(ids)
    tok.decode(ids, skip_special_tokens=True)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "tiktoken": tiktoken,
    "minbpe": minbpe,
    "sentencepiece": sentencepiece,
    "json": json_doc,
    "hf": hf,
    "gguf": gguf_file,
}


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(TARGETS)}}} [libFuzzer flags]")
    target = TARGETS[sys.argv[1]]

    def one(data: bytes) -> None:
        try:
            target(data)
        except BpekitError:
            pass

    atheris.Setup([sys.argv[0], *sys.argv[2:]], one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
