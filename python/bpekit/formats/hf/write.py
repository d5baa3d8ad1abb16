"""Writing ``tokenizer.json``: Hugging Face's key order and layout (``json.dumps(indent=2,
ensure_ascii=False)``, no final newline), or the layout and the unchanged parts of the file the
tokenizer was loaded from."""

from __future__ import annotations

import json
from typing import Any

from bpekit.errors import UsageError
from bpekit.formats.hf.read import part_json, source_part_json
from bpekit.pipeline.models import BPE
from bpekit.tokenizer_export import hf_tokenizer_json


def document(tok: Any) -> dict[str, Any]:
    """The ``tokenizer.json`` document of a ``Tokenizer``."""
    if tok.encoding is not None:
        return hf_tokenizer_json(tok.ranks, tok.special_tokens, tok.pattern)
    if not isinstance(tok.model, BPE):
        raise UsageError(f"a tokenizer.json is written for BPE models, not {type(tok.model).__name__}")
    source = tok.source_document or {}
    doc: dict[str, Any] = {"version": "1.0", "truncation": None, "padding": None}
    for key in ("added_tokens", "normalizer", "pre_tokenizer", "post_processor", "decoder", "model"):
        now = part_json(tok, key)
        doc[key] = source[key] if key in source and source_part_json(source, key) == now else now
    if source:  # keep the source's key order (older files differ)
        order = [k for k in source if k in doc] + [k for k in doc if k not in source]
        doc = {k: doc[k] for k in order}
    return doc


def dumps(tok: Any) -> bytes:
    """The file's bytes."""
    indent, ascii_only, newline = tok.hf_layout or (2, False, False)
    seps = (",", ": ") if indent else (",", ":")
    text = json.dumps(document(tok), indent=indent, ensure_ascii=ascii_only, separators=seps)
    return (text + ("\n" if newline else "")).encode()


__all__ = ["document", "dumps"]
