"""Where the tasks of ``tokbench run`` run: worker processes of this machine, or a Dask cluster.

The runner (``benchmarks.run.runner``) hands its tasks (a sweep to train, a unit to evaluate, a side-table
task) to a ``TaskPool``: ``submit(function, item)``, then ``finished()`` gives the results as the tasks end.
A task computes the same thing wherever it runs (the same function on the same inputs), so the engine
never shows in the results.

``local`` (``LocalPool``)
    A ``ProcessPoolExecutor`` whose initializer hands each worker the run's ``RunContext`` (config, loaded
    corpora with their morpheme references, pretrained rows, joined parallel texts) once.
``dask`` (``DaskEngine``, ``DaskPool``)
    A Dask ``distributed`` cluster: a running scheduler's address, or a ``LocalCluster`` of ``--jobs``
    processes with one thread each, started for the run and closed at its end.  Nothing bulky travels
    through the scheduler: a task carries its item and a ``WorkerRecipe`` (config, corpus specs, run folder,
    cache folder, pretrained rows: a few kilobytes), from which a worker rebuilds the context once per
    process (``_context_for``): corpora from tokbench's corpus cache (``corpora.load_corpus``), tokenizers
    from the tokenizer cache and the run folder.  What is slow to compute again, the morpheme references
    (silver analyzers) and the joined parallel texts, the client writes once into the run folder as one
    snapshot file named by its digest (``_write_snapshot``), which the workers read.  So the workers must see
    the run folder, the cache folder and the data root at this machine's paths (a shared file system) and run
    the same tokbench version; a worker that does not is refused with a message saying what differs.  A worker
    that dies is replaced and its task runs again on another (Dask reschedules it): a unit writes its file
    atomically and a cached tokenizer its meta file last, so a task run twice leaves what a task run once
    leaves.

``Forked`` runs one function on a forked copy of this process (the run's paired tests and reference
coverage, while the rest goes on).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import logging
import multiprocessing
import os
import pickle
import shutil
import threading
import uuid
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, CancelledError, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_limits

import bpe
from benchmarks.errors import BenchmarkError
from benchmarks.files import atomic_path, trained_tokenizer_path
from benchmarks.measure.audit import UNUSED_ROLE
from benchmarks.run.config import ExperimentConfig
from benchmarks.run.pretrained import PretrainedRow
from benchmarks.run.units import Unit
from corpora import Corpus, load_corpus
from corpora.loader import cache_home
from corpora.spec import CorpusSpec

ENGINES = ("local", "dask")
#: how long ``DaskEngine`` tries to reach a scheduler given by its address
CONNECT_TIMEOUT = "30s"
#: the folder of the run folder that holds the snapshots its Dask workers read (removed when the run ends)
SNAPSHOTS = ".dask"
#: the collector's thresholds while a run's units run (``runner.run_experiment`` says why)
GC_THRESHOLD = (100_000, 50, 100)


@dataclass(frozen=True)
class RunContext:
    """What every unit of a run needs; handed to each worker process once (a local pool's initializer), or
    rebuilt by each Dask worker from a ``WorkerRecipe``."""

    config: ExperimentConfig
    corpora: dict[str, Corpus]  # by spec id, morpheme references already built
    out_dir: Path
    pretrained: dict[str, PretrainedRow]  # by label
    joined_texts: dict[str, dict[str, str]]  # ParallelPlan.joined_texts: by corpus, then by paired corpus

    def unit_path(self, unit: Unit) -> Path:
        return self.out_dir / "units" / f"{unit.key}.json"

    def test_texts(self, corpus: str) -> list[str]:
        """The texts the audit's "never used" counts are taken on (``audit.UNUSED_ROLE``)."""
        return [document.text for document in self.corpora[corpus].documents(UNUSED_ROLE)]


def run_tokenizer(context: RunContext) -> Callable[[Unit], bpe.Tokenizer]:
    """A unit's tokenizer for the vocabularies (``vocab_overlap``, ``audit.csv``): a production row's, loaded
    once per process by its label (``PretrainedRow.load``: one object for every corpus), a trained row's read
    back from the run's tokenizer file (once per unit); a row that samples with the first of the run's seeds,
    as its evaluation's first pass."""

    @functools.cache
    def tokenizer(unit: Unit) -> bpe.Tokenizer:
        if unit.row_type == "production":
            return context.pretrained[unit.tokenizer].load()
        path = trained_tokenizer_path(context.out_dir, unit.corpus, unit.tokenizer, unit.vocab_size, unit.train_chars)
        loaded = bpe.load(path)
        return loaded.with_encode_options(seed=context.config.seeds[0]) if loaded.samples else loaded

    return tokenizer


# --------------------------------------------------------------------------- pools


class TaskPool(ABC):
    """Tasks on workers: ``submit`` a function of one item, take the results as the tasks end (``finished``)."""

    def __init__(self) -> None:
        self._pending: set[Any] = set()  # futures whose result was not taken yet

    def __len__(self) -> int:
        return len(self._pending)

    def submit(self, function: Callable[..., Any], item: Any) -> Any:
        """Run ``function(item)`` on a worker (a Dask worker calls ``function(item, context)``); returns the
        task's future, which another pool of the same engine can ``adopt``."""
        future = self._submit(function, item)
        self._pending.add(future)
        return future

    def adopt(self, future: Any) -> None:
        """Take the result of a task submitted to another pool of the same engine from this one."""
        self._pending.add(future)

    def finished(self, timeout: float | None = None) -> list[Any]:
        """The results of the tasks that have ended, once one has; ``timeout``: wait that many seconds at most
        (then [] when none has).  A task's error is raised here."""
        if timeout != 0 and self._pending and not any(future.done() for future in self._pending):
            self._wait(timeout)
        done = [future for future in self._pending if future.done()]
        self._pending.difference_update(done)
        return [self._result(future) for future in done]

    @abstractmethod
    def _submit(self, function: Callable[..., Any], item: Any) -> Any: ...

    @abstractmethod
    def _wait(self, timeout: float | None) -> None:
        """Until a pending task has ended, or ``timeout`` seconds."""

    @abstractmethod
    def _result(self, future: Any) -> Any: ...

    @abstractmethod
    def close(self) -> None:
        """Drop the tasks not started (waiting for those running, locally); closing again does nothing."""


class LocalPool(TaskPool):
    """The worker processes of a ``ProcessPoolExecutor`` (its initializer hands them the context)."""

    def __init__(self, executor: ProcessPoolExecutor) -> None:
        super().__init__()
        self._executor = executor

    def _submit(self, function: Callable[..., Any], item: Any) -> Any:
        return self._executor.submit(function, item)

    def _wait(self, timeout: float | None) -> None:
        wait(self._pending, timeout, return_when=FIRST_COMPLETED)

    def _result(self, future: Any) -> Any:
        return future.result()

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)


