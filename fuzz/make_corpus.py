"""Builds the fuzz seed corpus from the shared data, into fuzz/corpus/<target>/ (git-ignored).

Each seed is a selector byte (which pattern, encoder or vocabulary the target uses) followed by a
slice of real text: English, a stride of the Tatoeba languages and Bible translations, Python
sources, and a few hostile strings. The rank-file target gets the heads of the real rank files.
The Python parsers get real files made small: a few hundred tokens of the GPT-NeoX
tokenizer.json and of each llama.cpp GGUF vocabulary (merges kept where their tokens are), the
Hugging Face documents bpekit makes of those GGUF vocabularies, and GGUF headers cut short.
The data is read in place from $BPEKIT_TEST_DATA (default ../shared/data); nothing is copied
into git. Usage: python fuzz/make_corpus.py [--slices-per-file N]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent
TARGETS = ("pretokenize", "round_trip", "merges", "rankfile", "specials", "sentencepiece", "pairbpe", "patterns")
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
    # flags, piece count, then bytes that read as pieces and text (src/fuzzing.rs `sentencepiece`)
    write("sentencepiece", [bytes([i % 128, i % 12]) + t[:200] for i, t in enumerate(texts[:200])])
    # flags, prefix options, merge count, then merge picks and text (src/fuzzing_pairbpe.rs)
    write("pairbpe", [bytes([(i * 37) % 256, i % 4, 8 + i % 40]) + t[:160] for i, t in enumerate(texts[:256])])
    # a pattern pick, the text's mode (odd: raw UTF-8), then the text (src/fuzzing_patterns.rs)
    write("patterns", [bytes([i % 256, 1]) + t[:300] for i, t in enumerate(texts[:512])])
    heads = rank_heads(data)
    write("rankfile", heads)
    for target, seeds in python_seeds(data, heads).items():
        write(f"py_{target}", seeds)
    return 0


def rank_heads(data: Path) -> list[bytes]:
    """The first 2 kB and 2 kB from the middle of each OpenAI rank file."""
    heads = []
    for name in ("r50k_base", "p50k_base", "cl100k_base", "o200k_base"):
        raw = (data / "ranks" / f"{name}.tiktoken").read_bytes()
        heads += [raw[:2000], raw[len(raw) // 2 : len(raw) // 2 + 2000].split(b"\n", 1)[-1]]
    return heads


# llama.cpp pre-tokenizer names whose splits bpekit does by hand since session 20
HAND_SPLIT_NAMES = ("tekken", "kimi-k2", "qwen35", "deepseek-v3", "smollm", "bailingmoe")


def python_seeds(data: Path, heads: list[bytes], gguf_limit: int | None = None) -> dict[str, list[bytes]]:
    """Seeds of fuzz/python/parsers.py by target: rank text, minbpe and SentencePiece models,
    bpekit JSON, small tokenizer.json and GGUF files (of the ``gguf_limit`` smallest GGUF
    vocabularies when given)."""
    sys.path.insert(0, str(ROOT.parent / "python"))
    import bpekit

    seeds: dict[str, list[bytes]] = {"tiktoken": [h[:300] for h in heads]}
    spm = sorted((data / "spm").glob("*.model"), key=lambda p: p.stat().st_size)
    seeds["sentencepiece"] = [p.read_bytes() for p in spm[:5]]
    tok = bpekit.Tokenizer(pattern=r"\S+|\s+", merges=[(b"a", b"b"), (b"ab", b"c"), (b" ", b"ab")],
                           special_tokens=["<|end|>"])
    seeds["json"] = [json.dumps(tok.to_dict()).encode()]
    minbpe = "\n0\n97 98\n256 99\n32 256\n"
    seeds["minbpe"] = [minbpe.encode(), b"\n1\n<|x|> 259\n97 98\n"]
    from bpekit.formats.gguf import GGUFVocab, container, to_hf

    gguf_seeds, hf_seeds = [], [small_hf(data / "hf" / "gpt-neox-20b.tokenizer.json", n) for n in (40, 120)]
    for path in sorted((data / "gguf").glob("*.gguf"), key=lambda p: p.stat().st_size)[:gguf_limit]:
        raw = path.read_bytes()
        gguf_seeds.append(raw[:3000])  # declares arrays far longer than the bytes left
        gf = container.parse(raw, path.name)
        small = container.serialize(small_gguf(gf))
        gguf_seeds.append(small)
        vocab = GGUFVocab.from_file(container.parse(small), path.name)
        if vocab.model == "gpt2":
            hf_seeds.append(json.dumps(to_hf.tokenizer_json(vocab), ensure_ascii=False).encode())
        if "llama-bpe" in path.name:
            # the pre-tokenizers split by hand since session 20, on the same small vocabulary
            for name in HAND_SPLIT_NAMES:
                renamed = dataclasses.replace(vocab, pre=name)
                hf_seeds.append(json.dumps(to_hf.tokenizer_json(renamed), ensure_ascii=False).encode())
                gguf_seeds.append(container.serialize(renamed.to_file()))
    hf_seeds += [llama2_style(metaspace) for metaspace in (False, True)]
    hf_seeds += [more_stages(data, suffix) for suffix in (False, True)]
    seeds["gguf"], seeds["hf"] = gguf_seeds, hf_seeds
    return seeds


def llama2_style(metaspace: bool) -> bytes:
    """A small character BPE in the Llama-2 layouts: byte fallback, unk, the Llama decoder, and
    the legacy normalizer (``Prepend`` + ``Replace``) or ``Metaspace``."""
    marker = "\u2581"
    tokens = ["<unk>", "<s>", *(f"<0x{b:02X}>" for b in range(256)), *"abc", marker, marker + "a", "bc", marker + "abc"]
    merges = [[marker, "a"], ["b", "c"], [marker + "a", "bc"]]
    doc = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": 1, "content": "<s>", "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True}],
        "normalizer": None if metaspace else {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": marker}, {"type": "Replace", "pattern": {"String": " "}, "content": marker}]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": marker, "prepend_scheme": "first", "split": False}
        if metaspace else None,
        "post_processor": None,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": marker}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": {t: i for i, t in enumerate(tokens)}, "merges": merges},
    }
    return json.dumps(doc, indent=2, ensure_ascii=False).encode()


def more_stages(data: Path, suffix: bool) -> bytes:
    """A small character BPE with the stages added in session 34: ``BertNormalizer``, ``Nmt``,
    the ``ByteLevel`` normalizer and ``Precompiled`` (the charsmap of the smallest nmt_nfkc
    SentencePiece model, if the shared data has one); ``BertPreTokenizer``,
    ``CharDelimiterSplit``, ``FixedLength``, ``Whitespace``; ``WordPiece`` and ``CTC`` decoders;
    with ``suffix``, OpenAI GPT's ``</w>`` tokens."""
    import base64

    sys.path.insert(0, str(ROOT.parent / "python"))
    from bpekit.formats.sentencepiece.model import SentencePieceModel

    end = "</w>" if suffix else ""
    tokens = ["<unk>", *"abc.", *(c + end for c in "abc."), "ab", "abc", "ab" + end, "abc" + end]
    merges = [["a", "b"], ["ab", "c"]] + ([["a", "b" + end], ["ab", "c" + end]] if end else [])
    normalizers = [{"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
                    "lowercase": True}, {"type": "Nmt"}]
    charsmap = None
    for path in sorted((data / "spm").glob("bpe_multi*.model"), key=lambda p: p.stat().st_size)[:1]:
        charsmap = SentencePieceModel.load(path).precompiled_charsmap
    if charsmap:
        normalizers.append({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()})
    if not suffix:
        normalizers.append({"type": "ByteLevel"})
    doc = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": {"type": "Sequence", "normalizers": normalizers},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "BertPreTokenizer"}, {"type": "CharDelimiterSplit", "delimiter": "c"},
            {"type": "FixedLength", "length": 4}, {"type": "Whitespace"}]},
        "post_processor": None,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "WordPiece", "prefix": "##", "cleanup": True},
            {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": end or None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": {t: i for i, t in enumerate(dict.fromkeys(tokens))},
                  "merges": merges},
    }
    return json.dumps(doc, indent=2, ensure_ascii=False).encode()


