"""The experiment runner behind ``tokbench run``.

A run is a grid of *units*: (corpus, tokenizer entry, vocab size) for trained
rows and (corpus, pretrained tokenizer) for pretrained rows (``production`` names and
``[[pretrained]]`` tables, resolved before any work: ``benchmarks.run.pretrained``).  Each unit trains
(or fetches from the cache) one tokenizer and evaluates it on the corpus's
evaluation roles, producing tidy rows (``benchmarks.run.units``).  Units run in
worker processes, which receive the loaded corpora and the config once, from the
pool's initializer (so any start method works: fork, spawn, forkserver), or on a Dask
cluster whose workers rebuild them (``benchmarks.run.executors``), and are
saved one file each under ``RUN_DIR/units/`` as they finish, so an interrupted
run resumes where it stopped.  Cross-unit numbers (the char baseline, parity
against English over the parallel sentences ``benchmarks.run.parallel`` pairs by key,
paired tests) are computed once all units are done.  The run keeps what its report
needs: every trained tokenizer (``RUN_DIR/tokenizers/``), the manifest (from which
pretrained rows are re-loaded) and the example sentences (``benchmarks.run.examples``).

Identity and caching: a trained tokenizer's cache key hashes the training text
fingerprint, the family, its options, the vocab size, the ``bpe`` version and a
hash of the ``bpe`` source code, so a second run (or another config sharing a
unit) retrains nothing, and a change to the library retrains everything
(``benchmarks.run.training``).  The run folder, its lock, its identity and its manifest:
``benchmarks.run.run_folder``.  Both modules' public names are importable from here too.

Safety: everything is checked before any training and before the output directory
is touched (the config model, every corpus loaded, ``grid.check_grid``); the run
folder is locked while the run writes it (``run_folder_lock``: a second writer is
refused, naming the holder); resuming reads each finished unit file back and
recomputes the ones that are damaged, and a damaged cached tokenizer is retrained.
"""

from __future__ import annotations

import functools
import gc
import math
import multiprocessing
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from threadpoolctl import threadpool_limits
from tqdm import tqdm

import bpe
from benchmarks.downstream import stage as downstream
from benchmarks.errors import BenchmarkError, warn
from benchmarks.files import (
    TRAIN_CHARS,
    atomic_write_text,
    check_writable_dir,
    frame_csv,
    result_columns,
    trained_tokenizer_path,
    write_results,
)
from benchmarks.measure.audit import AUDIT_ENTRIES_FILE, AUDIT_FILE, UnitAuditFacts
from benchmarks.measure.metrics import METRICS, select_metrics
from benchmarks.run.config import ExperimentConfig
from benchmarks.run.evaluate import (
    cross_unit_rows,
    evaluate_over_seeds,
    evaluate_tokenizer,
    paired_rows,
    vocab_overlap_rows,
)
from benchmarks.run.examples import write_examples
from benchmarks.run.executors import ENGINES, GC_THRESHOLD, DaskEngine, LocalPool, RunContext, TaskPool, Workers
from benchmarks.run.executors import Forked as _Forked  # the name the performance notes cite
from benchmarks.run.executors import run_tokenizer as run_tokenizer
from benchmarks.run.grid import (
    EVAL_ROLES,
    Sweep,
    check_grid,
    plan_sweeps,
    plan_units,
)
from benchmarks.run.parallel import plan_parallel
from benchmarks.run.pretrained import resolve_pretrained
from benchmarks.run.run_folder import LOCK_FILE as LOCK_FILE  # re-exported: benchmarks.run.runner's public names
from benchmarks.run.run_folder import LOCK_OWNER as LOCK_OWNER
from benchmarks.run.run_folder import PACKAGES as PACKAGES
from benchmarks.run.run_folder import RUN_MARKER as RUN_MARKER
from benchmarks.run.run_folder import check_out_dir as check_out_dir
from benchmarks.run.run_folder import code_fingerprint as code_fingerprint
from benchmarks.run.run_folder import display_path as display_path
from benchmarks.run.run_folder import git_revision as git_revision
from benchmarks.run.run_folder import package_versions as package_versions
from benchmarks.run.run_folder import prepare_out_dir as prepare_out_dir
from benchmarks.run.run_folder import run_folder_lock as run_folder_lock
from benchmarks.run.run_folder import run_identity as run_identity
from benchmarks.run.run_folder import write_manifest as write_manifest
from benchmarks.run.sidetables import SideFacts, SideTask, audit_tables, side_facts, side_tasks, task_facts
from benchmarks.run.training import is_cached as is_cached
from benchmarks.run.training import obtain_tokenizer as obtain_tokenizer
from benchmarks.run.training import tokenizer_cache_paths as tokenizer_cache_paths
from benchmarks.run.training import train_sweep as train_sweep
from benchmarks.run.units import Unit, UnitFileError, UnitResult, read_unit_result, tidy_rows, write_unit_result
from corpora import Corpus, load_corpus, silver
from corpora.loader import cache_home
from corpora.spec import load_spec
from corpora.stats import agreement_words, reference_coverage


