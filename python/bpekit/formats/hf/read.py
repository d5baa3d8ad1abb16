"""Reading ``tokenizer.json``: size and depth limits, typed checks of every key, added-token ids
checked against the ids Hugging Face would give them (formats.md §3.3)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from bpekit.errors import FormatError, VocabError
from bpekit.pipeline import decoders, normalizers, pre_tokenizers, processors
from bpekit.pipeline.added_tokens import AddedToken
from bpekit.pipeline.models import BPE

DEFAULT_MAX_BYTES = 1 << 30
# a JSON escape of a UTF-16 surrogate (paired ones are fine; a lone one is no text)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def load(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES, seed: int | None = None) -> Any:
    """A ``Tokenizer`` from a ``tokenizer.json`` file."""
    name = os.fspath(path)
    size = os.path.getsize(name)
    if size > max_bytes:
        raise FormatError(f"{name} is {size} bytes, over the limit of {max_bytes} (pass max_bytes= to raise it)")
    with open(name, "rb") as f:
        raw = f.read()
    return loads(raw, name, max_bytes=max_bytes, seed=seed)


def loads(raw: bytes, name: str = "tokenizer.json", *, max_bytes: int = DEFAULT_MAX_BYTES,
          seed: int | None = None) -> Any:
    """A ``Tokenizer`` from the bytes of a ``tokenizer.json`` (``name`` names it in errors)."""
    if len(raw) > max_bytes:
        raise FormatError(f"{name} is {len(raw)} bytes, over the limit of {max_bytes} (pass max_bytes= to raise it)")
    try:
        # strict decoding: json.loads(bytes) would let encoded surrogates through ("surrogatepass")
        doc = json.loads(raw.decode(json.detect_encoding(raw)))
    except (ValueError, RecursionError) as exc:
        raise FormatError(f"{name} is not valid JSON ({type(exc).__name__}: {str(exc)[:80]})") from None
    if _SURROGATE_ESCAPE.search(raw):
        check_no_lone_surrogates(doc, name)
    tok = from_document(doc, name, seed=seed)
    tok.source_format = "hf"
    tok.hf_layout = detect_layout(doc, raw)
    return tok


def check_no_lone_surrogates(doc: Any, where: str) -> None:
    """FormatError for a string holding a lone surrogate (``"\\ud800"``): no UTF-8 text has one,
    and Hugging Face (serde_json) refuses the file."""
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                raise FormatError(f"{where}: the string {node[:40]!r} holds a lone surrogate escape") from None


def detect_layout(doc: Any, raw: bytes) -> tuple[int | None, bool, bool]:
    """``(indent, ensure_ascii, trailing newline)`` of the file, read off its bytes: indented if
    its second byte is a newline, ASCII-only if no byte is >= 0x80 and a ``\\u`` escape occurs."""
    newline = raw.endswith(b"\n")
    indent = 2 if raw[1:2] == b"\n" else None
    ascii_only = raw.isascii() and b"\\u" in raw
    return indent, ascii_only, newline


def from_document(doc: Any, where: str = "tokenizer.json", *, seed: int | None = None) -> Any:
    """A ``Tokenizer`` from a parsed ``tokenizer.json`` document."""
    from bpekit.tokenizer import Tokenizer

    if not isinstance(doc, Mapping):
        raise FormatError(f"{where}: a tokenizer.json holds a JSON object, not {type(doc).__name__}")
    if doc.get("version", "1.0") != "1.0":
        raise FormatError(f"{where}: unknown tokenizer version {doc.get('version')!r} (expected '1.0')")
    if not isinstance(doc.get("model"), Mapping):
        raise FormatError(f"{where}: missing or invalid 'model'")
    for key in ("truncation", "padding"):
        if doc.get(key) is not None:
            raise FormatError(f"{where}: {key} is set; bpekit encodes without truncation or padding")
    model = BPE.from_json(doc["model"], f"{where}: model", seed=seed)
    normalizer = normalizers.from_json(doc.get("normalizer"), f"{where}: normalizer")
    items = doc.get("added_tokens", [])
    if not isinstance(items, list):
        raise FormatError(f"{where}: added_tokens must be a list")
    added = [AddedToken.from_json(t, f"{where}: added_tokens[{i}]") for i, t in enumerate(items)]
    check_added_ids(added, model, where)
    tok = Tokenizer(
        model,
        normalizer=normalizer,
        pre_tokenizer=pre_tokenizers.from_json(doc.get("pre_tokenizer"), f"{where}: pre_tokenizer"),
        post_processor=processors.from_json(doc.get("post_processor"), f"{where}: post_processor"),
        decoder=decoders.from_json(doc.get("decoder"), f"{where}: decoder"),
        added_tokens=added,
    )
    tok.source_document = doc
    return tok


def check_added_ids(added: list[AddedToken], model: BPE, where: str) -> None:
    """Raises ``VocabError`` where Hugging Face would give an added token another id than the file."""
    size = model.get_vocab_size()
    assigned: dict[str, int] = {}
    for t in added:
        if not t.content or t.content in assigned:
            continue
        expected = model.token_to_id(t.content)
        if expected is None:
            top = max(assigned.values(), default=None)
            expected = size if top is None else (top + 1 if top >= size or size == 0 else size)
        if expected != t.id:
            raise VocabError(
                f"{where}: added token {t.content!r} has id {t.id} but Hugging Face would load it as {expected}"
            )
        assigned[t.content] = t.id


def part_json(tok: Any, key: str) -> Any:
    """The JSON of one top-level part of a pipeline ``Tokenizer``."""
    if key == "added_tokens":
        return [t.to_json() for t in tok.added_tokens.tokens]
    stage = getattr(tok, key)
    return None if stage is None else stage.to_json()


def source_part_json(doc: Mapping[str, Any], key: str) -> Any:
    """``part_json`` of the part as the source document has it (read again, so compared alike)."""
    value = doc.get(key)
    if key == "added_tokens":
        return sorted((AddedToken.from_json(t, key).to_json() for t in value or []), key=lambda t: t["id"])
    if value is None:
        return None
    if key == "model":
        return _model_json(value)
    reader = {"normalizer": normalizers, "pre_tokenizer": pre_tokenizers, "post_processor": processors,
              "decoder": decoders}[key]
    return reader.from_json(value).to_json()


_MODEL_DEFAULTS = {"dropout": None, "unk_token": None, "continuing_subword_prefix": None, "end_of_word_suffix": None,
                   "fuse_unk": False, "byte_fallback": False, "ignore_merges": False}


def _model_json(value: Any) -> Any:
    """``BPE.from_json(value).to_json()``, without rebuilding the model when the source only
    lacks keys that have defaults (older files): merges and vocab compare as they are."""
    if isinstance(value, Mapping) and isinstance(value.get("merges"), list) and isinstance(value.get("vocab"), dict):
        merges = value["merges"]
        if not (merges and isinstance(merges[0], str) and merges[0].startswith("#version")):
            doc = {"type": "BPE", **_MODEL_DEFAULTS, **value}
            if isinstance(doc["dropout"], int) and not isinstance(doc["dropout"], bool):
                doc["dropout"] = float(doc["dropout"])
            doc["vocab"] = dict(sorted(value["vocab"].items(), key=lambda x: x[1]))
            return {k: doc[k] for k in ("type", *_MODEL_DEFAULTS, "vocab", "merges")}
    return BPE.from_json(value).to_json()
