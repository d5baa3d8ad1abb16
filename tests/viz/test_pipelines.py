"""Pipeline tokenizers (``tokenizer.json``, GGUF, SentencePiece ``.model``): drawn through their
``Tokenizer``, and a ``UsageError`` naming what is needed where byte-level ranks are."""

from __future__ import annotations

from pathlib import Path

import pytest

from bpekit import Tokenizer, viz
from bpekit.errors import BpekitError, UsageError
from bpekit.viz.models import Model, as_model, load_model

FILES = {
    "hf": "hf/gpt-neox-20b.tokenizer.json",
    "gguf": "gguf/ggml-vocab-qwen2.gguf",
    "spm": "spm/bpe_multi_bytefb_3000.model",
}
TEXT = "Hello wörld 日本 👍 <|endoftext|>\n  x\t y"


@pytest.fixture(scope="session", params=sorted(FILES))
def pipeline(request, data_dir) -> Model:  # noqa: ANN001
    path = data_dir / FILES[request.param]
    if not path.is_file():
        pytest.skip(f"{path} not in the shared data")
    return as_model(Tokenizer.from_file(path), request.param)


def test_spans_spell_the_tokens(pipeline):
    tok = pipeline.tokenizer
    got = viz.spans(tok, TEXT)
    assert [i for s in got for i in s.ids] == tok.encode(TEXT)
    text = "".join(s.text for s in got)
    if pipeline.label == "spm":  # SentencePiece spells its normalized text: a space before, runs of spaces as one
        assert text == " Hello wörld 日本 👍 <|endoftext|> x y"
        assert any(s.text == "👍" and len(s.ids) == 4 for s in got)  # byte-fallback pieces: one span
    else:  # byte-level: the text itself, the special token as one special span
        assert text == TEXT
        assert [s.text for s in got if s.special] == ["<|endoftext|>"]
    assert viz.plain(tok, "ab cd").replace("|", "").strip() == "ab cd"
    assert "\x1b[48;5;" in viz.ansi(tok, TEXT) and "data-ids=" in viz.tokens_html(tok, TEXT)


def test_measure_and_plots(pipeline):
    tok = pipeline.tokenizer
    (row,) = viz.measure(tok, {"x": "Hello world, hello wörld"})
    assert row.tokens == len(tok.encode("Hello world, hello wörld")) and row.bytes == 25
    (special,) = viz.measure([pipeline], {"x": "<|endoftext|>"})
    assert special.tokens > 1  # special-token strings are measured as text
    assert "Bytes per token" in viz.languages_svg(pipeline, {"en": "Hello world", "de": "Hallo Welt"})
    assert f"{pipeline.label} · 1: " in viz.lengths_svg([pipeline])
    assert 1000 < len(pipeline.vocab) <= tok.n_vocab and all(isinstance(t, bytes) for t in pipeline.vocab)


def test_what_needs_ranks_says_so(pipeline):
    with pytest.raises(UsageError, match="merge forest needs a rank-based tokenizer"):
        viz.forest_data(pipeline)
    with pytest.raises(UsageError, match="merge forest needs a rank-based tokenizer.*pipeline tokenizer"):
        viz.forest_html(pipeline.tokenizer)
    with pytest.raises(UsageError, match="not a trained tokenizer"):
        viz.training_svgs(pipeline, {"x": "ab"})


def test_no_bare_errors(pipeline, tmp_path):
    """Every public function on a pipeline: a result or a typed error, never AttributeError."""
    calls = {
        "spans": lambda m: viz.spans(m, TEXT), "plain": lambda m: viz.plain(m, TEXT),
        "ansi": lambda m: viz.ansi(m, TEXT), "tokens_html": lambda m: viz.tokens_html(m, TEXT),
        "forest_data": viz.forest_data, "forest_html": viz.forest_html,
        "measure": lambda m: viz.measure([m], {"x": TEXT}), "languages_svg": lambda m: viz.languages_svg([m], {"x": TEXT}),
        "lengths_svg": lambda m: viz.lengths_svg([m]), "training_svgs": lambda m: viz.training_svgs(m, {"x": TEXT}),
        "write_report": lambda m: viz.write_report(tmp_path / "r", [m], {"x": TEXT}),
    }
    for name, call in calls.items():
        for obj in (pipeline, pipeline.tokenizer):
            try:
                call(obj)
            except BpekitError:
                assert name in ("forest_data", "forest_html", "training_svgs"), name


def test_report_with_a_pipeline(pipeline, tiny, tmp_path):
    report = viz.write_report(tmp_path / "only", [pipeline], {"x": TEXT})
    assert sorted(p.name for p in report.parent.iterdir()) == [
        "bytes-per-token.svg", "report.html", "token-lengths.svg", "tokens.html"]
    html = report.read_text()
    assert "No merge forest" in html and "pipeline tokenizer" in html
    report = viz.write_report(tmp_path / "both", [pipeline, Model("tiny", tiny.encoding, tiny)], {"x": TEXT})
    assert (report.parent / "forest.html").is_file() and "Explore the merges of tiny" in report.read_text()


def test_load_model_reads_any_tokenizer_file(data_dir):
    path = data_dir / FILES["hf"]
    if not path.is_file():
        pytest.skip(f"{path} not in the shared data")
    m = load_model(path)
    assert m.label == Path(path).name and m.encoding is None and m.tokenizer is not None
    assert "pipeline tokenizer" in m.kind