def run_unit(unit: Unit, context: RunContext) -> str:
    """Train/load, evaluate and save one unit."""
    corpus = context.corpora[unit.corpus]
    tokenizer, train_seconds = obtain_tokenizer(unit, context.corpora, context.config, context.pretrained)
    if unit.row_type != "production":
        tokenizer.save(trained_tokenizer_path(context.out_dir, unit.corpus, unit.tokenizer, unit.vocab_size,
                                              unit.train_chars))  # fmt: skip
    metrics = select_metrics(context.config.metrics, context.config.extra_metrics)
    joined = context.joined_texts.get(unit.corpus, {})
    if tokenizer.samples:  # stochastic rows only: deterministic ones never loop over seeds
        result = evaluate_over_seeds(unit, tokenizer, context.config.seeds, corpus, EVAL_ROLES, metrics,
                                     context.config, joined)  # fmt: skip
    else:
        result = evaluate_tokenizer(unit, tokenizer, corpus, EVAL_ROLES, metrics, context.config, joined)
    result.costs["train_seconds"] = train_seconds
    write_unit_result(context.unit_path(unit), result)
    return unit.key


# the context of the worker process this module runs in (set by the pool's initializer, never in the parent)
_worker_context: RunContext | None = None


def _start_worker(context: RunContext) -> None:
    global _worker_context
    _worker_context = context
    gc.freeze()  # the context lives as long as the worker (a spawned one; a forked one has it frozen already)
    threadpool_limits(limits=1, user_api="blas")  # as in the run's process (``run_experiment``)


# the tasks of a pool (``executors.TaskPool``): a local worker's context is the one it started with, a Dask
# worker's is given (``executors.DaskPool``)
def _started(context: RunContext | None) -> RunContext:
    context = context or _worker_context
    assert context is not None, "worker started without _start_worker"
    return context


def _run_unit_in_worker(unit: Unit, context: RunContext | None = None) -> str:
    return run_unit(unit, _started(context))


def _train_sweep_in_worker(sweep: Sweep, context: RunContext | None = None) -> Sweep:
    context = _started(context)
    train_sweep(sweep, context.corpora, context.config)
    return sweep


def _side_facts_in_worker(task: SideTask, context: RunContext | None = None) -> dict[Unit, SideFacts]:
    context = _started(context)
    return task_facts(task, run_tokenizer(context), context.test_texts)


def _local_pool(context: RunContext, processes: int, start_method: str | None) -> TaskPool:
    return LocalPool(ProcessPoolExecutor(max_workers=processes, mp_context=multiprocessing.get_context(start_method),
                                         initializer=_start_worker, initargs=(context,)))  # fmt: skip


# --------------------------------------------------------------------------- the run


