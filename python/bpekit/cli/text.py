"""``bpekit encode``, ``decode``, ``count`` and ``truncate``: text in, ids out (and back).

Documents come from positional arguments (one document each), ``--file`` (one document per file,
or per line with ``--lines``), or standard input when neither is given.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from bpekit.cli.common import decode, load_file, read_stdin, utf8_size, warn_invalid
from bpekit.errors import DisallowedSpecialError, FormatError, UsageError
from bpekit.train.sources import batched


def _encoding(name: str):  # noqa: ANN202
    """An encoding name, or a tokenizer file (whatever ``Tokenizer.from_file`` reads): a rank
    model's ``Encoding``, else the pipeline with the special-token switches below."""
    if Path(name).is_file():
        tok = load_file(name)
        return tok.encoding if tok.encoding is not None else _Pipeline(tok)
    from bpekit import get_encoding, list_encoding_names

    if Path(name).is_dir() and name not in list_encoding_names():
        raise FormatError(f"{name} is a directory, not an encoding name or a tokenizer file")
    return get_encoding(name)


class _Pipeline:
    """A ``tokenizer.json`` / GGUF / SentencePiece pipeline behind the commands' special-token
    switches, as an ``Encoding`` has them: by default text holding a special token's content is
    refused (tiktoken's policy); ``--allow-special`` matches it (the file's own rule, Hugging
    Face's ``encode``); ``--ordinary`` encodes it as text (other added tokens still matched)."""

    def __init__(self, tok) -> None:  # noqa: ANN001
        from bpekit import _core
        from bpekit.tokenizer import ordinary_pipeline

        self.tok, self.ordinary = tok, ordinary_pipeline(tok)
        self.specials = [t.content for t in tok.added_tokens.tokens if t.special]
        self.matcher = _core.LiteralMatcher(self.specials) if self.specials else None  # (one pass per text)

    def _for(self, text: str, allowed_special: object = (), disallowed_special: object = "all"):  # noqa: ANN202
        if allowed_special == "all":
            return self.tok
        if disallowed_special == ():
            return self.ordinary
        if self.matcher is not None:
            from bpekit.encoding import _valid_text, raise_disallowed_special_token

            found = _valid_text(self.matcher.find, text)  # (lone surrogates of a surrogateescape read fixed)
            if found:
                raise_disallowed_special_token(self.specials[found[0][2]])
        return self.tok

    def encode(self, text: str, **policy: object) -> list[int]:
        return self._for(text, **policy).encode(text)  # type: ignore[no-any-return]

    def encode_with_offsets(self, text: str, **policy: object) -> tuple[list[int], list[tuple[int, int]]]:
        return self._for(text, **policy).encode_with_offsets(text)  # type: ignore[no-any-return]

    def count(self, text: str, **policy: object) -> int:
        return self._for(text, **policy).count(text)  # type: ignore[no-any-return]

    def count_batch(self, texts: list[str], **policy: object) -> list[int]:
        chosen = self.tok
        for text in texts:  # (each text checked: the first that holds a refused token raises)
            chosen = self._for(text, **policy)
        return chosen.count_batch(texts)  # type: ignore[no-any-return]

    def truncate(self, text: str, max_tokens: int, *, side: str = "right", **policy: object) -> str:
        return self._for(text, **policy).truncate(text, max_tokens, side=side)  # type: ignore[no-any-return]

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids)  # type: ignore[no-any-return]


