"""Per-call cost of `Encoding` methods, and how a 2-thread batch splits its work.

Per call: microseconds per call of ``encode_ordinary``, ``encode``, ``encode_to_numpy`` (also with
``disallowed_special=()``, tiktoken's "no special handling", as benches/speed.py calls it) and
``count`` on an empty string, 10 bytes, ~200 bytes (an English paragraph) and 2 kB, best of
``--repeat`` timings of ``--number`` calls (the minimum is the figure a shared machine repeats).
Split (also ``--split`` alone): for every corpus sampled to 1 MB as benches/speed.py does, lists
and flat numpy, the CPU time of the 1-thread per-document loop and, for one 2-thread batch
(``encode_ordinary_batch``, ``encode_batch_to_numpy``), the CPU time of the calling thread, of the
pool thread (the process's CPU time less the caller's) and the wall time; medians of ``--rounds``,
cold caches. The calling thread is one of the batch's two threads (src/py/chunks.rs) and alone
makes the lists, so on two free cores the batch takes about max(caller, pool): loop / max(caller,
pool) is the speed-up the split predicts. CPU times stand the load better than wall times but not
entirely (other jobs slow every memory access, and a thread that loses its core takes fewer
chunks): compare rows of one run. ``--scaling`` times, for the same corpora, the wall time of the
1-thread per-document loop (lists, numpy) and of the 1- and 2-thread batches (lists, flat numpy),
cold caches, interleaved, best of ``--rounds``: the 2-thread batch / 1-thread loop ratio (same
output) is issue #3's figure, meaningful only on free cores (see src/PERFORMANCE.md, "Batches,
fifth round", for a way to shield a short measurement from the load). ``--api`` times every
public call on a ~200-byte paragraph beside tiktoken's (best of ``--repeat`` x ``--number``/10);
``--files`` times ``Tokenizer`` loaded from GPT-NeoX's ``tokenizer.json``, two GGUF files, Llama 3's
vocabulary with Tekken's, Kimi K2's and DeepSeek-V3's pre-tokenizers, two
``tokenizer.json`` files in the Llama-2 layout and a
SentencePiece ``.model`` beside ``tokenizers`` and ``sentencepiece``; ``--files-batch N`` their
batch calls on N threads (lists, flat numpy) beside the peers' (``RAYON_NUM_THREADS=N`` for
``tokenizers``). ``--count-batch N`` times the counts of a batch on N threads: ``count_batch``
beside the lengths of ``encode_batch``'s lists (what tiktoken and ``tokenizers`` offer), for
cl100k and o200k against tiktoken and for the files of ``--files`` against their peers.

    PYTHONPATH=python BPEKIT_DATA_DIR=../shared/data/ranks python benches/call_overhead.py
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import corpora  # noqa: I001 (first: importing bpekit resets sys.path)
from harness.local import load_corpora
import bpekit


def texts() -> dict[str, str]:
    para = next(d for d in corpora.english() if 190 <= len(d.encode()) <= 210)
    return {"empty": "", "10 B": "Hello, wor", "200 B": para, "2 kB": (para * 11)[:2000]}


def per_call(fn, text: str, number: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn(text)
        best = min(best, time.perf_counter() - t0)
    return best / number * 1e6


def process_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def batch_split(enc: bpekit.Encoding, docs: list[str], numpy: bool, rounds: int) -> dict[str, float]:
    """Medians, ms: CPU of the 1-thread loop, of a 2-thread batch's caller and pool thread; its wall."""
    def loop() -> object:
        if numpy:
            return [enc.encode_to_numpy(d, disallowed_special=()) for d in docs]
        return [enc.encode_ordinary(d) for d in docs]

    def batch() -> object:
        if numpy:
            return enc.encode_batch_to_numpy(docs, num_threads=2, disallowed_special=())
        return enc.encode_ordinary_batch(docs, num_threads=2)

    runs: dict[str, list[float]] = {}
    for _ in range(rounds):
        enc.pretoken_cache_bytes = enc.pretoken_cache_bytes  # empty every thread's cache
        c0 = time.thread_time()
        loop()  # the result is freed inside the timing, as in the batch's
        one = time.thread_time() - c0
        enc.pretoken_cache_bytes = enc.pretoken_cache_bytes
        c0, p0, w0 = time.thread_time(), process_cpu(), time.perf_counter()
        batch()
        caller, total, wall = time.thread_time() - c0, process_cpu() - p0, time.perf_counter() - w0
        for k, v in (("loop", one), ("caller", caller), ("pool", total - caller), ("wall", wall)):
            runs.setdefault(k, []).append(v * 1e3)
    return {k: statistics.median(v) for k, v in runs.items()}


