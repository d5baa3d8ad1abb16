"""Malformed tokenizer.json documents and files raise FormatError (shape, types, unknown stage
types, JSON that is not JSON, too deep or too large) or VocabError (what the vocabulary and merges
say is inconsistent), each naming what is wrong."""

from __future__ import annotations

import copy
import json

import pytest
from bpekit import Tokenizer
from bpekit.errors import FormatError, VocabError
from bpekit.formats.hf import from_document, load

VALID = {
    "version": "1.0",
    "truncation": None,
    "padding": None,
    "added_tokens": [
        {"id": 5, "content": "<s>", "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
    ],
    "normalizer": {"type": "NFC"},
    "pre_tokenizer": {"type": "Split", "pattern": {"String": " "}, "behavior": "Isolated", "invert": False},
    "post_processor": None,
    "decoder": {"type": "Fuse"},
    "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
              "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
              "vocab": {"a": 0, "b": 1, "ab": 2, " ": 3, "abb": 4}, "merges": [["a", "b"], ["ab", "b"]]},
}


def changed(path: str, value):
    doc = copy.deepcopy(VALID)
    *parents, last = path.split(".")
    node = doc
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if value is KeyError:
        del node[last]
    else:
        node[int(last) if isinstance(node, list) else last] = value
    return doc


def test_the_valid_document_loads_and_encodes():
    tok = from_document(VALID)
    assert tok.encode("abb ab<s>") == [4, 3, 2, 5]
    assert tok.decode([4, 3, 2, 5]) == "abb ab<s>"


FORMAT_ERRORS = {
    "version": ("version", "2.0"),
    "model missing": ("model", KeyError),
    "model type": ("model.type", "WordPiece"),
    "vocab type": ("model.vocab", ["a"]),
    "vocab id": ("model.vocab.a", "0"),
    "negative id": ("model.vocab.a", -1),
    "merges type": ("model.merges", "a b"),
    "mixed merges": ("model.merges", [["a", "b"], "ab b"]),
    "merge parts": ("model.merges", ["a b c"]),
    "merge pair size": ("model.merges", [["a", "b", "c"]]),
    "bool option": ("model.fuse_unk", "yes"),
    "unknown normalizer": ("normalizer", {"type": "Frobnicate"}),
    "unknown pre_tokenizer": ("pre_tokenizer", {"type": "Frobnicate"}),
    "unknown decoder": ("decoder", {"type": "Frobnicate"}),
    "unknown processor": ("post_processor", {"type": "Frobnicate"}),
    "stage not object": ("normalizer", "NFC"),
    "split invert missing": ("pre_tokenizer.invert", KeyError),
    "split behavior": ("pre_tokenizer.behavior", "Sideways"),
    "pattern kind": ("pre_tokenizer.pattern", {"Glob": "*"}),
    "bad regex": ("pre_tokenizer.pattern", {"Regex": "(unclosed"}),
    "sequence item null": ("normalizer", {"type": "Sequence", "normalizers": [None]}),
    "added token flag": ("added_tokens.0.special", KeyError),
    # an id past 32 bits reached the Rust matcher as an OverflowError (atheris `hf`, session 18)
    "added token id past 32 bits": ("added_tokens.0.id", 6 * 10**80),
    "added token id 2**32": ("added_tokens.0.id", 2**32),
    "added tokens type": ("added_tokens", {"<s>": 5}),
    "truncation": ("truncation", {"max_length": 4}),
    "template token": ("post_processor", {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "X", "type_id": 0}}],
                                          "pair": [], "special_tokens": {}}),
}


@pytest.mark.parametrize("name", sorted(FORMAT_ERRORS))
def test_format_errors(name):
    path, value = FORMAT_ERRORS[name]
    with pytest.raises(FormatError):
        from_document(changed(path, value))


VOCAB_ERRORS = {
    "duplicate merge": ("model.merges", [["a", "b"], ["ab", "b"], ["a", "b"]]),
    "merge part missing": ("model.merges", [["a", "c"]]),
    "merged token missing": ("model.merges", [["b", "a"]]),
    "two tokens one id": ("model.vocab", {"a": 0, "b": 0}),
    "dropout": ("model.dropout", 1.5),
    "added id renumbered": ("added_tokens.0.id", 9),
}


@pytest.mark.parametrize("name", sorted(VOCAB_ERRORS))
def test_vocab_errors(name):
    path, value = VOCAB_ERRORS[name]
    with pytest.raises(VocabError):
        from_document(changed(path, value))


def test_files_that_are_not_tokenizer_json(tmp_path):
    cases = {
        "not_json.json": b'{"version": "1.0", "model": ',
        "deep.json": b'{"model": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "list.json": b"[1, 2, 3]",
        "bad_utf8.json": b'{"version": "\xff"}',
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(FormatError):
            load(tmp_path / name)
    (tmp_path / "big.json").write_text(json.dumps(VALID))
    with pytest.raises(FormatError, match="over the limit"):
        load(tmp_path / "big.json", max_bytes=100)
    with pytest.raises(FormatError):
        Tokenizer.from_file(tmp_path / "deep.json")
