"""The pages in a real headless Chromium: they load with no console message, the merge forest
finds a token searched from the URL, and a screenshot of the report is not blank.

Skipped, with the reason shown, when no Chromium is installed (``apt-get install chromium``, or
``BPEKIT_CHROMIUM=/path/to/chrome``)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from urllib.parse import quote

import pytest

from bpekit.viz import forest_html, write_report
from bpekit.viz.models import Model

_spec = importlib.util.spec_from_file_location("viz_browser", Path(__file__).with_name("browser.py"))
assert _spec is not None and _spec.loader is not None
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)


@pytest.fixture(scope="module")
def chrome() -> str:
    exe = browser.find()
    if exe is None:
        pytest.skip("no Chromium found (apt-get install chromium, or set BPEKIT_CHROMIUM)")
    return exe


@pytest.fixture(scope="module")
def pages(tmp_path_factory, trained) -> Path:
    out = tmp_path_factory.mktemp("pages")
    (out / "forest.html").write_text(forest_html(trained), encoding="utf-8")
    model = Model("trained", trained.encoding, trained)
    write_report(out / "report", [model], {"code": "import os\n", "prose": "The cat sat."},
                 heldout={"held": "for x in y:\n    pass\n" * 50})
    return out


def _dom(chrome: str, url: str, profile: Path) -> tuple[str, list[str]]:
    return browser.run(chrome, url, profile, "--dump-dom")


def test_forest_search_from_url(chrome, pages, trained, tmp_path):
    token = max((t for t in trained.ranks if t.isascii() and t.strip().isalpha()), key=len)
    text = token.decode()
    dom, console = _dom(chrome, (pages / "forest.html").as_uri() + "#q=" + quote(text, safe=""), tmp_path)
    assert console == []
    root = re.search(r'id="tree" class="tree" data-root="(\d+)"', dom)
    assert root is not None and int(root.group(1)) == trained.ranks[token]
    assert f"found id {trained.ranks[token]}" in dom
    assert dom.count('class="box byte"') == len(token)  # the tree's leaves spell the token byte by byte


def test_forest_search_miss_spells_and_browses(chrome, pages, trained, tmp_path):
    query = "zq§no-such-token"
    dom, console = _dom(chrome, (pages / "forest.html").as_uri() + "#q=" + quote(query), tmp_path)
    assert console == []
    assert "no token is exactly" in dom and "data-root" not in dom
    spelled = re.search(r'<div class="chips" id="spelled">(.*?)</div>', dom)
    assert spelled is not None  # the query spelled with the merges, as BPE of one piece would
    expected = trained.encoding._encode_single_piece(query)
    assert [int(i) for i in re.findall(r'data-id="(\d+)"', spelled.group(1))] == expected
    assert len(expected) < len(query.encode())  # some merges applied
    assert dom.count('class="chip"') >= 300 - 256  # the browser lists tokens from id 256


def test_report_loads_and_is_not_blank(chrome, pages, tmp_path):
    shot = tmp_path / "report.png"
    _, console = browser.run(chrome, (pages / "report" / "report.html").as_uri(), tmp_path / "profile",
                             f"--screenshot={shot}", "--window-size=700,450")
    print(f"screenshot: {shot}")
    assert console == []
    assert browser.distinct_colours(shot) >= 20


def test_checks_catch_errors_and_blank_pages(chrome, tmp_path):
    page = tmp_path / "broken.html"
    page.write_text("<html><body><script>notDefined();</script></body></html>")
    shot = tmp_path / "blank.png"
    _, console = browser.run(chrome, page.as_uri(), tmp_path / "profile", f"--screenshot={shot}",
                             "--window-size=200,120")
    assert any("Uncaught ReferenceError" in m for m in console)
    assert browser.distinct_colours(shot) <= 2