class DaskPool(TaskPool):
    """Tasks on a Dask cluster, each carrying ``recipe`` to rebuild the context from."""

    def __init__(self, client: Any, recipe: WorkerRecipe) -> None:
        super().__init__()
        self._client = client
        self._recipe = recipe

    def _submit(self, function: Callable[..., Any], item: Any) -> Any:
        key = f"{function.__name__.strip('_')}-{uuid.uuid4().hex}"  # what the dashboard lists
        return self._client.submit(_in_dask_worker, self._recipe, function, item, key=key, pure=False)

    def _wait(self, timeout: float | None) -> None:
        from distributed import wait as wait_for_first

        # the engine's client is nobody's default; a timeout is no error (the caller looks again)
        with self._client.as_current(), contextlib.suppress(TimeoutError):
            wait_for_first(list(self._pending), timeout=timeout, return_when="FIRST_COMPLETED")

    def _result(self, future: Any) -> Any:
        from distributed.scheduler import KilledWorker

        try:
            return future.result()
        except KilledWorker as exc:  # Dask gave up after the workers running it died (allowed-failures)
            raise BenchmarkError(f"the Dask workers running a task kept dying: {' '.join(str(exc).split())}") from None
        except CancelledError:
            raise BenchmarkError(f"the Dask scheduler dropped task {future.key} (did it restart, or lose this "
                                 "client?); run the same command again to resume") from None  # fmt: skip

    def close(self) -> None:
        running = [future for future in self._pending if not future.done()]
        if running and self._client.status == "running":
            self._client.cancel(running)
        self._pending.clear()


