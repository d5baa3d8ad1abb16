"""Resource limits: the per-call input size limit, the bounded pre-token cache, safe downloads.

``bpekit.set_limits(max_input_bytes=...)`` (or ``BPEKIT_MAX_INPUT_BYTES``) bounds the UTF-8 size
one call encodes; over it, an EncodeError names the limit and how to raise it. The pre-token
cache is bounded per thread and encoder; downloads are https only, checksummed and atomic
(their tests are in tests/unit/test_bad_input.py; the http refusal is added here).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

import bpekit
from bpekit import errors, limits, load


@pytest.fixture
def restore_limits() -> Iterator[None]:
    before = bpekit.get_limits()
    yield
    bpekit.set_limits(**before)


def test_default_is_one_gib(monkeypatch: pytest.MonkeyPatch, restore_limits: None) -> None:
    monkeypatch.delenv(limits.ENV_VAR, raising=False)
    monkeypatch.setattr(limits, "_max_input_bytes", None)
    assert bpekit.get_limits() == {"max_input_bytes": 1 << 30}


@pytest.mark.parametrize("call", [
    lambda e, t: e.encode(t),
    lambda e, t: e.encode_ordinary(t),
    lambda e, t: e.encode_to_numpy(t),
    lambda e, t: e.count(t),
    lambda e, t: e.encode_with_unstable(t),
    lambda e, t: e.encode_batch([t]),
    lambda e, t: e.encode_ordinary_batch(["", t]),
    lambda e, t: e._encode_bytes(t.encode()),
])  # fmt: skip
def test_over_the_limit_is_an_encode_error(call, restore_limits: None) -> None:  # noqa: ANN001
    enc = bpekit.get_encoding("cl100k_base")
    bpekit.set_limits(max_input_bytes=100)
    call(enc, "x" * 100)  # at the limit: fine
    with pytest.raises(errors.EncodeError) as info:
        call(enc, "x" * 101)
    message = str(info.value)
    assert "100 bytes" in message and "max_input_bytes" in message
    assert "bpekit.set_limits(max_input_bytes=" in message and limits.ENV_VAR in message
    assert isinstance(info.value, ValueError)


def test_limit_counts_utf8_bytes_not_characters(restore_limits: None) -> None:
    enc = bpekit.get_encoding("o200k_base")
    bpekit.set_limits(max_input_bytes=300)
    enc.encode("\u00e9" * 150)  # 300 bytes
    with pytest.raises(errors.EncodeError, match="302"):
        enc.encode("\u00e9" * 151)
    enc.encode("\U0001f600" * 75)  # 300 bytes in 75 characters
    with pytest.raises(errors.EncodeError):
        enc.encode("\U0001f600" * 76)
    enc.encode("\ud800" * 100)  # lone surrogates: 3 bytes each before the U+FFFD fix


def test_batch_limit_is_for_the_whole_call(restore_limits: None) -> None:
    enc = bpekit.get_encoding("cl100k_base")
    bpekit.set_limits(max_input_bytes=1000)
    enc.encode_batch(["y" * 500, "y" * 500])
    with pytest.raises(errors.EncodeError, match="1,000 bytes"):
        enc.encode_batch(["y" * 500, "y" * 501])


def test_zero_means_no_limit_and_bad_values_are_refused(restore_limits: None) -> None:
    bpekit.set_limits(max_input_bytes=0)
    assert bpekit.get_encoding("r50k_base").encode("z" * 5000)
    for bad in (-1, 1.5, "10", True):
        with pytest.raises(errors.UsageError, match="max_input_bytes"):
            bpekit.set_limits(max_input_bytes=bad)  # type: ignore[arg-type]


def test_environment_variable(monkeypatch: pytest.MonkeyPatch, restore_limits: None) -> None:
    monkeypatch.setattr(limits, "_max_input_bytes", None)
    monkeypatch.setenv(limits.ENV_VAR, "50")
    with pytest.raises(errors.EncodeError, match="50 bytes"):
        bpekit.get_encoding("cl100k_base").encode("w" * 51)
    monkeypatch.setattr(limits, "_max_input_bytes", None)
    monkeypatch.setenv(limits.ENV_VAR, "lots")
    with pytest.raises(errors.UsageError, match=limits.ENV_VAR):
        bpekit.get_encoding("cl100k_base").encode("w")


def test_tokenizer_goes_through_the_limit(restore_limits: None) -> None:
    tok = bpekit.Tokenizer(pattern=r"\S+", merges=[(b"a", b"b")])
    bpekit.set_limits(max_input_bytes=10)
    assert tok.encode("ab" * 5) == [256] * 5
    with pytest.raises(errors.EncodeError):
        tok.encode("ab" * 6)


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_pretoken_cache_is_bounded() -> None:
    """Distinct pieces that all need merging do not grow memory past the cache budget.

    Unbounded, the 3 x 60,000 distinct pieces below would keep about 11 MB of entries.
    """
    if not Path("/proc/self/status").is_file():
        pytest.skip("needs /proc/self/status")
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    enc = bpekit.Encoding("toy", pat_str=bpekit.patterns.CL100K, mergeable_ranks=ranks, special_tokens={})
    enc.pretoken_cache_bytes = 256 << 10
    words = " ".join("w" + "".join(chr(97 + i // 26**k % 26) for k in range(4)) for i in range(60_000))
    enc.encode_ordinary(words)
    gc.collect()
    before = _rss()
    for prefix in "xyz":
        enc.encode_ordinary(words.replace("w", prefix))
    grown = _rss() - before
    assert enc.pretoken_cache_bytes == 256 << 10
    assert grown < 6 << 20, f"RSS grew {grown:,} bytes over 3 passes of distinct pieces"


def test_downloads_are_https_only() -> None:
    for url in ("http://openaipublic.blob.core.windows.net/x.tiktoken", "file:///etc/passwd", "ftp://x/y"):
        with pytest.raises(errors.DataNotFoundError, match="https"):
            load._download(url)


def test_dropped_encoders_leave_no_caches_on_pool_threads() -> None:
    """Regression: each encoder built, used in a batch and dropped used to leave its pre-token
    cache (up to 4 MB) on every pool thread, forever (+4.5 MB per encoder, measured)."""
    if not Path("/proc/self/status").is_file():
        pytest.skip("needs /proc/self/status")
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    texts = [
        " ".join("w" + "".join(chr(97 + (i + 7 * j) // 26**k % 26) for k in range(4)) for i in range(20_000))
        for j in range(2)
    ]

    def use_one() -> None:
        enc = bpekit.Encoding("toy", pat_str=bpekit.patterns.CL100K, mergeable_ranks=ranks, special_tokens={})
        enc.pretoken_cache_bytes = 4 << 20  # the old default, so that a leak shows (8 x 2 x 4 MB)
        enc.encode_ordinary_batch(texts, num_threads=2)

    use_one()
    gc.collect()
    before = _rss()
    for _ in range(8):
        use_one()
        gc.collect()
    grown = _rss() - before
    assert grown < 12 << 20, f"RSS grew {grown:,} bytes over 8 dropped encoders"
