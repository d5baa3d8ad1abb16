"""Bad input gives a typed bpekit error that names what was wrong, never a crash or a wrong answer.

Covers malformed rank files, checksums, where data files are looked for (data dir, cache, a
download that is monkeypatched: no test touches the network), invalid patterns and vocabularies,
wrong argument types, impossible token ids, and ``dump_tiktoken_bpe``'s atomic write.
"""

from __future__ import annotations

import hashlib

import pytest

import bpekit
from bpekit import errors, load, registry
from bpekit.reference import ReferenceEncoding
from datapaths import DATA
from peers import tiktoken_encoding

RANKS_DIR = DATA / "ranks"
R50K_FILE = RANKS_DIR / "r50k_base.tiktoken"
BYTES = {bytes([b]): b for b in range(256)}
needs_data = pytest.mark.skipif(not R50K_FILE.is_file(), reason=f"rank file {R50K_FILE} not found")


# ---------------------------------------------------------------------- rank files


@pytest.mark.parametrize(("content", "line", "why"), [
    (b"IQ== 0\n!!!! 1\n", 2, "base64"),
    (b"IQ== 0\nIg==\n", 2, "expected"),  # missing rank
    (b"IQ== 0 7\n", 1, "expected"),  # three fields
    (b"IQ== 0\nIg== one\n", 2, "integer"),
    (b"IQ== -1\n", 1, "integer"),
    (b"IQ== 4294967296\n", 1, "integer"),
    (b"IQ== 0\nIg== 1\nIw", 3, "expected"),  # truncated mid-line
    (b"IQ= 0\n", 1, "base64"),  # bad padding
    (b"IQ== 0\n= 1\n", 2, "base64"),
])  # fmt: skip
def test_malformed_rank_file_names_the_line(tmp_path, content: bytes, line: int, why: str) -> None:
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(content)
    with pytest.raises(errors.FormatError, match=rf"line {line}\b.*bad\.tiktoken.*{why}") as info:
        bpekit.load_tiktoken_bpe(path)
    assert isinstance(info.value, ValueError)


def test_rank_file_line_endings_and_duplicate_ranks(tmp_path) -> None:
    path = tmp_path / "crlf.tiktoken"
    path.write_bytes(b"IQ== 0\r\nIg== 1\r\n\r\n")
    assert bpekit.load_tiktoken_bpe(path) == {b"!": 0, b'"': 1}
    path.write_bytes(b"IQ== 0\nIg== 0\n")  # parses; the vocabulary is refused when built
    ranks = bpekit.load_tiktoken_bpe(path)
    with pytest.raises(errors.VocabError, match="rank 0"):
        bpekit.Encoding("dup", pat_str=r"\S+", mergeable_ranks=ranks, special_tokens={})


@needs_data
def test_expected_hash(tmp_path) -> None:
    sha = registry.RANK_FILES["r50k_base.tiktoken"][1]
    assert len(bpekit.load_tiktoken_bpe(R50K_FILE, expected_hash=sha)) == 50256
    with pytest.raises(errors.ChecksumError, match="sha256"):
        bpekit.load_tiktoken_bpe(R50K_FILE, expected_hash="0" * 64)
    with pytest.raises(errors.DataNotFoundError):
        bpekit.load_tiktoken_bpe(tmp_path / "absent.tiktoken")


# ---------------------------------------------------------------------- data-file lookup


@pytest.fixture
def isolated(monkeypatch, tmp_path):  # noqa: ANN201
    """A fresh registry, an empty data dir and cache, and a download that records its calls."""
    data_dir, cache = tmp_path / "data", tmp_path / "cache"
    data_dir.mkdir()
    cache.mkdir()
    monkeypatch.setattr(registry, "ENCODINGS", {})
    monkeypatch.setenv("BPEKIT_DATA_DIR", str(data_dir))
    monkeypatch.setenv("BPEKIT_CACHE_DIR", str(cache))
    monkeypatch.setenv("BPEKIT_OFFLINE", "1")
    calls: list[str] = []

    def no_network(url: str) -> bytes:
        calls.append(url)
        raise errors.DataNotFoundError(f"test: no network for {url}")

    monkeypatch.setattr(load, "_download", no_network)
    return data_dir, cache, calls


