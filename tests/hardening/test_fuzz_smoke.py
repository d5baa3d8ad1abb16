"""The in-suite smoke run of the Python parser fuzz targets (``fuzz/python/targets.py``).

atheris (``make fuzz``) runs the same target bodies for millions of executions; here each target
gets its seeds (built in memory from the shared data by ``fuzz/make_corpus.py``, GGUF from the
three smallest vocabularies) and then seeded random mutations of them (byte flips, cuts,
repeats, splices, inserted 0xFF runs that make declared sizes absurd) for
``$BPEKIT_FUZZ_SMOKE_SECONDS`` seconds (default 2). Any exception that is not a ``BpekitError``
fails, with the input saved under the test's temporary folder. The Rust targets have their own
smoke run (``src/fuzzing_smoke.rs``, in ``cargo test``).
"""

from __future__ import annotations

import os
import random
import sys
import time
import traceback
from pathlib import Path

import pytest
from bpekit.errors import BpekitError
from datapaths import DATA

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "fuzz"))
sys.path.insert(0, str(ROOT / "fuzz" / "python"))
import make_corpus
import targets

SECONDS = float(os.environ.get("BPEKIT_FUZZ_SMOKE_SECONDS", "2"))
SLOW_INPUT_SECONDS = 10.0  # atheris runs with -timeout=10

if not (DATA / "ranks").is_dir():
    pytest.skip(f"shared data not found at {DATA} (set BPEKIT_TEST_DATA)", allow_module_level=True)


@pytest.fixture(scope="module")
def seeds() -> dict[str, list[bytes]]:
    return make_corpus.python_seeds(DATA, make_corpus.rank_heads(DATA), gguf_limit=3)


def mutate(rng: random.Random, data: bytes, pool: list[bytes]) -> bytes:
    """One to four random edits of ``data``, the kinds a byte-level fuzzer makes."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        n = len(buf)
        kind = rng.randrange(6)
        if kind == 0 and n:  # flip bytes
            for _ in range(rng.randint(1, 8)):
                buf[rng.randrange(n)] = rng.randrange(256)
        elif kind == 1 and n:  # cut a range out, or cut the end off
            i = rng.randrange(n)
            del buf[i : i + rng.randint(1, max(1, n // 4)) if rng.random() < 0.7 else n]
        elif kind == 2 and n:  # repeat a range
            i = rng.randrange(n)
            buf[i:i] = buf[i : i + rng.randint(1, 64)] * rng.randint(1, 20)
        elif kind == 3:  # insert a run of 0xFF (sizes and counts become huge) or random bytes
            i = rng.randrange(n + 1)
            run = b"\xff" * rng.choice((1, 2, 4, 8)) if rng.random() < 0.5 else rng.randbytes(rng.randint(1, 16))
            buf[i:i] = run
        elif kind == 4:  # splice with another seed
            other = rng.choice(pool)
            i, j = rng.randrange(n + 1), rng.randrange(len(other) + 1)
            buf = buf[:i] + other[j:]
        elif n:  # small integers at a random place: lengths and ids near the edges
            i = rng.randrange(n)
            buf[i : i + 4] = rng.choice((0, 1, 255, 0x7FFFFFFF, 0xFFFFFFFF)).to_bytes(4, "little")
    return bytes(buf)


@pytest.mark.parametrize("name", sorted(targets.TARGETS))
def test_fuzz_target_smoke(name: str, seeds: dict[str, list[bytes]], tmp_path: Path) -> None:
    target = targets.TARGETS[name]
    pool = seeds[name]
    assert pool, f"no seeds for {name}"
    rng = random.Random(f"bpekit-fuzz-smoke-{name}")
    inputs = iter(pool)
    runs, deadline = 0, time.monotonic() + SECONDS
    while runs < len(pool) or time.monotonic() < deadline:
        data = next(inputs, None)
        if data is None:
            data = mutate(rng, rng.choice(pool), pool)
        start = time.monotonic()
        try:
            target(data)
        except BpekitError:
            pass
        except Exception:  # noqa: BLE001 - any other exception is the crash this test looks for
            saved = tmp_path / f"crash-{name}-{runs}"
            saved.write_bytes(data)
            pytest.fail(f"{name}: input #{runs} ({saved}) raised\n{traceback.format_exc()}")
        took = time.monotonic() - start
        assert took < SLOW_INPUT_SECONDS, f"{name}: input #{runs} took {took:.1f} s"
        runs += 1
    assert runs > len(pool)  # the mutations ran, not just the seeds
