"""`bpekit.Encoding` method by method against tiktoken (formats.md §1.5), on fixed inputs.

Each test states one piece of tiktoken's API contract and checks bpekit against the tiktoken
encoding built from the same local rank files (``peers.tiktoken_encoding``; never the network).
Registry, model map, pickling (also across a spawn pool) and thread-safety are covered here too.
"""

from __future__ import annotations

import functools
import multiprocessing
import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import bpekit
from bpekit import errors, patterns
from bpekit.reference import split as reference_split
from peers import ENCODINGS, tiktoken_encoding

N_VOCAB = {"gpt2": 50257, "r50k_base": 50257, "p50k_base": 50281, "p50k_edit": 50284,
           "cl100k_base": 100277, "o200k_base": 200019, "o200k_harmony": 201088}
MIXED = "hello world<|endoftext|> green cow\n\n  123456 naïve 👍 日本語 it's <|fim_prefix|>x"


def outcome(fn, *args, **kwargs):  # noqa: ANN001, ANN201
    """("ok", result) or ("err", exception class family, message): comparable across libraries."""
    try:
        return ("ok", fn(*args, **kwargs))
    except (ValueError, KeyError, TypeError, OverflowError) as e:
        family = next(c for c in (KeyError, OverflowError, ValueError, TypeError) if isinstance(e, c))
        return ("err", family.__name__, str(e))


ALL = {"allowed_special": "all"}


@pytest.mark.parametrize(("name", "text", "mode", "expected"), [
    ("gpt2", "hello world", ALL, [31373, 995]),
    ("cl100k_base", "hello world", ALL, [15339, 1917]),
    ("o200k_base", "hello world", ALL, [24912, 2375]),
    ("gpt2", "hello <|endoftext|>", ALL, [31373, 220, 50256]),
    ("cl100k_base", "hello <|endoftext|>", ALL, [15339, 220, 100257]),
    ("cl100k_base", "👍", ALL, [9468, 239, 235]),
    ("cl100k_base", " \x850", ALL, [220, 126, 227, 15]),
    ("cl100k_base", "<|endoftext|>", {"disallowed_special": ()}, [27, 91, 8862, 728, 428, 91, 29]),
])  # fmt: skip
def test_reference_values(name: str, text: str, mode: dict, expected: list[int]) -> None:
    enc = bpekit.get_encoding(name)
    assert enc.encode(text, **mode) == expected
    if mode is not ALL:
        assert enc.encode_ordinary(text) == expected


@pytest.mark.parametrize("name", ENCODINGS)
def test_vocab_sizes_and_specials(name: str) -> None:
    ours, ref = bpekit.get_encoding(name), tiktoken_encoding(name)
    assert ours.n_vocab == N_VOCAB[name] == ref.n_vocab
    assert ours.max_token_value == N_VOCAB[name] - 1 == ref.max_token_value
    assert ours.name == name and ours.special_tokens_set == ref.special_tokens_set
    assert ours.eot_token == ref.eot_token
    for t in (0, 50256, 50257, 100257, 100261, 199999, 200018, 201087, 201088):
        assert ours.is_special_token(t) == ref.is_special_token(t), t


SPECIAL_MODES = [
    {"allowed_special": "all"}, {}, {"disallowed_special": ()}, {"allowed_special": {"<|endoftext|>"}},
    {"allowed_special": {"<|endoftext|>"}, "disallowed_special": ()},
    {"allowed_special": {"<|endoftext|>", "<|fim_prefix|>"}},
    {"allowed_special": {"not a special", "<|fim_prefix|>"}, "disallowed_special": ()},
    {"disallowed_special": {"green"}}, {"disallowed_special": {"it's"}},  # not specials at all
    {"disallowed_special": frozenset({"<|fim_prefix|>"})},
    {"allowed_special": set(), "disallowed_special": ["<|endoftext|>"]},
]  # fmt: skip