def test_offline_and_nothing_found(isolated) -> None:
    data_dir, cache, calls = isolated
    with pytest.raises(errors.DataNotFoundError) as info:
        bpekit.get_encoding("cl100k_base")
    msg = str(info.value)
    assert isinstance(info.value, FileNotFoundError) and calls == []
    for expected in ("cl100k_base.tiktoken", str(data_dir), str(cache), "BPEKIT_OFFLINE",
                     "BPEKIT_DATA_DIR", registry.RANK_FILES["cl100k_base.tiktoken"][0]):
        assert expected in msg, expected
    assert "cl100k_base" not in registry.ENCODINGS


@needs_data
def test_data_dir_with_a_wrong_file(isolated) -> None:
    data_dir, _, calls = isolated
    (data_dir / "r50k_base.tiktoken").write_bytes(b"IQ== 0\n")
    with pytest.raises(errors.ChecksumError, match="r50k_base.tiktoken"):
        bpekit.get_encoding("r50k_base")
    assert calls == []


@needs_data
def test_cached_file_with_right_sha_is_used(isolated, monkeypatch) -> None:
    _, cache, calls = isolated
    monkeypatch.delenv("BPEKIT_DATA_DIR")
    (cache / "r50k_base.tiktoken").write_bytes(R50K_FILE.read_bytes())
    assert bpekit.get_encoding("r50k_base").encode("hello world") == [31373, 995]
    assert calls == []


@needs_data
def test_corrupt_cache_is_refetched_atomically(isolated, monkeypatch) -> None:
    _, cache, _ = isolated
    monkeypatch.delenv("BPEKIT_DATA_DIR")
    monkeypatch.setenv("BPEKIT_OFFLINE", "0")
    cached = cache / "r50k_base.tiktoken"
    cached.write_bytes(b"IQ== 0\ngarbage")
    good = R50K_FILE.read_bytes()
    calls, renames = [], []
    monkeypatch.setattr(load, "_download", lambda url: calls.append(url) or good)
    real_replace = load.os.replace
    monkeypatch.setattr(load.os, "replace", lambda a, b: renames.append((a, b)) or real_replace(a, b))
    assert bpekit.get_encoding("r50k_base").encode("hello world") == [31373, 995]
    assert calls == [registry.RANK_FILES["r50k_base.tiktoken"][0]]
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == registry.RANK_FILES["r50k_base.tiktoken"][1]
    assert [str(b) for _, b in renames] == [str(cached)]  # written to a temp file, then renamed
    assert sorted(p.name for p in cache.iterdir()) == ["r50k_base.tiktoken"]  # no temp file left


@needs_data
def test_failed_cache_write_leaves_nothing(isolated, monkeypatch) -> None:
    _, cache, _ = isolated
    monkeypatch.delenv("BPEKIT_DATA_DIR")
    monkeypatch.setenv("BPEKIT_OFFLINE", "0")
    monkeypatch.setattr(load, "_download", lambda url: R50K_FILE.read_bytes())

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(load.os, "fsync", disk_full)
    assert bpekit.get_encoding("r50k_base").encode("hello world") == [31373, 995]  # still works
    assert list(cache.iterdir()) == []  # neither a half-written file nor a temp file


def test_download_with_wrong_hash(isolated, monkeypatch) -> None:
    _, cache, _ = isolated
    monkeypatch.setenv("BPEKIT_OFFLINE", "0")
    monkeypatch.setattr(load, "_download", lambda url: b"IQ== 0\n")
    with pytest.raises(errors.ChecksumError, match="Hash mismatch"):
        bpekit.get_encoding("cl100k_base")
    assert list(cache.iterdir()) == []


# ---------------------------------------------------------------------- vocabularies, patterns


@pytest.mark.parametrize("pat", ["(", "[a-", "a)", r"\p{NotAProperty}", "(?<name"])
def test_invalid_pattern(pat: str) -> None:
    with pytest.raises(errors.PatternError) as info:
        bpekit.Encoding("bad", pat_str=pat, mergeable_ranks=BYTES, special_tokens={})
    assert isinstance(info.value, ValueError)
    with pytest.raises(errors.PatternError):
        ReferenceEncoding("bad", pat, BYTES, {})


