"""ubpe 0.3.0's JSON model format: ``dumps`` writes it byte for byte, ``loads`` reads and checks it.

Keys, in order: ``n_tokens``, ``alphabet`` (symbol -> id), ``known_words`` (id -> word),
``break_tokens``, ``regex_str``, ``stop_tokens``, ``mapper`` (id -> list of ids), ``weights``
(id -> float); optional keys without a value are left out. JSON object keys are strings, so
``loads`` converts alphabet keys with ``token_type`` (``int`` by default, ``str`` for text).
Break and stop tokens are written in the order given (ubpe writes Python set order).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from bpekit.errors import BpekitError, FormatError

if TYPE_CHECKING:
    from bpekit.ubpe.base import UBPEBase

_JSON_KEY_TYPES = (str, int, float, bool, type(None))


def dumps(model: UBPEBase) -> str:
    bad = next((s for s in model.alphabet if not isinstance(s, _JSON_KEY_TYPES)), None)
    if bad is not None:
        raise FormatError(
            f"alphabet symbols of type {type(bad).__name__} cannot be JSON object keys; "
            "the ubpe format holds only str or int symbols"
        )
    data: dict[str, Any] = {"n_tokens": model.n_tokens, "alphabet": model.alphabet}
    if model.known_words:
        data["known_words"] = model.known_words
    if model.break_tokens:
        data["break_tokens"] = list(model.break_tokens)
    if model.regex_str:
        data["regex_str"] = model.regex_str
    if model.stop_tokens:
        data["stop_tokens"] = list(model.stop_tokens)
    data["mapper"] = {token: list(tup) for token, tup in model.tokens_mapper["backward"].items()}
    data["weights"] = model.tokens_weights
    try:
        return json.dumps(data)
    except (TypeError, ValueError) as exc:
        raise FormatError(f"the model cannot be written as JSON: {exc}") from None


def loads(cls: type[UBPEBase], dump: str | bytes, token_type: Any) -> UBPEBase:
    try:
        data = json.loads(dump)
    except (TypeError, ValueError) as exc:
        raise FormatError(f"not a ubpe model: invalid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise FormatError("not a ubpe model: the JSON is not an object")
    missing = [k for k in ("n_tokens", "alphabet", "mapper", "weights") if k not in data]
    if missing:
        raise FormatError(f"not a ubpe model: missing {', '.join(missing)}")
    alphabet = _object(data, "alphabet")
    try:
        symbols = {token_type(key): value for key, value in alphabet.items()}
        words = _known_words(data.get("known_words"), token_type)
        breaks = _symbol_list(data, "break_tokens", token_type)
        stops = _symbol_list(data, "stop_tokens", token_type)
    except (TypeError, ValueError) as exc:
        raise FormatError(
            f"cannot convert the model's symbols with token_type={token_type!r}: {exc} "
            "(a model of str symbols needs token_type=str)"
        ) from None
    try:
        model = cls(
            alphabet=symbols,
            n_tokens=data["n_tokens"],
            known_words=words,
            break_tokens=breaks,
            regex_str=data.get("regex_str"),
            stop_tokens=stops,
        )
    except BpekitError as exc:
        raise FormatError(f"invalid ubpe model: {exc}") from exc
    backward, weights = _tokens(data, model)
    model.tokens_weights = weights
    model._set_mapper(backward)
    model._fitted = True
    return model


def _object(data: dict, key: str) -> dict:
    value = data[key]
    if not isinstance(value, dict):
        raise FormatError(f"invalid ubpe model: {key!r} must be an object")
    return value


def _known_words(raw: object, token_type: Any) -> dict[int, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise FormatError("invalid ubpe model: 'known_words' must be an object")
    words = {}
    for key, word in raw.items():
        if isinstance(word, str) and token_type is str:
            words[int(key)] = word
        elif isinstance(word, (str, list)):
            words[int(key)] = tuple(token_type(x) for x in word)
        else:
            raise FormatError(f"invalid ubpe model: known word {word!r} is not a str or list")
    return words


def _symbol_list(data: dict, key: str, token_type: Any) -> list | None:
    raw = data.get(key)
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise FormatError(f"invalid ubpe model: {key!r} must be a list")
    return [token_type(x) for x in raw]


def _tokens(data: dict, model: UBPEBase) -> tuple[dict[int, tuple[int, ...]], dict[int, float]]:
    mapper = _object(data, "mapper")
    raw_weights = _object(data, "weights")
    first = model.first_token_id
    for key, ids in mapper.items():
        if not isinstance(ids, list) or any(type(x) is not int for x in ids):
            raise FormatError(
                f"invalid ubpe model: mapper[{key!r}] must be a list of int ids, got {ids!r:.60}"
            )
    try:
        backward = {int(k): tuple(v) for k, v in mapper.items()}
        weights = {int(k): v for k, v in raw_weights.items()}
    except (TypeError, ValueError) as exc:
        raise FormatError(f"invalid ubpe model: mapper and weights need int ids ({exc})") from None
    if set(backward) != set(weights):
        raise FormatError("invalid ubpe model: 'mapper' and 'weights' have different ids")
    for token, w in weights.items():
        try:
            finite = not isinstance(w, bool) and math.isfinite(w)
        except (TypeError, OverflowError):  # not a number, or an int too large for a float
            finite = False
        if not finite:
            raise FormatError(
                f"invalid ubpe model: every weight must be a finite number, token {token} has {w!r:.60}"
            )
    low = [t for t in backward if t < first]
    if low:
        raise FormatError(
            f"invalid ubpe model: token id {low[0]} is below {first}, the first free id"
        )
    known = set(model.inverse_alphabet) | set(model.known_words or ()) | set(backward)
    for token, tup in backward.items():
        if model.classic and len(tup) != 2:
            raise FormatError(f"invalid ubpe model: classic token {token} must be a pair")
        alphabet_only = all(x in model.inverse_alphabet for x in tup)
        if not model.classic and (len(tup) < 2 or not alphabet_only):
            raise FormatError(
                f"invalid ubpe model: universal token {token} must expand to 2 or more alphabet ids"
            )
        if any(x not in known for x in tup):
            raise FormatError(f"invalid ubpe model: token {token} refers to an unknown id")
    if model.classic:
        _check_acyclic(backward)
    return backward, weights


def _check_acyclic(backward: dict[int, tuple[int, ...]]) -> None:
    """A classic token must not contain itself, directly or not (decoding would never end)."""
    done: set[int] = set()
    for root in backward:
        path: set[int] = set()
        stack = [(root, False)]
        while stack:
            token, leaving = stack.pop()
            if leaving:
                path.discard(token)
                done.add(token)
                continue
            if token in done or token not in backward:
                continue
            if token in path:
                raise FormatError(f"invalid ubpe model: token {token} contains itself")
            path.add(token)
            stack.append((token, True))
            stack.extend((child, False) for child in backward[token])
