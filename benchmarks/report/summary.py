"""The answer first: per language, the best ranked tokenizer on each headline metric of a run.

Headline metrics, one per question a reader asks (the first of each list the run has):
compression (``bytes_per_token``), fertility (``fertility_isolated``, else ``fertility_running``), alignment with
gold morphemes (``boundary_f1`` on a gold reference: the one with the most words), the premium against English
(``parity_vs_eng``, shared tokenizers only, published or multilingual: a ratio between two separately trained
tokenizers is no premium) and
bits per byte of the small language models (``bpb``).  A cell is the best comparable cell of its language at the
report size (``findings.ranked``: never a cell marked ‡ or §), with its interval, and whether the runner-up's
interval overlaps it.  The report's section, ``tokbench run``'s terminal summary and their tests read this one
function.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from benchmarks.measure.evaluate import SIGNIFICANCE_LEVEL
from benchmarks.measure.metrics import METRICS
from benchmarks.measure.registry import Metric
from benchmarks.report import findings
from benchmarks.report.cells import at_report_size
from benchmarks.report.load import Run
from benchmarks.run.parallel import ENGLISH

#: (question, metric candidates in order, evaluation sets in order of preference)
HEADLINES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("compression", ("bytes_per_token",), ("test", "eval")),
    ("fertility", ("fertility_isolated", "fertility_running"), ("test", "eval")),
    ("gold morphemes", ("boundary_f1",), ("reference",)),
    ("parity", ("parity_vs_eng",), ("eval",)),
    ("language model", ("bpb",), ("eval", "test")),
)


@dataclass(frozen=True)
class Best:
    """The best ranked cell of one language on one headline metric."""

    tokenizer: str
    value: float
    ci_low: float
    ci_high: float
    runner_up: str | None  # None: no other ranked tokenizer
    overlaps: bool | None  # the runner-up's interval overlaps (None: an interval is missing)
    reference: str = ""  # the gold reference of boundary F1


@dataclass(frozen=True)
class Headline:
    question: str
    metric: str
    eval_set: str
    best: dict[str, Best]  # by language


def headlines(run: Run) -> list[Headline]:
    """Every headline metric the run has, with its best cell per language."""
    results = run.results
    gold = gold_references(run)
    found = []
    for question, candidates, eval_sets in HEADLINES:
        metric = next((name for name in candidates if name in set(results["metric"])), None)
        if metric is None:
            continue
        rows = results[results["metric"] == metric]
        rows = rows[rows["reference"].isin(gold)] if question == "gold morphemes" else rows[rows["reference"] == ""]
        if question == "parity":
            rows = rows[run.shared(rows) & (rows["language"] != ENGLISH)]
        eval_set = next((name for name in eval_sets if name in set(rows["eval_set"])), None)
        if eval_set is None:
            continue
        rows = rows[rows["eval_set"] == eval_set]
        if question == "gold morphemes":  # per corpus, the gold reference with the most words
            largest = rows.sort_values(["n", "reference"], ascending=[False, True]).drop_duplicates("corpus")
            rows = rows.merge(largest[["corpus", "reference"]], on=["corpus", "reference"])
        best = _best_per_language(at_report_size(rows, run), METRICS[metric])
        if best:
            found.append(Headline(question, metric, eval_set, best))
    return found


def gold_references(run: Run) -> set[str]:
    """The names of the run's gold morpheme references (the manifest's ``kind = "gold"``)."""
    corpora = run.manifest.get("corpora")
    return {name for entry in (corpora.values() if isinstance(corpora, dict) else []) if isinstance(entry, dict)
            for name, facts in (entry.get("references") or {}).items()
            if isinstance(facts, dict) and facts.get("kind") == "gold"}  # fmt: skip


def _best_per_language(cells: pd.DataFrame, info: Metric) -> dict[str, Best]:
    best: dict[str, Best] = {}
    if cells.empty or info.higher_is_better is None:
        return best
    for language, group in cells.groupby("language", sort=True):
        order = findings.ranked(group, info)
        if order.empty:
            continue
        top = order.iloc[0]
        second = order.iloc[1] if len(order) > 1 else None
        best[str(language)] = Best(
            str(top["tokenizer"]), float(top["value"]), float(top["ci_low"]), float(top["ci_high"]),
            None if second is None else str(second["tokenizer"]),
            None if second is None else findings.cis_overlap(top, second), str(top.get("reference", "")))  # fmt: skip
    return best


def cell_text(headline: Headline, best: Best) -> str:
    """``cl100k 4.12 [4.05, 4.19]``, then ``≈ gpt2`` when the runner-up's interval overlaps."""
    info = METRICS[headline.metric]
    text = f"{best.tokenizer} {findings.format_value(info, best.value)}"
    if not (math.isnan(best.ci_low) or math.isnan(best.ci_high)):
        text += f" [{findings.format_value(info, best.ci_low)}, {findings.format_value(info, best.ci_high)}]"
    if best.overlaps:
        text += f" ≈ {best.runner_up}"
    return text


def column_label(headline: Headline) -> str:
    info = METRICS[headline.metric]
    return f"{headline.question}: {info.label} {info.direction_mark}".rstrip()


def summary_rows(run: Run) -> tuple[list[str], list[list[str]], list[Headline]]:
    """The summary as a table: header, one row per language, and the headlines it shows."""
    found = headlines(run)
    languages = sorted({language for headline in found for language in headline.best})
    header = ["language", *(column_label(headline) for headline in found)]
    rows = [[language, *(cell_text(headline, headline.best[language]) if language in headline.best
                         else findings.MISSING for headline in found)] for language in languages]  # fmt: skip
    return header, rows, found


def significance_sentence(run: Run) -> str | None:
    """How many of the paired comparisons (tokens per 1,000 characters; bits per byte) differ after Holm."""
    parts = []
    for frame, what in ((run.paired, "paired comparisons of tokens per 1,000 characters"),
                        (run.models_paired, "paired comparisons of bits per byte")):  # fmt: skip
        if frame is None or frame.empty or "p_value_holm" not in frame.columns:
            continue
        significant = int((frame["p_value_holm"] < SIGNIFICANCE_LEVEL).sum())
        parts.append(f"{significant} of {len(frame)} {what}")
    if not parts:
        return None
    return (f"Significant after Holm–Bonferroni (adjusted p < {SIGNIFICANCE_LEVEL:g}, within each metric and "
            f"evaluation set): {'; '.join(parts)}.")