@pytest.mark.parametrize(("ranks", "specials", "error"), [
    (BYTES, {"": 300}, errors.VocabError),  # empty special token
    (BYTES | {b"": 300}, {}, errors.VocabError),  # empty ordinary token
    (BYTES | {b"ab": 5}, {}, errors.VocabError),  # duplicate rank
    (BYTES, {"<|x|>": 65}, errors.VocabError),  # special id = an ordinary token's
    (BYTES, {"<|x|>": -1}, errors.VocabError),
    ({"a": 0}, {}, errors.InputTypeError), ({b"a": -1}, {}, errors.InputTypeError),
    ({b"a": 2**32}, {}, errors.InputTypeError), (BYTES, {b"<|x|>": 300}, errors.InputTypeError),
])  # fmt: skip
def test_invalid_vocabulary(ranks: dict, specials: dict, error: type) -> None:
    with pytest.raises(error):
        bpekit.Encoding("bad", pat_str=r"\S+", mergeable_ranks=ranks, special_tokens=specials)


def test_explicit_n_vocab_mismatch() -> None:
    with pytest.raises(errors.VocabError, match="explicit_n_vocab"):
        bpekit.Encoding("x", pat_str=r"\S+", mergeable_ranks=BYTES, special_tokens={}, explicit_n_vocab=300)
    assert bpekit.Encoding("x", pat_str=r"\S+", mergeable_ranks=BYTES, special_tokens={"<|e|>": 256},
                           explicit_n_vocab=257).n_vocab == 257


# ---------------------------------------------------------------------- argument types


TEXT_METHODS = ["encode", "encode_ordinary", "encode_to_numpy", "count", "encode_with_unstable", "split"]
BATCH_METHODS = ["encode_batch", "encode_ordinary_batch", "encode_batch_to_numpy"]
NOT_TEXT = [b"abc", bytearray(b"abc"), None, 3, ["abc"], 1.5]


@pytest.mark.parametrize("method", TEXT_METHODS)
@pytest.mark.parametrize("value", NOT_TEXT, ids=repr)
def test_encode_methods_refuse_non_str(method: str, value: object) -> None:
    enc = bpekit.get_encoding("cl100k_base")
    with pytest.raises(errors.InputTypeError, match="str") as info:
        getattr(enc, method)(value)
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize("method", BATCH_METHODS + ["encode_single_token"])
@pytest.mark.parametrize("value", ["abc", None, 3, [b"abc"], ["ok", None]], ids=repr)
def test_batch_methods_refuse_non_str(method: str, value: object) -> None:
    if method == "encode_single_token" and value == "abc":
        value = 1.5  # a str is a fine argument there
    with pytest.raises(errors.InputTypeError):
        getattr(bpekit.get_encoding("cl100k_base"), method)(value)


@pytest.mark.parametrize("method", ["_encode_bytes", "_encode_single_piece"])
def test_private_byte_methods_refuse_non_bytes(method: str) -> None:
    with pytest.raises(errors.InputTypeError):
        getattr(bpekit.get_encoding("cl100k_base"), method)(None)


# ---------------------------------------------------------------------- impossible token ids

BAD_IDS = [[-1], [2**32], [2**64], [10**6], [100261], [100256], [15339, -5]]


@pytest.mark.parametrize("ids", BAD_IDS, ids=repr)
def test_bad_ids_raise_like_tiktoken(ids: list[int]) -> None:
    ours, ref = bpekit.get_encoding("cl100k_base"), tiktoken_encoding("cl100k_base")
    with pytest.raises((KeyError, OverflowError)) as theirs:
        ref.decode_bytes(ids)
    family = KeyError if isinstance(theirs.value, KeyError) else OverflowError
    for fn in (ours.decode_bytes, ours.decode, lambda t: ours.decode_batch([[1], t]),
               lambda t: ours.decode_bytes_batch([t])):
        with pytest.raises(family):  # the same built-in class as tiktoken
            fn(ids)
    for fn in (ours.decode_tokens_bytes, ours.decode_with_offsets):
        with pytest.raises((KeyError, OverflowError)):
            fn(ids)
    with pytest.raises((KeyError, OverflowError)):
        ours.decode_single_token_bytes(ids[-1])
    assert ours.decode([15339]) == "hello"  # the encoder is still usable