@pytest.mark.parametrize("name", ["cl100k_base", "p50k_edit", "o200k_base"])
@pytest.mark.parametrize("mode", SPECIAL_MODES, ids=repr)
def test_encode_special_modes(name: str, mode: dict) -> None:
    ours, ref = bpekit.get_encoding(name), tiktoken_encoding(name)
    for text in (MIXED, "<|endoftext|>", "", "plain text"):
        expected = outcome(ref.encode, text, **mode)
        assert outcome(ours.encode, text, **mode) == expected, text
        got_np = outcome(lambda t: ours.encode_to_numpy(t, **mode).tolist(), text)  # noqa: B023
        assert got_np == expected
        if expected[0] == "ok":
            assert ours.count(text, **mode) == len(expected[1])
        else:
            with pytest.raises(errors.DisallowedSpecialError):
                ours.count(text, **mode)


def test_disallowed_message_is_tiktokens_four_lines() -> None:
    enc = bpekit.get_encoding("cl100k_base")
    with pytest.raises(errors.DisallowedSpecialError) as info:
        enc.encode("hi <|endoftext|>")
    assert isinstance(info.value, ValueError)  # what tiktoken raises
    assert str(info.value).split("\n") == [
        "Encountered text corresponding to disallowed special token '<|endoftext|>'.",
        "If you want this text to be encoded as a special token, pass it to `allowed_special`, "
        "e.g. `allowed_special={'<|endoftext|>', ...}`.",
        "If you want this text to be encoded as normal text, disable the check for this token by "
        "passing `disallowed_special=(enc.special_tokens_set - {'<|endoftext|>'})`.",
        "To disable this check for all special tokens, pass `disallowed_special=()`.",
        "",
    ]
    with pytest.raises(errors.DisallowedSpecialError, match="token \"it's\"\\."):
        enc.encode("it's", disallowed_special={"it's"})


def test_encode_single_token() -> None:
    ours, ref = bpekit.get_encoding("cl100k_base"), tiktoken_encoding("cl100k_base")
    for key in ("hello", b"hello", " world", b"\xf0\x9f", "<|endoftext|>", b"<|endofprompt|>", b"!"):
        assert ours.encode_single_token(key) == ref.encode_single_token(key), key
    for missing in ("nope nope", b"\xff\xfe", "<|notspecial|>", "hello world"):
        with pytest.raises(KeyError):
            ref.encode_single_token(missing)
        with pytest.raises(KeyError):
            ours.encode_single_token(missing)


def test_decode_single_and_tokens_bytes() -> None:
    ours, ref = bpekit.get_encoding("cl100k_base"), tiktoken_encoding("cl100k_base")
    for t in (0, 188, 255, 256, 15339, 100255, 100257, 100276):
        assert ours.decode_single_token_bytes(t) == ref.decode_single_token_bytes(t)
    for t in (100256, 100261, 100275, 100277, 10**6):
        with pytest.raises(KeyError):
            ours.decode_single_token_bytes(t)
    ids = ours.encode(MIXED, allowed_special="all")
    assert ours.decode_tokens_bytes(ids) == ref.decode_tokens_bytes(ids)
    assert ours.decode_tokens_bytes([]) == []


def test_decode_with_offsets() -> None:
    ours, ref = bpekit.get_encoding("cl100k_base"), tiktoken_encoding("cl100k_base")
    ids = ours.encode("hello world<|endoftext|> green cow", allowed_special="all")
    assert ours.decode_with_offsets(ids) == ("hello world<|endoftext|> green cow", [0, 5, 11, 24, 30])
    for text in ("我非常渴望与人工智能一起工作", "👍 naïve e\u0301 \x85", "🇫🇷👨‍👩‍👧 ok"):
        ids = ours.encode_ordinary(text)
        assert ours.decode_with_offsets(ids) == ref.decode_with_offsets(ids)
        assert ours.decode_with_offsets(ids)[0] == text
    with pytest.raises(UnicodeDecodeError):
        ours.decode_with_offsets([9468, 239])  # the first two of 👍's three tokens


