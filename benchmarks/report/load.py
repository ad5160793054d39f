"""Reading a run directory for its report: everything the report shows is read here, once, into one
``Run``; sections and figures never open a file of the run themselves.

What is read: ``results.parquet`` (or ``results.csv``), ``manifest.json``, ``costs.csv``,
``paired.csv``, ``audit.csv`` and ``audit-entries.csv`` when present, the language models' files
(``downstream.csv``, ``downstream-paired.csv``, ``downstream-validity.csv``) when present, ``examples.json`` when
present, and, only when the "How the tokenizers split" section asks for them (``Run.tokenizers``), the
tokenizers of the run: trained ones from ``RUN_DIR/tokenizers/``, published ones re-loaded from the manifest.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

import bpe
from benchmarks.downstream.stage import (
    DOWNSTREAM_FILE,
    MODEL_COLUMNS,
    PAIRED_COLUMNS,
    VALIDITY_COLUMNS,
    VALIDITY_FILE,
)
from benchmarks.downstream.stage import PAIRED_FILE as DOWNSTREAM_PAIRED_FILE
from benchmarks.errors import BenchmarkError
from benchmarks.files import TRAIN_CHARS, read_results, train_chars_of, trained_tokenizer_path
from benchmarks.files import read_run_manifest as read_manifest  # re-exported: benchmarks.report's name
from benchmarks.measure.audit import AUDIT_COLUMNS, AUDIT_ENTRIES_FILE, AUDIT_ENTRY_COLUMNS, AUDIT_FILE
from benchmarks.measure.evaluate import PAIRED_COLUMNS as PAIRED_TEST_COLUMNS
from benchmarks.report.findings import vocab_label
from benchmarks.run.examples import Example, read_examples
from benchmarks.run.pretrained import PretrainedRow

MATCHES = ("requested", "reached")
COSTS_FILE, PAIRED_FILE = "costs.csv", "paired.csv"


@dataclass(frozen=True)
class RunTokenizers:
    """The tokenizers a run used at the report vocabulary size, re-loaded from its directory."""

    trained: dict[tuple[str, str], tuple[str, bpe.Tokenizer]]  # (corpus, label) -> (label shown, tokenizer)
    pretrained: dict[str, bpe.Tokenizer]  # by label: the same for every corpus
    notes: list[str]  # rows that could not be re-loaded, and why

    def of(self, corpus: str, label: str) -> tuple[str, bpe.Tokenizer] | None:
        if (corpus, label) in self.trained:
            return self.trained[corpus, label]
        return (label, self.pretrained[label]) if label in self.pretrained else None


@dataclass(frozen=True)
class Run:
    """One run directory as its report reads it."""

    run_dir: Path
    #: the rows of one tokenizer row each (``partner`` empty; ``files.results_schema``), plus each row's unit
    #: facts (``with_unit_facts``)
    results: pd.DataFrame
    manifest: dict[str, Any]
    report_vocab_size: int
    ci_level: float  # e.g. 0.95
    match: str = "requested"  # MATCHES
    unk_threshold: float = 0.1
    #: every results row, also those of smaller ``train_chars`` values (``results`` keeps the largest)
    all_results: pd.DataFrame | None = None
    costs: pd.DataFrame | None = None  # costs.csv (None when absent)
    paired: pd.DataFrame | None = None  # paired.csv (None when absent)
    #: the ``vocab_overlap`` rows as pairs (``overlap_pairs``; None when the run has none)
    overlap: pd.DataFrame | None = None
    audit: pd.DataFrame | None = None  # audit.csv (None when absent)
    audit_entries: pd.DataFrame | None = None  # audit-entries.csv, every cell as text (None when absent)
    #: the language models of a [downstream] table (``benchmarks.downstream.stage``; None when absent):
    #: one row per model and scored role, their paired tests, and the metric-validity correlations
    models: pd.DataFrame | None = None
    models_paired: pd.DataFrame | None = None
    validity: pd.DataFrame | None = None
    #: examples.json: its document and examples (None when absent)
    examples: tuple[dict[str, Any], list[Example]] | None = field(default=None, repr=False)

    @property
    def ci_name(self) -> str:
        return f"{self.ci_level * 100:g}% CI"

    @property
    def at(self) -> str:
        return vocab_label(self.report_vocab_size)

    def reference_facts(self, corpus: str, reference: str) -> dict[str, Any]:
        """The manifest's entry for a morpheme reference (empty when the manifest does not describe it)."""
        corpora = self.manifest.get("corpora")
        entry = corpora.get(corpus, {}) if isinstance(corpora, dict) else {}
        facts = entry.get("references", {}).get(reference, {}) if isinstance(entry, dict) else {}
        return facts if isinstance(facts, dict) else {}

    @property
    def multilingual_rows(self) -> frozenset[str]:
        """The labels of the trained rows that are one tokenizer for every language (``[[multilingual]]``).  Not
        cached on the instance: a run is pickled for the plot workers while the tables are written, and a cache
        filled then would change the object being pickled."""
        samples = self.manifest.get("multilingual")
        return frozenset(samples) if isinstance(samples, dict) else frozenset()

    def shared(self, frame: pd.DataFrame) -> pd.Series:
        """Which rows of ``frame`` are one tokenizer encoding every language (a published row, or a shared
        multilingual one), so that a ratio between languages is a premium, not a comparison of two tokenizers."""
        return frame["vocab_size"].isna() | frame["tokenizer"].isin(self.multilingual_rows)

    @functools.cached_property
    def tokenizers(self) -> RunTokenizers:
        """The run's tokenizers at the report size, loaded on first use (``run_tokenizers``)."""
        return run_tokenizers(self)