def run_experiment(
    config: ExperimentConfig,
    out_dir: Path,
    data_dir: Path | None = None,
    jobs: int = 1,
    overwrite: bool = False,
    progress: bool = True,
    on_report: Callable[[Path], Any] | None = None,
    start_method: str | None = None,
    device: str = "auto",
    engine: str = "local",
    address: str | None = None,
) -> Path:
    """Run ``config`` into ``out_dir`` and return it.  Resumes a run of the same config.

    ``jobs`` > 1 runs units in that many worker processes, started with ``start_method``
    (``multiprocessing`` start method; None: the platform's default).  ``engine="dask"`` runs them on a Dask
    cluster instead (``benchmarks.run.executors``): the scheduler at ``address``, or a local cluster of ``jobs``
    processes; the results are the same.  ``device`` (``auto``, ``cpu`` or ``cuda``) is where the language
    models of a ``[downstream]`` table train (``benchmarks.downstream``)."""
    started = time.perf_counter()
    if engine not in ENGINES:
        raise BenchmarkError(f"unknown engine {engine!r}; choose one of: {', '.join(ENGINES)}")
    if address is not None and engine != "dask":
        raise BenchmarkError(f"a scheduler address ({address}) is only used by the dask engine, not {engine!r}")
    check_out_dir(out_dir, config, overwrite)
    if config.downstream is not None:
        downstream.check_available()
    check_writable_dir(cache_home(), "cache folder ($TOKBENCH_CACHE)")
    # the slowest silver analyzer of the corpora (named in their spec files) loads on a worker of its own while
    # this process resolves the pretrained rows and loads the corpora: its analysis, the floor of a cold run,
    # then starts as soon as its words are known
    specs = [load_spec(config.corpus_source(entry)) for entry in config.corpora]
    preloaded = silver.Preloaded.slowest(a for spec in specs for a in spec.silver_analyzers) if jobs > 1 else None
    closing: list[Callable[[], None]] = [] if preloaded is None else [preloaded.close]
    try:
        # a cluster is reached (or started) first: an unreachable scheduler is said before any long work
        workers = Workers(jobs, functools.partial(_local_pool, start_method=start_method),
                          DaskEngine(address, jobs) if engine == "dask" else None)  # fmt: skip
        closing.append(workers.close)
        if workers.dask is not None and progress:
            print(workers.dask.describe(), file=sys.stderr)
        pretrained = resolve_pretrained(config.pretrained_rows, config.source, data_dir)
        loaded = {}
        for entry, spec in tqdm(zip(config.corpora, specs, strict=True), desc="loading corpora", disable=not progress,
                                total=len(specs), file=sys.stderr):  # fmt: skip
            loaded[entry] = load_corpus(spec, data_dir=data_dir)
        # silver analyzers are slow: their words are analyzed on worker processes from now on, while the run
        # goes on; the references are built once, in this process, then handed to every worker.  The gold words
        # the manifest's agreement asks for later are analyzed there too (a fork-safe analyzer, zemberek, is
        # loaded once for both)
        analyzing = silver.Prefetch(_silver_requests(loaded.values()), jobs,
                                    afterwards=agreement_words(loaded.values()), preloaded=preloaded)  # fmt: skip
        closing.append(analyzing.close)
        # numpy's BLAS on one thread per process while the run goes: the run spreads its work over ``jobs``
        # processes, and a BLAS starting a thread per core in each of them (the bootstrap's matrix products)
        # fights them for the cores (2.4x slower on 2 cores); forked workers inherit it, spawned ones set it
        closing.append(threadpool_limits(limits=1, user_api="blas").restore_original_limits)
        # a family that trains on gold morphemes excludes the words the corpus's references score: those
        # corpora's references are built now (their analyzers waited for), the others' analyses go on
        _build_references(analyzing, _trained_on_references(config, loaded.values()), progress)
        corpora = {corpus.spec.id: corpus for corpus in loaded.values()}
        parallel = plan_parallel(corpora)
        no_parity = parallel.why_no_parity()
        if no_parity is not None and any(metric.group == "parity" for metric in select_metrics(config.metrics,
                                                                                                config.extra_metrics)):
            warn(f"no parity rows in this run: {no_parity}")

        def trained_before(unit: Unit) -> bool:
            return is_cached(unit, corpora, config)

        check_grid(config, loaded, pretrained, parallel, trained_before)
        if config.downstream is not None:
            downstream.check_corpora(corpora, config.downstream, config.source)
        # only now, with everything checked, touch the output directory: a bad input leaves no trace
        with run_folder_lock(out_dir):
            prepare_out_dir(out_dir, config, run_identity(config, corpora, pretrained), overwrite)
            context = RunContext(config, corpora, out_dir, pretrained, parallel.joined_texts(corpora))
            units = plan_units(config, corpora, pretrained)
            finished = _finished_units(context, units)
            pending = [unit for unit in units if unit not in finished]
            if finished and progress:
                print(f"resuming: {len(finished)} of {len(units)} units already done", file=sys.stderr)
            pending, training = _work_while_analyzing(context, pending, analyzing, workers, progress)
            if training is not None:
                closing.append(training.close)
            analyzing.wait()  # every analysis, the agreement's words too
            _build_references(analyzing, corpora.values(), progress)
            # the cyclic collector, here and in every worker forked from here (units, side tables, plots): what is
            # alive now (corpora, references) lasts for the run, so its passes skip it (gc.freeze); and it runs
            # less often (an evaluation makes millions of short-lived objects, freed by reference counting, that
            # default thresholds walked again and again: a third of a cold paper run's CPU time).  Both are given
            # back when the run ends; results are the same (collection order never reaches them)
            gc.freeze()
            closing.append(gc.unfreeze)
            threshold = gc.get_threshold()
            gc.set_threshold(*GC_THRESHOLD)
            closing.append(lambda: gc.set_threshold(*threshold))
            known_facts = _run_units(context, pending, workers, progress, training, side=side_tasks(units, config))
            workers.close()  # what is left runs here: a local cluster's processes and the snapshots go now
            # the manifest's silver agreement depends on the corpora alone: computed on another process while
            # the rest goes on; so are the paired tests, once the unit results are read
            coverage = _reference_coverage(corpora, jobs)
            closing.append(coverage.close)
            results = [finished.get(unit) or read_unit_result(context.unit_path(unit), unit) for unit in units]
            gc.freeze()  # the results too, before the paired tests', side tables' and report's workers are forked
            paired = _Forked(lambda: paired_rows(results, config), fork=jobs > 1)
            closing.append(paired.close)
            rows = [row for result in results for row in tidy_rows(result.unit, result.rows)]
            selected = select_metrics(config.metrics, config.extra_metrics)
            rows += cross_unit_rows(results, selected, config, parallel)
            facts = side_facts(results, run_tokenizer(context), context.test_texts, config, jobs, known_facts)
            rows += vocab_overlap_rows(results, lambda unit: facts[unit].vocabulary, selected, config)
            if config.downstream is not None:  # language models on every row's ids (benchmarks.downstream)
                statistics = (config.bootstrap_resamples, config.confidence, config.seed)
                models, prepared = downstream.train_models(
                    downstream.language_model_units(units, config.language_model_sizes), run_tokenizer(context),
                    corpora, config.downstream, device, jobs, progress)  # fmt: skip
                rows += downstream.bpb_rows(models, prepared, *statistics)
                downstream.write_files(out_dir, models, prepared, rows, config.downstream, *statistics)
            write_results(out_dir, rows)
            write_costs(out_dir, results)
            atomic_write_text(out_dir / "paired.csv", paired.result().to_csv(index=False))
            write_audit(out_dir, results, {unit: unit_facts.audit for unit, unit_facts in facts.items()}, context)
            write_examples(out_dir, corpora, parallel)
            write_manifest(out_dir, config, corpora, pretrained, parallel, time.perf_counter() - started, data_dir,
                           coverage.result(), analyzing.seconds)  # fmt: skip
            if on_report is not None:
                on_report(out_dir)
        return out_dir
    finally:
        for close in closing:
            close()


