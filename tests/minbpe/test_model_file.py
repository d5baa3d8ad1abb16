"""minbpe's .model / .vocab files: exact text, round trips, and typed errors for bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from bpekit.errors import DataNotFoundError, FormatError, InputTypeError
from bpekit.minbpe import GPT2_SPLIT_PATTERN, BasicTokenizer, RegexTokenizer, render_token


def _write(path: Path, lines: list[str]) -> str:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_basic_files_by_hand(tmp_path: Path) -> None:
    """Wikipedia example: merges (97,97) (256,97) (257,98); no pattern line, no specials."""
    tok = BasicTokenizer()
    tok.train("aaabdaaabac", 259)
    tok.save(str(tmp_path / "w"))
    assert (tmp_path / "w.model").read_text(encoding="utf-8") == "minbpe v1\n\n0\n97 97\n256 97\n257 98\n"
    vocab = (tmp_path / "w.vocab").read_text(encoding="utf-8").split("\n")
    assert vocab[0] == "[\\u0000] 0"
    assert vocab[10] == "[\\u000a] 10"
    assert vocab[32] == "[ ] 32"
    assert vocab[97] == "[a] 97"
    assert vocab[128] == "[\ufffd] 128"
    assert vocab[256:] == ["[a][a] -> [aa] 256", "[aa][a] -> [aaa] 257", "[aaa][b] -> [aaab] 258", ""]
    loaded = BasicTokenizer()
    loaded.load(str(tmp_path / "w.model"))
    assert loaded.merges == tok.merges and loaded.vocab == tok.vocab


def test_regex_round_trip_with_specials(tmp_path: Path) -> None:
    tok = RegexTokenizer(GPT2_SPLIT_PATTERN)
    tok.train("hello hello world, hello wonderful world! 123 123", 270)
    tok.register_special_tokens({"<|endoftext|>": 1000, "<|pad|>": 270})
    tok.save(str(tmp_path / "r"))
    lines = (tmp_path / "r.model").read_text(encoding="utf-8").split("\n")
    assert lines[:5] == ["minbpe v1", GPT2_SPLIT_PATTERN, "2", "<|endoftext|> 1000", "<|pad|> 270"]
    vocab = (tmp_path / "r.vocab").read_text(encoding="utf-8").split("\n")
    assert vocab[-3:] == ["[<|endoftext|>] 1000", "[<|pad|>] 270", ""]
    loaded = RegexTokenizer()
    loaded.load(str(tmp_path / "r.model"))
    assert loaded.pattern == GPT2_SPLIT_PATTERN
    assert loaded.merges == tok.merges and loaded.special_tokens == tok.special_tokens
    text = "hello<|pad|> world<|endoftext|>"
    ids = loaded.encode(text, allowed_special="all")
    assert ids == tok.encode(text, allowed_special="all")
    assert ids[-1] == 1000 and loaded.decode(ids) == text


def test_reads_a_minbpe_written_file(tmp_path: Path) -> None:
    """A file in minbpe's exact layout, with the CRLF a Windows minbpe would write."""
    path = tmp_path / "m.model"
    path.write_bytes(b"minbpe v1\r\n ?\\w+|\\S\r\n1\r\n<|x|> 300\r\n32 97\r\n256 98\r\n")
    tok = RegexTokenizer()
    tok.load(str(path))
    # minbpe strips the leading space, leaving "?\\w+|\\S", which does not even compile
    assert tok.pattern == " ?\\w+|\\S"
    assert tok.merges == {(32, 97): 256, (256, 98): 257}
    assert tok.encode("x ab<|x|>", allowed_special="all") == [120, 257, 300]


