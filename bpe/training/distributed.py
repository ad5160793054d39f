"""Counting pre-tokens of a corpus larger than one machine: shards counted by workers, then summed.

Counting is a map-reduce: each shard of the text becomes a ``PretokenCounts`` (``bpe.training.counts``) and
the partial counts are added pairwise, as a tree, into one.  The result is the same as counting the
whole text serially, whatever the shards, the workers or the order they finish in.

Shards:

* ``file_shards(paths)``: byte ranges of text files, cut at line starts; a worker reads its range
  one line per text, exactly as ``tokbench train --input`` reads a file (``LineReader``).  On a
  real cluster the files must be readable by the workers at the same path (a shared file system).
* ``hub_shards(dataset, ...)``: the shards (data files) of a Hugging Face ``datasets`` dataset,
  streamed by the workers themselves, one row per text, with an optional byte budget split evenly
  over the shards (each shard stops after ``max_bytes / n_shards`` bytes of UTF-8 text).

Engines (``count_shards(..., engine=...)``):

``local``
    This process, shard after shard (each counted with the local threads of ``count_pretokens``).
``dask``
    A Dask ``distributed`` cluster: ``address`` of a running scheduler (``tcp://host:8786``), or
    without one a ``LocalCluster`` of ``workers`` processes on this machine.  Needs the optional
    extra ``pip install 'tokbench[cluster]'`` on the client and every worker.

Dask rather than Ray: the extra is two pure-Python wheels of about 2.5 MB (``dask``,
``distributed``; about 35 MB installed with their dependencies) against a 79 MB Ray wheel with its own
services (GCS, raylet, dashboard); a ``LocalCluster`` starts offline in a second or two and
needs no daemon; and ``Client.map`` / ``Client.submit`` over plain functions is all this map-reduce
needs (partial counts stay on the workers until the tree reduction has summed them).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from bpe.base import TokenizerError
from bpe.pipeline.pretokenizers import get_pretokenizer
from bpe.training.counts import PretokenCounts, count_pretokens

ENGINES = ("local", "dask")
#: bytes of text per file shard
SHARD_BYTES = 64 << 20


@dataclass(frozen=True)
class FileShard:
    """Bytes ``start`` to ``end`` of a text file (both at a line start, or the end of the file)."""

    path: str
    start: int
    end: int


@dataclass(frozen=True)
class HubShard:
    """Shard ``index`` of ``n_shards`` of a streamed ``datasets`` dataset: the ``column`` of every row,
    up to ``max_bytes`` bytes of UTF-8 text (None: all of it)."""

    dataset: str
    name: str | None
    split: str
    column: str
    index: int
    n_shards: int
    max_bytes: int | None
    data_files: tuple[str, ...] | None = None


Shard = FileShard | HubShard


class LineReader:
    """The lines of a binary file (up to byte ``end``) without their line ending (``\n`` or
    ``\r\n``), decoded as UTF-8 with every invalid byte sequence replaced by U+FFFD; ``replaced``
    counts the replaced sequences.  ``on_nul(offset)``, when given, is called at the first line
    holding a NUL byte (a binary or UTF-16 file), with the byte's offset from where reading began."""

    def __init__(self, handle: BinaryIO, end: int | None = None,
                 on_nul: Callable[[int], None] | None = None) -> None:  # fmt: skip
        self.handle = handle
        self.end = end
        self.on_nul = on_nul
        self.replaced = 0

    def __iter__(self) -> Iterator[str]:
        handle, end, on_nul = self.handle, self.end, self.on_nul
        start = position = handle.tell() if end is not None else 0
        for raw in handle:
            if end is not None and position >= end:
                break
            if on_nul is not None and b"\0" in raw:
                on_nul(position - start + raw.index(b"\0"))
            position += len(raw)
            raw = raw.removesuffix(b"\n").removesuffix(b"\r")
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode("utf-8", errors="replace")
                # every U+FFFD beyond the ones genuinely encoded in the line is a replaced sequence
                self.replaced += text.count("\ufffd") - raw.count("\ufffd".encode())
                yield text


def file_shards(paths: Sequence[str | os.PathLike[str]], shard_bytes: int = SHARD_BYTES) -> list[FileShard]:
    """Every file cut into shards of about ``shard_bytes`` bytes, each ending at a line end."""
    shards = []
    for name in paths:
        path = Path(name)
        try:
            size = path.stat().st_size
            with open(path, "rb") as handle:
                start = 0
                while start < size:
                    handle.seek(min(start + shard_bytes, size))
                    if handle.tell() < size:
                        handle.readline()  # to the start of the next line
                    end = handle.tell()
                    shards.append(FileShard(str(path.resolve()), start, end))
                    start = end
        except OSError as exc:
            raise TokenizerError(f"{path}: cannot read ({exc.strerror or exc})", code="unreadable_file",
                                 value=path) from None  # fmt: skip
    return shards


