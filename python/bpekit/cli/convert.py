"""``bpekit convert`` and ``bpekit inspect``: tokenizer files from one format to another, and a
summary of any tokenizer file.

``convert IN OUT --to FORMAT`` loads ``IN`` in whatever format it is (``Tokenizer.from_file``;
``--from`` forces one) and writes ``OUT``. A target that cannot hold the tokenizer (byte-level
BPE as SentencePiece, a normalizing pipeline as tiktoken...) is one clear error line and exit 1;
nothing is written. ``inspect FILE`` prints the format, sizes, pre-tokenizer, special tokens, the
longest tokens and a sample encoding (``--json`` for one JSON object).
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any

from bpekit.cli.common import check_output, load_file, refuse_overwrite, tokenizer_inputs, writing
from bpekit.errors import UsageError
from bpekit.formats.savers import TARGETS, model_kind, save

EXAMPLES = [
    "bpekit convert ggml-vocab-llama-bpe.gguf tokenizer.json --to hf",
    "bpekit convert tokenizer.model llama.gguf --to gguf",
    "bpekit inspect r50k_base.tiktoken --json",
]
SAMPLE = "Hello world! It's 2024: naïve café, 北京, 🦙."


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "convert",
        help="convert a tokenizer file to another format",
        description="Load a tokenizer file (format detected) and write it in another format.",
    )
    p.add_argument(
        "input",
        help="tokenizer file (tokenizer.json, .tiktoken, .model, .gguf, encoder.json, bpekit JSON)",
    )
    p.add_argument(
        "output",
        help="file to write (for gpt2: a folder, or the encoder.json/vocab.bpe path)",
    )
    p.add_argument("--to", required=True, choices=TARGETS, help="output format")
    p.add_argument(
        "--from", dest="source", default=None, help="input format (default: detected)"
    )
    p.add_argument(
        "--pattern",
        default=None,
        help="regex (or family name) for a .tiktoken rank file (its sidecar's, if any, replaced)",
    )
    p.set_defaults(run=run_convert)

    p = sub.add_parser(
        "inspect",
        help="summarise a tokenizer file",
        description="Describe a tokenizer file.",
    )
    p.add_argument("file", help="tokenizer file")
    p.add_argument(
        "--from", dest="source", default=None, help="input format (default: detected)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--top", type=int, default=5, help="how many longest tokens to list (default 5)"
    )
    p.set_defaults(run=run_inspect)


def _load(path: str, source: str | None, pattern: str | None = None, advice: str | None = None) -> Any:
    overrides: dict[str, Any] = {}
    if pattern is not None:
        overrides["pattern"] = pattern
    return load_file(path, advice, format=source, **overrides)


def _gpt2_pair(path: str) -> list[str]:
    from bpekit.formats.gpt2 import ENCODER, VOCAB, pair_paths

    p = Path(path)
    if p.suffix in (".json", ".bpe"):
        return [str(x) for x in pair_paths(p)]
    return [str(p / ENCODER), str(p / VOCAB)]


def _check(args: argparse.Namespace) -> None:
    """Before reading: --pattern only for a rank file, output paths that can be written and are
    not the input (nor its sidecar or partner file)."""
    if args.pattern is not None:
        if args.pattern == "":
            raise UsageError("--pattern is empty: give a pattern name (o200k, cl100k, gpt2, ...) or a regex")
        fmt = args.source
        if fmt is None and os.path.exists(args.input):
            from bpekit.formats.detect import detect

            fmt = detect(args.input).name
        if fmt not in (None, "tiktoken"):
            raise UsageError(f"--pattern applies to a .tiktoken rank file; {args.input} is a {fmt} file, "
                             "whose pre-tokenizer is its own")
    if args.to == "gpt2":
        outputs = _gpt2_pair(args.output)
        if Path(args.output).suffix not in (".json", ".bpe"):
            check_output(args.output, folder=True)
    else:
        outputs = [args.output, args.output + ".json"] if args.to == "tiktoken" else [args.output]
    for out in outputs:
        check_output(out)
    inputs = tokenizer_inputs([args.input])
    if os.path.isdir(args.input) or Path(args.input).name in ("encoder.json", "vocab.bpe") or args.source == "gpt2":
        inputs += _gpt2_pair(args.input)
    refuse_overwrite(outputs, inputs)


def run_convert(args: argparse.Namespace) -> int:
    _check(args)
    tok = _load(args.input, args.source, args.pattern,
                advice="give --pattern PATTERN (a name or a regex; the file then has no special tokens), "
                       "or keep the sidecar beside it")
    try:
        with writing(args.output):
            save(tok, args.output, args.to)
    except UsageError as exc:  # the saver's advice, as this command's option
        message = re.sub(r"format='(\w+)'", r"--to \1", str(exc))
        raise UsageError(re.sub(r"\(or '(\w+)'", r"(or --to \1", message)) from None
    print(
        f"{args.input} ({tok.source_format}) -> {args.output} ({args.to}), {tok.vocab_size:,} tokens"
    )
    return 0


def _token_bytes(tok: Any, tid: int) -> bytes:
    from bpekit.pipeline.byte_level import to_bytes
    from bpekit.pipeline.rank_model import SentencePieceStage

    t = tok.id_to_token(tid)
    if isinstance(t, bytes):
        return t
    if isinstance(getattr(tok, "model", None), SentencePieceStage):
        return t.replace("\u2581", " ").encode("utf-8")  # type: ignore[no-any-return]
    data = to_bytes(t)
    return data if data is not None else t.encode("utf-8")


def _specials(tok: Any) -> dict[str, int]:
    """Special tokens by id; for SentencePiece models, the CONTROL and UNKNOWN pieces."""
    from bpekit.pipeline.rank_model import SentencePieceStage

    found = dict(tok.special_tokens)
    if isinstance(getattr(tok, "model", None), SentencePieceStage):
        for i, p in enumerate(tok.model.spm.model.pieces):
            if p.type in (2, 3):  # UNKNOWN, CONTROL
                found.setdefault(p.piece, i)
    return dict(sorted(found.items(), key=lambda x: x[1]))


def summary(tok: Any, top: int = 5) -> dict[str, Any]:
    """What ``inspect`` prints, as a dict."""
    if top < 0:
        raise UsageError(f"--top must be >= 0, got {top}")
    special_ids = set(_specials(tok).values())
    ordinary = []
    for tid in range(tok.n_vocab):
        if tid in special_ids:
            continue
        try:
            ordinary.append((tid, _token_bytes(tok, tid)))
        except (KeyError, ValueError):
            continue  # a hole in the ids
    ordinary.sort(key=lambda x: (-len(x[1]), x[0]))
    info: dict[str, Any] = {
        "format": tok.source_format,
        "model": model_kind(tok),
        "vocab_size": tok.vocab_size,
        "n_vocab": tok.n_vocab,
        "pattern": getattr(tok, "pattern", None),
        "normalizer": tok.normalizer.to_json()
        if getattr(tok, "normalizer", None) is not None
        else None,
        "pre_tokenizer": tok.pre_tokenizer.to_json()
        if getattr(tok, "pre_tokenizer", None) is not None
        else None,
        "special_tokens": _specials(tok),
        "longest_tokens": [
            {"id": i, "bytes": len(b), "text": b.decode("utf-8", "replace")}
            for i, b in ordinary[:top]
        ],
    }
    vocab = getattr(tok, "gguf_vocab", None)
    if vocab is not None:
        info["gguf"] = {
            "model": vocab.model,
            "pre": vocab.pre,
            "special_ids": vocab.special_ids,
            "flags": vocab.flags,
        }
    ids = (
        tok.encode(SAMPLE, add_special_tokens=True)
        if tok.encoding is None
        else tok.encode_ordinary(SAMPLE)
    )
    info["sample"] = {"text": SAMPLE, "ids": ids, "decoded": tok.decode(ids)}
    return info


def run_inspect(args: argparse.Namespace) -> int:
    tok = _load(args.file, args.source)
    info = summary(tok, args.top)
    if args.json:
        print(json.dumps(info, ensure_ascii=False))
        return 0
    print(f"file:           {args.file}")
    print(f"format:         {info['format']}")
    print(f"model:          {info['model']}")
    print(f"vocab size:     {info['vocab_size']:,} (ids 0..{info['n_vocab'] - 1})")
    if info["pattern"]:
        print(f"pattern:        {info['pattern']}")
    elif info["pre_tokenizer"]:
        print(
            f"pre-tokenizer:  {json.dumps(info['pre_tokenizer'], ensure_ascii=False)[:300]}"
        )
    if info["normalizer"]:
        print(f"normalizer:     {json.dumps(info['normalizer'], ensure_ascii=False)}")
    if "gguf" in info:
        g = info["gguf"]
        print(
            f"gguf:           model={g['model']} pre={g['pre']} ids={g['special_ids']} flags={g['flags']}"
        )
    specials = list(info["special_tokens"].items())
    shown = ", ".join(f"{s!r}={i}" for s, i in specials[:8]) + (
        f", ... ({len(specials)} in all)" if len(specials) > 8 else ""
    )
    print(f"special tokens: {shown or 'none'}")
    for t in info["longest_tokens"]:
        print(f"longest:        {t['id']:>7}  {t['bytes']:>3} bytes  {t['text']!r}")
    print(f"sample:         {info['sample']['text']!r}")
    print(f"  ids:          {info['sample']['ids']}")
    return 0