@dataclass
class Workers:
    """Where a run's tasks go: ``jobs`` worker processes of this machine (``local(context, processes)`` makes
    their pool), or the cluster of a ``dask`` engine."""

    jobs: int
    local: Callable[[RunContext, int], TaskPool]
    dask: DaskEngine | None = None

    @property
    def parallel(self) -> bool:
        return self.dask is not None or self.jobs > 1

    def worth_a_pool(self, tasks: int) -> bool:
        """Whether ``tasks`` go to a pool: on a cluster, any; locally, two or more on two or more processes."""
        return tasks > 0 if self.dask is not None else self.jobs > 1 and tasks > 1

    def pool(self, context: RunContext, processes: int) -> TaskPool:
        """A pool of ``processes`` local workers, or of the whole cluster."""
        return self.dask.pool(context) if self.dask is not None else self.local(context, processes)

    def close(self) -> None:
        if self.dask is not None:
            self.dask.close()


class DaskEngine:
    """The client of a Dask cluster for one run: the scheduler at ``address``, or (None) a ``LocalCluster`` of
    ``workers`` processes, one thread each (their processes give the parallelism, as the local engine's)."""

    def __init__(self, address: str | None, workers: int) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise BenchmarkError("the dask engine needs Dask distributed: pip install 'tokbench[cluster]'") from None
        self._cluster: Any = None
        self._snapshots: set[Path] = set()
        if address is None:
            # memory_limit=0: no nanny restarts a worker for going over a share of the memory (the local engine
            # has no such limit); set_as_default=False: other code of this process never finds the client
            # silence_logs: a task's error is said once, by the run, not again with its traceback by the worker
            self._cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, memory_limit=0,
                                         dashboard_address=None, silence_logs=logging.CRITICAL)  # fmt: skip
            self.client: Any = Client(self._cluster, set_as_default=False)
        else:
            try:
                self.client = Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
            except (OSError, ValueError) as exc:  # unreachable, or not an address
                raise BenchmarkError(f"cannot reach the Dask scheduler at {address}: {exc}") from None

    def describe(self) -> str:
        """One line for the progress output: the workers and where."""
        workers = len(self.client.scheduler_info()["workers"])
        where = "a local cluster" if self._cluster is not None else f"the scheduler at {self.client.scheduler.address}"
        waiting = " (tasks wait until a worker joins)" if workers == 0 else ""
        return f"dask: {workers} worker{'s' if workers != 1 else ''} on {where}{waiting}"

    def pool(self, context: RunContext) -> DaskPool:
        """A pool whose tasks rebuild ``context`` (as it is now: the references built so far) on the workers."""
        snapshot = _write_snapshot(context)
        self._snapshots.add(snapshot)
        recipe = WorkerRecipe(context.config, tuple(corpus.spec for corpus in context.corpora.values()),
                              context.out_dir.resolve(), context.pretrained, str(cache_home().resolve()), snapshot,
                              _code())  # fmt: skip
        return DaskPool(self.client, recipe)

    def close(self) -> None:
        """Disconnect, stop the local cluster, remove the snapshots; closing again does nothing."""
        if self.client is not None:
            self.client.close()
            self.client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
        for folder in {snapshot.parent for snapshot in self._snapshots}:
            shutil.rmtree(folder, ignore_errors=True)
        self._snapshots.clear()


# --------------------------------------------------------------------------- the Dask workers' side


@dataclass(frozen=True)
class WorkerRecipe:
    """What a Dask worker rebuilds a run's ``RunContext`` from (``rebuild``); sent with every task."""

    config: ExperimentConfig
    specs: tuple[CorpusSpec, ...]  # the corpora's, in the run's order
    out_dir: Path  # absolute
    pretrained: dict[str, PretrainedRow]  # resolved: a file row names its absolute path
    cache: str  # the client's $TOKBENCH_CACHE, absolute
    snapshot: Path  # ``_write_snapshot``'s file
    code: str  # ``_code()`` of the client: the workers' must be the same
    key: str = field(default_factory=lambda: uuid.uuid4().hex)  # one per pool: which context a worker holds

    def rebuild(self) -> RunContext:
        """The context, with the corpora loaded on this worker and the client's references put back."""
        if _code() != self.code:
            raise BenchmarkError(f"the Dask worker {_worker_name()} runs {_code()}, the machine that started the run "
                                 f"{self.code}: install the same tokbench on every worker")  # fmt: skip
        os.environ["TOKBENCH_CACHE"] = self.cache  # every cache of this process: corpora, tokenizers, analyses
        snapshot = _read_snapshot(self.snapshot)
        corpora = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the client said what the load repaired, once
            for spec in self.specs:
                fingerprint, data_dir, state = snapshot["corpora"][spec.id]
                corpus = load_corpus(spec, data_dir=data_dir)
                if corpus.fingerprint != fingerprint:
                    raise BenchmarkError(
                        f"corpus {spec.id!r} holds other documents on the Dask worker {_worker_name()} than on the "
                        f"machine that started the run: the workers must see its data root ({data_dir}) and "
                        f"the cache folder ({self.cache}) as that machine does"
                    )
                vars(corpus).update(state)  # the references the client built, not built again here
                corpora[spec.id] = corpus
        return RunContext(self.config, corpora, self.out_dir, self.pretrained, snapshot["joined"])