def test_decode_error_modes() -> None:
    ours, ref = bpekit.get_encoding("cl100k_base"), tiktoken_encoding("cl100k_base")
    for mode in ("replace", "ignore", "backslashreplace", "surrogateescape"):
        for ids in ([9468, 239, 15339], [9468], [126, 227, 15], [15339, 1917]):
            assert ours.decode(ids, errors=mode) == ref.decode(ids, errors=mode)
    assert ours.decode([9468, 239, 15339]) == "\ufffdhello"  # lossy by default
    with pytest.raises(UnicodeDecodeError):
        ours.decode([9468, 239], errors="strict")


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base"])
def test_token_byte_values(name: str) -> None:
    values = bpekit.get_encoding(name).token_byte_values()
    assert values == tiktoken_encoding(name).token_byte_values()
    assert values == sorted(values) and b"<|endoftext|>" not in values


def test_eot_token_missing_is_keyerror() -> None:
    enc = _custom()
    with pytest.raises(KeyError):
        enc.eot_token  # noqa: B018
    assert enc.special_tokens_set == {"<|e|>"} and enc.is_special_token(258) and not enc.is_special_token(3)


@pytest.mark.parametrize("num_threads", [1, 8])
def test_batch_methods(num_threads: int) -> None:
    ours, ref = bpekit.get_encoding("cl100k_base"), tiktoken_encoding("cl100k_base")
    texts = [MIXED, "", "hello", "👍" * 5, "\ud800 lone", "x <|endoftext|> y"]
    kw = {"num_threads": num_threads}
    assert ours.encode_batch(texts, allowed_special="all", **kw) == ref.encode_batch(texts, allowed_special="all")
    assert ours.encode_ordinary_batch(texts, **kw) == ref.encode_ordinary_batch(texts)
    with pytest.raises(errors.DisallowedSpecialError):
        ours.encode_batch(texts, **kw)
    ids = ref.encode_ordinary_batch(texts) + [[9468, 239], []]
    assert ours.decode_batch(ids, **kw) == ref.decode_batch(ids)
    assert ours.decode_batch(ids, errors="ignore", **kw) == ref.decode_batch(ids, errors="ignore")
    assert ours.decode_bytes_batch(ids, **kw) == ref.decode_bytes_batch(ids)


def test_numpy_outputs() -> None:
    enc = bpekit.get_encoding("o200k_base")
    arr = enc.encode_to_numpy(MIXED, allowed_special="all")
    assert isinstance(arr, np.ndarray) and arr.dtype == np.uint32 and arr.tolist() == enc.encode(MIXED, **ALL)
    texts = [MIXED, "", "a b c", "👍👍", "x<|endoftext|>"]
    flat, offsets = enc.encode_batch_to_numpy(texts, allowed_special="all")
    assert flat.dtype == np.uint32 and offsets.dtype == np.int64 and len(offsets) == len(texts) + 1
    assert offsets[0] == 0 and offsets[-1] == len(flat)
    for i, text in enumerate(texts):
        assert flat[offsets[i] : offsets[i + 1]].tolist() == enc.encode(text, allowed_special="all")
    flat, offsets = enc.encode_batch_to_numpy([])
    assert flat.tolist() == [] and offsets.tolist() == [0]


def test_split() -> None:
    enc = bpekit.get_encoding("cl100k_base")
    text = "Hello world  123456 it's\n\n  done!!"
    assert enc.split(text) == reference_split(patterns.CL100K, text)
    assert "".join(enc.split(text)) == text and enc.split("") == []


def test_harmony_reserved_200018_collision() -> None:
    ours, ref = bpekit.get_encoding("o200k_harmony"), tiktoken_encoding("o200k_harmony")
    assert len(ours.special_tokens_set) == 1091 and len(set(ours._special_tokens.values())) == 1090
    for s in ("<|reserved_200018|>", "<|endofprompt|>"):
        assert ours.encode(s, allowed_special="all") == [200018] == ref.encode(s, allowed_special="all")
        assert ours.encode_single_token(s) == 200018
    assert ours.decode([200018]) == ref.decode([200018]) == "<|endofprompt|>"
    assert ours.is_special_token(200018)


