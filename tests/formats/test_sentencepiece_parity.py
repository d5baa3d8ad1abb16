"""SentencePieceBPE against the ``sentencepiece`` package: pieces, ids, normalized text and
decoded text, on every corpus file with every shared model and with freshly trained models."""

from __future__ import annotations

from pathlib import Path

import pytest
from bpekit.formats.sentencepiece import SentencePieceBPE
from formats.test_sentencepiece_support import (
    STRIDE,
    TRAINED,
    both,
    corpus_lines,
    held_out_sample,
    model_paths,
    oracle,
    ours,
    trained,
)
from hypothesis import given
from hypothesis import strategies as st

MODELS = model_paths()
MODEL_IDS = [p.stem for p in MODELS]


def _lines_for(index: int) -> list[str]:
    lines: list[str] = []
    for file_lines in corpus_lines().values():
        lines.extend(file_lines[(index % STRIDE) :: STRIDE])
    return lines


def _assert_same(tok: SentencePieceBPE, sp, lines: list[str], what: str) -> None:
    want_pieces = sp.encode(lines, out_type=str, num_threads=1)
    want_ids = sp.encode(lines, num_threads=1)
    for line, pieces, ids in zip(lines, want_pieces, want_ids, strict=True):
        got = tok.encode_pieces_and_ids(line)
        if got != (pieces, ids):
            raise AssertionError(f"{what}: {line!r}\n ours   {got}\n theirs {(pieces, ids)}")


@pytest.mark.skipif(not MODELS, reason="shared SentencePiece models not found")
@pytest.mark.parametrize("index", range(len(MODELS)), ids=MODEL_IDS)
def test_shared_models_match_sentencepiece_on_every_corpus(index: int) -> None:
    path = MODELS[index]
    _assert_same(ours(path), oracle(path), _lines_for(index), path.name)


@pytest.mark.parametrize("name", sorted(TRAINED))
def test_freshly_trained_models_match_sentencepiece(name: str) -> None:
    tok, sp = both(trained(name))
    lines = held_out_sample()
    _assert_same(tok, sp, lines, f"trained {name}")
    encoded = [tok.encode(line) for line in lines[::7]]
    assert [tok.decode(ids) for ids in encoded] == [sp.decode(ids) for ids in encoded]


@pytest.mark.skipif(not MODELS, reason="shared SentencePiece models not found")
@pytest.mark.parametrize("path", MODELS, ids=MODEL_IDS)
def test_decode_and_normalize_match_sentencepiece(path: Path) -> None:
    tok, sp = ours(path), oracle(path)
    lines = [line for file_lines in corpus_lines().values() for line in file_lines[:15]]
    assert [tok.normalize(line) for line in lines] == [sp.normalize(line) for line in lines]
    ids = [tok.encode(line) for line in lines]
    assert [tok.decode(i) for i in ids] == [sp.decode(i) for i in ids]
    pieces = [tok.encode(line, out_type=str) for line in lines[::5]]
    assert [tok.decode(p) for p in pieces] == [sp.decode(p) for p in pieces]


# Text built to reach the rare paths: whitespace runs, NUL, combining marks, full-width and
# compatibility characters, the user-defined and control strings, U+2581, astral characters.
_ALPHABET = st.sampled_from(
    list("aeiouthngsAB ") + ["  ", "\t", "\n", "\x00", "\x01", "\u0301", "\u0308", "\u00a8", "\uff21", "\uff76",
    "\uff9e", "\ufb01", "\u2581", "\u3000", "\u00a0", "\U0001d400", "\U0001f600", "\ufffd", "<s>", "<unk>",
    "<sep>", "[MASK]", "ing", "the", "\u65e5\u672c", "\u0627\u0644", "\u1100\u1161", "x\u0338"]
)  # fmt: skip
TEXT = st.lists(_ALPHABET, max_size=24).map("".join)


@pytest.mark.skipif(not MODELS, reason="shared SentencePiece models not found")
@given(text=TEXT, index=st.integers(0, max(0, len(MODELS) - 1)))
def test_random_text_matches_sentencepiece(text: str, index: int) -> None:
    tok, sp = ours(MODELS[index]), oracle(MODELS[index])
    assert tok.normalize(text) == sp.normalize(text)
    assert tok.encode_pieces_and_ids(text) == (sp.encode(text, out_type=str), sp.encode(text))
    ids = sp.encode(text)
    assert tok.decode(ids) == sp.decode(ids)


@pytest.mark.skipif(not MODELS, reason="shared SentencePiece models not found")
@given(data=st.binary(max_size=24), index=st.integers(0, max(0, len(MODELS) - 1)))
def test_malformed_utf8_bytes_match_sentencepiece(data: bytes, index: int) -> None:
    tok, sp = ours(MODELS[index]), oracle(MODELS[index])
    assert tok.encode_pieces_and_ids(data) == (sp.encode(data, out_type=str), sp.encode(data))


@pytest.mark.skipif(not MODELS, reason="shared SentencePiece models not found")
@given(ids=st.lists(st.integers(0, 299), max_size=16), index=st.integers(0, max(0, len(MODELS) - 1)))
def test_random_ids_decode_like_sentencepiece(ids: list[int], index: int) -> None:
    tok, sp = ours(MODELS[index]), oracle(MODELS[index])
    ids = [i % tok.vocab_size() for i in ids]
    assert tok.decode(ids) == sp.decode(ids)
    pieces = [tok.id_to_piece(i) for i in ids]
    assert tok.decode(pieces) == sp.decode(pieces)


