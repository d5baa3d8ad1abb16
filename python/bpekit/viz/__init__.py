"""Pictures that explain a tokenizer, each a self-contained offline file (inline CSS, JS, SVG):

* token colouring of any text, for the terminal (:func:`ansi`) and HTML (:func:`tokens_html`);
* the interactive merge forest (:func:`forest_html`): search a token, see the merges that build it;
* SVG plots: bytes per token per language (:func:`languages_svg`), token lengths
  (:func:`lengths_svg`), the training curve (:func:`training_svgs`);
* :func:`write_report`, which puts them together in a folder.

Every function takes a tokenizer as an encoding name, a file path, an ``Encoding`` or a
``Tokenizer`` (where a list of them is expected, one is a list of one). Pipeline tokenizers
(``tokenizer.json``, GGUF, SentencePiece) are drawn too, except the merge forest and the training
curve, which need a byte-level rank model.
"""

from __future__ import annotations

from bpekit.viz.colour import ansi, plain, spans
from bpekit.viz.colour import html_page as tokens_html
from bpekit.viz.forest import forest_data
from bpekit.viz.forest import forest_page as forest_html
from bpekit.viz.measure import Measure, format_table, measure
from bpekit.viz.models import Model, as_model, load_model
from bpekit.viz.plots import bytes_per_token as bytes_per_token_svg
from bpekit.viz.plots import languages as languages_svg
from bpekit.viz.plots import length_histogram as lengths_svg
from bpekit.viz.plots import training_curves as training_svgs
from bpekit.viz.report import write_report
from bpekit.viz.samples import corpus_samples, stdlib_sample

__all__ = [
    "Measure",
    "Model",
    "ansi",
    "as_model",
    "bytes_per_token_svg",
    "corpus_samples",
    "forest_data",
    "forest_html",
    "format_table",
    "languages_svg",
    "lengths_svg",
    "load_model",
    "measure",
    "plain",
    "spans",
    "stdlib_sample",
    "tokens_html",
    "training_svgs",
    "write_report",
]
