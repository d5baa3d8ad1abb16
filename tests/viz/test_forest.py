"""The merge forest data (worked out by hand on the tiny tokenizer) and its page."""

from __future__ import annotations

import json
import re

import pytest

from bpekit import Tokenizer
from bpekit.errors import UsageError
from bpekit.viz import forest_data, forest_html
from bpekit.viz.forest import show
from bpekit.viz.models import Model


def test_forest_by_hand(tiny):
    d = forest_data(tiny)
    assert d["tok"][256:261] == ["ab", "abab", " c", "abc", "ababab"]
    # parents: 256 = a(97)+b(98), 257 = 256+256, 258 = " "(32)+c(99), 259 = 256+c, 260 = 257+256
    assert d["l"][256:261] == [97, 256, 32, 256, 257]
    assert d["r"][256:261] == [98, 256, 99, 99, 256]
    assert d["m"][256:261] == [0, 1, 2, 3, 4]
    assert d["c"][256:261] == [50, 20, 9, 7, 3]
    assert d["l"][97] == d["r"][97] == d["m"][97] == -1  # bytes are leaves
    assert d["n"][260] == 6 and d["n"][0xC3] == 1
    assert d["specials"] == {"<|end|>": 261}


def test_repeated_spelling_keeps_first_merge():
    # merge 2 spells "abc" again (ab+c, then a+bc): the token keeps merge 1's parents and count
    tok = Tokenizer(pattern=r"\S+", merges=[(b"a", b"b"), (b"ab", b"c"), (b"b", b"c"), (b"a", b"bc")],
                    training={"merge_counts": [9, 8, 7, 6]})
    d = forest_data(tok)
    abc = tok.ranks[b"abc"]
    assert (d["l"][abc], d["r"][abc], d["m"][abc], d["c"][abc]) == (tok.ranks[b"ab"], 99, 1, 8)


def test_counts_unknown_without_training_record(tiny):
    bare = Tokenizer(pattern=tiny.pattern, merges=tiny.merges)
    assert forest_data(bare)["c"] is None
    assert "pair counts at training time unknown" in forest_html(bare)
    wrong = Tokenizer(pattern=tiny.pattern, merges=tiny.merges, training={"merge_counts": [1, 2]})
    assert forest_data(wrong)["c"] is None  # not aligned with the merges: not used


def test_encoding_without_merge_list(tiny):
    ranks_only = Model("ranks only", tiny.encoding)  # an Encoding: ranks, no merge list
    try:
        import bpekit.formats.recover  # noqa: F401
    except ModuleNotFoundError:
        with pytest.raises(UsageError, match="no merge list"):
            forest_data(ranks_only)
    else:  # the merges recovered from the ranks are the ones the tokenizer was built from
        d = forest_data(ranks_only)
        assert (d["l"][256:261], d["r"][256:261], d["c"]) == ([97, 256, 32, 256, 257], [98, 256, 99, 99, 256], None)


def test_page_embeds_data_safely():
    tok = Tokenizer(pattern=r"[\s\S]+", merges=[(b"<", b"/"), (b"</", b"s"), (b"</s", b"c")])
    html = forest_html(tok)
    raw = re.search(r'<script type="application/json" id="forest-data">(.*?)</script>', html, re.S)
    assert raw is not None and "</" not in raw.group(1)
    assert json.loads(raw.group(1))["tok"][258] == "</sc"
    assert "<script src" not in html and "<link" not in html  # self-contained


def test_show_bytes():
    assert show(b"\xe4\xbd") == "\\xe4\\xbd" and show("日".encode()) == "日"
