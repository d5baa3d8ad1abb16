"""GPT4Tokenizer: the minbpe vectors, and token-for-token equality with tiktoken's cl100k_base.

Two encode paths are checked: minbpe's merge loop over shuffled bytes (the readable one,
``PatternTokenizer.encode_ordinary``) on a few hundred lines in many languages, and the Rust core
that ``GPT4Tokenizer.encode`` uses on whole files (and file prefixes for the large bible corpus).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import regex

from bpekit.errors import DisallowedSpecialError, InvalidTokenError
from bpekit.minbpe import GPT4_SPLIT_PATTERN, GPT4Tokenizer
from bpekit.minbpe.regex_tokenizer import PatternTokenizer

from minbpe.minbpe_data import VECTORS, corpus, corpus_files, needs_vectors, tiktoken_cl100k

GPT4 = VECTORS.get("minbpe", {}).get("gpt4", {})
CASES = GPT4.get("cases", [])
LINES_PER_FILE = 3
BIBLE_PREFIX = 100_000  # characters per bible file for the whole-text comparison


@pytest.fixture(scope="module")
def tok() -> GPT4Tokenizer:
    return GPT4Tokenizer()


def python_path(tok: GPT4Tokenizer, text: str) -> list[int]:
    """minbpe's own encode: the regex split, byte shuffle and merge loop, all in Python."""
    return PatternTokenizer.encode_ordinary(tok, text)


@needs_vectors
def test_byte_shuffle_and_merges(tok: GPT4Tokenizer) -> None:
    for key in ("byte_shuffle_first_16", "byte_shuffle_sample"):
        assert {str(b): r for b, r in tok.byte_shuffle.items() if str(b) in GPT4[key]} == GPT4[key]
    assert len(tok.merges) == GPT4["n_merges_recovered"]
    first = [[a, b, idx] for (a, b), idx in itertools.islice(tok.merges.items(), 10)]
    assert first == GPT4["recovered_merges_first_10"]


@needs_vectors
@pytest.mark.parametrize("case", CASES, ids=[repr(c["input"]) for c in CASES])
def test_gpt4_vector(tok: GPT4Tokenizer, case: dict[str, Any]) -> None:
    text = case["input"]
    assert tok.encode(text, allowed_special="all") == case["minbpe_all"]["ok"] == case["tiktoken_all"]
    assert tok.decode(case["tiktoken_all"]) == text
    if "ok" in case["minbpe_default"]:
        assert tok.encode(text) == case["minbpe_default"]["ok"]
        assert python_path(tok, text) == case["minbpe_default"]["ok"]
    else:  # minbpe: AssertionError
        with pytest.raises(DisallowedSpecialError, match="endoftext"):
            tok.encode(text)


@needs_vectors
def test_special_ids_decode(tok: GPT4Tokenizer) -> None:
    """minbpe raised KeyError('100257') here; special ids decode to their text."""
    assert GPT4["decode_special_id"]["error"] == "KeyError"
    assert tok.decode([100257, 15339, 100276]) == "<|endoftext|>hello<|endofprompt|>"
    with pytest.raises(InvalidTokenError, match="invalid token id: 100261"):
        tok.decode([100261])


def test_vocab_holds_real_bytes(tok: GPT4Tokenizer) -> None:
    enc = tiktoken_cl100k()
    assert all(tok.vocab[i] == enc.decode_single_token_bytes(i) for i in (0, 33, 220, 256, 15339, 100255))
    for (left, right), idx in itertools.islice(tok.merges.items(), 0, None, 997):
        assert tok.vocab[left] + tok.vocab[right] == tok.vocab[idx]


def _sample_lines() -> list[str]:
    """A few non-empty lines from every tatoeba and bible file, and from the two English texts."""
    lines: list[str] = []
    files = corpus_files("tatoeba") + corpus_files("bible")
    for path in files:
        with path.open(encoding="utf-8", errors="replace") as f:
            head = [line for line in itertools.islice(f, 200) if line.strip()]
        lines.extend(head[-LINES_PER_FILE:])
    return lines


def test_python_path_equals_tiktoken_on_lines(tok: GPT4Tokenizer) -> None:
    lines = _sample_lines()
    if len(lines) < 300:
        pytest.skip("corpora not found")
    enc = tiktoken_cl100k()
    for line in lines + [corpus("taylorswift.txt")[:20_000]]:
        expected = enc.encode(line, allowed_special="all")
        assert python_path(tok, line) == expected, line
        assert tok.encode(line, allowed_special="all") == expected, line
        assert tok.decode(expected) == line


def _whole_texts() -> list[tuple[str, int | None]]:
    """(path under corpora/, character limit): every file, the large bible ones cut to a prefix."""
    out: list[tuple[str, int | None]] = [("tinyshakespeare.txt", None), ("taylorswift.txt", None)]
    out += [(f"tatoeba/{p.name}", None) for p in corpus_files("tatoeba")]
    out += [(f"bible/{p.name}", BIBLE_PREFIX) for p in corpus_files("bible")]
    return out


WHOLE = _whole_texts()


@pytest.mark.parametrize(("name", "limit"), WHOLE, ids=[f"{n}[:{lim}]" if lim else n for n, lim in WHOLE])
def test_core_path_equals_tiktoken_on_files(tok: GPT4Tokenizer, name: str, limit: int | None) -> None:
    text = corpus(name)[:limit]
    assert tok.encode(text) == tiktoken_cl100k().encode_ordinary(text), name


def test_python_path_equals_core_on_a_file(tok: GPT4Tokenizer) -> None:
    text = corpus("taylorswift.txt")
    assert python_path(tok, text) == tok.encode(text)


def test_pattern_is_tiktokens(tok: GPT4Tokenizer) -> None:
    """minbpe's GPT4_SPLIT_PATTERN splits a trailing line break + spaces differently from tiktoken."""
    text = "end\n  "
    enc = tiktoken_cl100k()
    assert tok.pattern == enc._pat_str
    assert regex.findall(GPT4_SPLIT_PATTERN, text) != regex.findall(tok.pattern, text)
    assert tok.encode(text) == python_path(tok, text) == enc.encode_ordinary(text)


def test_gpt4_specials_and_registration(tok: GPT4Tokenizer) -> None:
    text = "a<|fim_prefix|>b<|endoftext|>"
    enc = tiktoken_cl100k()
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert tok.encode(text, allowed_special={"<|endoftext|>"}) == enc.encode(
        text, allowed_special={"<|endoftext|>"}, disallowed_special=()
    )
    assert tok.encode(text, allowed_special="none") == enc.encode_ordinary(text)
    with pytest.raises(DisallowedSpecialError, match="fim_prefix"):
        tok.encode(text)
    assert not hasattr(tok, "train") and not hasattr(tok, "save") and not hasattr(tok, "load")


def test_save_vocab(tok: GPT4Tokenizer, tmp_path: Path) -> None:
    tok.save_vocab(str(tmp_path / "cl100k.vocab"))
    lines = (tmp_path / "cl100k.vocab").read_text(encoding="utf-8").split("\n")
    assert lines[0] == "[!] 0"  # ids in order, shown with their real (un-shuffled) bytes
    assert lines[188] == "[\\u0000] 188"
    assert lines[256] == "[ ][ ] -> [  ] 256"
    assert lines[-2] == "[<|endofprompt|>] 100276"
