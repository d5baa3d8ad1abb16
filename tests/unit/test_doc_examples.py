"""The Python examples of the README and the guides run as written, in a folder holding the files
they name (``corpus/``, ``shard-1/``, ``data/a.jsonl``), and every ``# [ids]`` comment they show
is what the line before it gives. (docs/api.md, the format guides, minbpe, UBPE and viz have
doctests of their own; the Ray example needs a Ray cluster and is left to tests/datasets.)"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from datapaths import DATA, ROOT

DOCS = ["README.md", "docs/training.md", "docs/reference.md", "docs/datasets.md"]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
SHOWN = re.compile(r"^(?P<code>[^#\n]*?\S)\s+# (?P<shown>\[[\d, ]*\])", re.M)  # a line ending "# [1, 2]"


def _blocks(doc: str) -> list[str]:
    """The doc's Python examples in order, but Ray's."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    return [m.group(1) for m in BLOCK.finditer(text) if "ray_" not in m.group(1)]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The files the examples name, filled with real text (tinyshakespeare, cut in parts)."""
    source = DATA / "corpora" / "tinyshakespeare.txt"
    if not source.is_file():
        pytest.skip(f"{source} not found (set BPEKIT_TEST_DATA)")
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)[:4000]
    parts = ["".join(lines[i : i + 1000]) for i in range(0, len(lines), 1000)]
    for folder in ("corpus", "shard-1", "shard-2", "data"):
        (tmp_path / folder).mkdir()
    for i, part in enumerate(parts):
        (tmp_path / "corpus" / f"part-{i}.txt").write_text(part, encoding="utf-8")
        (tmp_path / f"shard-{i % 2 + 1}" / f"part-{i}.txt").write_text(part, encoding="utf-8")
    with open(tmp_path / "data" / "a.jsonl", "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps({"text": line}) + "\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("doc", DOCS)
def test_examples_run_and_show_what_they_give(workdir: Path, doc: str) -> None:
    """Each doc's examples in one namespace, in order, as a reader runs them one after another."""
    blocks = _blocks(doc)
    assert blocks, f"{doc} has lost its Python examples"
    namespace: dict[str, object] = {"__name__": "example"}
    for k, code in enumerate(blocks):
        try:
            exec(compile(code, f"{doc} example {k + 1}", "exec"), namespace)  # noqa: S102
        except Exception as exc:
            pytest.fail(f"{doc}, Python example {k + 1} raised {type(exc).__name__}: {exc}\n{code}")
        for m in SHOWN.finditer(code):
            line, want = m.group("code").strip(), ast.literal_eval(m.group("shown"))
            expr = line.split("=", 1)[1] if re.match(r"^\w+\s*=[^=]", line) else line
            got = eval(expr, namespace)  # noqa: S307  (the doc's own line, run again)
            assert list(got) == want, f"{doc}: `{line}` gives {list(got)}, the comment says {want}"