def split(enc: bpekit.Encoding, name: str, rounds: int) -> None:
    print(f"{name}: CPU ms, median of {rounds}, cold caches: 1-thread loop; 2-thread batch of the same output")
    print("| corpus | output | loop CPU | batch: caller CPU | pool CPU | wall | loop / max(caller, pool) |")
    print("|---|---|---|---|---|---|---|")
    for corpus, docs in load_corpora(1.0).items():
        for numpy in (False, True):
            r = batch_split(enc, docs, numpy, rounds)
            print(f"| {corpus} | {'numpy' if numpy else 'lists'} | {r['loop']:.1f} | {r['caller']:.1f} | "
                  f"{r['pool']:.1f} | {r['wall']:.1f} | {r['loop'] / max(r['caller'], r['pool']):.2f}x |")


def scaling_passes(enc: bpekit.Encoding, docs: list[str]) -> dict:
    return {
        "loop": lambda: [enc.encode_ordinary(d) for d in docs],
        "numpy loop": lambda: [enc.encode_to_numpy(d, disallowed_special=()) for d in docs],
        **{f"batch {n}": (lambda n=n: enc.encode_ordinary_batch(docs, num_threads=n)) for n in (1, 2)},
        **{f"numpy batch {n}": (lambda n=n: enc.encode_batch_to_numpy(docs, num_threads=n, disallowed_special=()))
           for n in (1, 2)},
    }  # fmt: skip


def scaling(enc: bpekit.Encoding, name: str, rounds: int) -> None:
    print(f"{name}: wall ms, best of {rounds}, cold caches (x the 1-thread loop of the same output)")
    print("| corpus | loop | numpy loop | batch 1 | batch 2 | numpy batch 1 | numpy batch 2 |\n|---|---|---|---|---|---|---|")
    for corpus, docs in load_corpora(1.0).items():
        passes = scaling_passes(enc, docs)
        best = dict.fromkeys(passes, float("inf"))
        for _ in range(rounds):
            for k, f in passes.items():
                enc.pretoken_cache_bytes = enc.pretoken_cache_bytes  # empty every thread's cache
                w0 = time.perf_counter()
                f()
                best[k] = min(best[k], time.perf_counter() - w0)
        cells = [f"{v * 1e3:.1f} ({best['numpy loop' if 'numpy' in k else 'loop'] / v:.2f}x)" for k, v in best.items()]
        print(f"| {corpus} | {' | '.join(cells)} |")


# The public calls ``--api`` times, each as a statement over ``e`` (the encoding), ``p`` (an
# English paragraph of ~200 bytes) and ``ids`` (its ids).
API = [
    "e.encode(p)", "e.encode_ordinary(p)", "e.encode(p, disallowed_special=())", "e.encode(p, allowed_special='all')",
    "e.encode(p, allowed_special={'<|endoftext|>'})", "e.encode_to_numpy(p)", "e.encode_batch([p] * 4)",
    "e.decode(ids)", "e.decode_bytes(ids)", "e.decode_batch([ids] * 4)", "e.decode_tokens_bytes(ids)",
    "e.decode_with_offsets(ids)", "e.decode_single_token_bytes(1000)", "e.encode_single_token(b'hello')",
    "e.encode_single_token('hello')", "e.n_vocab", "e.is_special_token(1000)",
]  # fmt: skip


def api(name: str, number: int, repeat: int) -> None:
    """µs per call of each public call in ``API``, bpekit and tiktoken (if installed) side by side."""
    import timeit

    from harness.local import setup_env

    setup_env()
    libs = {"bpekit": bpekit.get_encoding(name)}
    try:
        import tiktoken

        libs["tiktoken"] = tiktoken.get_encoding(name)
    except ImportError:
        pass
    para = texts()["200 B"]
    ids = libs["bpekit"].encode(para)
    print(f"{name}: µs per call (best of {repeat} x {number}), a {len(para.encode())}-byte paragraph, {len(ids)} ids")
    print(f"| call | {' | '.join(libs)} | x |\n|---|{'---|' * len(libs)}---|")
    for stmt in API:
        times = [min(timeit.repeat(stmt, globals={"e": e, "p": para, "ids": ids}, number=number, repeat=repeat)) / number * 1e6 for e in libs.values()]
        ratio = f"{times[1] / times[0]:.2f}x" if len(times) == 2 else ""
        print(f"| `{stmt}` | {' | '.join(f'{t:.3f}' for t in times)} | {ratio} |")