@pytest.mark.parametrize(("ids", "bad", "at"), [([-1], -1, 0), ([15339, 2**32], 2**32, 1), ([1, 2, -(2**70)], -(2**70), 2)])
def test_out_of_range_ids_name_the_id_and_its_index(ids: list[int], bad: int, at: int) -> None:
    # tiktoken says "out of range integral type conversion attempted"; bpekit's error is the
    # same built-in class (OverflowError), a BpekitError too, and says which id and where
    enc = bpekit.get_encoding("cl100k_base")
    calls = [enc.decode_bytes, enc.decode, enc.decode_tokens_bytes, enc.decode_with_offsets,
             lambda t: enc.decode_batch([[1], t]), lambda t: enc.decode_bytes_batch([[1], t]),
             lambda t: enc.decode(tuple(t))]
    for call in calls:
        with pytest.raises(errors.IdRangeError, match=rf"token id {bad} at index {at}( of sequence 1)? is out of range") as info:
            call(ids)
        assert isinstance(info.value, OverflowError) and isinstance(info.value, errors.InvalidTokenError)
    with pytest.raises(errors.IdRangeError, match=rf"token id {bad} is out of range"):
        enc.decode_single_token_bytes(bad)


def test_allowed_special_must_be_all_or_a_collection() -> None:
    # a str other than "all" was read as a set of its characters (tiktoken: TypeError)
    enc = bpekit.get_encoding("cl100k_base")
    for call in (enc.encode, enc.encode_to_numpy, enc.count, lambda t, **kw: enc.encode_batch([t], **kw),
                 lambda t, **kw: enc.truncate(t, 5, **kw)):
        for value in ("<|endoftext|>", "", "none"):
            with pytest.raises(errors.InputTypeError, match="allowed_special must be 'all'"):
                call("hi <|endoftext|>", allowed_special=value)
    with pytest.raises(errors.InputTypeError, match="allowed_special"):
        ReferenceEncoding("ok", r"\S+", BYTES).encode("x", allowed_special="none")
    assert enc.encode("<|endoftext|>", allowed_special=["<|endoftext|>"]) == [100257]  # any collection


def test_non_int_ids_raise_input_type_error() -> None:
    enc = bpekit.get_encoding("cl100k_base")
    for call in (lambda: enc.decode(["a"]), lambda: enc.decode_bytes([1.5]),
                 lambda: enc.decode_batch([[None]]), lambda: enc.decode_tokens_bytes(5)):
        with pytest.raises(errors.InputTypeError):
            call()


def test_non_int_ids_are_type_errors() -> None:
    enc = bpekit.get_encoding("cl100k_base")
    for call in (lambda: enc.decode(["a"]), lambda: enc.decode_bytes([1.5]), lambda: enc.decode(None),
                 lambda: enc.decode_single_token_bytes("a"), lambda: enc.decode_with_offsets([None]),
                 lambda: enc.is_special_token("a")):
        with pytest.raises(TypeError):
            call()


# ---------------------------------------------------------------------- dump_tiktoken_bpe


def test_dump_round_trip_and_atomic(tmp_path) -> None:
    ranks = {b"\n": 3, b" ": 0, b"\xff\x00": 2, b"hello world": 1, b"=": 7}
    path = tmp_path / "out.tiktoken"
    path.write_bytes(b"old content")
    bpekit.dump_tiktoken_bpe(ranks, path)
    assert bpekit.load_tiktoken_bpe(path) == ranks
    assert path.read_bytes().split(b"\n")[0] == b"IA== 0" and path.read_bytes().endswith(b"7\n")
    with pytest.raises(errors.FormatError):
        bpekit.dump_tiktoken_bpe({b"a": 0, "b": 1}, path)  # type: ignore[dict-item]
    with pytest.raises(errors.FormatError):
        bpekit.dump_tiktoken_bpe({b"a": -1}, path)
    assert bpekit.load_tiktoken_bpe(path) == ranks  # a refused dump leaves the old file intact
    assert [p.name for p in tmp_path.iterdir()] == ["out.tiktoken"]


@needs_data
def test_dump_reproduces_the_published_file(tmp_path) -> None:
    ranks = bpekit.load_tiktoken_bpe(R50K_FILE)
    out = tmp_path / "r50k.tiktoken"
    bpekit.dump_tiktoken_bpe(ranks, out)
    assert out.read_bytes() == R50K_FILE.read_bytes()  # sorted by rank, LF, final LF
    assert [p.name for p in tmp_path.iterdir()] == ["r50k.tiktoken"]


