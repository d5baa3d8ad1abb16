"""Token colouring: spans cut at token and character boundaries, ANSI and HTML output."""

from __future__ import annotations

import re

import pytest

from bpekit.errors import InputTypeError
from bpekit.viz import ansi, plain, spans, tokens_html
from bpekit.viz.colour import html_fragment

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def test_spans_by_hand(tiny):
    # "ababab" is a whole token (260); " abc": ab (256) first, then ab+c (259); " c" is 258
    got = spans(tiny, "ababab abc c<|end|>x")
    assert [s.text for s in got] == ["ababab", " ", "abc", " c", "<|end|>", "x"]
    assert [s.ids for s in got] == [(260,), (32,), (259,), (258,), (261,), (120,)]
    assert [s.special for s in got] == [False, False, False, False, True, False]


def test_character_split_over_tokens_is_one_span(tiny):
    got = spans(tiny, "é ab")  # é is two bytes, two byte tokens, no merge joins them
    assert got[0].text == "é" and got[0].ids == (0xC3, 0xA9) and got[0].data == "é".encode()


def test_spans_rebuild_text_and_ids(encoding):
    text = "Hello, 世界! 👍🏽 naïve\n\tcode = 42 <|endoftext|> end"
    got = spans(encoding, text)
    assert "".join(s.text for s in got) == text
    assert [i for s in got for i in s.ids] == encoding.encoding.encode(text, allowed_special="all")
    assert any(len(s.ids) > 1 for s in got)  # 👍🏽 and 世 take several cl100k tokens


def test_ansi(tiny):
    out = ansi(tiny, "abab\nc")
    assert ANSI_ESCAPE.sub("", out) == "abab\nc"
    assert out.endswith("\x1b[0m")
    assert out.count("\x1b[48;5;") >= 3
    # no coloured background runs over a line break
    assert all(part.endswith("\x1b[0m") for part in out.split("\n")[:-1])


def test_plain(tiny):
    assert plain(tiny, "ababab abc") == "ababab| |abc"


def test_html_escapes_and_shows_ids(tiny):
    frag = html_fragment(tiny, "<ab>&")
    assert "<ab>" not in frag and "&lt;" in frag and "&amp;" in frag
    assert 'data-ids="256"' in frag and "id 256" in frag
    page = tokens_html(tiny, "abab")
    assert page.startswith("<!DOCTYPE html>") and "1 tokens · 4 bytes · 4.00 bytes per token" in page
    assert "http" not in page  # nothing fetched at view time


def test_bad_text(tiny):
    with pytest.raises(InputTypeError, match="text must be a str"):
        spans(tiny, b"bytes")  # type: ignore[arg-type]


def test_bad_sep(tiny):
    with pytest.raises(InputTypeError, match="sep must be a str"):
        plain(tiny, "ab", sep=None)  # type: ignore[arg-type]
