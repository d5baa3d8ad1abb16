"""Every input kind gives the documents in order, each encoded alone; empty documents are skipped;
bad inputs raise typed errors naming what is wrong."""

from __future__ import annotations

import gzip
import json

import pytest
from bpekit.datasets import tokenize
from bpekit.errors import DataNotFoundError, FormatError, UsageError


def run(src, out, tok, **kw):
    return tokenize(src, out, tok, show_progress=False, **kw)


def test_all_input_kinds_in_order(tmp_path, h, docs, encoding, tokenizer_file) -> None:
    a, b, c = docs[:100], docs[100:200], docs[200:]
    jsonl = h.write_jsonl(tmp_path / "a.jsonl", a, field="body")
    parquet = h.write_parquet(tmp_path / "b.parquet", b, column="content")
    texts = h.write_texts(tmp_path / "c", c)
    m = run([jsonl, parquet, texts], tmp_path / "out", tokenizer_file, field="body", column="content", eos=True)
    eos = m["settings"]["eos"]
    assert h.read_all(tmp_path / "out") == h.expected_stream(encoding, docs, eos=eos)
    assert [i["kind"] for i in m["inputs"]] == ["jsonl", "parquet"] + ["text"] * len(c)
    assert m["inputs"][0] == {"path": str(jsonl), "kind": "jsonl", "bytes": jsonl.stat().st_size}


def test_lines_gzip_and_empty_documents(tmp_path, h, encoding, tokenizer_file) -> None:
    lines = ["first line", "", "second\r", "third über", "", "<|endoftext|> stays text"]
    path = tmp_path / "lines.txt.gz"
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    m = run([path], tmp_path / "out", tokenizer_file, lines=True)
    kept = ["first line", "second", "third über", "<|endoftext|> stays text"]
    assert m["documents"] == 4
    assert h.read_all(tmp_path / "out") == h.expected_stream(encoding, kept)
    jsonl = tmp_path / "e.jsonl"
    jsonl.write_text(json.dumps({"text": ""}) + "\n\n" + json.dumps({"text": None}) + "\n" + json.dumps({"text": "x"}) + "\n")
    assert run([jsonl], tmp_path / "out2", tokenizer_file)["documents"] == 1


def test_hugging_face_dataset_on_disk(tmp_path, h, docs, encoding, tokenizer_file) -> None:
    datasets = pytest.importorskip("datasets", reason="the Hugging Face datasets package is not installed")
    dd = datasets.DatasetDict({"train": datasets.Dataset.from_dict({"text": docs[:50]}), "test": datasets.Dataset.from_dict({"text": docs[50:60]})})
    dd.save_to_disk(str(tmp_path / "hf"))
    m = run([], tmp_path / "out", tokenizer_file, hf_dataset=str(tmp_path / "hf"), split="test")
    assert m["inputs"][0]["kind"] == "hf" and m["inputs"][0]["split"] == "test"
    assert h.read_all(tmp_path / "out") == h.expected_stream(encoding, docs[50:60])
    with pytest.raises(UsageError, match="no split 'validation'"):
        run([], tmp_path / "o2", tokenizer_file, hf_dataset=str(tmp_path / "hf"), split="validation")
    with pytest.raises(FormatError, match="no column 'body'"):
        run([], tmp_path / "o3", tokenizer_file, hf_dataset=str(tmp_path / "hf"), column="body")


def test_bad_inputs(tmp_path, h, tokenizer_file) -> None:
    with pytest.raises(DataNotFoundError, match="input not found"):
        run([tmp_path / "missing.txt"], tmp_path / "out", tokenizer_file)
    with pytest.raises(UsageError, match="nothing to tokenize"):
        run([], tmp_path / "out", tokenizer_file)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n{"body": "no text field"}\n')
    with pytest.raises(FormatError, match=r"bad.jsonl:2: the record has no field 'text'"):
        run([bad], tmp_path / "out", tokenizer_file)
    parquet = h.write_parquet(tmp_path / "p.parquet", ["a"], column="body")
    with pytest.raises(FormatError, match="no column 'text'"):
        run([parquet], tmp_path / "out2", tokenizer_file)


def test_bad_settings(tmp_path, h, tokenizer_file, data_dir) -> None:
    src = h.write_jsonl(tmp_path / "in.jsonl", ["a b c"])
    with pytest.raises(UsageError, match="cannot hold uint32"):
        run([src], tmp_path / "o", tokenizer_file, format="megatron", dtype="uint32")
    with pytest.raises(UsageError, match="do not fit in uint16"):
        run([src], tmp_path / "o", "o200k_base", dtype="uint16")
    with pytest.raises(UsageError, match="no BOS special token"):
        run([src], tmp_path / "o", _no_specials(tmp_path), bos=True)
    with pytest.raises(UsageError, match="'<x>' is not a special token"):
        run([src], tmp_path / "o", tokenizer_file, eos_token="<x>")
    with pytest.raises(UsageError, match="shard_size must be a positive integer"):
        run([src], tmp_path / "o", tokenizer_file, shard_size=0)
    with pytest.raises(UsageError, match="unknown engine"):
        run([src], tmp_path / "o", tokenizer_file, engine="spark")
    with pytest.raises(UsageError, match="is a file"):
        run([src], src, tokenizer_file)


def _no_specials(tmp_path):
    from bpekit.train import train

    path = tmp_path / "plain.json"
    train(iter(["abc abc abd"] * 5), vocab_size=258, show_progress=False).save(path)
    return path


def test_lone_surrogates_are_replaced_as_in_encode(tmp_path, h, encoding, tokenizer_file) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"text": "bad \\ud800 half"}\n{"text": "pair \\ud83d\\ude00 ok"}\n', encoding="utf-8")
    run([path], tmp_path / "out", tokenizer_file)
    assert h.read_all(tmp_path / "out") == h.expected_stream(encoding, ["bad \ud800 half", "pair \U0001f600 ok"])
    assert encoding.decode(h.read_all(tmp_path / "out")).startswith("bad \ufffd half")
