"""The regression check behind ``tokbench check``: compare a run's tidy results
with a committed baseline and fail on a move in the worse direction beyond
tolerance.

Baseline file (JSON, written by ``--update``)::

    {"format": "tokbench-baseline", "format_version": 1, "config": "quick",
     "tolerance": {"relative": 0.005, "absolute": 1e-9},
     "metric_tolerance": {"unk_token_rate": {"relative": 0.0, "absolute": 0.001}},
     "rows": [{"corpus": ..., "tokenizer": ..., "vocab_size": ..., "options": ..., "eval_set": ...,
               "reference": ..., "metric": ..., "value": ...}, ...]}

A row moves beyond tolerance when ``|new - old| > max(absolute, relative * |old|)``.
It is a *regression* when it moves the worse way (``metrics.METRICS[m].higher_is_better``);
for descriptive metrics (direction ``None``) any move beyond tolerance counts.
A baseline row missing from the run is a regression (a metric silently
disappeared); a new row is reported but does not fail.  Every result row is
deterministic for fixed inputs, so the default tolerance is tight; it exists for
floating-point differences across platforms and library versions.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks import render
from benchmarks.errors import BenchmarkError
from benchmarks.files import KEY_COLUMNS, atomic_write_text, read_results
from benchmarks.metrics import METRICS

BASELINE_FORMAT = "tokbench-baseline"
DEFAULT_TOLERANCE = {"relative": 0.005, "absolute": 1e-9}


@dataclass(frozen=True)
class Change:
    key: tuple[Any, ...]
    old: float | None
    new: float | None
    status: str  # regression | improved | moved | missing | new


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    size = row["vocab_size"]
    size = None if size is None or (isinstance(size, float) and math.isnan(size)) or size is pd.NA else int(size)
    reference = row["reference"] or ""
    return (row["corpus"], row["tokenizer"], size, row["options"], row["eval_set"], reference, row["metric"])


def write_baseline(run_dir: Path, baseline_path: Path, previous: dict[str, Any] | None = None) -> int:
    """Rewrite the baseline from a run, keeping any tolerances the previous baseline set."""
    frame = read_results(run_dir)
    manifest_path = run_dir / "manifest.json"
    config_name = json.loads(manifest_path.read_text())["run"] if manifest_path.is_file() else ""
    rows = []
    for record in frame.to_dict("records"):
        key = _key(record)
        rows.append(dict(zip(KEY_COLUMNS, key, strict=True), value=float(record["value"])))
    document = {
        "format": BASELINE_FORMAT,
        "format_version": 1,
        "config": config_name,
        "tolerance": (previous or {}).get("tolerance", DEFAULT_TOLERANCE),
        "metric_tolerance": (previous or {}).get("metric_tolerance", {}),
        "rows": rows,
    }
    atomic_write_text(baseline_path, json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    return len(rows)


def read_baseline(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchmarkError(f"{path}: no such baseline (create it with --update)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BenchmarkError(f"{path}: cannot read baseline ({exc})") from None
    if not isinstance(document, dict) or document.get("format") != BASELINE_FORMAT:
        raise BenchmarkError(f'{path}: not a tokbench baseline (expected "format": "{BASELINE_FORMAT}")')
    if not isinstance(document.get("rows"), list):
        raise BenchmarkError(f'{path}: field "rows" is missing or not a list')
    return document


def compare(run_dir: Path, baseline: dict[str, Any]) -> list[Change]:
    frame = read_results(run_dir)
    new = {_key(record): float(record["value"]) for record in frame.to_dict("records")}
    old = {}
    for index, row in enumerate(baseline["rows"]):
        try:
            old[_key(row)] = float(row["value"])
        except (KeyError, TypeError, ValueError):
            raise BenchmarkError(f"baseline rows[{index}]: expected fields {[*KEY_COLUMNS, 'value']}") from None
    default = baseline.get("tolerance", DEFAULT_TOLERANCE)
    per_metric = baseline.get("metric_tolerance", {})
    changes: list[Change] = []
    for key in sorted(old.keys() | new.keys(), key=repr):
        metric = key[-1]
        if key not in new:
            changes.append(Change(key, old[key], None, "missing"))
            continue
        if key not in old:
            changes.append(Change(key, None, new[key], "new"))
            continue
        before, after = old[key], new[key]
        tolerance = per_metric.get(metric, default)
        allowed = max(tolerance.get("absolute", 0.0), tolerance.get("relative", 0.0) * abs(before))
        if math.isnan(before) and math.isnan(after):
            continue
        delta = after - before
        if not (abs(delta) > allowed or math.isnan(before) != math.isnan(after)):
            continue
        direction = METRICS[metric].higher_is_better  # read_results accepts known metrics only
        status = "moved" if direction is None else "improved" if (delta > 0) == direction else "regression"
        changes.append(Change(key, before, after, status))
    return changes


def format_changes(changes: list[Change]) -> str:
    """One line per change: status, corpus, tokenizer (+options), vocabulary size, metric (with its morpheme
    reference in brackets and a non-test evaluation set after @), baseline and new value."""
    if not changes:
        return "no metric moved beyond tolerance"
    rows = []
    for change in changes:
        corpus, tokenizer, size, options, eval_set, reference, metric = change.key
        name = metric + (f"[{reference}]" if reference else "") + (f"@{eval_set}" if eval_set != "test" else "")
        values = ["-" if v is None else f"{v:.5g}" for v in (change.old, change.new)]
        label = tokenizer + (f"+{options}" if options else "")
        rows.append([change.status, corpus, label, "-" if size is None else str(size), name, *values])
    return render.text(["status", "corpus", "tokenizer", "vocab", "metric", "baseline", "now"], rows, "lllrlrr")


def is_failure(changes: list[Change]) -> bool:
    return any(change.status in ("regression", "moved", "missing") for change in changes)
