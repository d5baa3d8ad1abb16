"""``Tokenizer.save(path, format=...)`` writes every format ``bpekit convert`` writes (one saver
table, ``bpekit.formats.savers``), and the file reads back with the same ids and bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from bpekit import Tokenizer
from bpekit.cli import main
from bpekit.errors import FormatError, UsageError
from bpekit.formats.savers import TARGETS
from formats.test_convert import NAMES, TEXTS, TRAINED


def contents(path: Path) -> dict[str, bytes]:
    """A file's bytes, or every file of a folder (gpt2 writes vocab.json + merges.txt)."""
    if path.is_dir():
        return {p.name: p.read_bytes() for p in sorted(path.iterdir())}
    return {"": path.read_bytes()}


@pytest.mark.parametrize("target", sorted(NAMES))
def test_save_every_format_reads_back_like_convert(target: str, tmp_path: Path, capsys) -> None:
    out = tmp_path / NAMES[target]
    TRAINED.save(out, format=target)
    back = Tokenizer.from_file(out, format=target)
    for text in TEXTS:
        assert back.encode(text, allowed_special="all") == TRAINED.encode(text, allowed_special="all")
    src, by_cli = tmp_path / "src.json", tmp_path / ("cli-" + NAMES[target])
    TRAINED.save(src)
    assert main(["convert", str(src), str(by_cli), "--to", target]) == 0
    capsys.readouterr()
    assert contents(by_cli) == contents(out)


def test_save_refuses_unknown_or_impossible_formats(tmp_path: Path) -> None:
    assert set(TARGETS) == set(NAMES) | {"sentencepiece"}
    with pytest.raises(UsageError, match="'nope'"):
        TRAINED.save(tmp_path / "x", format="nope")
    with pytest.raises(FormatError, match="cannot represent"):
        TRAINED.save(tmp_path / "x.model", format="sentencepiece")
    assert not (tmp_path / "x").exists() and not (tmp_path / "x.model").exists()


@pytest.mark.parametrize(("target", "name", "partner"), [
    ("tiktoken", "t.tiktoken", "t.tiktoken.json"), ("gpt2", "out", "out/vocab.bpe"), ("minbpe", "t.model", "t.vocab"),
])
def test_a_file_pair_is_written_whole_or_not_at_all(target: str, name: str, partner: str, tmp_path: Path) -> None:
    # the second file of a pair failed after the first had been renamed into place: a rank file
    # without its sidecar, an encoder.json without its vocab.bpe
    (tmp_path / partner).mkdir(parents=True)
    with pytest.raises(IsADirectoryError, match="nothing was written"):
        TRAINED.save(tmp_path / name, format=target)
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert left == sorted({partner, *[str(Path(partner).parent)] * (Path(partner).parent != Path("."))}), left
    (tmp_path / partner).rmdir()
    TRAINED.save(tmp_path / name, format=target)  # and with the way clear, both are written
    assert (tmp_path / partner).is_file()
