"""Builds the fuzz seed corpus from the shared data, into fuzz/corpus/<target>/ (git-ignored).

Each seed is a selector byte (which pattern, encoder or vocabulary the target uses) followed by a
slice of real text: English, a stride of the Tatoeba languages and Bible translations, Python
sources, and a few hostile strings. The rank-file target gets the heads of the real rank files.
The data is read in place from $BPEKIT_TEST_DATA (default ../shared/data); nothing is copied
into git. Usage: python fuzz/make_corpus.py [--slices-per-file N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent
TARGETS = ("pretokenize", "round_trip", "merges", "rankfile", "specials")
HOSTILE = [
    "a" * 3000,
    " " * 2000 + "x",
    "\n\r" * 500,
    "1234567890" * 200,
    "<|endoftext|>" * 100,
    "<|endoftext" * 100,
    "\u00e9\u0301" * 400,
    "\U0001f600\u200d" * 300,
    "'s'S'll'LL" * 100,
    "\ufeff\u00a0\u3000" * 200,
]


def data_dir() -> Path:
    return Path(os.environ.get("BPEKIT_TEST_DATA", ROOT.parent.parent / "shared" / "data"))


def text_files(data: Path) -> list[Path]:
    corpora = data / "corpora"
    files = [corpora / "tinyshakespeare.txt", corpora / "taylorswift.txt"]
    for sub in ("tatoeba", "bible"):
        files += sorted((corpora / sub).glob("*"))[::3]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files += sorted(stdlib.glob("*.py"))[::40]
    return [f for f in files if f.is_file()]


def slices(path: Path, per_file: int) -> list[bytes]:
    data = path.read_bytes()
    step = max(1, len(data) // per_file)
    return [data[i : i + 600] for i in range(0, len(data), step)][:per_file]


def write(target: str, seeds: list[bytes]) -> None:
    out = ROOT / "corpus" / target
    out.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        (out / hashlib.sha1(seed).hexdigest()).write_bytes(seed)
    print(f"{target}: {len(seeds)} seeds in {out}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices-per-file", type=int, default=4)
    args = parser.parse_args()
    data = data_dir()
    if not (data / "corpora").is_dir():
        print(f"no data at {data}: set BPEKIT_TEST_DATA", file=sys.stderr)
        return 1
    texts = [s for f in text_files(data) for s in slices(f, args.slices_per_file)]
    texts += [h.encode() for h in HOSTILE]
    for target in ("pretokenize", "round_trip", "merges"):
        write(target, [bytes([i % 256]) + t for i, t in enumerate(texts)])
    specials = [bytes([i % 256, i % 7]) + t[:200] for i, t in enumerate(texts[:200])]
    write("specials", specials)
    heads = []
    for name in ("r50k_base", "p50k_base", "cl100k_base", "o200k_base"):
        raw = (data / "ranks" / f"{name}.tiktoken").read_bytes()
        heads += [raw[:2000], raw[len(raw) // 2 : len(raw) // 2 + 2000].split(b"\n", 1)[-1]]
    write("rankfile", heads)
    write_python_seeds(data, heads)
    return 0


def write_python_seeds(data: Path, rank_heads: list[bytes]) -> None:
    """Seeds of fuzz/python/parsers.py: rank text, minbpe and SentencePiece models, bpekit JSON."""
    sys.path.insert(0, str(ROOT.parent / "python"))
    import bpekit

    write("py_tiktoken", [h[:300] for h in rank_heads])
    spm = sorted((data / "spm").glob("*.model"), key=lambda p: p.stat().st_size)
    write("py_sentencepiece", [p.read_bytes() for p in spm[:5]])
    tok = bpekit.Tokenizer(pattern=r"\S+|\s+", merges=[(b"a", b"b"), (b"ab", b"c"), (b" ", b"ab")],
                           special_tokens=["<|end|>"])
    write("py_json", [json.dumps(tok.to_dict()).encode()])
    minbpe = "\n0\n97 98\n256 99\n32 256\n"
    write("py_minbpe", [minbpe.encode(), b"\n1\n<|x|> 259\n97 98\n"])


if __name__ == "__main__":
    sys.exit(main())