def test_lone_surrogates() -> None:
    ours, ref = bpekit.get_encoding("cl100k_base"), tiktoken_encoding("cl100k_base")
    text = "\ud800 hi \ud83d\udc4d \udfff"  # lone, a valid pair (👍), lone
    expected = ref.encode(text)
    assert ours.encode(text) == expected == ours.encode("\ufffd hi 👍 \ufffd")
    assert ours.encode_ordinary(text) == expected
    assert ours.count(text) == len(expected)
    assert ours.encode_to_numpy(text).tolist() == expected
    assert ours.encode_batch([text, text]) == [expected, expected]
    assert "".join(ours.split(text)) == "\ufffd hi 👍 \ufffd"


def _custom() -> bpekit.Encoding:
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abab": 257}
    return bpekit.Encoding("cl100k_base", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={"<|e|>": 258})


def test_pickle_registered_by_name_custom_by_value() -> None:
    enc = bpekit.get_encoding("cl100k_base")
    data = pickle.dumps(enc)
    assert len(data) < 200 and b"cl100k_base" in data
    back = pickle.loads(data)
    assert back.encode(MIXED, allowed_special="all") == enc.encode(MIXED, allowed_special="all")
    custom = _custom()  # named like a registered encoding, but not it: must travel by value
    data = pickle.dumps(custom)
    assert len(data) > 256 * 3
    back = pickle.loads(data)
    assert back.encode("ababab <|e|>", allowed_special="all") == [257, 256, 32, 258]
    assert back._mergeable_ranks == custom._mergeable_ranks and back.name == "cl100k_base"


def test_pickle_across_spawn_pool() -> None:
    enc, custom = bpekit.get_encoding("cl100k_base"), _custom()
    ctx = multiprocessing.get_context("spawn")
    jobs = [(enc, MIXED), (custom, "ababab <|e|>"), (enc, "hello world"), (custom, "ab")]
    # the worker function must be importable in the child: a method of bpekit.Encoding is
    with ctx.Pool(2) as pool:
        got = pool.starmap(functools.partial(bpekit.Encoding.encode, allowed_special="all"), jobs)
    assert got == [e.encode(t, allowed_special="all") for e, t in jobs]


def test_model_map_equals_tiktoken() -> None:
    tk_model = pytest.importorskip("tiktoken.model")
    names = list(tk_model.MODEL_TO_ENCODING) + [p + "2025-01" for p in tk_model.MODEL_PREFIX_TO_ENCODING]
    names += ["gpt-5-mini", "gpt-5.1", "gpt-4o-mini", "ft:gpt-4o-mini:org", "gpt-oss-120b"]
    for model in names:
        assert bpekit.encoding_name_for_model(model) == tk_model.encoding_name_for_model(model), model
    assert bpekit.encoding_name_for_model("gpt-oss-20b") == "o200k_harmony"
    assert bpekit.encoding_for_model("gpt-4o") is bpekit.get_encoding("o200k_base")
    for unknown in ("not-a-model", "gpt-3", ""):
        with pytest.raises(KeyError, match="Could not automatically map"):
            bpekit.encoding_name_for_model(unknown)
        with pytest.raises(KeyError):
            bpekit.encoding_for_model(unknown)


# tiktoken's names that bpekit leaves out on purpose: modules that tiktoken's modules import for
# themselves, type names, and ENCODING_CONSTRUCTORS (tiktoken's plugin table of functions that
# return constructor arguments, filled from the tiktoken_ext namespace packages; bpekit's
# registry.CONSTRUCTORS return Encodings)
NOT_TIKTOKEN_API = {"annotations", "base64", "functools", "hashlib", "importlib", "os", "pkgutil", "tiktoken",
                    "tiktoken_ext", "Sequence", "AbstractSet", "Collection", "Literal", "NoReturn",
                    "TYPE_CHECKING", "ThreadPoolExecutor", "ENCODING_CONSTRUCTORS", "LOCK", "threading"}