@pytest.mark.skipif(not MODELS, reason="shared SentencePiece models not found")
@pytest.mark.parametrize("path", MODELS, ids=MODEL_IDS)
def test_extra_options_match_sentencepiece(path: Path) -> None:
    tok, sp = ours(path), oracle(path)
    text = "Hello  wörld, 日本語 <s> x\u0301!"
    for options in ({}, {"add_bos": True}, {"add_eos": True}, {"reverse": True}, {"emit_unk_piece": True},
                    {"add_bos": True, "add_eos": True, "reverse": True, "emit_unk_piece": True}):  # fmt: skip
        assert tok.encode(text, out_type=str, **options) == sp.encode(text, out_type=str, **options), options
        ids_options = {k: v for k, v in options.items() if k != "emit_unk_piece"}
        assert tok.encode(text, **ids_options) == sp.encode(text, **ids_options), options
    assert (tok.bos_id(), tok.eos_id(), tok.unk_id(), tok.pad_id()) == (sp.bos_id(), sp.eos_id(), sp.unk_id(), sp.pad_id())
    n = sp.get_piece_size()
    assert tok.vocab_size() == tok.get_piece_size() == tok.piece_size() == sp.vocab_size() == n
    assert [tok.id_to_piece(i) for i in range(n)] == [sp.id_to_piece(i) for i in range(n)]
    assert tok.id_to_piece(list(range(n))) == sp.id_to_piece(list(range(n)))
    pieces = ["<unk>", "<s>", "\u2581the", "no such piece", "<0x41>"]
    assert [tok.piece_to_id(p) for p in pieces] == tok.piece_to_id(pieces) == sp.piece_to_id(pieces)
    for check in ("get_score", "is_unknown", "is_control", "is_unused", "is_byte"):
        assert [getattr(tok, check)(i) for i in range(n)] == [getattr(sp, check)(i) for i in range(n)], check
    assert tok.encode_as_ids(text) == sp.encode_as_ids(text)
    assert tok.encode_as_pieces(text, add_bos=True) == sp.encode_as_pieces(text, add_bos=True)
    ids = sp.encode_as_ids(text)
    assert tok.decode_ids(ids) == sp.decode_ids(ids) and tok.decode_pieces(sp.encode_as_pieces(text)) == sp.decode_pieces(
        sp.encode_as_pieces(text))


@pytest.mark.skipif(not MODELS, reason="shared SentencePiece models not found")
def test_odd_decode_and_encode_arguments() -> None:
    from bpekit.errors import InputTypeError

    np = pytest.importorskip("numpy")
    tok, sp = ours(MODELS[0]), oracle(MODELS[0])
    ids = tok.encode("Hello world")
    # one id or one piece, as sentencepiece takes them (a str was read as a list of characters)
    assert tok.decode(ids[1]) == sp.decode(ids[1])
    assert tok.decode("\u2581Hello") == sp.decode("\u2581Hello")
    assert tok.decode(np.array(ids, dtype=np.uint32)) == tok.decode(ids)  # numpy ids were refused
    for bad in (b"hi", None, 1.5, [1.5], [[1]]):  # bytes were decoded as ids
        with pytest.raises(InputTypeError):
            tok.decode(bad)
    for option in ("add_bos", "add_eos", "reverse", "emit_unk_piece"):  # reverse="no" reversed
        with pytest.raises(InputTypeError, match=option):
            tok.encode("Hello", **{option: "no"})
    with pytest.raises(InputTypeError, match="seed"):
        tok.encode("Hello", alpha=0.5, seed=[1])


@pytest.mark.skipif(not MODELS, reason="shared SentencePiece models not found")
@given(ids=st.lists(st.integers(0, 2999), max_size=24), index=st.integers(0, max(0, len(MODELS) - 1)))
def test_ids_table_decodes_as_the_python_decoder(ids: list[int], index: int) -> None:
    """`decoder.ids_table` (Rust, src/py/decode.rs) against `decode_pieces` (Python) on any ids:
    byte runs that are not UTF-8, control and unknown pieces, leading `▁`s; and through a
    `Tokenizer` pipeline with `skip_special_tokens`."""
    from bpekit import Tokenizer
    from bpekit.formats.sentencepiece.decoder import decode_pieces, ids_table

    model = ours(MODELS[index]).model
    ids = [i % len(model.pieces) for i in ids]
    names = [model.pieces[i].piece for i in ids]
    table = ids_table(model)
    assert table is not None and model.denormalizer is None
    assert table.decode(ids, False) == decode_pieces(model, names)
    tok = Tokenizer.from_file(MODELS[index])
    assert tok._decode_ids() is not None
    for skip in (False, True):
        kept = [i for i in ids if not skip or i not in tok._special_id_set()]
        assert tok.decode(ids, skip_special_tokens=skip) == decode_pieces(model, [model.pieces[i].piece for i in kept])


@pytest.mark.skipif(not MODELS, reason="shared SentencePiece models not found")
def test_models_pickle_after_decoding() -> None:
    """The Rust decode tables sit beside a model, not in it: a model, or a Tokenizer made from it,
    still pickles after decoding (the table is made again on the other side)."""
    import pickle

    from bpekit import Tokenizer

    spm, tok = ours(MODELS[0]), Tokenizer.from_file(MODELS[0])
    ids = spm.encode("hello world, 日本")
    assert spm.decode(ids) == tok.decode(ids)  # both tables made
    assert pickle.loads(pickle.dumps(spm)).decode(ids) == spm.decode(ids)
    assert pickle.loads(pickle.dumps(tok)).decode(ids) == tok.decode(ids)
