"""The tokenizer pipeline as visible objects, one module per stage, as Hugging Face designs it:
added tokens (``added_tokens``), ``normalizers``, ``pre_tokenizers``, ``models`` (BPE),
``processors`` and ``decoders``. Every stage reads and writes its ``tokenizer.json`` dict
(``from_json`` / ``to_json``); ``bpekit.Tokenizer`` composes them.
"""

from __future__ import annotations

from bpekit.pipeline import decoders, normalizers, pre_tokenizers, processors
from bpekit.pipeline.added_tokens import AddedToken, AddedVocabulary
from bpekit.pipeline.models import BPE

__all__ = ["BPE", "AddedToken", "AddedVocabulary", "decoders", "normalizers", "pre_tokenizers", "processors"]