def _common(p: argparse.ArgumentParser, *, text_input: bool = True) -> None:
    p.add_argument("-e", "--encoding", default="o200k_base",
                   help="encoding name (default: o200k_base) or tokenizer file (bpekit, .tiktoken, tokenizer.json, GGUF, .model)")
    p.add_argument("--json", action="store_true", help="print one JSON object per document")
    if text_input:
        p.add_argument("-f", "--file", action="append", default=[], metavar="PATH", help="read a document from a file ('-' = stdin); repeatable")
        p.add_argument("--lines", action="store_true", help="treat every input line as a document")
        p.add_argument("--allow-special", action="store_true", help="encode special-token text as special tokens (default: refuse it)")
        p.add_argument("--ordinary", action="store_true", help="encode special-token text as ordinary text")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("encode", help="text -> token ids", description="Encode documents; prints one line of ids per document.")
    p.add_argument("text", nargs="*", help="documents to encode (default: stdin)")
    _common(p)
    p.add_argument("--offsets", action="store_true",
                   help="also give each id's span of the document, in characters (JSON: \"offsets\": [[start, end], ...]; "
                        "else one id:start:end per token)")
    p.set_defaults(run=run_encode)

    p = sub.add_parser("count", help="count tokens", description="Count the tokens of each document.")
    p.add_argument("text", nargs="*", help="documents to count (default: stdin)")
    _common(p)
    p.add_argument("--total", action="store_true", help="print only the total over all documents")
    p.set_defaults(run=run_count)

    p = sub.add_parser(
        "truncate", help="cut text to a token budget",
        description="Print the text of each document's first --max-tokens tokens (whole characters; it encodes to at "
                    "most that many tokens), encoding only that part of it; --side left keeps the end instead.",
    )
    p.add_argument("text", nargs="*", help="documents to cut (default: stdin)")
    p.add_argument("-n", "--max-tokens", type=int, required=True, metavar="N", help="the token budget of each document")
    p.add_argument("--side", choices=("right", "left"), default="right",
                   help="cut the end and keep the start (right, the default) or cut the start and keep the end (left)")
    _common(p)
    p.set_defaults(run=run_truncate)

    p = sub.add_parser("decode", help="token ids -> text", description="Decode ids (space/comma separated, or JSON arrays, one document per line).")
    p.add_argument("ids", nargs="*", help="ids of one document (default: -f files or stdin, one document per line)")
    _common(p, text_input=False)
    p.add_argument("-f", "--file", action="append", default=[], metavar="PATH",
                   help="read ids from a file, one document per line ('-' = stdin); repeatable")
    p.set_defaults(run=run_decode)


def _read(path: str) -> str:
    """A file's text, invalid UTF-8 bytes kept as lone surrogates (one per byte: the byte counts
    stay those of the file; encoding replaces each with U+FFFD)."""
    if path == "-":
        return read_stdin()
    if Path(path).is_dir():
        raise UsageError(f"{path} is a directory, not a text file")
    return decode(Path(path).read_bytes())  # (as it is: no newline translation)


def _documents(args: argparse.Namespace) -> Iterator[tuple[str, str]]:
    """(source label, text) per document; a warning for each source with invalid UTF-8."""
    sources: list[tuple[str, str]] = [(f"arg{i}", t) for i, t in enumerate(args.text)]
    sources += [(f, _read(f)) for f in args.file]
    if not sources:
        sources = [("<stdin>", read_stdin())]
    for label, text in sources:
        warn_invalid(getattr(args, "command", None), "<stdin>" if label == "-" else label, text)
        if args.lines:
            for n, line in enumerate(text.splitlines(), start=1):
                yield f"{label}:{n}", line
        else:
            yield label, text


def _policy(args: argparse.Namespace) -> dict[str, object]:
    """The special-token policy of ``--allow-special`` / ``--ordinary`` (default: refuse)."""
    if args.allow_special and args.ordinary:
        raise UsageError("--allow-special and --ordinary exclude each other")
    if args.allow_special:
        return {"allowed_special": "all"}
    if args.ordinary:
        return {"disallowed_special": ()}
    return {}


def _special_advice(run):  # noqa: ANN001, ANN202
    """The refusal of special-token text, with the command's switches as the way out."""

    @functools.wraps(run)
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return int(run(args))
        except DisallowedSpecialError as exc:
            if exc.token is None:
                raise
            raise DisallowedSpecialError(
                f"the text holds the disallowed special token {exc.token!r}: pass --allow-special to encode it "
                "as that special token, or --ordinary to encode it as ordinary text",
                exc.token,
            ) from None

    return wrapped