def test_thread_counts_past_the_cores_start_no_more_threads(tmp_path) -> None:
    # num_threads=3000 started 3,000 spinning threads on two cores (one pool per count asked
    # for, kept): a batch did not finish in a minute; 2**70 raised a bare OverflowError
    import os
    import sys

    enc = bpekit.get_encoding("cl100k_base")
    texts = ["hello world " * 2000] * 64  # enough bytes that the batch goes to the pool
    want = enc.encode_ordinary_batch(texts, num_threads=1)
    tasks = (lambda: len(os.listdir("/proc/self/task"))) if sys.platform == "linux" else (lambda: 0)
    before = tasks()
    for n in (64, 3000, 2**70):
        assert enc.encode_ordinary_batch(texts, num_threads=n) == want
        assert enc.encode_batch(texts, num_threads=n) == want
        assert enc.count_batch(texts, num_threads=n) == [len(w) for w in want]
        assert enc.decode_batch(want[:2], num_threads=n) == texts[:2]
        assert enc.decode_bytes_batch(want[:2], num_threads=n) == [t.encode() for t in texts[:2]]
    assert tasks() - before <= (os.cpu_count() or 1)
    with pytest.raises(errors.InputTypeError, match="^num_threads must be"):  # not "token ids must be ints: ..."
        enc.decode_bytes_batch([[1]], num_threads=-1)


def test_huge_budgets_and_non_collections() -> None:
    enc = bpekit.get_encoding("cl100k_base")
    for budget in (2**63, 2**64, 10**30):
        assert enc.truncate("hello world", budget) == "hello world"
        assert enc.truncate("hello world", budget, side="left") == "hello world"
    for value in (5, 5.0):
        for call in (lambda: enc.encode("x", allowed_special=value), lambda: enc.count("x", allowed_special=value),
                     lambda: enc.encode_batch(["x"], allowed_special=value)):
            with pytest.raises(errors.InputTypeError, match="allowed_special must be 'all' or a collection"):
                call()
        with pytest.raises(errors.InputTypeError, match="disallowed_special must be 'all' or a collection"):
            enc.encode("x", disallowed_special=value)
    assert enc.encode("<|endoftext|>", disallowed_special=None) == enc.encode_ordinary("<|endoftext|>")


def test_special_token_with_a_lone_surrogate_is_a_vocab_error() -> None:
    with pytest.raises(errors.VocabError, match="lone surrogate"):  # was a bare UnicodeEncodeError
        bpekit.Encoding("x", pat_str=r"\S+", mergeable_ranks=BYTES, special_tokens={"<\ud800>": 300})


def test_an_interrupted_numpy_import_is_an_exception_not_a_panic() -> None:
    # Ctrl-C while the first numpy output imported numpy (`bpekit tokenize`): the numpy crate
    # panicked fetching numpy's C API, a PanicException with a Rust backtrace
    import subprocess
    import sys

    script = """
import sys, bpekit
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            raise KeyboardInterrupt
sys.meta_path.insert(0, Interrupt())
enc = bpekit.get_encoding("cl100k_base")
for call in (lambda: enc.encode_to_numpy("hi"), lambda: enc.encode_batch_to_numpy(["hi", "yo"])):
    try:
        call()
    except KeyboardInterrupt:
        print("interrupted")
sys.meta_path.pop(0)
print(enc.encode_to_numpy("hello world").tolist(), enc.encode_batch_to_numpy(["hi", "yo"])[1].tolist())
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[:3] == ["interrupted", "interrupted", "[15339, 1917] [0, 1, 2]"], out.stdout


def test_the_disallowed_special_token_is_on_the_error() -> None:
    # the CLI found the token by matching the message's text
    enc = bpekit.get_encoding("cl100k_base")
    calls = [lambda: enc.encode("hi <|endoftext|>"), lambda: enc.encode_batch(["a", "hi <|endoftext|>"]),
             lambda: enc.count("<|endoftext|>"), lambda: enc.encode("<|fim_prefix|>", allowed_special={"<|endoftext|>"}),
             lambda: ReferenceEncoding("r", r"\S+", BYTES, {"<|endoftext|>": 300}).encode("<|endoftext|>")]
    for call in calls:
        with pytest.raises(errors.DisallowedSpecialError) as info:
            call()
        assert info.value.token in ("<|endoftext|>", "<|fim_prefix|>"), info.value.token
    from bpekit.minbpe import RegexTokenizer

    tok = RegexTokenizer()
    tok.register_special_tokens({"<|x|>": 300})
    with pytest.raises(errors.DisallowedSpecialError) as info:
        tok.encode("a<|x|>", allowed_special="none_raise")
    assert info.value.token == "<|x|>"