def load_run(run_dir: Path) -> Run:
    """Read and check a run directory; every problem is one BenchmarkError naming the file and field."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise BenchmarkError(f"{run_dir}: no such run directory", code="missing_file", value=run_dir)
    every_row = read_results(run_dir)
    all_results = every_row[every_row["partner"] == ""].reset_index(drop=True)  # rows of two tokenizers: ``overlap``
    results = at_most_training_text(all_results)
    manifest = read_manifest(run_dir)
    config = manifest["config"]
    report = config.get("report")
    report = report if isinstance(report, dict) else {}
    where = run_dir / "manifest.json"
    size = report.get("vocab_size")
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        raise BenchmarkError(f"{where}: field config.report.vocab_size must be a positive integer, got {size!r}",
                             code="invalid", value=size, field="config.report.vocab_size")  # fmt: skip
    level = config.get("confidence", 0.95)
    if not isinstance(level, float) or not 0 < level < 1:
        raise BenchmarkError(f"{where}: field config.confidence must be in (0, 1), got {level!r}", code="invalid",
                             value=level, field="config.confidence")  # fmt: skip
    match = report.get("match", "requested")
    if match not in MATCHES:
        raise BenchmarkError(f"{where}: field config.report.match must be one of {', '.join(MATCHES)}, got {match!r}",
                             code="not_allowed", value=match, field="config.report.match")  # fmt: skip
    threshold = report.get("unk_threshold", 0.1)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 < threshold <= 1:
        raise BenchmarkError(f"{where}: field config.report.unk_threshold must be in (0, 1], got {threshold!r}",
                             code="invalid", value=threshold, field="config.report.unk_threshold")  # fmt: skip
    return Run(run_dir, with_unit_facts(results), manifest, size, level, match, float(threshold),
               all_results=with_unit_facts(all_results), costs=_read_csv(run_dir / COSTS_FILE),
               paired=_with_holm(_read_csv(run_dir / PAIRED_FILE, [c for c in PAIRED_TEST_COLUMNS
                                                                   if c != "p_value_holm"])),
               overlap=overlap_pairs(every_row),
               audit=_read_csv(run_dir / AUDIT_FILE, AUDIT_COLUMNS),
               audit_entries=_read_csv(run_dir / AUDIT_ENTRIES_FILE, AUDIT_ENTRY_COLUMNS, text=True),
               models=_read_csv(run_dir / DOWNSTREAM_FILE, MODEL_COLUMNS),
               models_paired=_read_csv(run_dir / DOWNSTREAM_PAIRED_FILE, PAIRED_COLUMNS),
               validity=_read_csv(run_dir / VALIDITY_FILE, VALIDITY_COLUMNS, keep=["reference"]),
               examples=read_examples(run_dir))  # fmt: skip


def _with_holm(paired: pd.DataFrame | None) -> pd.DataFrame | None:
    """paired.csv with its Holm-adjusted p-values, computed for a run written before the file held them."""
    if paired is None or paired.empty or "p_value_holm" in paired.columns:
        return paired
    from benchmarks.measure.evaluate import holm_by_family

    return paired.assign(p_value_holm=holm_by_family(paired))


def _read_csv(path: Path, columns: Sequence[str] | None = None, text: bool = False,
              keep: Sequence[str] = ()) -> pd.DataFrame | None:  # fmt: skip
    """A side table of the run (None when the run has none), with at least ``columns``; ``text``: every
    cell as a string, none read as missing (a vocabulary entry may be spelled ``nan``); ``keep``: text
    columns whose empty cells stay empty strings."""
    if not path.is_file():
        return None
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False) if text else pd.read_csv(path)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise BenchmarkError(f"{path}: not a table tokbench wrote ({exc})", code="bad_data_file", value=path) from None
    missing = [column for column in columns or [] if column not in frame.columns]
    if missing:
        raise BenchmarkError(f"{path}: not a table tokbench wrote (no column {', '.join(missing)})",
                             code="missing_column", value=missing[0])  # fmt: skip
    for column in keep:
        frame[column] = frame[column].astype(object).where(frame[column].notna(), "").astype(str)
    return frame


def overlap_pairs(results: pd.DataFrame) -> pd.DataFrame | None:
    """The ``vocab_overlap`` rows as the heatmap reads them: ``corpus``, ``language``, ``tokenizer_a`` (the
    row), ``tokenizer_b`` (its partner), ``jaccard``, ``shared`` and ``union`` entries (``n`` is the union);
    None when the run has no such rows."""
    rows = results[results["metric"] == "vocab_overlap"]
    if rows.empty:
        return None
    union = rows["n"].astype("int64")
    return pd.DataFrame({"corpus": rows["corpus"], "language": rows["language"], "tokenizer_a": rows["tokenizer"],
                         "tokenizer_b": rows["partner"], "jaccard": rows["value"],
                         "shared": (rows["value"].fillna(0) * union).round().astype("int64"), "union": union}
                        ).reset_index(drop=True)  # fmt: skip


def at_most_training_text(results: pd.DataFrame) -> pd.DataFrame:
    """On a run with a ``train_chars`` axis, the rows of its largest value and the pretrained rows: the
    report's tables show the tokenizers trained on the most text (the "Training data" section shows the
    axis).  Other runs' results as they are."""
    values = results[TRAIN_CHARS]
    if values.isna().all():
        return results
    return results[values.isna() | (values == values.max())].reset_index(drop=True)