def file_cases() -> list[tuple]:
    """(label, path, peer name, peer encode(text, add), peer decode, peer batch encode(texts,
    threads) -> lists) for GPT-NeoX's ``tokenizer.json``, Llama 3's and deepseek-llm's GGUF (peer:
    ``tokenizers`` on the ``tokenizer.json`` bpekit converts each to), Llama 3's vocabulary with
    Tekken's, Kimi K2's and DeepSeek-V3's pre-tokenizers (``harness.hfjson.llama3_vocab_as``), two Llama-2-style
    ``tokenizer.json`` files (character BPE with byte fallback; the legacy normalizer, and the
    newer ``Metaspace``) and a SentencePiece ``.model`` (peer: ``sentencepiece``); a peer that is
    not installed is left out."""
    from corpora import DATA

    cases = []
    neox = DATA / "hf" / "gpt-neox-20b.tokenizer.json"
    spm_model = DATA / "spm" / "bpe_multi_bytefb_3000.model"

    def hf_case(label, path, peer):  # (tokenizers' batch runs on RAYON_NUM_THREADS, set before the import)
        return (label, path, "tokenizers", lambda t, add=False: peer.encode(t, add_special_tokens=add).ids, peer.decode,
                lambda texts, threads: [e.ids for e in peer.encode_batch(texts, add_special_tokens=False)])

    try:
        import tokenizers

        cases.append(hf_case("gpt-neox-20b tokenizer.json", neox, tokenizers.Tokenizer.from_file(str(neox))))
    except Exception as e:  # noqa: BLE001 (an optional peer)
        print(f"tokenizers: not measured ({type(e).__name__}: {e})")
    for label, name in [("llama-bpe (Llama 3) GGUF", "ggml-vocab-llama-bpe.gguf"), ("deepseek-llm GGUF", "ggml-vocab-deepseek-llm.gguf")]:
        path = DATA / "gguf" / name
        try:
            import tokenizers
            from bpekit.formats.gguf import vocab_of
            from bpekit.formats.gguf.to_hf import tokenizer_json_text

            peer = tokenizers.Tokenizer.from_str(tokenizer_json_text(vocab_of(bpekit.Tokenizer.from_file(path))))
            cases.append(hf_case(label, path, peer))
        except Exception as e:  # noqa: BLE001 (an optional peer)
            print(f"{label} with tokenizers: not measured ({type(e).__name__}: {e})")
    for pre in ("tekken", "kimi-k2", "deepseek-v3"):
        label = f"Llama 3 vocabulary as {pre} tokenizer.json"
        try:  # the pre-tokenizers split by hand since session 20, through a vocabulary of the shared data
            import tokenizers
            from harness.hfjson import llama3_vocab_as
            from harness.local import WORK

            path = llama3_vocab_as(WORK, pre)
            cases.append(hf_case(label, path, tokenizers.Tokenizer.from_file(str(path))))
        except Exception as e:  # noqa: BLE001 (an optional peer)
            print(f"{label} with tokenizers: not measured ({type(e).__name__}: {e})")
    for label, metaspace in [("Llama 2 tokenizer.json, legacy", False), ("Llama 2 tokenizer.json, Metaspace", True)]:
        try:  # character BPE with byte fallback, made from the Llama GGUF vocabulary (harness/hfjson.py)
            import tokenizers
            from harness.hfjson import llama2
            from harness.local import WORK

            path = llama2(WORK, metaspace)
            cases.append(hf_case(label, path, tokenizers.Tokenizer.from_file(str(path))))
        except Exception as e:  # noqa: BLE001 (an optional peer)
            print(f"{label} with tokenizers: not measured ({type(e).__name__}: {e})")
    try:
        import sentencepiece

        sp = sentencepiece.SentencePieceProcessor(model_file=str(spm_model))
        cases.append(("bpe_multi_bytefb_3000.model", spm_model, "sentencepiece", lambda t, add=False: sp.encode(t), sp.decode,
                      lambda texts, threads: sp.encode(texts, num_threads=threads)))
    except Exception as e:  # noqa: BLE001
        print(f"sentencepiece: not measured ({type(e).__name__}: {e})")
    return cases


