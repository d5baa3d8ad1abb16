"""The tokenize run and training's counting phase on Ray (``pip install 'bpekit[ray]'``).

Tokenize: one Ray Data reader task per input streams its documents with the local engine's
readers (Ray's own ``read_text`` drops newlines, and ``union`` of several readers loses the input
order, so neither is used), a pool of actors each builds the tokenizer once and encodes batches,
and the driver receives the encoded batches in input order (``preserve_order``) and hands them to
the same :class:`~bpekit.datasets.writer.ShardWriter` as the local engine: the shards and the
manifest are byte-identical to a local run's. Inputs must be readable at the same paths on every
node (a shared file system), and bpekit installed there. Actors ask for half a CPU each, so
that the read tasks are always schedulable (Ray hangs when actors hold every CPU, ray #44687).

Counting: one Ray task per input file counts it with :func:`bpekit.train.count`; the driver adds
the :class:`~bpekit.train.WordCounts` (:func:`ray_count`), and :func:`ray_train` learns the merges
from the sum with :func:`bpekit.train.train_from_counts`.

Ray is imported only here, and only when one of these is called.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from bpekit.datasets.inputs import Position, Source, batches
from bpekit.datasets.pipeline import encode_documents, text_bytes
from bpekit.datasets.plan import Plan, load_tokenizer
from bpekit.datasets.progress import Tracker
from bpekit.datasets.writer import ShardWriter
from bpekit.errors import UsageError
from bpekit.train.sources import ReadOptions

ACTOR_CPUS = 0.5
BATCH_ROWS = 4096
OBJECT_STORE_BYTES = 256 << 20  # of a local cluster started here (Ray's default is 30% of RAM)


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise UsageError("the Ray engine needs Ray Data: pip install 'bpekit[ray]' (or 'ray[data]')") from None
    return ray


@contextlib.contextmanager
def ray_session(address: str | None = None, num_cpus: int = 0) -> Iterator[Any]:
    """Ray, connected: to ``address`` (``auto``, ``ray://host:port``), to the session already
    started in this process, or to a local cluster started here and shut down afterwards."""
    ray = _ray()
    if ray.is_initialized():
        yield ray
        return
    if address is not None:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(
            num_cpus=num_cpus or os.cpu_count() or 1,
            include_dashboard=False,
            object_store_memory=OBJECT_STORE_BYTES,
            log_to_driver=False,
        )
    try:
        yield ray
    finally:
        ray.shutdown()


# ---------------------------------------------------------------- tokenize


def read_inputs(batch: dict[str, Any], sources: list[Source], options: ReadOptions, start: Position) -> Iterator[dict[str, Any]]:
    """A Ray Data reader task: the documents of the inputs named in ``batch["index"]``, streamed
    in batches of ``{"index", "doc"}`` by the local engine's readers (so both engines read exactly
    the same documents), the documents before ``start`` skipped."""
    for index in batch["index"]:
        index = int(index)
        begin = start if index == start[0] else (0, 0)
        for _, _, docs in batches([sources[index]], options, (0, begin[1])):
            yield {"index": np.full(len(docs), index, dtype=np.int64), "doc": np.array(docs, dtype=object)}


class BatchEncoder:
    """A Ray Data actor: builds the tokenizer once, then turns a batch of documents into one row
    with the concatenated ids, the per-document lengths and ``[input index, documents]`` runs."""

    def __init__(self, spec: Any, bos: int | None, eos: int | None) -> None:
        self.encoder, _ = load_tokenizer(spec)
        self.bos, self.eos = bos, eos

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        runs: list[list[int]] = []
        for index in batch["index"].tolist():
            if runs and runs[-1][0] == index:
                runs[-1][1] += 1
            else:
                runs.append([index, 1])
        docs = list(batch["doc"])
        ids, lengths = encode_documents(self.encoder, docs, 1, self.bos, self.eos)
        size = text_bytes(docs)
        return {
            "runs": np.array([json.dumps(runs)], dtype=object),
            "ids": np.array([ids.astype("<u4").tobytes()], dtype=object),
            "lengths": np.array([lengths.astype("<i8").tobytes()], dtype=object),
            "text_bytes": np.array([size], dtype=np.int64),
        }


def tokenize_on_ray(plan: Plan, writer: ShardWriter, tracker: Tracker, *, threads: int = 0, address: str | None = None) -> None:
    """Runs the plan's reading and encoding on Ray Data and writes the shards on the driver, in
    input order."""
    first, skip = writer.manifest["position"]
    with ray_session(address, threads) as ray:
        ctx = ray.data.DataContext.get_current()
        ctx.execution_options.preserve_order = True
        ctx.enable_progress_bars = False
        cpus = ray.cluster_resources().get("CPU", 1)
        actors = max(1, int((cpus - 1) / ACTOR_CPUS))  # leave one CPU for the reader tasks
        todo = list(range(first, len(plan.sources)))
        ds = ray.data.from_items([{"index": i} for i in todo], override_num_blocks=max(1, len(todo)))
        ds = ds.map_batches(
            read_inputs,
            fn_kwargs={"sources": plan.sources, "options": plan.options, "start": (first, skip)},
            batch_size=1,
            batch_format="numpy",
        ).map_batches(
            BatchEncoder,
            fn_constructor_args=(plan.tokenizer_spec, plan.bos, plan.eos),
            batch_size=BATCH_ROWS,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=actors),
            num_cpus=ACTOR_CPUS,
        )
        received = {first: skip}
        for row in ds.iter_rows():
            _receive(row, received, writer, tracker)


def _receive(row: dict[str, Any], received: dict[int, int], writer: ShardWriter, tracker: Tracker) -> None:
    """Hands one encoded batch to the writer, input by input."""
    ids = np.frombuffer(row["ids"], dtype="<u4")
    lengths = np.frombuffer(row["lengths"], dtype="<i8")
    at = done = 0
    index = 0
    for index, n in json.loads(row["runs"]):
        part = lengths[done : done + n]
        end = at + int(part.sum())
        writer.add(index, received.get(index, 0), ids[at:end], part)
        received[index] = received.get(index, 0) + n
        at, done = end, done + n
    tracker.update(index, done, int(row["text_bytes"]), len(ids))


# ---------------------------------------------------------------- training's counting phase


def _count_file(path: str, pattern: str, special_tokens: list[str], field: str, column: str) -> bytes:
    from bpekit.train import count

    counts = count(path, pattern=pattern, special_tokens=special_tokens, threads=1, show_progress=False, field=field, column=column)
    return counts.to_bytes()


def ray_count(
    sources: Any,
    *,
    pattern: str = "o200k",
    special_tokens: Sequence[str] = (),
    field: str = "text",
    column: str = "text",
    address: str | None = None,
    num_cpus: int = 0,
) -> Any:
    """The :class:`~bpekit.train.WordCounts` of ``sources`` (paths, directories, globs), one Ray
    task per file; equal to :func:`bpekit.train.count` of the same files."""
    from bpekit.train import WordCounts
    from bpekit.train.sources import expand_path

    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    files = [str(p) for s in sources for p in expand_path(s)]
    total = WordCounts.from_dict({}, _resolved(pattern), special_tokens)
    with ray_session(address, num_cpus) as ray:
        task = ray.remote(num_cpus=1)(_count_file)
        pending = [task.remote(f, pattern, list(special_tokens), field, column) for f in files]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                total += WordCounts.from_bytes(ray.get(ref), "a Ray counting task")
    return total


def _resolved(pattern: str) -> str:
    from bpekit.patterns import resolve_pattern

    return resolve_pattern(pattern)


def ray_train(sources: Any, *, vocab_size: int, address: str | None = None, num_cpus: int = 0, **options: Any) -> Any:
    """A :class:`~bpekit.tokenizer.Tokenizer` trained on ``sources`` with the counting phase on Ray
    (:func:`ray_count`) and the merges learned here (:func:`bpekit.train.train_from_counts`).
    ``options``: ``pattern``, ``special_tokens``, ``field``, ``column`` go to the counting,
    ``min_frequency``, ``max_token_length``, ``threads``, ``show_progress`` to the merging."""
    from bpekit.train import train_from_counts

    count_keys = ("pattern", "special_tokens", "field", "column")
    counts = ray_count(sources, address=address, num_cpus=num_cpus, **{k: options.pop(k) for k in count_keys if k in options})
    return train_from_counts(counts, vocab_size=vocab_size, **options)
