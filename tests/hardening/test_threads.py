"""Concurrency: one Encoding shared by many Python threads, and Encodings pickled to processes.

The stress test runs single calls (encode, encode_ordinary, count, numpy, decode) interleaved with
batch calls (which start Rust threads of their own) from 8 Python threads for
``$BPEKIT_STRESS_SECONDS`` (default 3), while one more thread keeps resizing the pre-token cache;
every result is compared with a single-threaded run. Pickled encodings (a registry one, which
pickles by name, and a custom one, which pickles its ranks) are used by ``spawn`` processes.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import bpekit
from bpekit.pipeline import AddedVocabulary
from datapaths import DATA
from hardening.hostile import HOSTILE, benign

SECONDS = float(os.environ.get("BPEKIT_STRESS_SECONDS", "3"))
THREADS = 8


def _texts() -> list[str]:
    prose = benign(60_000)
    texts = [prose[i : i + 2000] for i in range(0, len(prose), 2000)]
    texts += [HOSTILE[k](3000) for k in ("one_char_a", "no_split_cjk", "spaces", "digits", "random_unicode")]
    texts += ["", "a", " <|endoftext|> "]
    return texts


def _stress(call: Callable[[int], tuple[bool, str]], step: int, also: Callable[[float], None] | None = None) -> int:
    """Runs ``call(i)`` from ``THREADS`` threads for ``SECONDS`` (each at least 3 times; thread
    ``k`` takes ``i = k, k + step, ...``), and ``also(stop)`` on one more thread; fails on any
    call that returns ``(False, what)`` or raises. Returns the number of calls."""
    failures: list[str] = []
    counts = [0] * THREADS
    stop = time.monotonic() + SECONDS

    def worker(k: int) -> None:
        i = k
        try:
            while time.monotonic() < stop or counts[k] < 3:
                ok, what = call(i)
                if not ok:
                    failures.append(f"thread {k} {what}")
                counts[k] += 1
                i += step
        except Exception as e:  # noqa: BLE001 (reported below, with the thread)
            failures.append(f"thread {k}: {e!r}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    if also is not None:
        threads.append(threading.Thread(target=also, args=(stop,)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:5]
    return sum(counts)


def test_shared_encoding_under_thread_stress() -> None:
    enc = bpekit.get_encoding("o200k_base")
    budget = enc.pretoken_cache_bytes
    texts = _texts()
    want = [enc.encode(t, disallowed_special=()) for t in texts]
    want_special = [enc.encode(t, allowed_special="all") for t in texts]
    want_bytes = [enc.decode_bytes(w) for w in want]

    def call(i: int) -> tuple[bool, str]:
        j = i % len(texts)
        t = texts[j]
        op = i % 7
        if op == 0:
            ok = enc.encode(t, disallowed_special=()) == want[j]
        elif op == 1:
            ok = enc.encode(t, allowed_special="all") == want_special[j]
        elif op == 2:
            ok = enc.count(t, disallowed_special=()) == len(want[j])
        elif op == 3:
            ok = enc.encode_to_numpy(t, disallowed_special=()).tolist() == want[j]
        elif op == 4:
            ok = enc.encode_batch(texts, num_threads=2, disallowed_special=()) == want
        elif op == 5:
            ok = enc.count_batch(texts, num_threads=2, disallowed_special=()) == [len(w) for w in want]
        else:
            ok = enc.decode_bytes(want[j]) == want_bytes[j]
        return ok, f"op {op} text {j}"

    def resizer(stop: float) -> None:
        sizes = [0, 1 << 10, 4 << 20, 64 << 10]
        n = 0
        while time.monotonic() < stop:
            enc.pretoken_cache_bytes = sizes[n % len(sizes)]
            n += 1
            time.sleep(0.001)

    calls = _stress(call, 7, resizer)
    enc.pretoken_cache_bytes = budget
    assert calls >= THREADS, f"only {calls} calls ran"
    print(f"thread stress: {calls} calls in {SECONDS} s from {THREADS} threads")


def test_shared_pipeline_tokenizer_under_thread_stress() -> None:
    """One GPT-NeoX ``tokenizer.json`` pipeline shared by 8 threads from its first call: single
    encodes, decodes and batches (lists, flat numpy and counts) of text with long pieces (random letters of several scripts,
    digits) and runs of its added space tokens, so that the linear merge's tables (over a piece's
    bytes, then the full ones past 256 kB) are built while other threads encode, and its added
    tokens reassigned now and then (the bound calls dropped and made again). Every result is
    compared with a second tokenizer's single-threaded run."""
    import random

    path = Path(DATA) / "hf" / "gpt-neox-20b.tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    rng = random.Random(5)
    letters = "abcdefghijklmnopqrstuvwxyzàéîõüßαβγδεζηθжзийклмн"
    texts = [benign(4000), " " * 3000 + "x", "".join(rng.choice("0123456789") for _ in range(30_000))]
    # a leading space: the piece's bytes cover most of the vocabulary, so the full tables
    texts += [" " + "".join(rng.choice(letters) for _ in range(60_000)) for _ in range(5)]
    texts += ["".join(rng.choice(letters[:26]) for _ in range(20_000)), "a <|endoftext|> b"]
    single = bpekit.Tokenizer.from_file(path)
    want = [single.encode(t) for t in texts]
    want_text = [single.decode(w) for w in want]
    tok = bpekit.Tokenizer.from_file(path)

    def call(i: int) -> tuple[bool, str]:
        j = i % len(texts)
        if i % 8 == 7:
            flat, offsets = tok.encode_batch_to_numpy(texts, num_threads=2)
            return [flat[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == want, "flat batch"
        if i % 16 == 5:
            return tok.count_batch(texts, num_threads=2) == [len(w) for w in want], "count batch"
        if i % 4 == 3:
            return tok.encode_batch(texts, num_threads=2) == want, "batch"
        if i % 4 == 2:
            return tok.decode(want[j]) == want_text[j], f"decode {j}"
        if i % 16 == 1:
            # an equal stage assigned while other threads run the bound calls: the bindings are
            # dropped and made again (session 16), and every result stays the same
            tok.added_tokens = AddedVocabulary(tok.added_tokens.tokens, tok.normalizer.normalize)
        return tok.encode(texts[j]) == want[j], f"text {j}"

    calls = _stress(call, 5)
    full, partial = tok._fast.linear_tables()
    assert full is True and partial >= 1, (full, partial)
    print(f"pipeline thread stress: {calls} calls in {SECONDS} s from {THREADS} threads")


@pytest.mark.parametrize("pre", ["deepseek-llm", "youtu"])
def test_shared_split_stages_tokenizer_under_thread_stress(pre: str) -> None:
    """A GGUF vocabulary whose pre-tokenizer is a list of ``Split`` stages, shared by 8 threads:
    deepseek-llm's own file (six stages, one hand-written pass since session 22) and Llama 3's
    vocabulary under ``youtu`` (two stages, one hand-written pass since session 24; the compiled
    matcher's programs under threads: the next test). Single encodes and 2-thread batches of
    prose, a run of spaces, newlines and random letters, each compared with a second tokenizer's
    single-threaded run."""
    import dataclasses

    from bpekit import _core
    from bpekit.formats import llamacpp
    from bpekit.formats.gguf import to_tokenizer
    from bpekit.formats.gguf.vocab import GGUFVocab

    name = "ggml-vocab-deepseek-llm.gguf" if pre == "deepseek-llm" else "ggml-vocab-llama-bpe.gguf"
    path = Path(DATA) / "gguf" / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    assert set(_core.IsolatedSplit(list(llamacpp.PRE_TOKENIZERS[pre].regexes)).engines) == {"hand"}
    texts = _texts() + [" " * 5000 + "x", "\n\n \n" * 700, "Ünïcödé 中文 ".join(benign(3000).split(" ")[:200])]

    def load() -> bpekit.Tokenizer:
        if pre == "deepseek-llm":
            return bpekit.Tokenizer.from_file(path)
        return to_tokenizer(dataclasses.replace(GGUFVocab.read(path), pre=pre))

    single = load()
    want = [single.encode(t) for t in texts]
    tok = load()

    def call(i: int) -> tuple[bool, str]:
        j = i % len(texts)
        if i % 5 == 4:
            return tok.encode_batch(texts, num_threads=2) == want, "batch"
        return tok.encode(texts[j]) == want[j], f"text {j}"

    calls = _stress(call, 5)
    print(f"{pre} split stages thread stress: {calls} calls in {SECONDS} s from {THREADS} threads")


@pytest.mark.parametrize("metaspace", [False, True], ids=["legacy", "metaspace"])
def test_shared_llama2_style_tokenizer_under_thread_stress(tmp_path_factory, metaspace: bool) -> None:
    """A Llama-2-style ``tokenizer.json`` (character BPE with byte fallback; the legacy normalizer
    program or ``Metaspace`` in Rust, texts merged word by word, the decoder's ``FusedIds``)
    shared by 8 threads: encodes, decodes and batches of English, random letters, CJK and emoji
    (byte fallback), with its cache budget changed now and then; every result compared with a
    second tokenizer's single-threaded run, and a pickled copy."""
    import random

    pytest.importorskip("tokenizers")
    from formats.test_char_bpe import LLAMA_GGUF, _llama2_json

    if not LLAMA_GGUF.is_file():
        pytest.skip(f"{LLAMA_GGUF} not found")
    path = _llama2_json(tmp_path_factory.mktemp("llama2"), metaspace)
    rng = random.Random(7)
    texts = [benign(3000), "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(5000)),
             "日本語のテキスト \U0001f600\U0001f680 " * 40, "  two  spaces\tand a tab ", ""]
    single = bpekit.Tokenizer.from_file(path)
    want = [single.encode(t) for t in texts]
    want_text = [single.decode(w) for w in want]
    tok = bpekit.Tokenizer.from_file(path)
    again = pickle.loads(pickle.dumps(tok))
    assert [again.encode(t) for t in texts] == want and [again.decode(w) for w in want] == want_text

    def call(i: int) -> tuple[bool, str]:
        j = i % len(texts)
        if i % 8 == 7:
            return tok.encode_batch(texts, num_threads=2) == want, "batch"
        if i % 8 == 5:
            return tok.count_batch(texts, num_threads=2) == [len(w) for w in want], "count batch"
        if i % 4 == 2:
            return tok.decode(want[j]) == want_text[j], f"decode {j}"
        if i % 16 == 1:
            tok.pretoken_cache_bytes = (1 << 20) if i % 32 == 1 else (8 << 20)
        return tok.encode(texts[j]) == want[j], f"text {j}"

    calls = _stress(call, 3)
    print(f"llama2-style thread stress: {calls} calls in {SECONDS} s from {THREADS} threads")


def _encode_in_child(payload: bytes, texts: list[str]) -> list[list[int]]:
    enc = pickle.loads(payload)
    return [enc.encode_ordinary(t) for t in texts]


def test_pickled_encodings_in_spawned_processes() -> None:
    texts = _texts()[:10] + [HOSTILE["lone_surrogates"](300)]
    registry_enc = bpekit.get_encoding("cl100k_base")
    custom = bpekit.Encoding(
        "custom_r50k",
        pat_str=bpekit.get_encoding("r50k_base")._pat_str,
        mergeable_ranks=bpekit.get_encoding("r50k_base")._mergeable_ranks,
        special_tokens={"<|endoftext|>": 50256},
    )
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        jobs = [pool.apply_async(_encode_in_child, (pickle.dumps(e), texts)) for e in (registry_enc, custom)]
        results = [j.get(timeout=120) for j in jobs]
    for enc, got in zip((registry_enc, custom), results):
        assert got == [enc.encode_ordinary(t) for t in texts], enc.name


def _tokenize_in_child(payload: bytes, texts: list[str]) -> tuple[list[list[int]], list[str]]:
    tok = pickle.loads(payload)
    ids = [tok.encode(t) for t in texts]
    return ids, [tok.decode(i) for i in ids]


def test_pickled_pipeline_tokenizer_in_a_spawned_process() -> None:
    """A Hugging Face pipeline (GPT-NeoX's tokenizer.json: Rust splitter and model, ByteLevel
    decode table) pickles without its derived Rust objects and rebuilds them in the child."""
    path = Path(DATA) / "hf" / "gpt-neox-20b.tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    tok = bpekit.Tokenizer.from_file(path)
    texts = _texts()[:10] + ["<|endoftext|> é 😀 \u00e9"]
    want = [tok.encode(t) for t in texts]
    assert tok.decode(want[0]) == texts[0]  # the decode table is built before pickling
    again = pickle.loads(pickle.dumps(tok))
    assert [again.encode(t) for t in texts] == want and again._fast is not None
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        ids, decoded = pool.apply_async(_tokenize_in_child, (pickle.dumps(tok), texts)).get(timeout=120)
    assert ids == want and decoded == [tok.decode(i) for i in want]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_harmony"])
def test_pickle_round_trip_in_process(name: str) -> None:
    enc = bpekit.get_encoding(name)
    again = pickle.loads(pickle.dumps(enc))
    text = benign(5000)
    assert again.encode(text) == enc.encode(text)


def test_shared_compiled_stages_under_thread_stress() -> None:
    """Stages on the compiled matcher, whose programs one splitter shares between calls, each
    call with its own memo: Youtu's first stage and jais-2's pattern with a 500-space step
    (a whitespace run tried again inside itself is what the memo remembers; jais-2's own pattern
    is split by hand since session 24), shared by 8 threads, each split compared with a second
    splitter's single-threaded run."""
    from bpekit import _core
    from bpekit.formats import llamacpp

    stages = [llamacpp.YOUTU_1, llamacpp.JAIS2.replace(r"\s{512}", r"\s{500}")]
    shared = _core.IsolatedSplit(stages)
    assert shared.engines == ["compiled", "compiled"], shared.engines
    texts = _texts() + [" " * 5000 + "x", "\n\n \n" * 700, "\ud55c\uad6d\uc5b4 \u4e2d\u6587\uff01 x  " * 300]
    texts = [t for t in texts if not any("\ud800" <= c <= "\udfff" for c in t)]  # (a Rust &str holds none)
    single = _core.IsolatedSplit(stages)
    want = [single.split(t) for t in texts]

    def call(i: int) -> tuple[bool, str]:
        j = i % len(texts)
        return shared.split(texts[j]) == want[j], f"text {j}"

    calls = _stress(call, 1)
    print(f"compiled split thread stress: {calls} calls in {SECONDS} s from {THREADS} threads")
