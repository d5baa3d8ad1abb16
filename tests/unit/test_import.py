"""``import bpekit`` stays light: what ``get_encoding`` needs is imported, the pipelines, the
trainer and the ``regex`` module only when first named (PEP 562, ``bpekit/__init__.py``)."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

HEAVY = ["bpekit.pipeline", "bpekit.tokenizer", "bpekit.train", "bpekit.formats", "regex"]


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_bpekit_leaves_the_heavy_modules_out():
    loaded = _run(f"import sys, bpekit; print([m for m in {HEAVY!r} if m in sys.modules])")
    assert loaded == "[]"


def test_lazy_names_resolve_to_the_same_objects_as_their_modules():
    import bpekit
    import bpekit.pipeline as pipeline
    from bpekit.tokenizer import Tokenizer
    from bpekit.train import Trainer, WordCounts, train, train_from_counts

    assert bpekit.Tokenizer is Tokenizer and bpekit.pipeline is pipeline
    assert bpekit.Trainer is Trainer and bpekit.WordCounts is WordCounts
    assert bpekit.train_from_counts is train_from_counts
    # `bpekit.train` is the package, which calls the function
    assert bpekit.train is sys.modules["bpekit.train"] and bpekit.train.train is train
    assert bpekit.train(iter(["ab ab ab"]), vocab_size=258, show_progress=False).vocab_size == 258
    assert inspect.signature(bpekit.train) == inspect.signature(train)
    assert set(bpekit.__all__) <= set(dir(bpekit))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        bpekit.nope  # noqa: B018


@pytest.mark.parametrize(
    "code",
    [
        "import bpekit; f = bpekit.train",
        "import bpekit.train.sources, bpekit; f = bpekit.train",
        "from bpekit import train as f",
    ],
)
def test_bpekit_train_is_callable_whatever_was_imported_first(code):
    assert _run(code + "; print(f(iter(['ab ab ab cd']), vocab_size=258, show_progress=False).vocab_size)") == "258"


@pytest.mark.parametrize(
    "code",
    [
        "import bpekit; bpekit.train; import bpekit.train",  # (then bpekit.train.count failed)
        "import bpekit.train",
        "import bpekit; from bpekit import train; import bpekit.train.sources",
    ],
)
def test_the_train_package_is_reachable_whatever_was_imported_first(code):
    assert _run(code + "; print(bpekit.train.count(iter(['ab ab'])).total())") == "2"
