"""The speed harness's correctness machinery (benches/speed.py), on tiny inputs so it cannot rot:
ids compared in every output mode, a wrong library caught, worst cases run in a child process
(with digests equal to tiktoken's), timeouts recorded, tables rendered."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from datapaths import DATA, ROOT

# appended, not put first: a script in benches/ named after a package would shadow it for every
# test module that imports it later in the same run (benches/harness/isolated.py puts benches/
# first; the SentencePiece benchmark is sentencepiece_speed.py for that reason)
sys.path.append(str(ROOT / "benches"))
pytest.importorskip("tiktoken")
if not (DATA / "ranks" / "cl100k_base.tiktoken").is_file():
    pytest.skip(f"rank files not found under {DATA}/ranks (set BPEKIT_TEST_DATA)", allow_module_level=True)

from harness import check, isolated, libs, local, report, timing

ENC = "cl100k_base"
TINY = ["hello world", "  leading and trailing  ", "digits 1234567 and 3.14", "Grüße, 世界! 👍🏽",
        "def f(x):\n\treturn x ** 2\n", "", "\n\n\n", "'s 've 're"]


@pytest.fixture(scope="module", autouse=True)
def local_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The harness's environment (symlinked caches in a temporary directory), for this module."""
    mp = pytest.MonkeyPatch()
    for k, v in local.setup_env(work=tmp_path_factory.mktemp("bench"), apply=False).items():
        mp.setenv(k, v)
    yield
    mp.undo()


@pytest.fixture(scope="module")
def built(local_env: None) -> dict[str, libs.Lib]:
    return {name: libs.build(name, ENC) for name in ("bpekit", "bpekit(no cache)", "tiktoken")}


def test_bpekit_equals_tiktoken_in_every_mode(built: dict[str, libs.Lib]) -> None:
    docs = TINY + [isolated.worst_input(c, 300) for c in isolated.WORST]
    reference = check.outputs(built["tiktoken"], "list", docs)
    assert reference is not None and reference[0] == [15339, 1917]
    for name in ("bpekit", "bpekit(no cache)"):
        lib = built[name]
        assert all(check.outputs(lib, m, docs) is not None for m in check.MODES)
        assert check.compare(lib, docs, reference) == []


def test_bpekit_is_timed_with_the_cache_it_ships_with(built: dict[str, libs.Lib]) -> None:
    # The "bpekit" column is the library as installed: its budget is a new encoder's (the
    # harness once kept the old 4 MiB default, 16x the shipped one); "no cache" is 0.
    import bpekit
    from bpekit import _core

    fresh = _core.CoreBPE({b"a": 0, b"b": 1}, [], bpekit.patterns.CL100K).cache_capacity()
    assert fresh == _core.DEFAULT_PRETOKEN_CACHE_BYTES > 0
    enc = bpekit.get_encoding(ENC)
    built["bpekit(no cache)"].prepare()
    assert enc.pretoken_cache_bytes == 0
    built["bpekit"].prepare()
    assert enc.pretoken_cache_bytes == fresh


def test_a_wrong_library_is_caught(built: dict[str, libs.Lib]) -> None:
    good = built["bpekit"]
    wrong = libs.Lib("bpekit", "0", lambda t: good.encode(t)[:-1] if "1" in t else good.encode(t),
                     batch=lambda ts: [[7] for _ in ts[:-1]])
    reference = check.outputs(built["tiktoken"], "list", TINY)
    assert reference is not None
    found = check.compare(wrong, TINY, reference)
    assert [(m.mode, m.doc, m.n_docs) for m in found] == [("list", 2, 1), ("batch", -1, len(TINY))]
    with pytest.raises(SystemExit, match="bpekit"):
        check.require_identical(found)
    peer = [check.Mismatch("tokie", "list", 2, 1, "x")]
    check.require_identical(peer)  # a peer's difference is reported, not fatal


def test_worst_cases_run_in_a_child_and_match_tiktoken(built: dict[str, libs.Lib]) -> None:
    got = isolated.worst_cases("bpekit", ENC, 2_000, timeout=60)
    assert list(got) == ["english", *isolated.WORST]
    for case, r in got.items():
        text = isolated.worst_input(case, 2_000)
        assert len(text.encode()) <= 2_000
        assert r["digest"] == check.digest(built["tiktoken"].encode(text)), case


def test_a_timeout_is_recorded_and_the_rest_continue() -> None:
    got = isolated.worst_cases("bpekit", ENC, 10, timeout=0.001, load_timeout=0.001)
    assert got == {c: {"status": "TIMEOUT"} for c in ["english", *isolated.WORST]}


def test_tables_use_paired_ratios() -> None:
    assert timing.paired_ratio([1.0, 2.0, 4.0], [2.0, 2.0, 2.0]) == 1.0
    secs = {"tiktoken|list": [2.0, 4.0], "bpekit|list": [1.0, 1.0], "bpekit|batch": [0.5, 1.0]}
    res = {"libs": ["tiktoken", "bpekit"], "encodings": {ENC: {"corpora": {"english": {"mb": 2.0, "seconds": secs}},
                                                                "mismatches": []}}}
    text = "\n".join(report.speed_tables(res))
    assert "| cl100k_base | english (2.00) | 0.8 (1.00x) | 2.0 (3.00x) |" in text
    assert "| cl100k_base | english (2.00) | 3.0 (1.50x) |" in text  # batch vs its own 1 thread


def test_a_pass_calls_the_instance_its_prepare_made() -> None:
    """`prepare` may replace a library's methods (gigatoken: a fresh instance, cold cache, before
    every pass); the timed pass must call the replacement, not the method it was built with."""
    import speed

    calls: list[tuple[str, int]] = []
    lib = libs.Lib("fake", "0", encode=lambda t: calls.append(("list", 0)))
    made = iter(range(1, 100))

    def prepare() -> None:
        n = next(made)
        lib.encode = lambda t: calls.append(("list", n))
        lib.numpy = lambda t: calls.append(("numpy", n))

    prepare()
    lib.prepare = prepare
    passes = speed.timed_passes(lib, ["a"])
    timing.run_rounds(passes, 2, {k: lib.prepare for k in passes}, warm=False)
    assert calls == [("list", 2), ("numpy", 3), ("numpy", 4), ("list", 5)]
    # warm (the default): an untimed pass first, then `prepare` again before the timed one
    calls.clear()
    secs = timing.run_rounds(passes, 2, {k: lib.prepare for k in passes})
    assert calls == [("list", 6), ("list", 7), ("numpy", 8), ("numpy", 9),
                     ("numpy", 10), ("numpy", 11), ("list", 12), ("list", 13)]
    assert {k: len(v) for k, v in secs.items()} == {"list": 2, "numpy": 2}
