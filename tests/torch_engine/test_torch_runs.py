"""The vectorized overlapping-run rule: in each run of consecutive match positions, a left-to-right
scan merges the 1st, 3rd, 5th... ("aaaa" has (a, a) at 0, 1, 2 and merges 0 and 2)."""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install bpekit[torch]); torch engine not tested")

from bpekit.torch.runs import leftmost_nonoverlapping, segment_min  # noqa: E402


def scan(positions: list[int]) -> list[int]:
    """The rule by hand: take a match unless the previous one was taken and overlaps it."""
    out: list[int] = []
    for p in positions:
        if not out or out[-1] != p - 1:
            out.append(p)
    return out


def taken(positions: list[int], n: int, device: str) -> list[int]:
    """``leftmost_nonoverlapping`` on a mask of ``n`` positions holding ``positions``, as a list."""
    mask = torch.zeros(n, dtype=torch.bool, device=device)
    mask[positions] = True
    return torch.nonzero(leftmost_nonoverlapping(mask)).squeeze(1).tolist()


@pytest.mark.parametrize(
    ("positions", "expected"),
    [
        ([], []),
        ([4], [4]),
        ([0, 1, 2], [0, 2]),  # "aaaa" -> "aa aa"
        ([0, 1, 2, 3], [0, 2]),  # "aaaaa" -> "aa aa a"
        ([0, 1, 2, 5, 6, 9], [0, 2, 5, 9]),
        ([3, 5, 7], [3, 5, 7]),  # no overlaps: every match
    ],
)
def test_hand_cases(positions, expected, device):
    assert taken(positions, 12, device) == expected


def test_random_against_scan(device):
    rng = random.Random(7)
    for _ in range(300):
        positions = sorted(rng.sample(range(60), rng.randint(0, 40)))
        assert taken(positions, 60, device) == scan(positions), positions


def test_segment_min(device):
    values = torch.tensor([5, 3, 9, 2, 7], device=device)
    segments = torch.tensor([0, 0, 2, 2, 2], device=device)
    assert segment_min(values, segments, 4, 100).tolist() == [3, 100, 2, 100]