def _encode_one(enc, args: argparse.Namespace, text: str) -> list[int]:  # noqa: ANN001
    return enc.encode(text, **_policy(args))  # type: ignore[no-any-return]


@_special_advice
def run_encode(args: argparse.Namespace) -> int:
    enc = _encoding(args.encoding)
    for label, text in _documents(args):
        if args.offsets:
            ids, offsets = enc.encode_with_offsets(text, **_policy(args))
            if args.json:
                print(json.dumps({"source": label, "ids": ids, "count": len(ids), "offsets": offsets}))
            else:
                print(" ".join(f"{i}:{a}:{b}" for i, (a, b) in zip(ids, offsets)))
            continue
        ids = _encode_one(enc, args, text)
        if args.json:
            print(json.dumps({"source": label, "ids": ids, "count": len(ids)}))
        else:
            print(" ".join(map(str, ids)))
    return 0


# `bpekit count` counts its documents in batches of about this many bytes (`count_batch`: in
# parallel, no list per document), so a file of a million lines is not a million calls.
_COUNT_BATCH_BYTES = 1 << 22
_COUNT_BATCH_DOCS = 1 << 16


@_special_advice
def run_count(args: argparse.Namespace) -> int:
    enc = _encoding(args.encoding)
    total = 0
    policy = _policy(args)
    for batch in batched(_documents(args), _COUNT_BATCH_BYTES, _COUNT_BATCH_DOCS, size=lambda doc: len(doc[1])):
        counts = enc.count_batch([text for _, text in batch], **policy)  # (no list built)
        total += sum(counts)
        if args.total:
            continue
        for (label, text), n in zip(batch, counts):
            if args.json:
                print(json.dumps({"source": label, "count": n, "bytes": utf8_size(text)}))
            else:
                print(n)
    if args.total:
        print(json.dumps({"total": total}) if args.json else total)
    return 0


@_special_advice
def run_truncate(args: argparse.Namespace) -> int:
    if args.max_tokens < 0:
        raise UsageError(f"--max-tokens must be >= 0, got {args.max_tokens}")
    enc = _encoding(args.encoding)
    policy = _policy(args)
    for label, text in _documents(args):
        cut = enc.truncate(text, args.max_tokens, side=args.side, **policy)
        if args.json:
            print(json.dumps({"source": label, "text": cut, "count": enc.count(cut, **policy)}, ensure_ascii=False))
        elif args.lines:
            print(cut)
        else:
            sys.stdout.write(cut)
    return 0


def _parse_ids(line: str) -> list[int]:
    line = line.strip()
    if not line:
        return []
    if line.startswith("["):
        try:
            ids = json.loads(line)
        except json.JSONDecodeError as e:
            raise UsageError(f"not a JSON array of ids: {line[:40]!r}") from e
    else:
        ids = [tok for tok in re.split(r"[\s,]+", line) if tok]
        ids = [int(i) if re.fullmatch(r"[+-]?[0-9]+", i) else i for i in ids]
    if not isinstance(ids, list) or not all(type(i) is int for i in ids):  # (not 1.5, true, "7")
        raise UsageError(f"token ids must be integers: {line[:40]!r}")
    return ids


def run_decode(args: argparse.Namespace) -> int:
    enc = _encoding(args.encoding)
    if args.ids:
        docs = [" ".join(args.ids)]
    elif args.file:
        docs = [line for f in args.file for line in _read(f).splitlines()]
    else:
        docs = read_stdin().splitlines()
    for line in docs:
        text = enc.decode(_parse_ids(line))
        if args.json:
            print(json.dumps({"text": text}, ensure_ascii=False))
        else:
            sys.stdout.write(text + ("\n" if not text.endswith("\n") else ""))
    return 0
