"""The regression check behind ``tokbench check``: compare a run's tidy results
with a committed baseline and fail on a move in the worse direction beyond
tolerance.

Baseline file (JSON, written by ``--update``)::

    {"format": "tokbench-baseline", "format_version": 2, "config": "quick",
     "tolerance": {"relative": 0.005, "absolute": 1e-9},
     "metric_tolerance": {"unk_token_rate": {"relative": 0.0, "absolute": 0.001}},
     "rows": [{"corpus": ..., "tokenizer": ..., "vocab_size": ..., "options": {"end_of_word": "separate"},
               "train_chars": null, "eval_set": ..., "reference": ..., "partner": "", "metric": ...,
               "value": ...}, ...]}

A row's key is everything but its value: the options it sets are an object of typed values (the typed
option columns of the results, ``files.option_values``); ``partner`` names the other tokenizer of a
cross-unit metric (``vocab_overlap``).  Format version 1 (options as one ``"k=v,..."`` string) is refused:
rewrite the baseline with ``--update``.

The file is declared by ``Baseline`` below: unknown keys, wrong types, a negative tolerance, no
rows or two rows with the same key are errors naming the field.  The run's results must hold each
key once too (``files.read_results``).

A row moves beyond tolerance when ``|new - old| > max(absolute, relative * |old|)``.
It is a *regression* when it moves the worse way (``metrics.METRICS[m].higher_is_better``);
for descriptive metrics (direction ``None``) any move beyond tolerance counts.
A baseline row missing from the run is a regression (a metric silently
disappeared); a new row is reported but does not fail.  Every result row is
deterministic for fixed inputs, so the default tolerance is tight; it exists for
floating-point differences across platforms and library versions.

The outcome is printed as text (a terminal), Markdown (a table of the moved metrics for
``$GITHUB_STEP_SUMMARY`` or a pull-request comment) or JSON (``check_document``; its schema,
``"format": "tokbench-check"``, is described in docs/formats.md).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import Field, Strict, model_validator

from benchmarks import render
from benchmarks.errors import BenchmarkError
from benchmarks.files import (
    atomic_write_text,
    is_missing,
    option_values,
    read_results,
    read_run_manifest,
)
from benchmarks.measure.metrics import METRICS
from bpe.validation import Problem, Table, table_rule, validate

BASELINE_FORMAT = "tokbench-baseline"
DEFAULT_TOLERANCE = {"relative": 0.005, "absolute": 1e-9}

NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]  # an infinite tolerance would pass anything


class Tolerance(Table):
    relative: NonNegative = 0.0
    absolute: NonNegative = 0.0


class BaselineRow(Table):
    """One metric value; its key is ``Key``.  A metric no longer known counts as missing."""

    corpus: str
    tokenizer: str
    vocab_size: int | None
    options: dict[str, bool | int | float | str] = Field(default_factory=dict)  # the options the row sets
    train_chars: int | None = None
    eval_set: str
    reference: str
    partner: str = ""
    metric: str
    value: float  # NaN where the metric is undefined


class Tolerances(Table):
    """The tolerances of a baseline (what ``--update`` keeps, whatever the format version of its rows)."""

    tolerance: Tolerance = Tolerance(**DEFAULT_TOLERANCE)
    metric_tolerance: dict[str, Tolerance] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_metrics(self) -> Tolerances:
        unknown = sorted(set(self.metric_tolerance) - set(METRICS))
        if unknown:
            raise table_rule(f"metric_tolerance: unknown metric {unknown[0]!r} (see METRICS in "
                             "benchmarks/measure/metrics/)")
        return self


class Baseline(Tolerances):
    format: Literal[BASELINE_FORMAT]  # type: ignore[valid-type]
    format_version: Literal[2]
    config: str = ""
    rows: Annotated[tuple[BaselineRow, ...], Strict(False), Field(min_length=1)]

    @model_validator(mode="after")
    def _distinct_keys(self) -> Baseline:
        seen: dict[Key, int] = {}
        for index, row in enumerate(self.rows):
            key = _key(row.model_dump())
            if key in seen:
                named = ", ".join(f"{column}={value!r}" for column, value in key._asdict().items())
                raise table_rule(f"rows[{seen[key]}] and rows[{index}] have the same key ({named}): "
                                 "each row must be given once")  # fmt: skip
            seen[key] = index
        return self


class Key(NamedTuple):
    """What identifies a result row and a baseline row (the results' ``files.key_columns``)."""

    corpus: str
    tokenizer: str
    vocab_size: int | None
    options: tuple[tuple[str, Any], ...]  # (name, typed value) of the options the row sets, by name
    train_chars: int | None
    eval_set: str
    reference: str
    partner: str
    metric: str

    @property
    def label(self) -> str:
        """The tokenizer's label, as the reports name it (a config's labels are unique, so its options need not
        be spelled out), with its ``train_chars`` on a run with that axis (``char-bpe+train_chars=100000``) and,
        for a cross-unit metric, its partner (``char-bpe~byte-bpe``)."""
        axis = f"+train_chars={self.train_chars}" if self.train_chars is not None else ""
        return self.tokenizer + axis + (f"~{self.partner}" if self.partner else "")

    def as_row(self) -> dict[str, Any]:
        """The key as a baseline / check-document row: options as an object."""
        return dict(self._asdict(), options=dict(self.options))


@dataclass(frozen=True)
class Change:
    key: Key
    old: float | None
    new: float | None
    status: str  # regression | improved | moved | missing | new


def _optional_int(value: Any) -> int | None:
    return None if is_missing(value) else int(value)


def _key(row: dict[str, Any]) -> Key:
    """The key of a results record (typed option columns) or of a baseline row (``options`` object)."""
    options = row["options"] if "options" in row else option_values(row)
    return Key(row["corpus"], row["tokenizer"], _optional_int(row["vocab_size"]), tuple(sorted(options.items())),
               _optional_int(row.get("train_chars")), row["eval_set"], row["reference"] or "",
               row.get("partner") or "", row["metric"])  # fmt: skip


def write_baseline(run_dir: Path, baseline_path: Path, previous: Tolerances | None = None) -> int:
    """Rewrite the baseline from a run, keeping any tolerances the previous baseline set."""
    frame = read_results(run_dir)
    manifest = read_run_manifest(run_dir) if (run_dir / "manifest.json").is_file() else {}
    config_name = manifest.get("run", "")
    if not isinstance(config_name, str):
        raise BenchmarkError(f"{run_dir / 'manifest.json'}: field run must be a string, got {config_name!r}",
                             code="wrong_type", value=config_name, field="run")  # fmt: skip
    rows = []
    for record in frame.to_dict("records"):
        rows.append(dict(_key(record).as_row(), value=float(record["value"])))
    document = {
        "format": BASELINE_FORMAT,
        "format_version": 2,
        "config": config_name,
        "tolerance": previous.tolerance.model_dump() if previous else DEFAULT_TOLERANCE,
        "metric_tolerance": {metric: tolerance.model_dump() for metric, tolerance in previous.metric_tolerance.items()}
        if previous else {},
        "rows": rows,
    }
    atomic_write_text(baseline_path, json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    return len(rows)


def read_baseline(path: Path) -> Baseline:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchmarkError(f"{path}: no such baseline (create it with --update)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BenchmarkError(f"{path}: cannot read baseline ({exc})") from None
    return parse_baseline(document, str(path))


def read_tolerances(path: Path) -> Tolerances:
    """The tolerances of the baseline at ``path``, of any format version (``--update`` keeps them)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BenchmarkError(f"{path}: cannot read baseline ({exc})") from None
    if not isinstance(document, dict) or document.get("format") != BASELINE_FORMAT:
        raise BenchmarkError(f'{path}: not a tokbench baseline (expected "format": "{BASELINE_FORMAT}")')
    given = {name: document[name] for name in Tolerances.model_fields if name in document}

    def fail(problem: Problem) -> BenchmarkError:
        return BenchmarkError(f"{path}: {problem.path}: {problem.message}", code=problem.kind, value=problem.value,
                              field=problem.path)  # fmt: skip

    return validate(Tolerances, given, fail)


def parse_baseline(document: Any, source: str = "<baseline>") -> Baseline:
    """A parsed baseline JSON document, validated; ``source`` names it in messages."""
    if not isinstance(document, dict) or document.get("format") != BASELINE_FORMAT:
        raise BenchmarkError(f'{source}: not a tokbench baseline (expected "format": "{BASELINE_FORMAT}")')
    if document.get("format_version") == 1:
        raise BenchmarkError(f"{source}: format_version 1 (options as one text) is not read any more (expected 2, "
                             "options as an object of typed values): rewrite it with `tokbench check RUN "
                             "--baseline FILE --update`")  # fmt: skip

    def fail(problem: Problem) -> BenchmarkError:
        return BenchmarkError(f"{source}: {problem.path}: {problem.message}" if problem.path
                              else f"{source}: {problem.message}", code=problem.kind, value=problem.value,
                              field=problem.path)  # fmt: skip

    return validate(Baseline, document, fail)


def compare(run_dir: Path, baseline: Baseline) -> list[Change]:
    frame = read_results(run_dir)
    new = {_key(record): float(record["value"]) for record in frame.to_dict("records")}
    old = {_key(row.model_dump()): row.value for row in baseline.rows}
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
        tolerance = baseline.metric_tolerance.get(metric, baseline.tolerance)
        allowed = max(tolerance.absolute, tolerance.relative * abs(before))
        if math.isnan(before) and math.isnan(after):
            continue
        delta = after - before
        if not (abs(delta) > allowed or math.isnan(before) != math.isnan(after)):
            continue
        direction = METRICS[metric].higher_is_better  # read_results accepts known metrics only
        status = "moved" if direction is None else "improved" if (delta > 0) == direction else "regression"
        changes.append(Change(key, before, after, status))
    return changes


def delta_text(old: float | None, new: float | None) -> str:
    """``+0.0123 (+1.2%)``: the change and, where the baseline is a finite non-zero number, relative to it."""
    if old is None or new is None or not (math.isfinite(old) and math.isfinite(new)):
        return "–"
    relative = f" ({(new - old) / abs(old):+.1%})" if old else ""
    return f"{new - old:+.4g}{relative}"


def format_changes(changes: list[Change]) -> str:
    """One line per change: status, corpus, tokenizer (+options), vocabulary size, metric (with its morpheme
    reference in brackets and a non-test evaluation set after @), baseline and new value."""
    if not changes:
        return "no metric moved beyond tolerance"
    rows = []
    for change in changes:
        key = change.key
        name = key.metric + (f"[{key.reference}]" if key.reference else "") + (
            f"@{key.eval_set}" if key.eval_set != "test" else "")  # fmt: skip
        values = ["-" if v is None else f"{v:.5g}" for v in (change.old, change.new)]
        size = "-" if key.vocab_size is None else str(key.vocab_size)
        rows.append([change.status, key.corpus, key.label, size, name, *values, delta_text(change.old, change.new)])
    return render.text(["status", "corpus", "tokenizer", "vocab", "metric", "baseline", "now", "Δ"], rows,
                       "lllrlrrr")  # fmt: skip


def is_failure(changes: list[Change]) -> bool:
    return any(change.status in ("regression", "moved", "missing") for change in changes)


CHECK_FORMAT = "tokbench-check"
#: every status, failing ones first (the order of counts and of the Markdown table)
STATUSES = ("regression", "moved", "missing", "improved", "new")


def status_counts(changes: list[Change]) -> dict[str, int]:
    return {status: sum(change.status == status for change in changes) for status in STATUSES}


def summary_line(changes: list[Change]) -> str:
    """``check passed: 2 improved`` / ``check FAILED: 1 regression, ...``."""
    summary = ", ".join(f"{n} {status}" for status, n in status_counts(changes).items() if n)
    return f"check {'FAILED' if is_failure(changes) else 'passed'}: {summary or 'all within tolerance'}"


def _finite_or_none(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value


def check_document(changes: list[Change], run_dir: Path, baseline_path: Path) -> dict[str, Any]:
    """The JSON form of a check (schema in docs/formats.md): NaN (an undefined metric) is written as null,
    a value the run or the baseline lacks is null too (status tells which)."""
    rows = []
    for change in changes:
        row = change.key.as_row()
        old, new = _finite_or_none(change.old), _finite_or_none(change.new)
        delta = new - old if old is not None and new is not None else None
        rows.append({"status": change.status, **row, "baseline": old, "value": new, "delta": delta})
    return {
        "format": CHECK_FORMAT,
        "format_version": 2,
        "run": str(run_dir),
        "baseline": str(baseline_path),
        "passed": not is_failure(changes),
        "counts": status_counts(changes),
        "changes": rows,
    }


def format_markdown(changes: list[Change], run_dir: Path, baseline_path: Path) -> str:
    """A heading with the outcome, then one table row per moved metric (failing statuses first)."""
    passed = not is_failure(changes)
    lines = [f"### tokbench check {'passed ✅' if passed else 'FAILED ❌'}", "",
             render.md_escape(f"{summary_line(changes)} (run `{run_dir}`, baseline `{baseline_path}`)")]  # fmt: skip
    if changes:
        rows = []
        for change in sorted(changes, key=lambda c: STATUSES.index(c.status)):  # stable: keeps key order within
            key, old, new = change.key, change.old, change.new
            delta = delta_text(old, new)
            cells = [change.status, key.corpus, key.label, "–" if key.vocab_size is None else str(key.vocab_size),
                     key.metric + (f" [{key.reference}]" if key.reference else ""), key.eval_set,
                     *("–" if v is None else f"{v:.5g}" for v in (old, new)), delta]  # fmt: skip
            rows.append([render.md_escape(cell) for cell in cells])
        header = ["status", "corpus", "tokenizer", "vocab", "metric", "eval set", "baseline", "now", "Δ"]
        lines += ["", render.markdown(header, rows, "llllllrrr")]
    return "\n".join(lines)
