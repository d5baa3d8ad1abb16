"""Every input kind gives the documents in order, each encoded alone; empty documents are skipped;
bad inputs raise typed errors naming what is wrong."""

from __future__ import annotations

import gzip
import json

import pytest
from bpekit.datasets import read_manifest, tokenize
from bpekit.errors import DataNotFoundError, FormatError, InputTypeError, UsageError


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


def test_bad_argument_types(tmp_path, h, encoding, tokenizer_file) -> None:
    """Arguments of the wrong type are InputTypeErrors naming the argument, before any work: an int
    input (once a bare TypeError), a bytes path (once iterated as ints), output=None, bos="no"
    (once taken as true), threads=2**70 (once an OverflowError from the core)."""
    src = h.write_jsonl(tmp_path / "in.jsonl", ["a b c", "d e"])
    with pytest.raises(InputTypeError, match="inputs must be a path or an iterable of paths, got int"):
        run(5, tmp_path / "o", tokenizer_file)
    with pytest.raises(InputTypeError, match="an input must be a path .* got NoneType"):
        run([src, None], tmp_path / "o", tokenizer_file)
    with pytest.raises(UsageError, match="an input path is empty"):
        run("", tmp_path / "o", tokenizer_file)  # not the current directory
    with pytest.raises(InputTypeError, match="hf_dataset must be a path .* got int"):
        run([], tmp_path / "o", tokenizer_file, hf_dataset=5)
    with pytest.raises(InputTypeError, match="output must be a directory path .* got NoneType"):
        run([src], None, tokenizer_file)
    with pytest.raises(UsageError, match="the output directory path is empty"):
        run([src], "", tokenizer_file)
    for flag in ("bos", "eos", "lines", "show_progress"):
        with pytest.raises(InputTypeError, match=f"{flag} must be True or False, got 'no'"):
            tokenize([src], tmp_path / "o", tokenizer_file, **{"show_progress": False, flag: "no"})
    with pytest.raises(InputTypeError, match="eos_token must be a str"):
        run([src], tmp_path / "o", tokenizer_file, eos_token=0)
    with pytest.raises(UsageError, match="'' is not a special token"):  # once read as no BOS at all
        run([src], tmp_path / "o", tokenizer_file, bos_token="")
    for threads in (2**70, 4097, -1, 2.0, True, "2"):
        with pytest.raises(InputTypeError, match="threads must be an int from 0 to 4096"):
            run([src], tmp_path / "o", tokenizer_file, threads=threads)
    assert not (tmp_path / "o").exists()
    # a bytes path is a path, alone or in a list
    for i, inputs in enumerate((bytes(src), [bytes(src)])):
        run(inputs, bytes(tmp_path / f"ok{i}"), tokenizer_file)
        assert h.read_all(tmp_path / f"ok{i}") == h.expected_stream(encoding, ["a b c", "d e"])
        assert read_manifest(tmp_path / f"ok{i}")["inputs"][0]["path"] == str(src)


def test_read_manifest_errors(tmp_path) -> None:
    with pytest.raises(DataNotFoundError, match="manifest not found: .*nonexist"):
        read_manifest(tmp_path / "nonexist")
    with pytest.raises(DataNotFoundError, match="manifest.json"):
        read_manifest(tmp_path)  # a directory without one
    with pytest.raises(InputTypeError, match="got NoneType"):
        read_manifest(None)
    (tmp_path / "manifest.json").write_text("{")
    with pytest.raises(FormatError, match="is not JSON"):
        read_manifest(tmp_path)


def test_an_output_inside_an_input_folder_is_refused(tmp_path, h, tokenizer_file) -> None:
    # the first run wrote its shards into the input folder; the second read them as input and
    # refused to resume ("made with other settings (inputs differ)")
    folder = tmp_path / "in"
    folder.mkdir()
    h.write_jsonl(folder / "a.jsonl", ["a b c", "d e"])
    for out in (folder / "shards", folder):
        with pytest.raises(UsageError, match="inside the input folder"):
            run(folder, out, tokenizer_file)
    assert sorted(p.name for p in folder.iterdir()) == ["a.jsonl"]
    run(folder, tmp_path / "shards", tokenizer_file)
    assert run(folder, tmp_path / "shards", tokenizer_file)["complete"]  # and it resumes
