"""Fixtures for the reference tests: tiktoken and ReferenceEncoding built from the local rank files.

tiktoken's registry would download; instead both encodings are built here from
``ranks/*.tiktoken`` (read in place) with the public patterns and special tokens of
formats.md section 1.3, so no test touches the network.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bpekit.reference import ReferenceEncoding

R50K_PAT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

ENCODINGS = {
    "r50k_base": (R50K_PAT, {"<|endoftext|>": 50256}),
    "cl100k_base": (
        CL100K_PAT,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": (O200K_PAT, {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
}

_cache: dict[str, tuple[object, ReferenceEncoding]] = {}


def load_pair(data_dir: Path, name: str) -> tuple[object, ReferenceEncoding]:
    """(tiktoken.Encoding, ReferenceEncoding) for one OpenAI encoding, built once per session."""
    if name not in _cache:
        tiktoken = pytest.importorskip("tiktoken")
        from tiktoken.load import load_tiktoken_bpe

        path = data_dir / "ranks" / f"{name}.tiktoken"
        if not path.is_file():
            pytest.skip(f"rank file {path} not found")
        pat, specials = ENCODINGS[name]
        ranks = load_tiktoken_bpe(str(path))
        theirs = tiktoken.Encoding(
            name, pat_str=pat, mergeable_ranks=ranks, special_tokens=specials
        )
        _cache[name] = (theirs, ReferenceEncoding(name, pat, ranks, specials))
    return _cache[name]


@pytest.fixture(scope="session")
def encoding_pairs(data_dir: Path):
    """A function: encoding name -> (tiktoken.Encoding, ReferenceEncoding)."""
    return lambda name: load_pair(data_dir, name)


@pytest.fixture(params=sorted(ENCODINGS))
def encoding_pair(
    request: pytest.FixtureRequest, data_dir: Path
) -> tuple[object, ReferenceEncoding]:
    return load_pair(data_dir, request.param)


@pytest.fixture
def cl100k_pair(data_dir: Path) -> tuple[object, ReferenceEncoding]:
    return load_pair(data_dir, "cl100k_base")
