"""The downstream step of a run: a language model per (corpus, tokenizer row, seed), then BPB rows, paired
tests and the metric-validity table.

Which rows: every trained and reference row at the ``[downstream]`` vocabulary sizes and every pretrained
row, except rows that sample their segmentation (BPE-dropout, unigram sampling: their ids change from
one encoding to the next).  Every model of one corpus trains on the same bytes and is scored on the same
held-out documents (``data``).

Caching: a model's bits are kept under ``$TOKBENCH_CACHE/downstream/<key>.json``, the key hashing every id
the model sees and scores (so the tokenizer and the data), the model and optimiser settings, the seed, the
device kind, the code of ``data``, ``bpb`` and ``model``, and the versions of PyTorch and ``transformers``:
a second run, or another config sharing the row, trains nothing again.  A model still training is
checkpointed beside it (``<key>.ckpt``), so an interrupted run resumes mid-model.

Where it runs: on the CPU, each model on one thread and ``jobs`` models at a time in worker processes
(spawned: PyTorch must not be forked), so the bits do not depend on ``jobs``; on CUDA one model at a time.

Files: ``downstream.csv`` (one row per model and scored role: BPB, bits, bytes, tokens, ``<unk>`` bytes,
context, parameters with and without the embedding, training FLOPs), ``downstream-paired.csv`` (every two
rows of a corpus and role: the BPB difference, its paired bootstrap CI, the permutation p-value and its
Holm adjustment within the corpus and role), ``downstream-validity.csv`` (``validity``) and
``downstream-costs.csv`` (each model's seconds: wall-clock, kept apart like ``costs.csv``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import multiprocessing
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm import tqdm

import bpe
from benchmarks.downstream import bpb, data, validity
from benchmarks.downstream.settings import Downstream
from benchmarks.errors import BenchmarkError
from benchmarks.files import atomic_write_text
from benchmarks.measure.metrics import METRICS
from benchmarks.measure.paired import holm_adjust, paired_tests
from benchmarks.measure.stats import seed_item_interval
from benchmarks.run.units import ResultRow, Unit, tidy_rows
from corpora import Corpus
from corpora.loader import cache_home

DOWNSTREAM_FILE = "downstream.csv"
PAIRED_FILE = "downstream-paired.csv"
VALIDITY_FILE = "downstream-validity.csv"
COSTS_FILE = "downstream-costs.csv"
#: the optional dependencies the models need, as ``pip install`` names them
EXTRA = "pip install -e '.[downstream]' (PyTorch and transformers)"
#: the key columns of a unit in the downstream files
UNIT_COLUMNS = ("corpus", "language", "tokenizer", "kind", "row_type", "vocab_size")
#: the columns a report needs in each file (``benchmarks.report.load`` checks them)
MODEL_COLUMNS = (*UNIT_COLUMNS, "seed", "eval_set", "bpb", "context_tokens", "classes", "parameters",
                 "non_embedding_parameters", "full_vocabulary_parameters", "train_flops", "train_bytes", "unk_bytes")
PAIRED_COLUMNS = ("corpus", "language", "eval_set", "tokenizer_a", "vocab_size_a", "tokenizer_b", "vocab_size_b",
                  "bpb_a", "bpb_b", "difference", "ci_low", "ci_high", "p_value", "p_value_holm", "n")
VALIDITY_COLUMNS = ("language", "metric", "eval_set", "reference", "bpb_eval_set", "method", "value", "ci_low",
                    "ci_high", "p_value", "n")


def check_available() -> None:
    """PyTorch and ``transformers`` importable, else one clear error (checked before a run starts)."""
    missing = [name for name in ("torch", "transformers") if _version(name) is None]
    if missing:
        raise BenchmarkError(f"[downstream] trains language models with {' and '.join(missing)}, which "
                             f"{'is' if len(missing) == 1 else 'are'} not installed: {EXTRA}", code="missing_package",
                             value=missing[0])  # fmt: skip


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def check_corpora(corpora: dict[str, Corpus], settings: Downstream, source: str) -> None:
    """Every corpus has training text and one of the scored roles: checked before the run touches its folder."""
    for corpus_id, corpus in sorted(corpora.items()):
        if not corpus.documents("train"):
            raise BenchmarkError(f"{source}: [downstream]: corpus {corpus_id!r} has no training text to train a "
                                 "language model on", code="no_training_documents", value=corpus_id)  # fmt: skip
        if not any(corpus.documents(role) for role in settings.eval_sets):
            raise BenchmarkError(f"{source}: [downstream]: corpus {corpus_id!r} has none of the scored roles "
                                 f"({', '.join(settings.eval_sets)})", code="no_evaluation_documents",
                                 value=corpus_id)  # fmt: skip


def language_model_units(units: Sequence[Unit], sizes: Sequence[int]) -> list[Unit]:
    """The units that get language models: pretrained rows, and trained rows at ``sizes`` that do not sample."""
    def samples(unit: Unit) -> bool:
        return unit.settings is not None and unit.settings.samples

    return [unit for unit in units
            if unit.row_type == "production" or (unit.vocab_size in sizes and not samples(unit))]  # fmt: skip


@dataclass(frozen=True)
class Model:
    """One language model's outcome (what the cache keeps)."""

    unit: Unit
    seed: int
    bits: dict[str, np.ndarray]  # per held-out document, by role
    facts: dict[str, float]
    seconds: float


