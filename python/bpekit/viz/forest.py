"""The merge forest: for every token, the two tokens its merge joined (down to single bytes), the
merge's index and, when training recorded it, the pair's count at the time of the merge. Drawn as
one offline HTML page (``forest.js``, ``forest.css``) where any token can be searched (also from
the URL: ``#q=token`` or ``#id=123``) and the vocabulary browsed by length and by id.

Trained bpekit tokenizers carry their merges (and ``training["merge_counts"]`` when the trainer
recorded them). Encodings such as ``o200k_base`` carry only ranks; their merges are recovered by
``bpekit.formats.recover`` where that module is installed.
"""

from __future__ import annotations

import importlib
from importlib import resources
from typing import Any

from bpekit.errors import UsageError, VocabError
from bpekit.viz.models import Model, as_model
from bpekit.viz.page import esc, json_script, page

Pair = tuple[bytes, bytes]


def show(token: bytes) -> str:
    """Token bytes as text; bytes that are not UTF-8 as ``\\xNN``."""
    return token.decode("utf-8", errors="backslashreplace")


def merge_counts(model: Model) -> list[int] | None:
    """The count of each merge's pair at training time, when the tokenizer recorded it."""
    tok = model.tokenizer
    if tok is None or model.encoding is None:
        return None
    counts = tok.training.get("merge_counts")
    if isinstance(counts, list) and len(counts) == len(tok.merges) and all(isinstance(c, int) for c in counts):
        return counts
    return None


def merges_of(model: Model) -> list[Pair]:
    """The merges in learning order (recovered from the ranks for encodings)."""
    if model.tokenizer is not None:
        return model.tokenizer.merges
    try:
        recover = importlib.import_module("bpekit.formats.recover")
    except ModuleNotFoundError:
        raise UsageError(
            f"{model.label} has ranks but no merge list, and bpekit.formats.recover (which rebuilds "
            "merges from ranks) is not in this version; a merge forest needs a trained bpekit tokenizer"
        ) from None
    pairs = recover.recover_merges(model.ranks)
    if isinstance(pairs, dict):
        pairs = sorted(pairs.values(), key=lambda p: model.ranks[p[0] + p[1]])
    return [(bytes(a), bytes(b)) for a, b in pairs]


def forest_data(tokenizer: object) -> dict[str, Any]:
    """What the page draws: per id, the token text, its parents, merge index and count."""
    model = as_model(tokenizer)
    model.need_ranks("the merge forest")
    ranks = model.ranks
    n = max(ranks.values()) + 1
    tok: list[str | None] = [None] * n
    size = [0] * n
    for t, i in ranks.items():
        tok[i], size[i] = show(t), len(t)
    left, right, merge, count = [-1] * n, [-1] * n, [-1] * n, [-1] * n
    counts = merge_counts(model)
    for k, (a, b) in enumerate(merges_of(model)):
        made = ranks.get(a + b)
        if made is None or a not in ranks or b not in ranks:
            raise VocabError(f"merge {k} ({a!r}, {b!r}) does not match the vocabulary")
        if merge[made] >= 0:
            continue  # a later merge that spells the same bytes again: the first one made the token
        left[made], right[made], merge[made] = ranks[a], ranks[b], k
        if counts is not None:
            count[made] = counts[k]
    return {
        "label": model.label,
        "tok": tok,
        "n": size,
        "byte": [ranks.get(bytes([b]), -1) for b in range(256)],
        "l": left,
        "r": right,
        "m": merge,
        "c": count if counts is not None else None,
        "specials": {s: model.encoding.encode_single_token(s) for s in sorted(model.encoding.special_tokens_set)},
    }


def _asset(name: str) -> str:
    return resources.files("bpekit.viz").joinpath(name).read_text(encoding="utf-8")


def forest_page(tokenizer: object) -> str:
    """The whole interactive page."""
    data = forest_data(tokenizer)
    n_tokens = sum(t is not None for t in data["tok"])
    known = "pair counts at training time recorded" if data["c"] is not None else "pair counts at training time unknown"
    body = f"""<h1>Merge forest: {esc(data["label"])}</h1>
<p class="note">{n_tokens:,} tokens, {len(data["specials"])} special · {known} ·
search a token (or <code>id:123</code>); the URL <code>#q=token</code> searches too</p>
<form id="search"><input id="q" size="40" placeholder="token text, e.g.  the" autocomplete="off">
<button>find</button> <span id="status" class="muted"></span></form>
<div id="results"></div>
<div id="tree" class="tree"></div>
<div id="info"></div>
<h2>Browse the vocabulary</h2>
<p>by length <select id="len"></select> · by id from <input id="from" type="number" min="0" value="256" size="8">
<button id="prev" type="button">&larr;</button><button id="next" type="button">&rarr;</button></p>
<div id="browse" class="chips"></div>
{json_script("forest-data", data)}"""
    return page(f"Merge forest: {data['label']}", body, extra_css=_asset("forest.css"), script=_asset("forest.js"))
