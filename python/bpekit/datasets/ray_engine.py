"""The tokenize run and training's counting phase on Ray (``pip install 'bpekit[ray]'``).

Tokenize: Ray Data streams the inputs (``read_parquet``, ``read_json``, ``read_binary_files`` --
never ``read_text``, which drops newlines), a pool of actors each builds the tokenizer once and
encodes batches, and the driver receives the encoded batches in input order (``preserve_order``)
and hands them to the same :class:`~bpekit.datasets.writer.ShardWriter` as the local engine: the
shards and the manifest are byte-identical to a local run's. Actors ask for half a CPU each, so
that the read tasks are always schedulable (Ray hangs when actors hold every CPU, ray #44687).

Counting: one Ray task per input file counts it with :func:`bpekit.train.count`; the driver adds
the :class:`~bpekit.train.WordCounts` (:func:`ray_count`), and :func:`ray_train` learns the merges
from the sum with :func:`bpekit.train.train_from_counts`.

Ray is imported only here, and only when one of these is called.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bpekit.datasets.inputs import Source, text_documents
from bpekit.datasets.plan import Plan, load_tokenizer
from bpekit.datasets.progress import Tracker
from bpekit.datasets.writer import ShardWriter, with_specials
from bpekit.errors import FormatError, UsageError

ACTOR_CPUS = 0.5
BATCH_ROWS = 4096
OBJECT_STORE_BYTES = 256 << 20  # of a local cluster started here (Ray's default is 30% of RAM)
RAY_KINDS = ("parquet", "jsonl", "text", "lines")


def _ray() -> Any:
    try:
        import ray
        import ray.data  # noqa: F401
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


class BatchEncoder:
    """A Ray Data actor: builds the tokenizer once, then turns a batch of rows into one row with
    the concatenated ids, the per-document lengths and ``[path, documents]`` runs."""

    def __init__(self, spec: Any, kind: str, key: str, bos: int | None, eos: int | None) -> None:
        self.encoding, _ = load_tokenizer(spec)
        self.kind, self.key, self.bos, self.eos = kind, key, bos, eos

    def documents(self, batch: dict[str, Any]) -> Iterator[tuple[str, list[str]]]:
        for path, value in zip(batch["path"], batch["bytes" if self.kind in ("text", "lines") else self.key]):
            if self.kind in ("text", "lines"):
                yield str(path), list(text_documents(io.BytesIO(value), self.kind == "lines"))
                continue
            if isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
            if value is not None and not isinstance(value, str):
                raise FormatError(f"{path}: {self.key!r} holds {type(value).__name__}, not strings")
            yield str(path), [value] if value else []

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        runs: list[list[Any]] = []
        docs: list[str] = []
        for path, found in self.documents(batch):
            if runs and runs[-1][0] == path:
                runs[-1][1] += len(found)
            else:
                runs.append([path, len(found)])
            docs.extend(found)
        flat, offsets = self.encoding.encode_batch_to_numpy(docs, num_threads=1, disallowed_special=())
        ids, lengths = with_specials(flat, offsets, self.bos, self.eos)
        size = sum(len(d.encode("utf-8", "surrogatepass")) for d in docs)
        return {
            "runs": np.array([json.dumps(runs)], dtype=object),
            "ids": np.array([ids.astype("<u4").tobytes()], dtype=object),
            "lengths": np.array([lengths.astype("<i8").tobytes()], dtype=object),
            "text_bytes": np.array([size], dtype=np.int64),
        }


def _groups(sources: Sequence[Source], first: int) -> list[tuple[str, list[int]]]:
    """Consecutive inputs of one kind from ``first`` on, each read as one Ray dataset."""
    groups: list[tuple[str, list[int]]] = []
    for i in range(first, len(sources)):
        s = sources[i]
        if s.kind not in RAY_KINDS or s.path.lower().endswith((".gz", ".zst", ".zstd", ".bz2", ".xz")):
            raise UsageError(
                f"the Ray engine reads plain .parquet, .jsonl and text files; {s.path} is not one (use --engine local)"
            )
        if groups and groups[-1][0] == s.kind:
            groups[-1][1].append(i)
        else:
            groups.append((s.kind, [i]))
    return groups


def _read(ray: Any, kind: str, paths: list[str], plan: Plan) -> Any:
    if kind == "parquet":
        import pyarrow.parquet as pq

        for p in paths:
            names = pq.read_schema(p).names
            if plan.options.column not in names:
                raise FormatError(f"{p}: no column {plan.options.column!r} (columns: {', '.join(names)})")
        return ray.data.read_parquet(paths, columns=[plan.options.column], include_paths=True, file_extensions=None)
    if kind == "jsonl":
        return ray.data.read_json(paths, lines=True, include_paths=True, file_extensions=None)
    return ray.data.read_binary_files(paths, include_paths=True)


def tokenize_on_ray(plan: Plan, writer: ShardWriter, tracker: Tracker, *, threads: int = 0, address: str | None = None) -> None:
    """Runs the plan's encoding on Ray Data and writes the shards on the driver, in input order."""
    first, skip = writer.manifest["position"]
    groups = _groups(plan.sources, first)
    with ray_session(address, threads) as ray:
        ctx = ray.data.DataContext.get_current()
        ctx.execution_options.preserve_order = True
        ctx.enable_progress_bars = False
        cpus = ray.cluster_resources().get("CPU", 1)
        actors = max(1, int((cpus - 1) / ACTOR_CPUS))  # leave one CPU for the read tasks
        for kind, indices in groups:
            by_path = {str(Path(plan.sources[i].path).resolve()): i for i in indices}
            key = plan.options.column if kind == "parquet" else plan.options.field
            ds = _read(ray, kind, [plan.sources[i].path for i in indices], plan).map_batches(
                BatchEncoder,
                fn_constructor_args=(plan.tokenizer_spec, kind, key, plan.bos, plan.eos),
                batch_size=BATCH_ROWS,
                batch_format="numpy",
                compute=ray.data.ActorPoolStrategy(size=actors),
                num_cpus=ACTOR_CPUS,
            )
            received = dict.fromkeys(indices, 0)
            drop = {first: skip}  # documents already in the shards of an interrupted run
            for row in ds.iter_rows():
                _receive(row, by_path, received, drop, writer, tracker)


def _receive(
    row: dict[str, Any], by_path: dict[str, int], received: dict[int, int], drop: dict[int, int],
    writer: ShardWriter, tracker: Tracker,
) -> None:  # fmt: skip
    """Hands one encoded batch to the writer, input by input, minus the documents to skip."""
    ids = np.frombuffer(row["ids"], dtype="<u4")
    lengths = np.frombuffer(row["lengths"], dtype="<i8")
    at = done = 0
    index = -1
    for path, n in json.loads(row["runs"]):
        index = by_path.get(str(Path(path).resolve()), -1)
        if index < 0:
            raise FormatError(f"Ray returned documents of {path!r}, which is not an input of this run")
        part = lengths[done : done + n]
        skip = min(n, max(0, drop.get(index, 0) - received[index]))
        start = at + int(part[:skip].sum())
        end = at + int(part.sum())
        if skip < n:
            writer.add(index, received[index] + skip, ids[start:end], part[skip:])
        received[index] += n
        at, done = end, done + n
    if index >= 0:
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
