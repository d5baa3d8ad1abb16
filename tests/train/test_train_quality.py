"""Compression: on held-out text, a bpekit-trained tokenizer needs within 0.5% as many tokens as
one trained by Hugging Face's BpeTrainer with the same pattern, alphabet and vocabulary size (the
two differ only in tie-breaking and in how re-spelled tokens are counted)."""

from __future__ import annotations

import pytest

from bpekit.patterns import resolve_pattern
from bpekit.tokenizer_export import onig_pattern
from bpekit.train import train


@pytest.mark.parametrize("pattern", ["cl100k"])
def test_compression_matches_hugging_face(pattern, english_docs):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import pre_tokenizers, trainers

    shakespeare, article, swahili = english_docs
    docs = [shakespeare[:900_000], article[:150_000], swahili[:500_000]]
    held_out = [shakespeare[900_000:], article[150_000:], swahili[500_000:600_000]]
    ours = train(iter(docs), vocab_size=2000, pattern=pattern, show_progress=False)

    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    hf.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(tokenizers.Regex(onig_pattern(resolve_pattern(pattern))), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=2000, min_frequency=2, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    hf.train_from_iterator(docs, trainer)
    assert hf.get_vocab_size() == 2000

    n_ours = sum(len(ours.encode_ordinary(t)) for t in held_out)
    n_hf = sum(len(hf.encode(t).ids) for t in held_out)
    assert abs(n_ours / n_hf - 1) < 0.005, (n_ours, n_hf)