#: each unit's model data (``data.build``)
Prepared = dict[Unit, data.ModelData]


def model_key(model_data: data.ModelData, settings: Downstream, seed: int, device: str) -> str:
    """The cache key of one model (module docstring)."""
    model_settings = settings.model_dump(mode="json", exclude={"vocab_sizes", "seeds", "checkpoint_every"})
    blob = json.dumps({"data": model_data.digest(), "settings": model_settings, "seed": seed, "device": device,
                       "code": _code_digest(), "torch": _version("torch"),
                       "transformers": _version("transformers")}, sort_keys=True)  # fmt: skip
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


@functools.cache
def _code_digest() -> str:
    """A hash of the code that builds, trains and scores a model: a change to it trains every model again."""
    hasher = hashlib.sha256()
    for name in ("data", "bpb", "model"):
        hasher.update(Path(__file__).with_name(f"{name}.py").read_bytes())
    return hasher.hexdigest()[:16]


def _cache_dir() -> Path:
    return cache_home() / "downstream"


def _read_cached(path: Path, roles: Sequence[str]) -> dict[str, Any] | None:
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        bits = {role: np.asarray(stored["bits"][role], dtype=np.float64) for role in roles}
        return {"bits": bits, "facts": dict(stored["facts"]), "seconds": float(stored["seconds"])}
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent or damaged: trained again


def _train_one(model_data: data.ModelData, settings: Downstream, seed: int, device: str, path: Path) -> dict[str, Any]:
    """Train and score one model (in a worker process), store it in the cache, return what is stored."""
    from benchmarks.downstream import model  # PyTorch: imported where the models run

    trained = model.train_and_score(model_data, settings, seed, device, threads=1, checkpoint=path.with_suffix(".ckpt"))
    stored = {"bits": {role: bits.tolist() for role, bits in trained.bits.items()}, "facts": asdict(trained.facts),
              "seconds": trained.seconds}  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(stored))
    return stored


def train_models(units: Sequence[Unit], tokenizer_of: Callable[[Unit], bpe.Tokenizer], corpora: dict[str, Corpus],
                 settings: Downstream, device: str, jobs: int, progress: bool) -> tuple[list[Model], Prepared]:
    """Every model of ``units`` × ``settings.seeds``, from the cache or trained."""
    from benchmarks.downstream.model import resolve_device

    device = resolve_device(device)
    prepared: Prepared = {}
    for unit in tqdm(units, desc="language-model data", disable=not progress, file=sys.stderr):
        corpus = corpora[unit.corpus]
        train = [document.text for document in corpus.documents("train")]
        held_out = {role: [document.text for document in corpus.documents(role)][: settings.max_eval_items]
                    for role in settings.eval_sets if corpus.documents(role)}  # fmt: skip
        prepared[unit] = data.build(tokenizer_of(unit), train, held_out, settings)
    tasks = [(unit, seed) for unit in units for seed in settings.seeds]
    paths = {task: _cache_dir() / f"{model_key(prepared[task[0]], settings, task[1], device)}.json" for task in tasks}
    roles_of = {unit: [items.role for items in prepared[unit].eval_sets] for unit in units}
    stored = {task: _read_cached(paths[task], roles_of[task[0]]) for task in tasks}
    missing = [task for task in tasks if stored[task] is None]
    # the longest first (more training tokens), so the pool ends together
    missing.sort(key=lambda task: -len(prepared[task[0]].train))
    bar = tqdm(total=len(missing), desc="language models", disable=not progress or not missing, file=sys.stderr)
    if jobs > 1 and device == "cpu" and len(missing) > 1:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {pool.submit(_train_one, prepared[task[0]], settings, task[1], device, paths[task]): task
                       for task in missing}  # fmt: skip
            for future in as_completed(futures):
                stored[futures[future]] = future.result()
                bar.update()
    else:
        for task in missing:
            stored[task] = _train_one(prepared[task[0]], settings, task[1], device, paths[task])
            bar.update()
    bar.close()
    models = []
    for unit, seed in tasks:
        record = stored[(unit, seed)]
        assert record is not None
        bits = {role: np.asarray(values, dtype=np.float64) for role, values in record["bits"].items()}
        models.append(Model(unit, seed, bits, record["facts"], record["seconds"]))
    return models, prepared


