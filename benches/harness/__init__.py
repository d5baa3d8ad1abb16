"""Helpers of ``benches/speed.py``: one module per concern.

- ``local``: where the rank files are, and per-library local caches (symlinks, nothing copied);
- ``libs``: every tokenizer under test behind one small interface (list / numpy / 2-thread batch);
- ``hfjson``: the Hugging Face ``tokenizer.json`` generated from a rank file (for HF and tokie);
- ``check``: ids identical to tiktoken's, per library and input;
- ``timing``: interleaved rounds and medians of paired per-round ratios;
- ``isolated``: work in a fresh subprocess with a timeout (worst cases, load time, peak RSS);
- ``report``: the markdown tables and the ``docs/benchmarks.md`` update.
"""
