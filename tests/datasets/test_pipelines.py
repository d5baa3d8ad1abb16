"""``tokenize`` with pipeline tokenizers (``tokenizer.json``, GGUF, SentencePiece ``.model``): the
shards hold, per document, BOS + the ids the peer library gives with special-token text encoded as
text + EOS. Peers: Hugging Face ``tokenizers`` with ``encode_special_tokens = True`` (GPT-NeoX's
file; a GGUF file through formats.md §5.8's ``tokenizer.json``, as tests/formats/test_gguf_hf.py
checks), and ``sentencepiece``, which never matches control pieces in text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bpekit import Tokenizer
from bpekit.cli import main
from bpekit.datasets import read_manifest, tokenize
from bpekit.datasets.plan import load_tokenizer
from datapaths import DATA

NEOX = DATA / "hf" / "gpt-neox-20b.tokenizer.json"
LLAMA3 = DATA / "gguf" / "ggml-vocab-llama-bpe.gguf"
QWEN2 = DATA / "gguf" / "ggml-vocab-qwen2.gguf"
SPM = DATA / "spm" / "bpe_multi_bytefb_3000.model"

# special-token text of each file, as a document may hold it (and must keep as text)
SPECIAL_TEXT = ["<|endoftext|>", "<|begin_of_text|>", "<|end_of_text|>", "<|im_start|>user", "<s>", "</s>", "<unk>"]


def _docs(h) -> list[str]:
    docs = h.make_docs(120, seed=7)
    docs += [f"a {s} b" for s in SPECIAL_TEXT] + ["".join(SPECIAL_TEXT), "   \n\n x  \t 12345678 Cửa Việt"]
    return docs


def _need(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"{path} not found (set BPEKIT_TEST_DATA)")
    return path


def _hugging_face(path: Path):
    tokenizers = pytest.importorskip("tokenizers")
    if path.suffix == ".gguf":
        from bpekit.formats.gguf.to_hf import tokenizer_json
        from bpekit.formats.gguf.vocab import GGUFVocab

        ref = tokenizers.Tokenizer.from_str(json.dumps(tokenizer_json(GGUFVocab.read(path))))
    else:
        ref = tokenizers.Tokenizer.from_file(str(path))
    ref.encode_special_tokens = True
    return lambda docs: [e.ids for e in ref.encode_batch(docs, add_special_tokens=False)]


def _sentencepiece(path: Path):
    spm = pytest.importorskip("sentencepiece")
    ref = spm.SentencePieceProcessor(model_file=str(path))
    return lambda docs: ref.encode(docs)


@pytest.mark.parametrize(
    "path, peer, bos, eos",
    [
        (NEOX, _hugging_face, "<|endoftext|>", "<|endoftext|>"),
        (LLAMA3, _hugging_face, "<|begin_of_text|>", "<|end_of_text|>"),
        (QWEN2, _hugging_face, "<|endoftext|>", "<|endoftext|>"),
        (SPM, _sentencepiece, "<s>", "</s>"),
    ],
    ids=["neox-json", "llama3-gguf", "qwen2-gguf", "spm-model"],
)
def test_shards_equal_the_peer_with_special_text_as_text(tmp_path, h, path, peer, bos, eos) -> None:
    path = _need(path)
    docs = _docs(h)
    src = h.write_jsonl(tmp_path / "in.jsonl", docs)
    manifest = tokenize([src], tmp_path / "out", str(path), bos=True, eos=True, shard_size=700, threads=2,
                        show_progress=False)
    tok = Tokenizer.from_file(path)
    bos_id, eos_id = tok.token_to_id(bos), tok.token_to_id(eos)
    assert (manifest["settings"]["bos"], manifest["settings"]["eos"]) == (bos_id, eos_id)
    assert "special-token text is plain text" in manifest["settings"]["encode"]
    assert len(manifest["shards"]) > 1
    want: list[int] = []
    for ids in peer(path)([d for d in docs if d]):
        want += [bos_id, *ids, eos_id]
    assert h.read_all(tmp_path / "out") == want


def test_the_cli_takes_a_gguf_file(tmp_path, h, capsys) -> None:
    path = _need(LLAMA3)
    docs = _docs(h)[:20]
    src = h.write_texts(tmp_path / "in", docs)
    rc = main(["tokenize", str(src), "-o", str(tmp_path / "out"), "-t", str(path), "--eos", "--json"])
    assert rc == 0, capsys.readouterr().err
    m = read_manifest(tmp_path / "out")
    assert m["settings"]["dtype"] == "uint32" and m["tokenizer"]["n_vocab"] == 128256
    tok = Tokenizer.from_file(path)
    eos = tok.token_to_id("<|end_of_text|>")
    assert m["settings"]["eos"] == eos
    ids = h.read_all(tmp_path / "out")
    assert ids.count(eos) == sum(1 for d in docs if d) and ids[-1] == eos


def test_a_pipeline_object_and_a_bad_one(tmp_path, h) -> None:
    path = _need(NEOX)
    tok = Tokenizer.from_file(path)
    encoder, description = load_tokenizer(tok)
    assert encoder is not tok and description["n_vocab"] == tok.n_vocab  # a view without specials
    assert encoder.encode("<|endoftext|>") != [tok.token_to_id("<|endoftext|>")]
    assert tok.encode("<|endoftext|>") == [tok.token_to_id("<|endoftext|>")]  # the original is unchanged
    docs = _docs(h)[:30]
    src = h.write_jsonl(tmp_path / "in.jsonl", docs)
    tokenize([src], tmp_path / "a", tok, show_progress=False)
    tokenize([src], tmp_path / "b", str(path), show_progress=False)
    assert h.read_all(tmp_path / "a") == h.read_all(tmp_path / "b")
    from bpekit.errors import UsageError

    with pytest.raises(UsageError, match="got int"):
        tokenize([src], tmp_path / "c", 3, show_progress=False)