def _coverage_of(corpora: dict[str, Corpus]) -> dict[str, dict[str, dict[str, Any]]]:
    """Every corpus's ``reference_coverage`` with agreement, as the manifest lists it."""
    return {corpus_id: reference_coverage(corpus, agreement=True) for corpus_id, corpus in corpora.items()}


def _reference_coverage(corpora: dict[str, Corpus], jobs: int) -> _Forked:
    """The manifest's silver agreement (an analyzer loaded again, gold words analyzed: one process for seconds),
    ``_coverage_of(corpora)``, on a forked process while the run goes on; in this process on one job or once
    this process has loaded a silver analyzer (``silver.analyzers_loaded``: a loaded kiwi's threads would be
    dead in a child).  The child starts from this process's analyses cache, so the numbers are this process's."""
    return _Forked(lambda: _coverage_of(corpora), fork=jobs > 1 and not silver.analyzers_loaded())


def write_audit(out_dir: Path, results: list[UnitResult], facts: dict[Unit, UnitAuditFacts],
                context: RunContext) -> None:  # fmt: skip
    """``audit.csv`` and ``audit-entries.csv`` (``benchmarks.run.sidetables.audit_tables``), each written atomically."""
    counts, entries = audit_tables(results, facts, context.test_texts, context.config)
    atomic_write_text(out_dir / AUDIT_FILE, counts.to_csv(index=False))
    atomic_write_text(out_dir / AUDIT_ENTRIES_FILE, frame_csv(entries))


