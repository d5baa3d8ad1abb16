"""The progress bar: what it says in each phase, and that it stays silent off a terminal."""

from __future__ import annotations

import io

from bpekit.train.progress import ProgressBar, TrainProgress, human_bytes


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_render_counting_and_merging():
    line = ProgressBar.render(TrainProgress("count", 50_000_000, 100_000_000, 2.0, documents=12))
    assert line == "counting  50.0 MB / 100.0 MB (50%)  25.0 MB/s  12 documents"
    line = ProgressBar.render(TrainProgress("merge", 1_000, 4_000, 0.5, merges=744))
    assert line == "merging   [#######.......................] 1,000/4,000 tokens  1,488 merges/s"
    assert [human_bytes(n) for n in (999, 1_500, 2_000_000_000, 3e12)] == ["999 B", "1.5 KB", "2.0 GB", "3.0 TB"]


def test_drawn_only_on_a_terminal_and_ended_by_close():
    quiet = io.StringIO()
    bar = ProgressBar(True, quiet)
    bar.update(TrainProgress("count", 1, None, 1.0), force=True)
    bar.close()
    assert quiet.getvalue() == ""
    term = FakeTerminal()
    bar = ProgressBar(True, term)
    bar.update(TrainProgress("count", 1, None, 1.0), force=True)
    bar.update(TrainProgress("count", 2, None, 1.0))  # within 0.1 s of the last draw: skipped
    bar.close()
    assert term.getvalue() == "\rcounting  1 B  1 B/s  0 documents\x1b[K\n"
    off = FakeTerminal()
    ProgressBar(False, off).update(TrainProgress("count", 1, None, 1.0), force=True)
    assert off.getvalue() == ""
