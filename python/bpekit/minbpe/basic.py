"""BasicTokenizer: byte-level BPE on the whole text as one sequence (minbpe's first idea).

No split pattern and no special-token handling in ``encode``: merges may cross spaces and
punctuation. Training gives minbpe's merges (most frequent pair, ties to the pair seen first)
with bpekit's Rust trainer in minbpe's tie mode (:mod:`bpekit.minbpe.trainer`).
"""

from __future__ import annotations

from bpekit.minbpe.base import Tokenizer, apply_merges, utf8


class BasicTokenizer(Tokenizer):
    """minbpe's ``BasicTokenizer``: ``train``, ``encode``, ``decode``, ``save``, ``load``."""

    def train(self, text: str, vocab_size: int, verbose: bool = False) -> None:
        """Learn ``vocab_size - 256`` merges from ``text`` (VocabError if it runs out of pairs)."""
        self._train([utf8(text)], [1], vocab_size, verbose)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``: its UTF-8 bytes merged in merge order."""
        return apply_merges(list(utf8(text)), self.merges)

    def save(self, file_prefix: str) -> None:
        """Write ``file_prefix.model`` (loadable) and ``file_prefix.vocab`` (for humans)."""
        self._save(file_prefix)

    def load(self, model_file: str) -> None:
        """Replace this tokenizer by the one saved in ``model_file`` (a ``.model`` file)."""
        _, special_tokens, merges = self._read(model_file, with_pattern=False)
        self._restore(special_tokens, merges)