def hub_shards(
    dataset: str,
    *,
    name: str | None = None,
    split: str = "train",
    column: str = "text",
    max_bytes: int | None = None,
    data_files: Sequence[str] | None = None,
) -> list[HubShard]:
    """The shards of a ``datasets`` dataset read as a stream (``load_dataset(dataset, name, split=split,
    data_files=data_files, streaming=True)``), with ``max_bytes`` of text at most, split evenly over them."""
    stream = _stream(dataset, name, split, tuple(data_files) if data_files else None)
    n_shards = stream.num_shards
    budget = None if max_bytes is None else max(1, max_bytes // n_shards)
    files = tuple(data_files) if data_files else None
    return [HubShard(dataset, name, split, column, index, n_shards, budget, files) for index in range(n_shards)]


def _stream(dataset: str, name: str | None, split: str, data_files: tuple[str, ...] | None) -> Any:
    from datasets import load_dataset

    try:
        return load_dataset(
            dataset, name, split=split, data_files=list(data_files) if data_files else None, streaming=True
        )
    except Exception as exc:  # datasets raises many types (connection, missing config, bad files)
        raise TokenizerError(
            f"dataset {dataset!r} (config {name!r}, split {split!r}): cannot stream it ({exc})",
            code="dataset_unavailable",
            value=dataset,
        ) from None


def shard_texts(shard: Shard) -> Iterator[str]:
    """The texts of one shard, in order."""
    if isinstance(shard, FileShard):
        with open(shard.path, "rb") as handle:
            handle.seek(shard.start)
            yield from LineReader(handle, shard.end)
        return
    stream = _stream(shard.dataset, shard.name, shard.split, shard.data_files).shard(shard.n_shards, shard.index)
    budget = shard.max_bytes
    for row in stream:
        text = row.get(shard.column)
        if not isinstance(text, str):
            raise TokenizerError(f"dataset {shard.dataset!r}: column {shard.column!r} is missing or not text",
                                 code="bad_dataset", value=shard.column)  # fmt: skip
        if budget is not None:
            budget -= len(text.encode("utf-8"))
            if budget < 0:
                return
        yield text


def count_shard(shard: Shard, pretokenizer: str, threads: int | None = 1) -> PretokenCounts:
    """The pre-token counts of one shard (run by a worker), counted with ``threads`` threads."""
    return count_pretokens(shard_texts(shard), pretokenizer, workers=threads, require_text=False)


def _add(left: PretokenCounts, right: PretokenCounts) -> PretokenCounts:
    return left.merged(right)


def count_shards(
    shards: Sequence[Shard],
    pretokenizer: str,
    *,
    engine: str = "local",
    address: str | None = None,
    workers: int | None = None,
) -> PretokenCounts:
    """The pre-token counts of all ``shards`` (see the module docstring for the engines)."""
    get_pretokenizer(pretokenizer)
    if engine not in ENGINES:
        raise TokenizerError(f"unknown engine {engine!r}; choose one of: {', '.join(ENGINES)}", code="unknown_engine",
                             value=engine)  # fmt: skip
    if address is not None and engine != "dask":
        raise TokenizerError(f"an address is only used by the dask engine, not {engine!r}",
                             code="option_not_applicable", value="address")  # fmt: skip
    if not shards:
        raise TokenizerError("nothing to count: no shards", code="empty_training_input")
    if engine == "local":
        parts = [count_shard(shard, pretokenizer, workers) for shard in shards]
        return parts[0].merged(*parts[1:]) if len(parts) > 1 else parts[0]
    with _dask_client(address, workers) as client:
        # one thread per Dask worker (its own processes give the parallelism)
        futures = client.map(count_shard, list(shards), pretokenizer=pretokenizer, pure=False)
        while len(futures) > 1:  # a tree of pairwise sums, computed where the parts are
            paired = [client.submit(_add, a, b, pure=False) for a, b in zip(futures[::2], futures[1::2], strict=False)]
            futures = paired + ([futures[-1]] if len(futures) % 2 else [])
        return futures[0].result()


class _dask_client:
    """A ``distributed.Client`` on ``address``, or on a new ``LocalCluster`` of ``workers`` processes."""

    def __init__(self, address: str | None, workers: int | None) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise TokenizerError("the dask engine needs Dask distributed: pip install 'tokbench[cluster]'",
                                 code="missing_package", value="distributed") from None  # fmt: skip
        self._cluster = None
        try:
            if address is None:
                n_workers = workers or len(os.sched_getaffinity(0))
                self._cluster = LocalCluster(
                    n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None
                )
                self.client = Client(self._cluster)
            else:
                self.client = Client(address, timeout="30s")
        except OSError as exc:
            raise TokenizerError(f"cannot reach the Dask scheduler at {address}: {exc}", code="unreachable",
                                 value=address) from None  # fmt: skip

    def __enter__(self) -> Any:
        return self.client

    def __exit__(self, *exc: object) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()