def _silver_requests(corpora: Iterable[Corpus]) -> dict[str, list[str]]:
    """The words each silver analyzer will be asked for by the references of ``corpora`` (not yet built)."""
    requests: dict[str, list[str]] = {}
    for corpus in corpora:
        for analyzer, words in corpus.silver_words().items():
            requests.setdefault(analyzer, []).extend(words)
    return requests


def _trained_on_references(config: ExperimentConfig, corpora: Iterable[Corpus]) -> list[Corpus]:
    """The corpora a family that trains on gold morphemes (bpe-knockout) runs on in ``config``."""
    entries = [entry for entry in config.tokenizers if bpe.family_class(entry.kind).facts.trains_on_references]
    return [corpus for corpus in corpora
            if any(entry.corpora is None or corpus.spec.id in entry.corpora for entry in entries)]  # fmt: skip


def _build_references(analyzing: silver.Prefetch, corpora: Iterable[Corpus], progress: bool) -> None:
    """Build the references of ``corpora``, once their silver analyzers are done."""
    corpora = list(corpora)
    analyzing.wait({analyzer for corpus in corpora for analyzer in corpus.silver_analyzers()})
    for corpus in tqdm(corpora, desc="morpheme references", disable=not progress, file=sys.stderr):
        corpus.references()


@dataclass
class _Training:
    """A sweep still training on the one-worker pool of ``_work_while_analyzing`` when the analyses ended."""

    sweep: Sweep
    future: Any
    pool: TaskPool

    def close(self) -> None:
        self.pool.close()


def _work_while_analyzing(context: RunContext, pending: list[Unit], analyzing: silver.Prefetch, workers: Workers,
                          progress: bool) -> tuple[list[Unit], _Training | None]:  # fmt: skip
    """While silver analyses still run on worker processes (one slow analyzer leaves a core idle), train
    the sweeps of ``pending`` one after the other on a worker of its own, then evaluate the units whose
    corpus has all its analyses in this process; stop as soon as every analysis is done.  Returns the units
    still pending, and the sweep still training then (``_run_units`` queues its units when it ends: a long
    training never holds the other cores back).  A unit is computed by the same function wherever it runs
    (``run_unit``), so where it ran never shows in the results."""
    if analyzing.ready():
        return pending, None
    config, done = context.config, set()
    sweeps = [sweep for sweep in plan_sweeps(pending, config)
              if not all(is_cached(unit, context.corpora, config) for unit in sweep.units)]  # fmt: skip
    bar = tqdm(total=len(sweeps) + len(pending), desc="train + evaluate while analyzers run",
               disable=not progress, file=sys.stderr)  # fmt: skip
    pool = workers.pool(context, 1) if sweeps and workers.parallel else None
    try:
        for sweep in sweeps:
            if analyzing.ready():
                break
            if pool is None:
                train_sweep(sweep, context.corpora, config)
            else:
                future = pool.submit(_train_sweep_in_worker, sweep)
                while not pool.finished(_POLL_SECONDS):
                    if analyzing.ready():
                        bar.close()
                        return pending, _Training(sweep, future, pool)
            bar.update()
        else:
            for unit in pending:
                if analyzing.ready():
                    break
                analyzers = context.corpora[unit.corpus].silver_analyzers()
                if analyzing.ready(analyzers):
                    analyzing.wait(analyzers)
                    run_unit(unit, context)
                    done.add(unit)
                    bar.update()
    except BaseException:
        if pool is not None:
            pool.close()
        raise
    if pool is not None:
        pool.close()
    bar.close()
    return [unit for unit in pending if unit not in done], None


#: how often ``_work_while_analyzing`` looks whether the analyses are done while a sweep trains
_POLL_SECONDS = 0.05


