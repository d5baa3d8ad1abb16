"""The Hugging Face ``tokenizer.json`` of cl100k_base / o200k_base, generated from the local rank
file with bpekit's exporter (transformers' TikTokenConverter construction; cl100k's possessive
``\\p{N}{1,3}+`` becomes ``{1,3}`` for Oniguruma, formats.md §1.3) and kept under
``bench-results/peers/`` (generating o200k takes a few seconds)."""

from __future__ import annotations

from pathlib import Path

from harness.local import WORK, rank_file


def path(name: str) -> Path:
    """The generated file for encoding ``name`` (made on first use, atomically)."""
    out = WORK / f"{name}.tokenizer.json"
    if out.is_file() and out.stat().st_mtime >= rank_file(name).stat().st_mtime:
        return out
    import bpekit
    from bpekit.atomicfile import atomic_write
    from bpekit.load import load_tiktoken_bpe
    from bpekit.tokenizer_export import hf_text

    enc = bpekit.get_encoding(name)
    atomic_write(out, hf_text(load_tiktoken_bpe(rank_file(name)), enc._special_tokens, enc._pat_str))
    return out