def _unit(row: Any) -> tuple[str, str, int | None]:
    return row.corpus, row.tokenizer, None if pd.isna(row.vocab_size) else int(row.vocab_size)


def with_unit_facts(results: pd.DataFrame) -> pd.DataFrame:
    """``results`` with two columns about the unit of each row (corpus, tokenizer, requested size):
    ``reached``, its ``vocab_size_reached`` (NaN for published rows and when not computed), and
    ``unk_share``, its ``unk_token_rate`` on the row's evaluation set (on a row of another set, such as a
    reference or the tokenizer itself: the largest over its evaluation sets; NaN when not computed)."""
    reached: dict[tuple[str, str, int | None], float] = {}
    unk: dict[tuple[str, str, int | None, str], float] = {}
    for row in results[results["metric"].isin(["vocab_size_reached", "unk_token_rate"])].itertuples():
        if row.metric == "vocab_size_reached":
            reached[_unit(row)] = row.value
        else:
            unk[(*_unit(row), row.eval_set)] = row.value
    worst: dict[tuple[str, str, int | None], float] = {}
    for (*unit, _), value in unk.items():
        key = tuple(unit)
        worst[key] = max(worst.get(key, value), value)  # type: ignore[index]
    rows = list(results.itertuples())
    return results.assign(
        reached=[reached.get(_unit(row), math.nan) for row in rows],
        unk_share=[unk.get((*_unit(row), row.eval_set), worst.get(_unit(row), math.nan)) for row in rows],
    )


def run_tokenizers(run: Run) -> RunTokenizers:
    """Trained rows from ``RUN_DIR/tokenizers/`` at the size closest to the report size (equal
    distance: the smaller), labelled with that size when it is another; pretrained rows from the
    manifest (``PretrainedRow.from_json``)."""
    found = RunTokenizers({}, {}, [])
    for label, entry in sorted(run.manifest.get("pretrained", {}).items()):
        try:
            found.pretrained[label] = PretrainedRow.from_json(label, entry).load()
        except (BenchmarkError, bpe.TokenizerError) as exc:
            found.notes.append(f"{label} is not shown: {exc}")
    trained = run.results[run.results["vocab_size"].notna()].drop_duplicates(["corpus", "tokenizer", "vocab_size"])
    for (corpus, label), rows in trained.groupby(["corpus", "tokenizer"], sort=True):
        size = min((int(s) for s in rows["vocab_size"]), key=lambda s: (abs(s - run.report_vocab_size), s))
        shown = label if size == run.report_vocab_size else f"{label} ({vocab_label(size)})"
        path = trained_tokenizer_path(run.run_dir, corpus, label, size, train_chars_of(rows.iloc[0]))
        try:
            found.trained[corpus, label] = (shown, bpe.load(path))
        except bpe.TokenizerError as exc:
            found.notes.append(f"{label} on {corpus} is not shown: {exc}")
    return found