def _by_unit(models: Sequence[Model]) -> dict[Unit, list[Model]]:
    grouped: dict[Unit, list[Model]] = {}
    for model in models:
        grouped.setdefault(model.unit, []).append(model)
    return grouped


def bpb_rows(models: Sequence[Model], prepared: Prepared, resamples: int, confidence: float,
             seed: int) -> list[dict[str, Any]]:  # fmt: skip
    """The ``bpb`` rows of results.*: per unit and scored role, the mean over seeds of Σ bits / Σ bytes,
    with a CI resampling documents and seeds."""
    rows = []
    for unit, of_unit in _by_unit(models).items():
        for items in prepared[unit].eval_sets:
            bits = np.stack([model.bits[items.role] for model in of_unit])
            text_bytes = np.tile(items.text_bytes.astype(np.float64), (len(of_unit), 1))
            value = float(np.mean(bits.sum(axis=1) / text_bytes.sum(axis=1)))
            interval = seed_item_interval(bits, text_bytes, confidence=confidence, n_resamples=resamples, seed=seed)
            rows.extend(tidy_rows(unit, [ResultRow(items.role, "", "bpb", value, interval.low, interval.high,
                                                   len(items.text_bytes))]))  # fmt: skip
    return rows


def _unit_columns(unit: Unit) -> dict[str, Any]:
    return {name: getattr(unit, name) for name in UNIT_COLUMNS}


def model_table(models: Sequence[Model], prepared: Prepared) -> pd.DataFrame:
    """``downstream.csv``: one row per model and scored role."""
    rows = []
    for model in models:
        model_data = prepared[model.unit]
        for items in model_data.eval_sets:
            bits = model.bits[items.role]
            rows.append({**_unit_columns(model.unit), "seed": model.seed, "eval_set": items.role,
                         "bpb": bpb.bits_per_byte(bits, items.text_bytes), "bits": float(bits.sum()),
                         "bytes": int(items.text_bytes.sum()), "items": len(bits),
                         "tokens": int(sum(len(ids) for ids in items.ids)), "unk_tokens": int(items.unk_tokens.sum()),
                         "unk_bytes": int(items.unk_bytes.sum()), "context_tokens": model_data.context_tokens,
                         "classes": model_data.classes, "vocab_ids": model_data.vocab_size,
                         "train_bytes": model_data.train_bytes, **model.facts})  # fmt: skip
    frame = pd.DataFrame(rows).astype({"vocab_size": "Int64"})
    return frame.sort_values(["corpus", "eval_set", "tokenizer", "vocab_size", "seed"], kind="stable")


def paired_table(models: Sequence[Model], prepared: Prepared, resamples: int, confidence: float,
                 seed: int) -> pd.DataFrame:  # fmt: skip
    """``downstream-paired.csv``: every two rows of a corpus on one role, on each document's bits averaged
    over seeds; Holm-adjusted within the corpus and role."""
    grouped = _by_unit(models)
    families: dict[tuple[str, str], list[tuple[Unit, np.ndarray, np.ndarray]]] = {}
    for unit, of_unit in grouped.items():
        for items in prepared[unit].eval_sets:
            mean_bits = np.mean(np.stack([model.bits[items.role] for model in of_unit]), axis=0)
            families.setdefault((unit.corpus, items.role), []).append(
                (unit, mean_bits, items.text_bytes.astype(np.float64)))
    rows = []
    for (corpus, role), members in sorted(families.items()):
        members.sort(key=lambda member: (member[0].tokenizer, member[0].vocab_size or 0))
        pairs = [(a, b) for position, a in enumerate(members) for b in members[position + 1 :]]
        if not pairs:
            continue
        tests = paired_tests([((a[1], a[2]), (b[1], b[2])) for a, b in pairs], confidence=confidence,
                             n_resamples=resamples, seed=seed)  # fmt: skip
        adjusted = holm_adjust([test.p_value for test in tests])
        for (a, b), test, p_holm in zip(pairs, tests, adjusted, strict=True):
            rows.append({"corpus": corpus, "language": a[0].language, "eval_set": role,
                         "tokenizer_a": a[0].tokenizer, "vocab_size_a": a[0].vocab_size,
                         "tokenizer_b": b[0].tokenizer, "vocab_size_b": b[0].vocab_size,
                         "bpb_a": float(a[1].sum() / a[2].sum()), "bpb_b": float(b[1].sum() / b[2].sum()),
                         "difference": test.difference, "ci_low": test.interval.low, "ci_high": test.interval.high,
                         "p_value": test.p_value, "p_value_holm": float(p_holm), "n": test.n})  # fmt: skip
    return pd.DataFrame(rows, columns=list(PAIRED_COLUMNS)).astype({"vocab_size_a": "Int64", "vocab_size_b": "Int64"})


