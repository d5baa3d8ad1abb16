"""BPE-dropout: the same distribution of segmentations as sentencepiece's (whose random numbers
cannot be reproduced), worked out by hand for a small model; alpha 1 exactly as sentencepiece;
the same pieces for the same seed."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
from bpekit.errors import InputTypeError
from bpekit.formats.sentencepiece import SentencePieceBPE
from formats.test_sentencepiece_support import SPM_DIR, corpus_lines, model_paths, oracle, ours, require

MODELS = model_paths()
N = 3000


def _distribution(p: float) -> dict[tuple[str, ...], float]:
    """hm_equal_scores (ab, bc: 0.0; abc: -1) on "abc", each merge skipped with probability p.

    Pop ab: kept (q = 1 - p) gives ab c and the candidate abc, kept with q: abc, else ab c.
    ab dropped (p): pop bc: kept gives a bc and the candidate abc: abc (q), else a bc (p).
    bc dropped too (p): a b c.
    """
    q = 1 - p
    return {("abc",): q * q * (1 + p), ("ab", "c"): q * p, ("a", "bc"): p * p * q, ("a", "b", "c"): p * p}


def _close(counts: Counter[tuple[str, ...]], expected: dict[tuple[str, ...], float]) -> None:
    assert set(counts) <= set(expected)
    for outcome, prob in expected.items():
        sd = math.sqrt(prob * (1 - prob) / N)
        assert abs(counts[outcome] / N - prob) <= 5 * sd + 1e-9, (outcome, counts[outcome] / N, prob)


@pytest.mark.parametrize("alpha", [0.2, 0.5, 0.8])
def test_dropout_distribution_is_the_one_worked_out_by_hand(alpha: float) -> None:
    tok = SentencePieceBPE.load(require(SPM_DIR / "hm_equal_scores.model"))
    counts = Counter(tuple(tok.encode("abc", out_type=str, alpha=alpha, seed=s)) for s in range(N))
    _close(counts, _distribution(alpha))


def test_sentencepiece_dropout_has_the_same_distribution() -> None:
    sp = oracle(require(SPM_DIR / "hm_equal_scores.model"))
    counts = Counter(
        tuple(sp.encode("abc", out_type=str, enable_sampling=True, alpha=0.5, nbest_size=-1)) for _ in range(N)
    )
    _close(counts, _distribution(0.5))


@pytest.mark.skipif(not MODELS, reason="shared SentencePiece models not found")
@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_alpha_one_leaves_the_initial_symbols_as_sentencepiece_does(path: Path) -> None:
    tok, sp = ours(path), oracle(path)
    lines = [line for file_lines in corpus_lines().values() for line in file_lines[:3]]
    want = sp.encode(lines, out_type=str, enable_sampling=True, alpha=1.0, nbest_size=-1, num_threads=1)
    assert [tok.encode(line, out_type=str, alpha=1.0) for line in lines] == want


@pytest.mark.skipif(not MODELS, reason="shared SentencePiece models not found")
@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_dropout_gives_valid_segmentations_repeatable_by_seed(path: Path) -> None:
    tok = ours(path)
    lines = [line for file_lines in corpus_lines().values() for line in file_lines[:2] if line.strip()]
    plain = sum(len(tok.encode(line)) for line in lines)
    dropped = 0
    for seed, line in enumerate(lines):
        pieces, ids = tok.encode_pieces_and_ids(line, alpha=0.3, seed=seed)
        assert tok.encode_pieces_and_ids(line, alpha=0.3, seed=seed) == (pieces, ids)
        assert tok.decode(ids) == tok.decode(tok.encode(line))
        assert all(0 <= i < tok.vocab_size() for i in ids)
        dropped += len(ids)
    assert dropped > plain  # dropping merges leaves more, shorter pieces
    # the line with the most merges has several segmentations
    busiest = max(lines, key=lambda line: len(tok.encode(line, alpha=1.0)) - len(tok.encode(line)))
    variants = {tuple(tok.encode(busiest, alpha=0.3, seed=s)) for s in range(20)}
    assert len(variants) > 1


def test_alpha_must_be_a_number() -> None:
    tok = SentencePieceBPE.load(require(SPM_DIR / "hm_equal_scores.model"))
    for alpha in ("0.5", None, float("nan"), True):
        with pytest.raises(InputTypeError):
            tok.encode("abc", alpha=alpha)  # type: ignore[arg-type]
