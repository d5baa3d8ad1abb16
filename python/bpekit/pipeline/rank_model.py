"""Models that are not Hugging Face BPE merge lists but can sit in the pipeline:

* ``RankBPE``: tiktoken's rank BPE (the merge priority of a pair is the rank of the bytes it
  makes), over a bpekit ``Encoding``: the model of bpekit-trained and tiktoken tokenizers. Its
  pre-tokens are in GPT-2's byte alphabet, as the ByteLevel pre-tokenizer writes them.
* ``SentencePieceStage``: a SentencePiece BPE model (``formats/sentencepiece``), which
  normalizes and merges the whole text itself; ``SentencePieceDecoder`` is its way back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bpekit.encoding import Encoding
from bpekit.pipeline.aligned import spans_of_bytes
from bpekit.pipeline.byte_level import to_bytes, to_chars
from bpekit.tokenizer_export import hf_tokenizer_json

if TYPE_CHECKING:  # (imported lazily: SentencePiece support pulls in protobuf, ~0.3 s)
    from bpekit.formats.sentencepiece import SentencePieceBPE


class RankBPE:
    def __init__(self, encoding: Encoding) -> None:
        self.encoding = encoding

    def tokenize(self, word: str) -> list[int]:
        data = to_bytes(word)
        return self.encoding._encode_single_piece(data if data is not None else word.encode("utf-8"))

    def tokenize_spans(self, word: str) -> tuple[list[int], list[tuple[int, int]]]:
        """:meth:`tokenize` and the characters of ``word`` each id stands for (for offsets)."""
        ids = self.tokenize(word)
        token_bytes = self.encoding._core_bpe.token_bytes
        return ids, spans_of_bytes(word, (len(token_bytes(i)) for i in ids), to_bytes(word) is not None)

    def get_vocab_size(self) -> int:
        return len(self.encoding._mergeable_ranks)

    def get_vocab(self) -> dict[str, int]:
        """``{token string: id}``, the token bytes in the byte-level alphabet (as in the
        ``tokenizer.json`` that ``to_json`` gives)."""
        return {to_chars(t): r for t, r in self.encoding._mergeable_ranks.items()}

    def token_to_id(self, token: str) -> int | None:
        data = to_bytes(token)
        return None if data is None else self.encoding._mergeable_ranks.get(data)

    def id_to_token(self, token_id: int) -> str | None:
        data = self.encoding._core_bpe.token_bytes(token_id)
        return None if data is None or self.encoding.is_special_token(token_id) else to_chars(data)

    def to_json(self) -> dict[str, Any]:
        """The equivalent Hugging Face BPE model (vocab in byte alphabet, every split as a merge)."""
        doc = hf_tokenizer_json(self.encoding._mergeable_ranks, {}, self.encoding._pat_str)
        return doc["model"]  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"RankBPE({self.encoding.name!r}, {self.get_vocab_size()} tokens)"


class SentencePieceStage:
    def __init__(self, spm: SentencePieceBPE) -> None:
        self.spm = spm

    def tokenize(self, text: str) -> list[int]:
        return self.spm.encode(text)  # type: ignore[no-any-return]

    def tokenize_spans(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """:meth:`tokenize` and each id's span of ``text`` (sentencepiece's; for offsets)."""
        return self.spm.encode_with_offsets(text)  # type: ignore[no-any-return]

    def get_vocab_size(self) -> int:
        return self.spm.vocab_size()

    def get_vocab(self) -> dict[str, int]:
        """``{piece: id}`` over every id."""
        return {self.spm.id_to_piece(i): i for i in range(self.spm.vocab_size())}

    def token_to_id(self, token: str) -> int | None:
        return self.spm.piece_to_id(token) if self.spm.model.has_piece(token) else None

    def id_to_token(self, token_id: int) -> str | None:
        if 0 <= token_id < self.spm.vocab_size():
            return self.spm.id_to_piece(token_id)
        return None

    def __repr__(self) -> str:
        return f"SentencePieceStage({self.spm.vocab_size()} pieces)"


class SentencePieceDecoder:
    def __init__(self, spm: SentencePieceBPE) -> None:
        self.spm = spm

    def decode(self, tokens: list[str]) -> str:
        from bpekit.formats.sentencepiece.decoder import decode_pieces

        return decode_pieces(self.spm.model, tokens)

    def decode_table(self, tokenizer: Any) -> Any:
        """The model's ids decoded in one Rust call (``decoder.ids_table``), when the tokenizer
        adds no tokens of its own; else ``None``."""
        from bpekit.formats.sentencepiece.decoder import ids_table

        if len(tokenizer.added_tokens.strings) or not isinstance(tokenizer.model, SentencePieceStage):
            return None
        if tokenizer.model.spm is not self.spm:
            return None
        return ids_table(self.spm.model, tokenizer._special_id_set())