def small_hf(path: Path, n: int) -> bytes:
    """The tokenizer.json at ``path`` with the tokens of id < n and the merges among them."""
    doc = json.loads(path.read_bytes())
    vocab = {t: i for t, i in doc["model"]["vocab"].items() if i < n}
    merges = [m for m in doc["model"]["merges"] if all(p in vocab for p in (*m.split(" "), m.replace(" ", "")))]
    doc["model"].update(vocab=vocab, merges=merges)
    doc["added_tokens"] = [t for t in doc["added_tokens"] if t["id"] < n]
    return json.dumps(doc, indent=2, ensure_ascii=False).encode()


def small_gguf(gf):  # type: ignore[no-untyped-def]
    """A GGUF vocabulary made small (a parse with a build of the tokenizer takes milliseconds in
    the fuzzer, proportional to the pairs and tokens): the tokenizer keys and the architecture
    only, about 60 tokens (byte-level: the first 40 and those of the first 10 merges;
    SentencePiece-style: <unk> <s> </s> and the pieces after the 256 bytes), renumbered, the
    special tokens after them, the merges among them, strings cut to 200 characters."""
    from bpekit.formats.gguf import container

    pre = "tokenizer.ggml."
    kv = gf.kv = {k: v for k, v in gf.kv.items() if k.startswith("tokenizer.") or k == "general.architecture"}
    tokens = kv[pre + "tokens"].value
    if gf.get(pre + "model") == "llama":
        keep = [0, 1, 2, *range(259, 319)]
    else:
        index = {t: i for i, t in enumerate(tokens)}
        firsts = [t for m in kv[pre + "merges"].value[:10] for t in (*m.split(" ", 1), m.replace(" ", "", 1))]
        keep = sorted(set(range(40)) | {index[t] for t in firsts if t in index})
    new_id = {old: new for new, old in enumerate(keep)}
    for key, v in kv.items():
        if key.startswith(pre) and key.endswith("_token_id"):
            if v.value not in new_id:
                new_id[v.value] = len(keep)
                keep.append(v.value)
            v.value = new_id[v.value]
    for key in ("tokens", "scores", "token_type"):
        if pre + key in kv:
            kv[pre + key].value = [kv[pre + key].value[i] for i in keep]
    if pre + "merges" in kv:
        kept = set(kv[pre + "tokens"].value)
        kv[pre + "merges"].value = [
            m for m in kv[pre + "merges"].value if all(p in kept for p in (*m.split(" ", 1), m.replace(" ", "", 1)))
        ]
    for v in kv.values():
        if v.type == container.STRING:
            v.value = v.value[:200]
    return gf


if __name__ == "__main__":
    sys.exit(main())
