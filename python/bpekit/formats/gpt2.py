"""GPT-2's ``encoder.json`` + ``vocab.bpe`` pair as a :class:`bpekit.Tokenizer` (formats.md §2).

Loading: when the pair is what tiktoken accepts (``bpekit.load.data_gym_to_mergeable_bpe_ranks``:
single bytes in GPT-2's byte order, merge ``i`` making id ``256 + i``) it is the rank model of
tiktoken's ``gpt2`` encoding, fast and exact; any other pair (other id order, added entries) is
read the way Hugging Face reads it, a BPE merge-list pipeline (``vocab`` = encoder.json,
``merges`` = vocab.bpe, ``ByteLevel`` with GPT-2's regex). Entries of encoder.json that no merge
makes and that are not single bytes (``<|endoftext|>``) are special tokens.

Saving writes OpenAI's canonical serialisation: encoder.json as ``json.dumps`` (ASCII, ", " and
": "), ids in order; vocab.bpe as ``#version: 0.2`` then one merge per line and a final newline.
For a rank model the merges are recovered from the ranks (minbpe's ``recover_merges``); saving
tiktoken's gpt2 reproduces both files byte for byte.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from bpekit.atomicfile import atomic_write_all
from bpekit.errors import FormatError

ENCODER, VOCAB = "encoder.json", "vocab.bpe"
HEADER = "#version: 0.2"
MAX_BYTES = 1 << 28


def pair_paths(path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """``(encoder.json, vocab.bpe)`` for a directory holding both, or either file of the pair."""
    p = Path(path)
    if p.is_dir():
        return p / ENCODER, p / VOCAB
    if p.suffix == ".bpe":
        return p.with_name(ENCODER), p
    return p, p.with_name(VOCAB)


def _read(p: Path) -> bytes:
    try:
        if p.stat().st_size > MAX_BYTES:
            raise FormatError(
                f"{p} is over {MAX_BYTES} bytes; not a GPT-2 vocabulary file"
            )
        return p.read_bytes()
    except OSError as exc:
        raise FormatError(f"cannot read {p}: {exc.strerror or exc}") from None


def load(path: str | os.PathLike[str], **_: Any) -> Any:
    """The Tokenizer of a GPT-2 file pair (a directory, or the path of either file)."""
    from bpekit import load as rankfiles
    from bpekit import patterns
    from bpekit.encoding import Encoding
    from bpekit.tokenizer import Tokenizer

    enc_path, bpe_path = pair_paths(path)
    encoder_raw, bpe_raw = _read(enc_path), _read(bpe_path)
    encoder = _encoder(encoder_raw, enc_path)
    try:
        ranks = rankfiles.data_gym_to_mergeable_bpe_ranks(bpe_raw, encoder_raw)
    except FormatError:
        ranks = None
    if (
        ranks is not None
    ):  # the check passed: encoder.json = ranks + these two (formats.md §2.3)
        specials = {
            k: v
            for k, v in encoder.items()
            if k in ("<|endoftext|>", "<|startoftext|>")
        }
        enc = Encoding(
            "gpt2",
            pat_str=patterns.GPT2,
            mergeable_ranks=ranks,
            special_tokens=specials,
        )
        return Tokenizer.from_encoding(enc)
    return _pipeline(encoder, _merges(bpe_raw, bpe_path))


def _encoder(raw: bytes, where: Path) -> dict[str, int]:
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise FormatError(f"{where}: not JSON ({str(exc)[:80]})") from None
    if not isinstance(doc, dict) or not all(
        type(v) is int and v >= 0 for v in doc.values()
    ):
        raise FormatError(
            f"{where}: encoder.json must be an object of token -> id (int >= 0)"
        )
    if len(set(doc.values())) != len(doc):
        raise FormatError(f"{where}: two tokens share an id")
    return doc


def _merges(raw: bytes, where: Path) -> list[tuple[str, str]]:
    try:
        lines = raw.decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        raise FormatError(f"{where}: not UTF-8 ({exc.reason})") from None
    merges = []
    for n, line in enumerate(
        lines[1:-1], start=2
    ):  # GPT-2 drops the header and the last line
        parts = line.split()
        if len(parts) != 2:
            raise FormatError(f"{where}, line {n}: expected two tokens, got {line!r}")
        merges.append((parts[0], parts[1]))
    if not lines or not lines[0].startswith("#version"):
        raise FormatError(f"{where}: vocab.bpe starts with a '#version' line")
    return merges


def _pipeline(encoder: dict[str, int], merges: list[tuple[str, str]]) -> Any:
    from bpekit.formats.hf import from_document
    from bpekit.pipeline.byte_level import to_bytes

    made = {a + b for a, b in merges}
    specials = [
        (t, i)
        for t, i in encoder.items()
        if t not in made and (len(t) != 1 or to_bytes(t) is None)
    ]
    byte_level = {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": True,
        "use_regex": True,
    }
    doc = {
        "version": "1.0",
        "added_tokens": [
            {
                "id": i,
                "content": t,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for t, i in sorted(specials, key=lambda x: x[1])
        ],
        "normalizer": None,
        "pre_tokenizer": byte_level,
        "post_processor": None,
        "decoder": byte_level,
        "model": {"type": "BPE", "vocab": encoder, "merges": [list(m) for m in merges]},
    }
    return from_document(doc, "GPT-2 encoder.json + vocab.bpe")


def files(tok: Any) -> tuple[bytes, bytes]:
    """``(encoder.json, vocab.bpe)`` bytes of a tokenizer; FormatError if the pair cannot hold it."""
    from bpekit.formats.hf import document

    if getattr(tok, "encoding", None) is not None:
        from bpekit.formats.recover import recover_merges
        from bpekit.pipeline.byte_level import to_chars

        vocab = {to_chars(t): i for t, i in tok.ranks.items()}
        merges = [(to_chars(a), to_chars(b)) for a, b in recover_merges(tok.ranks)]
        specials = dict(tok.special_tokens)
    else:
        from bpekit.formats.tiktoken_file import ranks_of_document

        doc = document(tok)
        if (doc["model"].get("ignore_merges")) or doc.get("pre_tokenizer", {}).get(
            "type"
        ) != "ByteLevel":
            raise FormatError(
                "GPT-2's file pair holds ByteLevel BPE with GPT-2's regex and no ignore_merges"
            )
        ranks_of_document(
            doc
        )  # the same other checks (no normalizer, only special added tokens, ...)
        vocab = dict(doc["model"]["vocab"])
        merges = [
            tuple(m) if isinstance(m, list) else tuple(m.split(" ", 1))
            for m in doc["model"]["merges"]
        ]
        specials = {t["content"]: t["id"] for t in doc.get("added_tokens") or []}
    clash = [t for t in specials if t in vocab and vocab[t] != specials[t]]
    if clash:
        raise FormatError(
            f"the special token {clash[0]!r} spells an ordinary token; encoder.json cannot hold both"
        )
    vocab.update(specials)
    encoder = dict(sorted(vocab.items(), key=lambda x: x[1]))
    if any(" " in a or " " in b for a, b in merges):
        raise FormatError(
            "vocab.bpe separates the two tokens of a merge with a space; a token here contains one"
        )
    bpe = "\n".join([HEADER, *(f"{a} {b}" for a, b in merges)]) + "\n"
    return json.dumps(encoder).encode(), bpe.encode("utf-8")


def save(tok: Any, path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Writes ``encoder.json`` and ``vocab.bpe`` (into the directory ``path``, or beside it when
    it names one of the files), atomically; returns their paths."""
    p = Path(path)
    if p.suffix not in (".json", ".bpe"):
        p.mkdir(parents=True, exist_ok=True)
    enc_path, bpe_path = pair_paths(p)
    encoder, bpe = files(tok)
    atomic_write_all([(enc_path, encoder), (bpe_path, bpe)])
    return enc_path, bpe_path