def _code() -> str:
    """What a worker's tokbench must equal: its version (not its files' digests, which a checkout being edited
    changes while the run goes, in the files the workers have not imported yet)."""
    return f"tokbench {bpe.__version__}"


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except ValueError:  # not on a worker
        return "(not a worker)"


def _write_snapshot(context: RunContext) -> Path:
    """What the workers would otherwise compute again, slowly (silver analyses) or needlessly: each corpus's
    state but its documents (its references, as far as they are built) and the joined parallel texts, as one
    file of the run folder named by its digest; written once."""
    corpora = {corpus_id: (corpus.fingerprint, corpus.data_dir,
                           {name: value for name, value in vars(corpus).items() if name != "_documents"})
               for corpus_id, corpus in context.corpora.items()}  # fmt: skip
    data = pickle.dumps({"corpora": corpora, "joined": context.joined_texts}, protocol=pickle.HIGHEST_PROTOCOL)
    path = context.out_dir.resolve() / SNAPSHOTS / f"{hashlib.sha256(data).hexdigest()[:32]}.pickle"
    if not path.is_file():
        with atomic_path(path) as temporary:
            temporary.write_bytes(data)
    return path


def _read_snapshot(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BenchmarkError(f"the Dask worker {_worker_name()} cannot read {path} ({exc.strerror or exc}): the "
                             "workers must see the run folder at the path the run was given") from None  # fmt: skip
    if hashlib.sha256(data).hexdigest()[:32] != path.stem:
        raise BenchmarkError(f"{path} is not the file the run wrote (its digest differs)")
    return pickle.loads(data)


#: the context this Dask worker process rebuilt last, by its recipe's key (one: a run's pools follow each other)
_worker_context: tuple[str, RunContext] | None = None
_worker_lock = threading.Lock()


def _context_for(recipe: WorkerRecipe) -> RunContext:
    global _worker_context
    with _worker_lock:
        if _worker_context is None or _worker_context[0] != recipe.key:
            if _worker_context is not None:  # the previous context's memory back before the next one loads
                _worker_context = None
                gc.unfreeze()
            context = recipe.rebuild()
            # as the run's process sets them for itself and the local workers it forks: the context lives as long
            # as the tasks use it, so the collector's passes skip it (freeze); they run less often (an evaluation
            # makes millions of short-lived objects); BLAS on one thread per process
            gc.freeze()
            gc.set_threshold(*GC_THRESHOLD)
            threadpool_limits(limits=1, user_api="blas")
            _worker_context = (recipe.key, context)
        return _worker_context[1]


def _in_dask_worker(recipe: WorkerRecipe, function: Callable[[Any, RunContext], Any], item: Any) -> Any:
    """A task on a Dask worker: ``function(item, context)``, with the context this worker rebuilt once."""
    return function(item, _context_for(recipe))


# --------------------------------------------------------------------------- one forked function


# the function a forked ``Forked`` process calls (set before it is forked, never pickled)
_forked_function: Callable[[], Any] | None = None


def _call_forked() -> Any:
    assert _forked_function is not None, "process forked without its function"
    return _forked_function()


class Forked:
    """``function()`` on one forked process, started now; ``result`` waits for it.  Computed in this process
    instead (when ``result`` is called) unless ``fork`` and the platform can fork.  A forked child starts from
    this process's memory, so it computes what this process would."""

    def __init__(self, function: Callable[[], Any], fork: bool) -> None:
        global _forked_function
        self._function = function
        self._pool: ProcessPoolExecutor | None = None
        self._future: Any = None
        if fork and "fork" in multiprocessing.get_all_start_methods():
            _forked_function = function
            try:
                self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"))
                self._future = self._pool.submit(_call_forked)  # forks here, with the function set
            finally:
                _forked_function = None

    def result(self) -> Any:
        if self._future is None:
            return self._function()
        try:
            return self._future.result()
        finally:
            self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
