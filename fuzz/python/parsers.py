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
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent))
with atheris.instrument_imports(include=["bpekit"]):
    from bpekit.errors import BpekitError
    from targets import TARGETS


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