@pytest.mark.parametrize("module", ["", "core", "load", "model", "registry"])
def test_every_public_name_of_tiktoken_is_there(module: str) -> None:
    """``import bpekit as tiktoken`` then ``tiktoken.model.MODEL_TO_ENCODING``,
    ``tiktoken.core.Encoding``, ``tiktoken.load.read_file_cached``: the names of tiktoken's
    modules (as installed) exist in bpekit's of the same name."""
    tk = pytest.importorskip("tiktoken" + (f".{module}" if module else ""))
    ours = getattr(bpekit, module) if module else bpekit
    missing = {n for n in dir(tk) if not n.startswith("_") and not hasattr(ours, n)} - NOT_TIKTOKEN_API
    assert not missing, f"tiktoken{'.' + module if module else ''} has {sorted(missing)}, bpekit does not"


def test_read_file_cached_keeps_a_download_and_checks_its_hash(tmp_path, monkeypatch) -> None:
    from bpekit import load

    monkeypatch.setenv("BPEKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("BPEKIT_OFFLINE", raising=False)
    with pytest.raises(errors.DataNotFoundError, match="only https"):
        load.read_file_cached("http://example.invalid/x.tiktoken")
    fetched: list[str] = []
    body = b"aGk= 0\n"

    def download(url: str) -> bytes:  # (tests never touch the network)
        fetched.append(url)
        return body

    monkeypatch.setattr(load, "_download", download)
    url = "https://example.invalid/x.tiktoken"
    good = load.sha256_hex(body)
    assert load.load_tiktoken_bpe(url, good) == {b"hi": 0}
    assert load.read_file_cached(url, good.upper()) == body and load.read_file_cached(url) == body
    assert fetched == [url]  # downloaded once, then read from the cache
    with pytest.raises(errors.ChecksumError):
        load.read_file_cached(url, "0" * 64)  # the cached copy is not it, nor is a new download
    assert fetched == [url, url]
    monkeypatch.setenv("BPEKIT_OFFLINE", "1")
    with pytest.raises(errors.DataNotFoundError, match="BPEKIT_OFFLINE"):
        load.read_file_cached(url + "?other")
    assert load.check_hash(body, good) and not load.check_hash(body + b" ", good)
    for bad in ((None, None), (5, None), (url, b"00"), (url, 5)):
        with pytest.raises(errors.InputTypeError):
            load.read_file_cached(*bad)
    local = tmp_path / "local.tiktoken"
    local.write_bytes(body)
    assert load.read_file(str(local)) == body and load.read_file_cached(local, good) == body
    with pytest.raises(errors.ChecksumError):
        load.read_file_cached(local, "0" * 64)


def test_get_encoding_and_list() -> None:
    assert set(bpekit.list_encoding_names()) == set(ENCODINGS)
    assert bpekit.get_encoding("r50k_base") is bpekit.get_encoding("r50k_base")
    with pytest.raises(ValueError, match="Unknown encoding nope"):
        bpekit.get_encoding("nope")
    with pytest.raises((TypeError, ValueError), match="get_encoding"):
        bpekit.get_encoding(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(("arg", "error"), [(3, ValueError), ("nope", errors.BpekitError)])
def test_get_encoding_errors_are_typed_and_tiktoken_compatible(arg: object, error: type) -> None:
    with pytest.raises(error):
        bpekit.get_encoding(arg)  # type: ignore[arg-type]


def test_one_encoding_from_eight_threads() -> None:
    enc = bpekit.get_encoding("o200k_base")
    texts = [f"{i} {MIXED} {'ab' * i} 👍{i}" for i in range(64)]
    expected = [enc.encode(t, allowed_special="all") for t in texts]
    with ThreadPoolExecutor(8) as pool:
        for _ in range(3):
            got = list(pool.map(lambda t: enc.encode(t, allowed_special="all"), texts))
            assert got == expected
            assert list(pool.map(enc.decode, got)) == texts