def test_render_token() -> None:
    assert render_token(b"a\tb") == "a\\u0009b"
    assert render_token("é".encode()[:1]) == "\ufffd"
    assert render_token(b"\x7f\xc2\x85") == "\\u007f\\u0085"  # DEL and NEL are category Cc


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["minbpe v2", "", "0"], "first line must be 'minbpe v1'"),
        (["minbpe v1", ""], "first line must be"),
        (["minbpe v1", "", "x"], "line 3: expected the number of special tokens"),
        (["minbpe v1", "", "2", "<|a|> 300"], "line 3: bad number of special tokens"),
        (["minbpe v1", "", "1", "<|a|>300"], "line 4: expected '<special> <id>'"),
        (["minbpe v1", "", "1", "<|a|> -3"], "line 4: expected '<special> <id>'"),
        (["minbpe v1", "", "0", "97 97", "97"], "line 5: a merge is two ids below its own id 257"),
        (["minbpe v1", "", "0", "97 256"], "line 4: a merge is two ids below its own id 256"),
        (["minbpe v1", "", "0", "97 x"], "line 4: expected '<left id> <right id>'"),
        (["minbpe v1", "", "0", "97 97", "97 97"], "line 5: the pair 97 97 is merged twice"),
        (["minbpe v1", "", "1", "<|a|> 97"], "already a byte or merged token"),
        (["minbpe v1", "", "2", "<|a|> 300", "<|b|> 300"], "share the id 300"),
        (["minbpe v1", "\\p{L}+", "0"], "has a split pattern"),
    ],
)
def test_bad_basic_model_files(tmp_path: Path, lines: list[str], message: str) -> None:
    path = _write(tmp_path / "bad.model", lines)
    with pytest.raises(FormatError, match=message.replace("(", r"\(").replace("+", r"\+")):
        BasicTokenizer().load(path)


def test_bad_regex_model_files(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="has no split pattern"):
        RegexTokenizer().load(_write(tmp_path / "a.model", ["minbpe v1", "", "0"]))
    with pytest.raises(FormatError, match="invalid split pattern"):
        RegexTokenizer().load(_write(tmp_path / "b.model", ["minbpe v1", "(", "0"]))
    with pytest.raises(FormatError, match="ends with '.model'"):
        RegexTokenizer().load(_write(tmp_path / "c.vocab", ["minbpe v1", "x", "0"]))
    (tmp_path / "d.model").write_bytes(b"minbpe v1\n\xff\n0\n")
    with pytest.raises(FormatError, match="not UTF-8"):
        RegexTokenizer().load(str(tmp_path / "d.model"))


def test_failed_load_leaves_tokenizer_unchanged(tmp_path: Path) -> None:
    tok = RegexTokenizer()
    tok.train("abab abab", 258)
    before = (dict(tok.merges), tok.pattern)
    with pytest.raises(FormatError):
        tok.load(_write(tmp_path / "e.model", ["minbpe v1", "(", "0", "97 98"]))
    assert (tok.merges, tok.pattern) == before


def test_unsavable_tokenizers(tmp_path: Path) -> None:
    tok = RegexTokenizer()
    tok.register_special_tokens({"<|two words|>": 300})
    with pytest.raises(FormatError, match="contains whitespace"):
        tok.save(str(tmp_path / "s"))
    with pytest.raises(FormatError, match="line break"):
        RegexTokenizer("a|\n").save(str(tmp_path / "t"))


def test_save_and_load_paths(tmp_path: Path) -> None:
    tok = RegexTokenizer()
    tok.train("abab abab", 258)
    tok.save(tmp_path / "p")  # a Path, not only a str
    assert sorted(f.name for f in tmp_path.iterdir()) == ["p.model", "p.vocab"]
    loaded = RegexTokenizer()
    loaded.load(tmp_path / "p.model")
    assert loaded.merges == tok.merges
    for bad in (None, b"p", 5):
        with pytest.raises(InputTypeError, match="file_prefix must be a str or an os.PathLike"):
            tok.save(bad)  # type: ignore[arg-type]
    with pytest.raises(InputTypeError, match="model_file must be a str or an os.PathLike"):
        loaded.load(None)  # type: ignore[arg-type]
    with pytest.raises(DataNotFoundError, match="no minbpe model file at .*missing.model"):
        loaded.load(str(tmp_path / "missing.model"))
    (tmp_path / "d.model").mkdir()
    with pytest.raises(FormatError, match="d.model is a directory"):
        loaded.load(str(tmp_path / "d.model"))


def test_save_writes_both_files_or_neither(tmp_path: Path) -> None:
    """The .vocab cannot be written (a directory has its name): the old .model stays as it was."""
    old = RegexTokenizer()
    old.save(str(tmp_path / "m"))
    before = (tmp_path / "m.model").read_bytes()
    (tmp_path / "m.vocab").unlink()
    (tmp_path / "m.vocab").mkdir()
    tok = RegexTokenizer()
    tok.train("abab abab", 258)
    with pytest.raises(OSError):
        tok.save(str(tmp_path / "m"))
    assert (tmp_path / "m.model").read_bytes() == before
    assert sorted(f.name for f in tmp_path.iterdir()) == ["m.model", "m.vocab"]  # no temporary files left