def files(number: int, repeat: int) -> None:
    """µs per call of ``Tokenizer`` loaded from each file of :func:`file_cases` beside the peer:
    encode a paragraph, a word, the word with the post-processor's special tokens (Llama 3's BOS),
    decode the paragraph's ids and one id (what streaming generation decodes)."""
    import timeit

    para = "It was a bright cold day in April, and the clocks were striking thirteen. Winston Smith, his chin nuzzled into his breast."
    cases = file_cases()
    print(f"µs per call (best of {repeat} x {number}); paragraph: {len(para)} characters")
    print("| file | call | bpekit | peer | x |\n|---|---|---|---|---|")
    for label, path, peer, peer_encode, peer_decode, _ in cases:
        tok = bpekit.Tokenizer.from_file(path)
        ids = peer_encode(para)
        assert tok.encode(para) == ids and tok.decode(ids) == peer_decode(ids), label
        assert tok.decode(ids[:1]) == peer_decode(ids[:1]), label
        calls = [("encode(paragraph)", tok.encode, peer_encode, (para,)), ("encode('hi')", tok.encode, peer_encode, ("hi",))]
        if peer == "tokenizers":  # (the SentencePiece pipeline adds nothing; sentencepiece's encode has no such flag)
            assert tok.encode("hi", True) == peer_encode("hi", True), label
            calls.append(("encode('hi', add_special_tokens=True)", tok.encode, peer_encode, ("hi", True)))
        calls += [("decode(ids)", tok.decode, peer_decode, (ids,)), ("decode(ids[:1])", tok.decode, peer_decode, (ids[:1],))]
        for name, ours, theirs, args in calls:
            t = [min(timeit.repeat(lambda f=f: f(*args), number=number, repeat=repeat)) / number * 1e6 for f in (ours, theirs)]
            print(f"| {label} ({peer}) | `{name}` | {t[0]:.2f} | {t[1]:.2f} | {t[1] / t[0]:.2f}x |")


def best_mbps(fn, mb: float, rounds: int) -> float:
    """MB/s of the fastest of ``rounds`` calls of ``fn`` over ``mb`` megabytes."""
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return mb / min(times)


