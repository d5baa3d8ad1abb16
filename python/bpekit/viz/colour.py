"""Token colouring of any text: each token on its own background, in the terminal (ANSI 256
colours, the palette of ``bpekit.reference.educational``) or in HTML (the id, bytes and length of
each token shown on hover).

A character that the tokenizer splits over several tokens (a byte-level BPE can cut inside a
UTF-8 sequence) is drawn once, as one span carrying all of their ids.
"""

from __future__ import annotations

from dataclasses import dataclass

from bpekit.errors import InputTypeError
from bpekit.reference.educational import PALETTE
from bpekit.viz.models import as_model
from bpekit.viz.page import esc, page


@dataclass(frozen=True)
class Span:
    """Text drawn in one colour: the ids of the tokens that spell it, and whether it is special."""

    text: str
    ids: tuple[int, ...]
    data: bytes
    special: bool = False


def spans(tokenizer: object, text: str) -> list[Span]:
    """``text`` cut where its tokens start and end, at character boundaries (special tokens are
    encoded as special tokens). A pipeline tokenizer's spans spell its tokens, so a normalizer's
    changes show (a SentencePiece model's leading space, NFKC)."""
    if not isinstance(text, str):
        raise InputTypeError(f"text must be a str, got {type(text).__name__}")
    model = as_model(tokenizer)
    specials = model.special_ids
    out: list[Span] = []
    pending: list[int] = []
    buf = b""
    for token_id in model.encode(text):
        data = model.token_bytes(token_id)
        pending.append(token_id)
        buf += data
        if token_id in specials:
            out.append(Span(buf.decode("utf-8", "replace"), tuple(pending), buf, special=True))
        elif _complete(buf):
            out.append(Span(buf.decode("utf-8"), tuple(pending), buf))
        else:
            continue
        pending, buf = [], b""
    if pending:
        out.append(Span(buf.decode("utf-8", "replace"), tuple(pending), buf))
    return out


def _complete(data: bytes) -> bool:
    """Whether ``data`` ends on a UTF-8 character boundary (and so decodes on its own)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def ansi(tokenizer: object, text: str) -> str:
    """``text`` with a 256-colour background per token, ready to print to a terminal."""
    parts = []
    for n, span in enumerate(spans(tokenizer, text)):
        colour = "48;5;236;38;5;231" if span.special else f"48;5;{PALETTE[n % len(PALETTE)]};38;5;16"
        # a newline inside a coloured span would paint to the end of the line: reset around it
        shown = span.text.replace("\n", "\x1b[0m\n\x1b[" + colour + "m")
        parts.append(f"\x1b[{colour}m{shown}")
    return "".join(parts) + "\x1b[0m"


def plain(tokenizer: object, text: str, sep: str = "|") -> str:
    """``text`` with ``sep`` between tokens (for pipes and files, where colours do not show)."""
    if not isinstance(sep, str):
        raise InputTypeError(f"sep must be a str, got {type(sep).__name__}")
    return sep.join(s.text for s in spans(tokenizer, text))


def html_fragment(tokenizer: object, text: str) -> str:
    """A ``<div class="tokens">`` of coloured spans; hover shows id(s), bytes and length."""
    return _html_spans(spans(tokenizer, text))


def _html_spans(cut: list[Span]) -> str:
    out = []
    for n, span in enumerate(cut):
        cls = "special" if span.special else f"c{n % 7}"
        ids = " ".join(map(str, span.ids))
        title = f"id {ids} · {span.data!r} · {len(span.data)} bytes"
        out.append(f'<span class="{cls}" data-ids="{ids}" title="{esc(title)}">{esc(span.text)}</span>')
    return '<div class="tokens">' + "".join(out) + "</div>"


def html_page(tokenizer: object, text: str, title: str | None = None) -> str:
    """A whole page: the coloured text and its counts."""
    model = as_model(tokenizer)
    cut = spans(model, text)
    n_tokens = sum(len(s.ids) for s in cut)
    n_bytes = len(text.encode("utf-8", "surrogatepass"))
    ratio = f"{n_bytes / n_tokens:.2f}" if n_tokens else "–"
    body = (
        f"<h1>{esc(title or model.label)}</h1>"
        f'<p class="note">{n_tokens:,} tokens · {n_bytes:,} bytes · {ratio} bytes per token · '
        "hover a token for its id</p>" + _html_spans(cut)
    )
    return page(title or f"{model.label}: tokens", body)
