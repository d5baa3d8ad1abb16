"""The trained Tokenizer: its encoding API, the bpekit file round trip, and the exports that
tiktoken and Hugging Face tokenizers load and encode with exactly as bpekit does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpekit.errors import DisallowedSpecialError, FormatError, InvalidTokenError, VocabError
from bpekit.tokenizer import Tokenizer
from bpekit.train import train

SPECIALS = ["<|endoftext|>", "<|pad|>"]


@pytest.fixture(scope="module", params=["cl100k", "gpt2", "o200k"])
def trained(request, english_docs) -> Tokenizer:
    docs = [english_docs[1], english_docs[0][:200_000]]
    return train(iter(docs), vocab_size=700, pattern=request.param, special_tokens=SPECIALS, show_progress=False)


@pytest.fixture(scope="module")
def sample_lines(english_docs, multilingual_docs) -> list[str]:
    lines = english_docs[0][200_000:260_000].splitlines(keepends=True)
    for doc in multilingual_docs:
        lines.extend(doc[:2000].splitlines(keepends=True)[:20])
    lines += ["trailing spaces   \n", "  \n\n\n  x", "1234567 digits", "2014 2015 2010s 12000"]
    lines += ["a<|endoftext|>b <|pad|>", "", "👍🏽 emoji"]
    return lines


def test_ids_bytes_and_specials(trained: Tokenizer):
    assert trained.vocab_size == 700 and len(trained.ranks) == 698
    assert trained.special_tokens == {"<|endoftext|>": 698, "<|pad|>": 699}
    assert all(trained.ranks[bytes([b])] == b for b in range(256))
    assert [trained.ranks[a + b] for a, b in trained.merges] == list(range(256, 698))
    assert trained.token_to_id("<|pad|>") == 699 and trained.id_to_token(699) == "<|pad|>"
    assert trained.id_to_token(ord("A")) == b"A" and trained.token_to_id(b"A") == ord("A")
    assert trained.token_to_id("no such token at all") is None
    with pytest.raises(InvalidTokenError):
        trained.id_to_token(700)


def test_encode_policy_and_round_trip(trained: Tokenizer, sample_lines):
    text = "Hello <|endoftext|> world"
    with pytest.raises(DisallowedSpecialError, match="disallowed special token '<\\|endoftext\\|>'"):
        trained.encode(text)
    ids = trained.encode(text, allowed_special="all")
    assert 698 in ids and trained.decode(ids) == text
    assert 698 not in trained.encode(text, disallowed_special=())
    assert trained.encode(text, disallowed_special=()) == trained.encode_ordinary(text)
    batch = trained.encode_batch(sample_lines, allowed_special="all")
    assert batch == [trained.encode(s, allowed_special="all") for s in sample_lines]
    assert all(trained.decode(ids) == s for ids, s in zip(batch, sample_lines))
    assert trained.decode(trained.encode("a\ud800b")) == "a\ufffdb"


def test_save_and_load(trained: Tokenizer, tmp_path: Path, sample_lines):
    path = tmp_path / "tok.json"
    trained.save(path)
    doc = json.loads(path.read_text())
    assert doc["format"] == "bpekit" and doc["version"] == 1 and doc["pattern"] == trained.pattern
    assert doc["training"]["min_frequency"] == 2 and doc["training"]["tie_rule"].startswith("highest count")
    back = Tokenizer.load(path)
    assert back.merges == trained.merges and back.ranks == trained.ranks
    assert back.special_tokens == trained.special_tokens and back.training == trained.training
    assert back.pattern_name == trained.pattern_name
    for s in sample_lines:
        assert back.encode(s, allowed_special="all") == trained.encode(s, allowed_special="all")
    trained.save(path)
    assert list(tmp_path.iterdir()) == [path]  # no temporary files left behind


def test_damaged_bpekit_files(tmp_path: Path, trained: Tokenizer):
    doc = trained.to_dict()
    bad = {
        "version": {**doc, "version": 2},
        "format": {**doc, "format": "other"},
        "merge id": {**doc, "merges": [[0, 100_000]]},
        "vocab size": {**doc, "vocab_size": 5},
        "no pattern": {k: v for k, v in doc.items() if k != "pattern"},
    }
    for name, d in bad.items():
        with pytest.raises(FormatError):
            Tokenizer.from_dict(d, name)
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(FormatError):
        Tokenizer.load(tmp_path / "x.json")
    with pytest.raises(VocabError):
        Tokenizer(pattern="x", merges=[(b"ab", b"c")])
    with pytest.raises(VocabError):
        Tokenizer(pattern="x", merges=[], special_tokens={"<s>": 3})
    # an int was bytes(n) (five NULs), a bytes special "b'<|a|>'", an id 300.9 was 300
    from bpekit.errors import InputTypeError

    for merges in ([(1, 1)], [("a", "b")], "ab", [(b"a", b"b", b"c")], [None], 5):
        with pytest.raises(InputTypeError, match="merge"):
            Tokenizer(pattern="x", merges=merges)
    for specials in ({b"<|a|>": 300}, {"<|a|>": 300.9}, {"<|a|>": "300"}, None, [5], {"<s>", "<t>"}):
        with pytest.raises(InputTypeError, match="special"):  # (a set: its order, which gives ids, varies)
            Tokenizer(pattern="x", merges=[], special_tokens=specials)
    for specials in ({"<|a|>": 2**70}, {"<|a|>": 5}, {"": 300}, ["<s>", "<s>"], ["\ud800"]):
        with pytest.raises(VocabError, match="special"):
            Tokenizer(pattern="x", merges=[], special_tokens=specials)
    assert Tokenizer(pattern="x", merges=[(b"a", bytearray(b"b"))], special_tokens={"<s>": 300}).special_tokens == {"<s>": 300}


def test_hugging_face_export_encodes_identically(trained: Tokenizer, tmp_path: Path, sample_lines):
    tokenizers = pytest.importorskip("tokenizers")
    path = tmp_path / "tokenizer.json"
    trained.export_hf(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert hf.get_vocab_size() == trained.vocab_size
    for s in sample_lines:
        ids = trained.encode(s, allowed_special="all")
        assert hf.encode(s).ids == ids, repr(s)
        assert hf.decode(ids, skip_special_tokens=False) == s


def test_tiktoken_export_encodes_identically(trained: Tokenizer, tmp_path: Path, sample_lines):
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    path = tmp_path / "tok.tiktoken"
    sidecar = json.loads(Path(trained.export_tiktoken(path)).read_text())
    enc = tiktoken.Encoding(
        "trained",
        pat_str=sidecar["pat_str"],
        mergeable_ranks=load_tiktoken_bpe(str(path)),
        special_tokens=sidecar["special_tokens"],
        explicit_n_vocab=sidecar["explicit_n_vocab"],
    )
    for s in sample_lines:
        assert enc.encode(s, allowed_special="all") == trained.encode(s, allowed_special="all"), repr(s)


def test_merge_counts_are_recorded_and_saved(english_docs, tmp_path: Path):
    """``training["merge_counts"]`` holds each merge's pair count when it was chosen: the counts
    the textbook trainer (bpekit.reference) sees, aligned with ``merges``, kept by save/load."""
    from bpekit.reference.train import train_steps

    text = english_docs[0][:40_000]
    tok = train(iter([text]), vocab_size=400, pattern="cl100k", special_tokens=["<|x|>"], show_progress=False)
    counts = tok.training["merge_counts"]
    steps = list(train_steps([text], 400, tok.pattern, ["<|x|>"]))
    assert [s.pair for s in steps] == tok.merges
    assert counts == [s.count for s in steps] and len(counts) == len(tok.merges)
    assert counts == sorted(counts, reverse=True)  # the best count never rises
    tok.save(tmp_path / "t.json")
    assert Tokenizer.load(tmp_path / "t.json").training["merge_counts"] == counts


def test_a_model_with_no_merges_saves_as_a_bpekit_file(tmp_path: Path):
    # `bpekit train` of a corpus with no pair seen twice printed "(bpekit)" and wrote a tokenizer.json
    tok = train(iter(["abc xyz"]), vocab_size=1000, show_progress=False)
    assert tok.merges == []
    tok.save(tmp_path / "t.json")
    back = Tokenizer.load(tmp_path / "t.json")
    assert back.encode("abc xyz") == tok.encode("abc xyz") == list(b"abc xyz")