#: a predictor needs at least this many tokenizer rows of a language to be correlated
MIN_POINTS = 4


def validity_table(rows: Sequence[dict[str, Any]], units: Sequence[Unit], primary_role: str, resamples: int,
                   confidence: float, seed: int) -> pd.DataFrame:  # fmt: skip
    """``downstream-validity.csv``: per language and pooled, each intrinsic metric (on an evaluation set and
    reference) against BPB across the rows with a model (``validity``).  A metric measured on a scored role
    is compared with BPB on that role; one measured elsewhere (a morpheme reference, the tokenizer itself)
    with BPB on ``primary_role``, the first scored role of the run."""
    modelled = {(unit.corpus, unit.tokenizer, unit.vocab_size) for unit in units}
    language_of = {unit.corpus: unit.language for unit in units}
    bpb_of: dict[tuple[str, str], dict[tuple[str, int | None], float]] = {}
    values: dict[tuple[str, str, str], dict[str, dict[tuple[str, int | None], float]]] = {}
    for row in rows:
        point = (row["corpus"], row["tokenizer"], None if pd.isna(row["vocab_size"]) else int(row["vocab_size"]))
        if point not in modelled or row.get("partner"):
            continue
        metric = METRICS.get(row["metric"])
        if metric is None or not metric.deterministic or not np.isfinite(row["value"]):
            continue
        if metric.name == "bpb":
            bpb_of.setdefault((row["corpus"], row["eval_set"]), {})[point[1:]] = float(row["value"])
        else:
            predictor = (metric.name, row["eval_set"], row["reference"] or "")
            values.setdefault(predictor, {}).setdefault(row["corpus"], {})[point[1:]] = float(row["value"])
    found = []
    for (name, eval_set, reference), by_corpus in values.items():
        role = eval_set if any(key[1] == eval_set for key in bpb_of) else primary_role
        groups = {}
        for corpus, points in sorted(by_corpus.items()):
            target = bpb_of.get((corpus, role), {})
            shared = sorted(point for point in points if point in target)
            if len(shared) >= MIN_POINTS:
                groups[language_of[corpus]] = ([points[p] for p in shared], [target[p] for p in shared])
        for language, group in [*sorted(groups.items()), *([("pooled", None)] if len(groups) > 1 else [])]:
            chosen = [group] if group is not None else list(groups.values())
            for result in validity.correlate(chosen, resamples=resamples, confidence=confidence, seed=seed):
                found.append({"language": language, "metric": name, "eval_set": eval_set, "reference": reference,
                              "bpb_eval_set": role, "method": result.method, "value": result.value,
                              "ci_low": result.ci_low, "ci_high": result.ci_high, "p_value": result.p_value,
                              "n": result.n})  # fmt: skip
    order = {name: position for position, name in enumerate(METRICS)}
    frame = pd.DataFrame(found, columns=list(VALIDITY_COLUMNS))
    frame["_order"] = frame["metric"].map(order)
    frame["_pooled"] = frame["language"] == "pooled"
    frame = frame.sort_values(["_order", "eval_set", "reference", "method", "_pooled", "language"], kind="stable")
    return frame.drop(columns=["_order", "_pooled"]).reset_index(drop=True)


def write_files(out_dir: Path, models: Sequence[Model], prepared: Prepared,
                rows: Sequence[dict[str, Any]], settings: Downstream, resamples: int, confidence: float,
                seed: int) -> None:  # fmt: skip
    """The four downstream files of a run, each written atomically."""
    atomic_write_text(out_dir / DOWNSTREAM_FILE, model_table(models, prepared).to_csv(index=False))
    atomic_write_text(out_dir / PAIRED_FILE,
                      paired_table(models, prepared, resamples, confidence, seed).to_csv(index=False))  # fmt: skip
    primary = next(role for role in settings.eval_sets if any(
        items.role == role for model_data in prepared.values() for items in model_data.eval_sets))  # fmt: skip
    units = list(prepared)
    atomic_write_text(out_dir / VALIDITY_FILE,
                      validity_table(rows, units, primary, resamples, confidence, seed).to_csv(index=False))
    costs = pd.DataFrame([{**_unit_columns(model.unit), "seed": model.seed, "seconds": model.seconds}
                          for model in models]).astype({"vocab_size": "Int64"})  # fmt: skip
    atomic_write_text(out_dir / COSTS_FILE, costs.to_csv(index=False))
