"""bpekit.reference: the executable specification, in plain and deliberately slow Python.

Every fast path in bpekit (the Rust merge, pre-tokenizer, special-token scan and trainer) must
give exactly the results of the functions here; the tests check them against this package on
golden examples and on random input, and this package is itself checked against tiktoken.

* :mod:`.pretokenize` - split text with a tiktoken pattern (``$`` means end of text);
* :mod:`.merge` - the rank merge, as a rescan (:func:`rank_merge`) and a heap (:func:`heap_merge`);
* :mod:`.special` - the next allowed special token; tiktoken's disallowed-special error;
* :mod:`.encoding` - :class:`ReferenceEncoding`, tiktoken's ``Encoding`` semantics;
* :mod:`.train` - the textbook byte-level BPE trainer and its tie rules;
* :mod:`.educational` - the same trainer and merge, shown step by step in the terminal.

Read the code to learn what bpekit computes; never use it for speed.
"""

from __future__ import annotations

from bpekit.reference.educational import encode_piece, visualise_tokens
from bpekit.reference.encoding import ReferenceEncoding
from bpekit.reference.merge import heap_merge, merge_steps, rank_merge
from bpekit.reference.pretokenize import compile_pattern, rewrite_dollar, split
from bpekit.reference.special import (
    Found,
    check_disallowed,
    disallowed_message,
    find_special,
    leftmost_longest,
)
from bpekit.reference.train import byte_ranks, special_token_ids, train, train_steps

__all__ = [
    "Found",
    "ReferenceEncoding",
    "byte_ranks",
    "check_disallowed",
    "compile_pattern",
    "disallowed_message",
    "encode_piece",
    "find_special",
    "heap_merge",
    "leftmost_longest",
    "merge_steps",
    "rank_merge",
    "rewrite_dollar",
    "special_token_ids",
    "split",
    "train",
    "train_steps",
    "visualise_tokens",
]
