"""minbpe ``.model`` files as :class:`~bpekit.Tokenizer` objects (and ``.vocab`` listings beside).

A thin adapter over :mod:`bpekit.minbpe.model_file` (the reader and writer, with its checks:
header, counts, merges referring only to earlier ids, pairs merged twice). minbpe's ids are
bpekit's trained ids (byte ``b`` is id ``b``, merge ``k`` makes id ``256 + k``, formats.md §6), so
a ``.model`` file is exactly a bpekit byte-level BPE: the pattern line (empty for minbpe's
``BasicTokenizer``, which does not split text), the special tokens, the merges.

Saving needs a tokenizer of that shape; anything else (tiktoken's byte order, a pipeline with a
normalizer, merge ids out of order) raises :class:`~bpekit.errors.FormatError` saying why.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from bpekit.atomicfile import atomic_write_all
from bpekit.errors import FormatError
from bpekit.minbpe import model_file

# minbpe's BasicTokenizer does not split: one chunk per text (between special tokens).
WHOLE_TEXT = r"[\s\S]+"


def load(path: str | os.PathLike[str], **_: Any) -> Any:
    """The :class:`~bpekit.Tokenizer` of a minbpe ``.model`` file."""
    from bpekit.tokenizer import Tokenizer

    pattern, specials, merges = model_file.read_model(os.fspath(path))
    vocab = {i: bytes([i]) for i in range(256)}
    pairs = []
    for (left, right), idx in merges.items():
        vocab[idx] = vocab[left] + vocab[right]
        pairs.append((vocab[left], vocab[right]))
    if len(set(vocab.values())) != len(vocab):
        raise FormatError(
            f"{os.fspath(path)}: two merges make the same bytes; bpekit ids would not match minbpe's"
        )
    tok = Tokenizer(
        pattern=pattern or WHOLE_TEXT, merges=pairs, special_tokens=specials
    )
    tok.training = {"source": "minbpe", "basic": not pattern}
    return tok


def minbpe_parts(tok: Any) -> tuple[str, dict[str, int], dict[tuple[int, int], int]]:
    """``(pattern, special_tokens, merges)`` as minbpe stores them; FormatError if the tokenizer
    does not have minbpe's ids."""
    from bpekit.formats.tiktoken_file import rank_model

    tok = rank_model(tok)  # FormatError when the tokenizer is no byte-level rank BPE
    ranks: dict[bytes, int] = tok.ranks
    if any(ranks.get(bytes([b])) != b for b in range(256)):
        raise FormatError(
            "minbpe's .model fixes byte b to id b; this tokenizer numbers its byte tokens differently "
            "(e.g. tiktoken's GPT-2 byte order)"
        )
    merges: dict[tuple[int, int], int] = {}
    for k, (left, right) in enumerate(tok.merges):
        idx = ranks.get(left + right)
        if idx != 256 + k:
            raise FormatError(
                f"minbpe's .model gives merge {k} the id {256 + k}; this tokenizer gives it {idx}"
            )
        merges[ranks[left], ranks[right]] = idx
    if len(merges) != len(ranks) - 256:
        raise FormatError(
            "this tokenizer has tokens that no merge makes; minbpe's .model cannot hold them"
        )
    pattern = "" if tok.pattern == WHOLE_TEXT else tok.pattern
    return pattern, dict(tok.special_tokens), merges


def save(tok: Any, path: str | os.PathLike[str], *, vocab: bool = True) -> None:
    """Writes ``path`` (which must end in ``.model``) and, when ``vocab``, the ``.vocab`` listing
    beside it; both atomically."""
    target = Path(path)
    if target.suffix != ".model":
        raise FormatError(
            f"a minbpe model file name ends with '.model', got {str(target)!r}"
        )
    pattern, specials, merges = minbpe_parts(tok)
    with tempfile.TemporaryDirectory() as tmp:
        model_file.write_model(os.path.join(tmp, "t.model"), pattern, specials, merges)
        data = Path(tmp, "t.model").read_bytes()
        listing = None
        if vocab:
            table = {i: bytes([i]) for i in range(256)}
            for (left, right), idx in merges.items():
                table[idx] = table[left] + table[right]
            model_file.write_vocab(
                os.path.join(tmp, "t.vocab"), table, merges, specials
            )
            listing = Path(tmp, "t.vocab").read_bytes()
    pair = [(target, data)] + ([(target.with_suffix(".vocab"), listing)] if listing is not None else [])
    atomic_write_all(pair)
