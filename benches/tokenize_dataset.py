"""Dataset tokenization benchmark: ``bpekit tokenize`` against the usual Hugging Face recipe
(``datasets.map(batched=True, num_proc=N)`` with a fast ``tokenizers`` tokenizer, then the ids
written to one flat ``uint16`` ``.bin`` as nanoGPT's ``prepare.py`` does), on the multilingual
corpus (every Bible and Tatoeba file, blocks of 20 lines per document; benches/corpora.py).

    python benches/tokenize_dataset.py                     # the whole corpus, 2 processes / threads
    python benches/tokenize_dataset.py --max-lines 400     # a quick run

Both sides use the same tokenizer: one bpekit trains on a sample of the corpus (vocab 16,384,
o200k pattern) and exports as a Hugging Face ``tokenizer.json``, or a real ``tokenizer.json`` given
with ``--tokenizer`` (bpekit then runs it as a pipeline: GPT-NeoX's, for example). Both write the
same file (one shard of uint16 ids, uint32 past 65,536 ids; no header, no EOS), and the script
checks that the two files are byte-identical.

    python benches/tokenize_dataset.py --tokenizer ../shared/data/hf/gpt-neox-20b.tokenizer.json
Each side runs in its own subprocess and is timed end to end (interpreter start, tokenizer load,
reading Parquet, encoding, writing). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# This file's name hides the standard library's ``tokenize`` (which pandas imports) while its folder
# is on sys.path: take the folder off and load benches/corpora.py by path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benches"]
_spec = importlib.util.spec_from_file_location("corpora", ROOT / "benches" / "corpora.py")
corpora = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(corpora)  # type: ignore[union-attr]

HF_SCRIPT = """
    import sys, time, numpy as np, datasets
    t0 = time.perf_counter()
    from tokenizers import Tokenizer
    corpus, tok_path, out, procs, dtype = sys.argv[1:]
    datasets.disable_progress_bars()
    tok = Tokenizer.from_file(tok_path)
    ds = datasets.load_dataset("parquet", data_files=corpus, split="train")
    def enc(batch):
        return {"ids": [e.ids for e in tok.encode_batch(batch["text"], add_special_tokens=False)]}
    t1 = time.perf_counter()
    ds = ds.map(enc, batched=True, num_proc=int(procs), remove_columns=["text"])
    t2 = time.perf_counter()
    lens = np.fromiter((len(x) for x in ds["ids"]), dtype=np.int64, count=len(ds))
    arr = np.memmap(out, dtype=dtype, mode="w+", shape=(int(lens.sum()),))
    at = 0
    for shard in range(16):  # nanoGPT prepare.py: write in contiguous shards
        part = ds.shard(num_shards=16, index=shard, contiguous=True).with_format("numpy")
        ids = np.concatenate(list(part["ids"])) if len(part) else np.zeros(0, dtype)
        arr[at : at + len(ids)] = ids
        at += len(ids)
    arr.flush()
    print(f"load {t1 - t0:.1f} s, map {t2 - t1:.1f} s, write {time.perf_counter() - t2:.1f} s")
"""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Wall seconds of a command, and the last line it printed (its own phase timings)."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    return time.perf_counter() - start, lines[-1] if lines else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-lines", type=int, default=10**9, help="lines read from each corpus file")
    ap.add_argument("--procs", type=int, default=2, help="HF map processes and bpekit threads")
    ap.add_argument("--vocab-size", type=int, default=16384)
    ap.add_argument("--tokenizer", type=Path, help="a Hugging Face tokenizer.json for both sides (default: train one)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = ap.parse_args()

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from bpekit.train import train

    work = Path(tempfile.mkdtemp(prefix="bpekit-bench-tokenize-"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")]),
           "HF_DATASETS_CACHE": str(work / "hf-cache"), "HF_DATASETS_OFFLINE": "1"}  # fmt: skip
    try:
        docs = corpora.multilingual(max_lines_per_file=args.max_lines)
        mb = corpora.size_mb(docs)
        corpus = work / "corpus.parquet"
        pq.write_table(pa.table({"text": docs}), corpus)
        if args.tokenizer is None:
            tok = train(iter(docs[::10]), vocab_size=args.vocab_size, show_progress=False)
            tok.save(work / "tok.json")
            tok.export_hf(work / "tokenizer.json")
            ours, theirs, what = work / "tok.json", work / "tokenizer.json", f"trained, vocab {args.vocab_size:,}"
        else:
            from bpekit import Tokenizer

            tok = Tokenizer.from_file(args.tokenizer)
            ours = theirs = args.tokenizer.resolve()
            what = f"{args.tokenizer.name}, {tok.n_vocab:,} ids, {'rank model' if tok.encoding else 'pipeline'}"
        dtype = "uint16" if tok.n_vocab <= 2**16 else "uint32"

        out = work / "bpekit"
        bpekit_cmd = [sys.executable, "-m", "bpekit", "tokenize", str(corpus), "-o", str(out), "-t", str(ours),
                      "--threads", str(args.procs), "--shard-size", str(2**31 - 1), "--dtype", dtype]  # fmt: skip
        t_bpekit, note_bpekit = timed(bpekit_cmd, env)
        hf_bin = work / "hf.bin"
        hf_cmd = [sys.executable, "-c", textwrap.dedent(HF_SCRIPT), str(corpus), str(theirs), str(hf_bin), str(args.procs), dtype]
        t_hf, note_hf = timed(hf_cmd, env)
        same = sha256(out / "shard_000000.bin") == sha256(hf_bin)
        tokens = hf_bin.stat().st_size // np.dtype(dtype).itemsize
        print(f"corpus: {len(docs):,} documents, {mb:.1f} MB, {tokens:,} tokens (tokenizer: {what}); "
              f"{args.procs} processes/threads; outputs byte-identical: {same}\n")  # fmt: skip
        print("| pipeline | wall s | MB/s | docs/s | its own report |")
        print("|---|---:|---:|---:|---|")
        rows = [
            (f"bpekit tokenize --threads {args.procs}", t_bpekit, note_bpekit.split(" -> ")[0]),
            (f"datasets.map(num_proc={args.procs}) + HF tokenizers + .bin", t_hf, note_hf),
        ]
        for name, t, note in rows:
            print(f"| {name} | {t:.1f} | {mb / t:.1f} | {len(docs) / t:,.0f} | {note} |")
        if not same:
            sys.exit("the two pipelines wrote different tokens")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