def _finished_units(context: RunContext, units: list[Unit]) -> dict[Unit, UnitResult]:
    """The units a previous attempt finished, read back; a damaged unit file is said and recomputed."""
    finished = {}
    for unit in units:
        path = context.unit_path(unit)
        if not path.is_file():
            continue
        try:
            finished[unit] = read_unit_result(path, unit)
        except UnitFileError as exc:
            warn(f"{exc}; computing the unit again")
    return finished


def _run_units(context: RunContext, pending: list[Unit], workers: Workers, progress: bool,
               training: _Training | None = None, side: Sequence[SideTask] = ()) -> dict[Unit, SideFacts]:  # fmt: skip
    """Train the sweeps the pending units need (those not all cached), then evaluate each unit.  In a
    pool, a sweep's units are queued as soon as its training ends, so workers never wait for the
    other trainings (trainings are queued first: they are the long tasks); so are the units of the sweep
    still ``training`` on another worker (``_work_while_analyzing``).  The pool also computes the facts of
    the ``side`` tasks (``sidetables``), returned: a production row's at once, after the trainings, and a
    trained unit's once the unit is evaluated (it reads the tokenizer file the unit saves); one job computes
    none (``side_facts`` does, after the units)."""
    sweeps = [sweep for sweep in plan_sweeps(pending, context.config)
              if not all(is_cached(unit, context.corpora, context.config) for unit in sweep.units)
              and (training is None or sweep != training.sweep)]  # fmt: skip
    facts: dict[Unit, SideFacts] = {}
    if not workers.worth_a_pool(len(sweeps) + len(pending)):
        while training is not None and training.pool:  # the units below are evaluated in this process, after it
            training.pool.finished()
        bar = tqdm(total=len(sweeps) + len(pending), desc="train + evaluate", disable=not progress, file=sys.stderr)
        for sweep in sweeps:
            train_sweep(sweep, context.corpora, context.config)
            bar.update()
        for unit in pending:
            run_unit(unit, context)
            bar.update()
        bar.close()
        return facts
    waiting = {unit for sweep in sweeps for unit in sweep.units} | set(training.sweep.units if training else ())
    evaluating = set(pending)
    after_unit = {task[0].key: task for task in side if task[0].row_type != "production" and task[0] in evaluating}
    bar = tqdm(total=len(sweeps) + len(pending) + len(side), desc="train + evaluate", disable=not progress,
               file=sys.stderr)  # fmt: skip
    pool = workers.pool(context, workers.jobs)
    try:
        for sweep in sweeps:
            pool.submit(_train_sweep_in_worker, sweep)
        for task in side:
            if task[0].key not in after_unit:
                pool.submit(_side_facts_in_worker, task)
        for unit in pending:
            if unit not in waiting:
                pool.submit(_run_unit_in_worker, unit)
        if training is not None:
            pool.adopt(training.future)
        while pool:
            for finished in pool.finished():
                if isinstance(finished, Sweep):
                    for unit in finished.units:
                        pool.submit(_run_unit_in_worker, unit)
                elif isinstance(finished, dict):
                    facts.update(finished)
                elif finished in after_unit:
                    pool.submit(_side_facts_in_worker, after_unit[finished])
                bar.update()
    finally:
        pool.close()
    bar.close()
    return facts


def write_costs(out_dir: Path, results: list[UnitResult]) -> None:
    """Wall-clock figures (the registry's non-deterministic metrics) vary between runs, so they live
    apart from the deterministic results: one row per unit, one column per figure (empty when not
    measured, e.g. encoding throughput of a corpus without test documents)."""
    measured = [metric.name for metric in METRICS.values() if not metric.deterministic]
    rows = [dict(result.unit.columns(), **{name: result.costs.get(name, math.nan) for name in measured})
            for result in results]  # fmt: skip
    frame = pd.DataFrame(rows).astype({"vocab_size": "Int64", TRAIN_CHARS: "Int64"})
    frame = frame[[column for column in result_columns() if column in frame.columns] + measured]  # options: as results
    frame = frame.sort_values(["corpus", "tokenizer", "vocab_size"], na_position="first", kind="stable")
    atomic_write_text(out_dir / "costs.csv", frame.to_csv(index=False))
