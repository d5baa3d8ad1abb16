"""Finding, verifying and parsing rank files (`.tiktoken`, GPT-2's `encoder.json` + `vocab.bpe`).

A named encoding's files are looked up, in order, in ``$BPEKIT_DATA_DIR``, then in the user cache
(``$BPEKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/bpekit``, else ``~/.cache/bpekit``), then downloaded
over HTTPS from their canonical location (unless ``BPEKIT_OFFLINE=1``). Every file is checked
against its published sha256; downloads are written to the cache atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from bpekit import _core
from bpekit.atomicfile import atomic_write
from bpekit.errors import ChecksumError, DataNotFoundError, FormatError, InputTypeError

_DOWNLOAD_TIMEOUT_S = 60


def cache_dir() -> Path:
    """The user cache directory for downloaded rank files."""
    if d := os.environ.get("BPEKIT_CACHE_DIR"):
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "bpekit"


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _download(url: str) -> bytes:
    if not url.startswith("https://"):
        raise DataNotFoundError(f"refusing to download {url!r}: only https:// URLs are fetched")
    # imported here: urllib.request pulls in http.client, email and ssl, which cost a fresh
    # process more than parsing o200k_base's rank file does, and a local load never needs them
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT_S) as r:
            return bytes(r.read())
    except OSError as e:
        raise DataNotFoundError(f"could not download {url}: {e}") from e


def fetch(filename: str, url: str, sha256: str | None) -> bytes:
    """The bytes of a named data file, from the data dir, the cache, or the network, verified."""
    tried: list[str] = []
    if data_dir := os.environ.get("BPEKIT_DATA_DIR"):
        p = Path(data_dir) / filename
        tried.append(str(p))
        if p.is_file():
            data = p.read_bytes()
            if sha256 and sha256_hex(data) != sha256:
                raise ChecksumError(
                    f"{p} does not have the expected sha256 {sha256} (got {sha256_hex(data)}); "
                    "it is not the canonical file"
                )
            return data
    cached = cache_dir() / filename
    tried.append(str(cached))
    if cached.is_file():
        data = cached.read_bytes()
        if not sha256 or sha256_hex(data) == sha256:
            return data
        cached.unlink(missing_ok=True)  # corrupt or stale: fetch again
    if os.environ.get("BPEKIT_OFFLINE", "") not in ("", "0"):
        raise DataNotFoundError(_not_found(filename, url, tried, "BPEKIT_OFFLINE is set"))
    try:
        data = _download(url)
    except DataNotFoundError as e:
        raise DataNotFoundError(_not_found(filename, url, tried, str(e))) from e
    if sha256 and sha256_hex(data) != sha256:
        raise ChecksumError(f"Hash mismatch for data downloaded from {url} (expected {sha256})")
    try:
        atomic_write(cached, data)
    except OSError:
        pass  # a read-only cache is not fatal
    return data


def _not_found(filename: str, url: str, tried: list[str], why: str) -> str:
    places = "\n".join(f"  - {t}" for t in tried)
    return (
        f"{filename} was not found locally and could not be downloaded ({why}).\n"
        f"Looked in:\n{places}\n"
        f"Fix: download {url} and put it in a directory named by BPEKIT_DATA_DIR "
        f"(or in {cache_dir()})."
    )


def check_hash(data: bytes, expected_hash: str) -> bool:
    """Whether ``data`` has the sha256 ``expected_hash`` (hex), as ``tiktoken.load.check_hash``."""
    if not isinstance(expected_hash, str):
        raise InputTypeError(f"expected_hash is a sha256 in hex (str), got {type(expected_hash).__name__}")
    return sha256_hex(data) == expected_hash.lower()


def _path_or_url(blobpath: object) -> str:
    if not isinstance(blobpath, (str, os.PathLike)):
        raise InputTypeError(f"a path or an https URL (str), got {type(blobpath).__name__}")
    return os.fspath(blobpath)  # type: ignore[return-value]


def read_file(blobpath: str | os.PathLike[str]) -> bytes:
    """The bytes of a local file or an https URL (``tiktoken.load.read_file``; http is refused)."""
    s = _path_or_url(blobpath)
    if s.startswith(("http://", "https://")):
        return _download(s)
    try:
        return Path(s).read_bytes()
    except OSError as e:
        raise DataNotFoundError(f"cannot read {s}: {e.strerror or e}") from e


def read_file_cached(blobpath: str | os.PathLike[str], expected_hash: str | None = None) -> bytes:
    """``read_file``, checked against ``expected_hash`` (sha256 hex) if given; a URL's download is
    kept in the cache (:func:`cache_dir`, ``urls/<sha1 of the URL>``, written atomically) and read
    from there next time, as ``tiktoken.load.read_file_cached`` does (a cached copy with the wrong
    hash is fetched again). ``BPEKIT_OFFLINE=1`` refuses a download."""
    s = _path_or_url(blobpath)
    if expected_hash is not None:
        check_hash(b"", expected_hash)  # (its type, before any download)
    if not s.startswith(("http://", "https://")):
        data = read_file(s)
        if expected_hash and not check_hash(data, expected_hash):
            raise ChecksumError(f"{s} does not have the expected sha256 {expected_hash}")
        return data
    cached = cache_dir() / "urls" / hashlib.sha1(s.encode()).hexdigest()
    if cached.is_file():
        data = cached.read_bytes()
        if expected_hash is None or check_hash(data, expected_hash):
            return data
        cached.unlink(missing_ok=True)  # corrupt or stale: fetch again
    if os.environ.get("BPEKIT_OFFLINE", "") not in ("", "0"):
        raise DataNotFoundError(f"{s} is not in the cache ({cached}) and BPEKIT_OFFLINE is set")
    data = _download(s)
    if expected_hash and not check_hash(data, expected_hash):
        raise ChecksumError(f"Hash mismatch for data downloaded from {s} (expected {expected_hash})")
    try:
        atomic_write(cached, data)
    except OSError:
        pass  # a read-only cache is not fatal
    return data


def load_tiktoken_bpe(path_or_url: str | os.PathLike[str], expected_hash: str | None = None) -> dict[bytes, int]:
    """Reads a ``.tiktoken`` rank file (path or https URL, downloads cached) as ``{token bytes: rank}``."""
    data = read_file_cached(path_or_url, expected_hash)
    return _core.parse_tiktoken_ranks(data, os.fspath(path_or_url))


def dump_tiktoken_bpe(bpe_ranks: dict[bytes, int], tiktoken_bpe_file: str | os.PathLike[str]) -> None:
    """Writes ranks as a ``.tiktoken`` file (sorted by rank, LF endings), atomically."""
    import base64

    lines = []
    for token, rank in sorted(bpe_ranks.items(), key=lambda x: x[1]):
        if not isinstance(token, bytes) or not isinstance(rank, int) or rank < 0:
            raise FormatError(f"cannot write rank entry {token!r}: {rank!r} (need bytes -> int >= 0)")
        lines.append(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")
    atomic_write(tiktoken_bpe_file, b"".join(lines))


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's printable alphabet: byte -> one character (formats.md §2.1)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs), strict=True))


def data_gym_to_mergeable_bpe_ranks(vocab_bpe: bytes, encoder_json: bytes) -> dict[bytes, int]:
    """GPT-2's ``vocab.bpe`` + ``encoder.json`` as ranks (256 single bytes, then one per merge)."""
    byte_decoder = {c: b for b, c in bytes_to_unicode().items()}
    rank_to_intbyte = list(byte_decoder.values())
    ranks = {bytes([b]): i for i, b in enumerate(rank_to_intbyte)}

    def decode(s: str) -> bytes:
        try:
            return bytes(byte_decoder[c] for c in s)
        except KeyError as e:
            raise FormatError(f"vocab.bpe token {s!r} has a character outside GPT-2's byte alphabet") from e

    try:
        lines = vocab_bpe.decode("utf-8").split("\n")
    except UnicodeDecodeError as e:
        raise FormatError(f"vocab.bpe is not UTF-8: {e}") from e
    if not lines or not lines[0].startswith("#version"):
        raise FormatError("vocab.bpe must start with a '#version' line")
    n = len(ranks)
    for i, line in enumerate(lines[1:-1], start=2):
        parts = line.split()
        if len(parts) != 2:
            raise FormatError(f"vocab.bpe line {i}: expected two tokens, got {line!r}")
        ranks[decode(parts[0]) + decode(parts[1])] = n
        n += 1
    try:
        encoder = json.loads(encoder_json)
    except (ValueError, RecursionError) as e:
        raise FormatError(f"encoder.json is not valid JSON: {e}") from e
    if not isinstance(encoder, dict):
        raise FormatError("encoder.json must be a JSON object of token -> id")
    encoder_ranks = {decode(k): v for k, v in encoder.items() if k not in ("<|endoftext|>", "<|startoftext|>")}
    if encoder_ranks != ranks:
        raise FormatError("encoder.json and vocab.bpe disagree (the merges do not produce the encoder's ids)")
    return ranks