def files_batch(threads: int, rounds: int) -> None:
    """MB/s of one batch call over the English corpus sample (1 MB, by paragraph) for each file of
    :func:`file_cases`: ``Tokenizer.encode_batch`` (lists; and with the post-processor's ids, Llama
    3's and deepseek's BOS), ``encode_batch_to_numpy`` (one flat array), the peer's batch call (lists) and the peer's lists made one array (what a pretraining
    pipeline stores); best of ``rounds``, ids checked equal first."""
    import numpy as np

    docs = load_corpora(1)["english"]
    mb = sum(len(d.encode()) for d in docs) / 1e6

    def best(fn) -> float:
        return best_mbps(fn, mb, rounds)

    print(f"MB/s of one batch call, {mb:.2f} MB of English in {len(docs):,} documents, {threads} thread(s), best of {rounds}")
    print("| file | bpekit lists | bpekit lists, add_special_tokens | bpekit flat numpy | peer lists | peer lists -> numpy | flat x peer -> numpy |")
    print("|---|---|---|---|---|---|---|")
    for label, path, peer, _, _, peer_batch in file_cases():
        tok = bpekit.Tokenizer.from_file(path)
        flat, offsets = tok.encode_batch_to_numpy(docs, num_threads=threads)
        want = peer_batch(docs, threads)
        assert [flat[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == want, label
        cells = [
            best(lambda: tok.encode_batch(docs, num_threads=threads)),
            best(lambda: tok.encode_batch(docs, True, num_threads=threads)),
            best(lambda: tok.encode_batch_to_numpy(docs, num_threads=threads)),
            best(lambda: peer_batch(docs, threads)),
            best(lambda: np.concatenate([np.asarray(ids, dtype=np.uint32) for ids in peer_batch(docs, threads)])),
        ]
        print(f"| {label} ({peer}) | {' | '.join(f'{c:.1f}' for c in cells)} | {cells[2] / cells[4]:.1f}x |")


def count_batches(threads: int, rounds: int) -> None:
    """MB/s of the token counts of one batch (English and multilingual, 1 MB each, by document):
    ``count_batch`` against the lengths of ``encode_batch``'s lists, bpekit's and the peer's
    (tiktoken for cl100k / o200k, on its `num_threads`; ``tokenizers``
    and ``sentencepiece`` for the files); best of ``rounds``, counts checked equal first."""
    from harness.local import setup_env

    setup_env(threads)
    docs = load_corpora(1)
    print(f"MB/s of one batch's token counts, {threads} thread(s), best of {rounds}")
    print("| tokenizer | corpus | bpekit count_batch | bpekit len(encode_batch) | peer len(encode_batch) | x peer |")
    print("|---|---|---|---|---|---|")

    rows = []
    try:
        import tiktoken
    except ImportError:
        tiktoken = None
    for name in ("cl100k_base", "o200k_base"):
        enc = bpekit.get_encoding(name)
        peer = tiktoken.get_encoding(name) if tiktoken else None
        rows.append((name, lambda t, e=enc: e.count_batch(t, num_threads=threads, disallowed_special=()),
                     lambda t, e=enc: [len(x) for x in e.encode_ordinary_batch(t, num_threads=threads)],
                     peer and (lambda t, p=peer: [len(x) for x in p.encode_ordinary_batch(t, num_threads=threads)])))
    for label, path, peer, _, _, peer_batch in file_cases():
        tok = bpekit.Tokenizer.from_file(path)
        rows.append((f"{label} ({peer})", lambda t, k=tok: k.count_batch(t, num_threads=threads),
                     lambda t, k=tok: [len(x) for x in k.encode_batch(t, num_threads=threads)],
                     lambda t, b=peer_batch: [len(x) for x in b(t, threads)]))
    for label, ours, lists, peer in rows:
        for corpus in ("english", "multilingual"):
            texts = docs[corpus]
            mb = sum(len(d.encode()) for d in texts) / 1e6
            want = lists(texts)
            assert ours(texts) == want and (peer is None or peer(texts) == want), (label, corpus)
            cells = [best_mbps(lambda f=f: f(texts), mb, rounds) for f in (ours, lists)] + ([best_mbps(lambda: peer(texts), mb, rounds)] if peer else [])
            ratio = f"{cells[0] / cells[2]:.1f}x" if peer else ""
            print(f"| {label} | {corpus} | {' | '.join(f'{c:.1f}' for c in cells)} | {ratio} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--number", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--no-batch", action="store_true")
    ap.add_argument("--scaling", action="store_true", help="only the 1- vs 2-thread wall times (see above)")
    ap.add_argument("--split", action="store_true", help="only the 2-thread batches' CPU split (see above)")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--api", action="store_true", help="only the public calls against tiktoken's (see API)")
    ap.add_argument("--files", action="store_true", help="only Tokenizer from tokenizer.json / .model vs their libraries")
    ap.add_argument("--files-batch", type=int, metavar="THREADS", help="only batches of those files (see files_batch)")
    ap.add_argument("--count-batch", type=int, metavar="THREADS", help="only count_batch against len(encode_batch) (see count_batches)")
    a = ap.parse_args()
    if a.count_batch:
        count_batches(a.count_batch, a.rounds)
        return 0
    if a.files_batch:
        files_batch(a.files_batch, a.rounds)
        return 0
    if a.files:
        files(a.number // 10, a.repeat)
        return 0
    if a.api:
        api(a.encoding, a.number // 10, a.repeat)
        return 0
    enc = bpekit.get_encoding(a.encoding)
    if a.scaling:
        scaling(enc, a.encoding, a.rounds)
        return 0
    if a.split:
        split(enc, a.encoding, a.rounds)
        return 0
    methods = {
        "encode_ordinary": enc.encode_ordinary,
        "encode": enc.encode,
        "encode_to_numpy": enc.encode_to_numpy,
        "encode_to_numpy(disallowed_special=())": lambda t: enc.encode_to_numpy(t, disallowed_special=()),
        "count": enc.count,
    }
    samples = texts()
    print(f"{bpekit.__file__}\n{a.encoding}: µs per call (best of {a.repeat} x {a.number})")
    print(f"| method | {' | '.join(samples)} |\n|---|{'---|' * len(samples)}")
    for name, fn in methods.items():
        cells = [f"{per_call(fn, t, a.number, a.repeat):.2f}" for t in samples.values()]
        print(f"| {name} | {' | '.join(cells)} |")
    if not a.no_batch:
        split(enc, a.encoding, a.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
