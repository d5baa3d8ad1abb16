"""minbpe-compatible tokenizers: the API and files of karpathy/minbpe, with a fast trainer.

* :class:`BasicTokenizer`: byte-level BPE over the whole text;
* :class:`RegexTokenizer`: split by a regex first (GPT-4 pattern by default), special tokens;
* :class:`GPT4Tokenizer`: tiktoken's cl100k_base expressed as minbpe merges.

``train`` learns the same merges as minbpe on the same text (highest count, ties to the pair
seen first) with bpekit's Rust trainer instead of minbpe's full recount per merge; ``save`` and
``load`` read and write minbpe's ``.model`` / ``.vocab`` files. Where minbpe asserts, these raise
bpekit's typed errors; see docs/minbpe.md for every difference.
"""

from __future__ import annotations

from bpekit.minbpe.base import Tokenizer
from bpekit.minbpe.basic import BasicTokenizer
from bpekit.minbpe.gpt4 import GPT4Tokenizer, recover_merges
from bpekit.minbpe.model_file import render_token
from bpekit.minbpe.regex_tokenizer import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, RegexTokenizer

__all__ = [
    "GPT2_SPLIT_PATTERN",
    "GPT4_SPLIT_PATTERN",
    "BasicTokenizer",
    "GPT4Tokenizer",
    "RegexTokenizer",
    "Tokenizer",
    "recover_merges",
    "render_token",
]
