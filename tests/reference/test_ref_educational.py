"""The step-by-step view: byte-exact against tiktoken's educational output (golden vectors)."""

from __future__ import annotations

import io
import json

import pytest

from bpekit.errors import UsageError
from bpekit.reference import encode_piece, visualise_tokens
from bpekit.reference.educational import train
from bpekit.reference.train import byte_ranks


def _educational(data_dir) -> dict:
    path = data_dir / "minbpe" / "vectors.json"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return json.loads(path.read_text(encoding="utf-8"))["tiktoken_educational"]


def test_colour_rule_by_hand() -> None:
    out = io.StringIO()
    # offsets 0, 2, 3: palette[0]=167, palette[2]=185, palette[3]=77; "é" is one character
    visualise_tokens([b"aa", b"\xc3\xa9", b"b"], out)
    assert out.getvalue() == "\x1b[48;5;167maa\x1b[48;5;185mé\x1b[48;5;77mb\x1b[0m\n"
    out = io.StringIO()
    # offsets 0 then 7: 7 % 7 repeats 167, so the second token takes palette[1] = 179
    visualise_tokens([b"1234567", b"x"], out)
    assert out.getvalue() == "\x1b[48;5;167m1234567\x1b[48;5;179mx\x1b[0m\n"


def test_visualise_vectors(data_dir) -> None:
    vis = _educational(data_dir)["visualise"]
    ranks = byte_ranks() | {t.encode(): r for t, r in vis["ranks_extra"].items()}
    for mode in ("colour", "simple"):
        out = io.StringIO()
        assert encode_piece(b"hello", ranks, mode, out) == vis["bpe_encode_hello_tokens"]
        assert out.getvalue() == vis[f"{mode}_stdout"]
    out = io.StringIO()
    # two tokens that are each an incomplete UTF-8 sequence: one U+FFFD each
    tokens = [b"a", b"bb", b"\xe2\x82", b"\xac", b"cc", b"d", b"e", b"f", b"g", b"h"]
    visualise_tokens(tokens, out)
    assert out.getvalue() == vis["visualise_tokens_partial_utf8_stdout"]


def test_training_output_simple(data_dir) -> None:
    case = _educational(data_dir)["train"][0]  # "aaabdaaabac"
    out = io.StringIO()
    train(
        [case["data"]],
        case["vocab_size"],
        case["pat_str"],
        visualise="simple",
        stream=out,
        min_frequency=1,
        tie="first_seen",
    )
    head = case["stdout_visualise_simple_head"]
    assert out.getvalue().split("\n")[: len(head)] == head


def test_training_output_colour_and_silence() -> None:
    out = io.StringIO()
    merges, _ = train(["aaabdaaabac"], 1000, r"\S+", visualise="colour", stream=out)
    lines = out.getvalue().split("\n")
    assert lines[:3] == [
        "The current most common pair is b'a' + b'a'",
        "So we made b'aa' our 257th token",
        "Now the first fifty words in our training data look like:",
    ]
    assert lines[3].startswith("\x1b[48;5;167maa\x1b[48;5;185ma\x1b[48;5;77mb")
    assert len(lines) == 6 * len(merges) + 1
    quiet = io.StringIO()
    assert train(["aaabdaaabac"], 1000, r"\S+", stream=quiet)[0] == merges
    assert quiet.getvalue() == ""


def test_unknown_mode() -> None:
    with pytest.raises(UsageError, match="visualise"):
        encode_piece(b"ab", byte_ranks(), "fancy", io.StringIO())
