"""``bpekit.pipeline.aligned.Aligned``: text that keeps no span per character (unchanged, with a
prefix, with one-for-one replacements) answers every question as the same text with its spans
written out does."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bpekit.pipeline.aligned import Aligned


def _written_out(a: Aligned) -> Aligned:
    return Aligned(a.text, list(a.spans), a.origin)


@given(st.text("ab ▁", max_size=12), st.integers(0, 5), st.text("▁x", max_size=3), st.data())
def test_lazy_spans_answer_as_written_out_ones(text: str, origin: int, prefix: str, data: st.DataObject) -> None:
    lazy = Aligned.of(text, origin).prepend(prefix).replace_char(" ", "▁")
    eager = Aligned.of(text, origin)
    eager = _written_out(eager).prepend(prefix).replace(
        [(i, i + 1) for i, c in enumerate(eager.prepend(prefix).text) if c == " "], "▁")
    assert lazy.text == eager.text and lazy.spans == eager.spans
    lazy = Aligned.of(text, origin).prepend(prefix).replace_char(" ", "▁")  # (spans not built yet)
    n = len(lazy)
    cuts = data.draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, n)).map(sorted).map(tuple), max_size=6))
    assert lazy.map(cuts) == eager.map(cuts)
    for a, b in cuts:
        if a < b:
            assert lazy.span(a, b) == eager.span(a, b)
        part, want = lazy[a:b], eager[a:b]
        assert part.text == want.text and part.spans == want.spans, (a, b)
        if part.text:
            again = part.prepend("▁")
            assert again.spans == _written_out(want).prepend("▁").spans


def test_replace_char_takes_one_character_each_way() -> None:
    import pytest

    with pytest.raises(ValueError):
        Aligned.of("a b").replace_char(" ", "__")
