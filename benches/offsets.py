"""Offsets speed: ``encode_with_offsets`` against the peers that give each token's span.

Passes, one call per document over each corpus (``benches/corpora.py``, sampled to ``--max-mb``
as benches/speed.py does), in interleaved rounds (each after a full collection with the collector
off, as benches/speed.py times):

- cl100k_base and o200k_base: bpekit ``Encoding.encode_with_offsets`` and Hugging Face
  ``tokenizers``' ``encode(text).offsets`` on the peers' generated tokenizer.json (whose ByteLevel
  post-processor does not trim); bpekit's plain ``encode`` beside them;
- GPT-NeoX's tokenizer.json (NFC, ByteLevel with ``trim_offsets``): bpekit ``Tokenizer`` against
  ``tokenizers``;
- Llama 2's ``tokenizer.json`` (character BPE with byte fallback), as ``transformers`` converts the
  Llama GGUF vocabulary of the shared data, legacy (``Prepend`` + ``Replace`` normalizer) and
  ``Metaspace`` layouts: bpekit ``Tokenizer`` against ``tokenizers``;
- CLIP's ``tokenizer.json`` layout (``</w>`` tokens, whitespace dropped by its split, a regex
  ``Replace`` and ``Lowercase``), trained on the English corpus: bpekit ``Tokenizer`` against
  ``tokenizers``;
- Falcon's pre-tokenizer (``Punctuation``, ``ByteLevel``, then ``Digits`` and digit groups over
  the byte-level characters) with a BPE trained on the English corpus: the same;
- the ``tokenizers`` quicktour's layout (``Whitespace``, a BPE over characters with ``[UNK]``)
  and OpenAI GPT's (``BertNormalizer``, ``BertPreTokenizer``, characters with ``</w>``), trained
  on the English corpus: the same;
- a SentencePiece BPE model as ``transformers`` converts it (``Precompiled``, ``Metaspace``, byte
  fallback), trained on English and the multilingual sample: the same; for these trained layouts
  also the whole corpus in one batch call each (``encode_batch_with_offsets`` against
  ``tokenizers``' ``encode_batch``, both on every core);
- a SentencePiece model (``bpe_multi_bytefb_3000``): bpekit ``SentencePieceBPE`` against
  sentencepiece's ``encode(text, return_type="proto")`` (its pieces' ``begin`` / ``end``).

Every pass's ids and offsets are checked equal to the peer's on every document first (the
sentencepiece spans converted from bytes to characters), or the run stops. Reported: MB/s of
input (median of the rounds) and the median of the per-round ratios to the peer's pass.

    python benches/offsets.py [--rounds 5] [--max-mb 1] [--only clip gpt-neox ...]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from harness.local import ENCODINGS, load_corpora, setup_env  # noqa: I001 (first: sets the env)

setup_env()
import bpekit  # noqa: E402
from corpora import DATA, size_mb  # noqa: E402  ($BPEKIT_TEST_DATA, default ../shared/data)
from harness.timing import print_rows  # noqa: E402

PEER = "peer offsets"
BATCH = "batch:"  # (a pass over the whole corpus in one call)


def rank_passes(name: str) -> dict[str, Callable[[str], object]]:
    from harness import hfjson
    from tokenizers import Tokenizer as HF

    enc, hf = bpekit.get_encoding(name), HF.from_file(str(hfjson.path(name)))
    return {
        "bpekit encode_with_offsets": lambda t: enc.encode_with_offsets(t, disallowed_special=()),
        PEER: lambda t: (lambda e: (e.ids, e.offsets))(hf.encode(t, add_special_tokens=False)),
        "bpekit encode": lambda t: enc.encode(t, disallowed_special=()),
    }


def neox_passes(data: Path) -> dict[str, Callable[[str], object]]:
    from tokenizers import Tokenizer as HF

    path = data / "hf" / "gpt-neox-20b.tokenizer.json"
    ours, hf = bpekit.Tokenizer.from_file(path), HF.from_file(str(path))
    return {
        "bpekit encode_with_offsets": ours.encode_with_offsets,
        PEER: lambda t: (lambda e: (e.ids, e.offsets))(hf.encode(t, add_special_tokens=False)),
    }


def llama2_passes(metaspace: bool) -> dict[str, Callable[[str], object]]:
    """A Llama-2 ``tokenizer.json`` (character BPE with byte fallback), made from the Llama GGUF
    vocabulary as ``transformers`` converts it (``harness.hfjson.llama2``)."""
    from harness import hfjson
    from tokenizers import Tokenizer as HF

    path = hfjson.llama2(hfjson.WORK, metaspace)
    ours, hf = bpekit.Tokenizer.from_file(path), HF.from_file(str(path))
    return {
        "bpekit encode_with_offsets": ours.encode_with_offsets,
        PEER: lambda t: (lambda e: (e.ids, e.offsets))(hf.encode(t, add_special_tokens=False)),
    }


def trained_passes(layout: str) -> dict[str, Callable[[str], object]]:
    """A ``tokenizer.json`` trained in a peer's layout (``harness.hfjson``): ``"clip"`` (a regex
    ``Replace`` and ``Lowercase`` in the normalizer, a split stage that drops whitespace, ``</w>``
    tokens), ``"falcon"`` (stages after ``ByteLevel`` that cut the byte-level string),
    ``"quicktour"`` (``Whitespace`` and a BPE over characters with an unk token, as the
    ``tokenizers`` quicktour trains) or ``"openai-gpt"`` (``BertNormalizer``,
    ``BertPreTokenizer``, characters with ``</w>``) or ``"spm-converted"`` (a SentencePiece BPE
    model as ``transformers`` converts it: ``Precompiled``, ``Metaspace``, byte fallback); plain
    ``encode`` beside the offsets (``tokenizers``' ``encode`` always makes them)."""
    from harness import hfjson
    from tokenizers import Tokenizer as HF

    path = {"clip": hfjson.clip, "falcon": hfjson.falcon, "quicktour": hfjson.quicktour,
            "openai-gpt": hfjson.openai_gpt, "spm-converted": hfjson.spm_converted}[layout](hfjson.WORK)
    ours, hf = bpekit.Tokenizer.from_file(path), HF.from_file(str(path))
    return {
        "bpekit encode_with_offsets": ours.encode_with_offsets,
        PEER: lambda t: (lambda e: (e.ids, e.offsets))(hf.encode(t, add_special_tokens=False)),
        "bpekit encode": ours.encode,
        BATCH + " bpekit": lambda docs: ours.encode_batch_with_offsets(docs, num_threads=0),
        BATCH + " peer": lambda docs: [e.offsets for e in hf.encode_batch(docs, add_special_tokens=False)],
    }


def spm_passes(data: Path) -> dict[str, Callable[[str], object]]:
    import sentencepiece
    from bpekit.formats.sentencepiece import SentencePieceBPE
    from bpekit.offsets import char_at_byte

    path = data / "spm" / "bpe_multi_bytefb_3000.model"
    ours, ref = SentencePieceBPE.load(path), sentencepiece.SentencePieceProcessor(model_file=str(path))

    def peer(text: str) -> object:
        pieces = ref.encode(text, return_type="proto").pieces
        at = char_at_byte(text)
        return [p.id for p in pieces], [(at[p.begin], at[p.end]) for p in pieces]

    return {"bpekit encode_with_offsets": ours.encode_with_offsets, PEER: peer}


def check(label: str, passes: dict[str, Callable[[str], object]], docs: list[str]) -> None:
    """bpekit's offsets must be the peer's on every document."""
    ours, peer = passes["bpekit encode_with_offsets"], passes[PEER]
    bad = [i for i, d in enumerate(docs) if ours(d) != peer(d)]
    if bad:
        sys.exit(f"{label}: offsets differ from the peer's on {len(bad)} documents (first: {bad[0]})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--max-mb", type=float, default=1.0)
    ap.add_argument("--data", type=Path, default=DATA, help="the shared data folder (GPT-NeoX, SentencePiece)")
    ap.add_argument("--only", nargs="*", default=None, metavar="LABEL",
                    help="run only the tokenizers whose label starts with one of these (e.g. clip gpt-neox)")
    args = ap.parse_args()
    corpora = load_corpora(args.max_mb)
    print("| tokenizer | corpus (MB) | pass | MB/s | x peer offsets |")
    print("|---|---|---|---|---|")
    sets = [(name, lambda name=name: rank_passes(name)) for name in ENCODINGS]
    sets += [("gpt-neox", lambda: neox_passes(args.data)),
             ("llama-2 legacy", lambda: llama2_passes(False)), ("llama-2 metaspace", lambda: llama2_passes(True)),
             ("clip layout", lambda: trained_passes("clip")), ("falcon layout", lambda: trained_passes("falcon")),
             ("quicktour layout", lambda: trained_passes("quicktour")),
             ("openai-gpt layout", lambda: trained_passes("openai-gpt")),
             ("spm-converted layout", lambda: trained_passes("spm-converted")),
             ("spm bytefb_3000", lambda: spm_passes(args.data))]
    for label, make in sets:
        if args.only is not None and not any(label.startswith(o) for o in args.only):
            continue
        passes = make()
        for corpus, docs in corpora.items():
            if label.startswith("spm bytefb") and corpus == "code":
                continue  # (a 3,000-piece multilingual model: code says little)
            check(f"{label} {corpus}", passes, docs)
            timed = {k: (lambda run=run: run(docs)) if k.startswith(BATCH) else (lambda run=run: [run(d) for d in docs])
                     for k, run in passes.items()}
            print_rows(label, corpus, size_mb(docs), timed, PEER, args.rounds)


if __name__ == "__main__":
    main()
