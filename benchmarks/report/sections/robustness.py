""""Robustness per language": on a run with robustness rows (``benchmarks.measure.metrics.robustness``, opt-in), one
table per language (per language and evaluation set when it has several): one row per tokenizer at the report
vocabulary size (``at_report_size``), one column per perturbation that applies to the language
(``benchmarks.measure.perturb.perturbations_for``), each cell the token inflation with its confidence interval,
the share of words split differently and the boundary edits per word.  All three are lower-is-better; the best
ranked value of each quantity is in bold, and none is when every ranked row prints the same value
(``cells.mark_best``).  Nothing for a run without robustness rows."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from benchmarks.measure.metrics import METRICS
from benchmarks.measure.perturb import PERTURBATIONS, perturbations_for
from benchmarks.report.cells import at_report_size, mark_best, tokenizer_order
from benchmarks.report.document import Block, Heading, Inline, Notes, Paragraph, SimpleTable, Strong, Verbatim, text
from benchmarks.report.findings import MISSING, format_value
from benchmarks.report.formats import MARKS
from benchmarks.report.load import Run
from benchmarks.report.sections.context import Context
from benchmarks.report.tables import REACHED_MARK, table_notes

#: the quantities of a cell, in print order: the token inflation (with its interval), then the two word metrics
QUANTITIES = ("token_inflation", "changed_word_share", "boundary_edit_distance")


def robustness_section(context: Context) -> list[Block]:
    run = context.run
    names = {f"{quantity}_{p}" for quantity in QUANTITIES for p in PERTURBATIONS} & set(METRICS)
    rows = run.results[run.results["metric"].isin(names) & (run.results["reference"] == "")]
    if rows.empty:
        return []
    order = {name: position for position, name in enumerate(METRICS)}
    # registry order (each quantity's perturbations together), so the notes list constant columns in that order
    cells = at_report_size(rows, run).sort_values("metric", key=lambda metrics: metrics.map(order), kind="stable")
    cells = cells.assign(column=[f"`{metric}`" for metric in cells["metric"]])
    intro = (f"How each tokenizer's output moves when the evaluation text carries realistic noise, per language at "
             f"{run.at} (docs/metrics.md, Robustness). Each cell: the token inflation (tokens on the perturbed text "
             f"per token on the clean text) with its {run.ci_name} in brackets, · the share of words split "
             "differently, · the boundary edits per word (token boundaries added or removed inside a word); the "
             "word metrics are absent where the words do not pair up (`spaces`) or the script writes no spaces. "
             "Lower is better for all three (1, 0 and 0: the noise changes nothing); the best ranked value of each "
             "in bold, none where every ranked row prints the same.")  # fmt: skip
    blocks: list[Block] = [Heading(2, Verbatim("Robustness per language")), Paragraph(text(intro, escape=False))]
    for label in sorted(set(cells["row"])):
        blocks += _language_table(run, cells[cells["row"] == label].reset_index(drop=True), label)
    return blocks


def _language_table(run: Run, cells: pd.DataFrame, label: str) -> list[Block]:
    """One language's table: tokenizers by perturbation; its notes (markers, substituted sizes, constant columns)."""
    cells = cells.assign(best=mark_best(cells, ranked=True))
    language = str(cells["language"].iloc[0])
    present = set(cells["metric"])
    perturbations = [p for p in perturbations_for(language) if f"token_inflation_{p}" in present]
    records = {(record["tokenizer"], record["metric"]): record for record in cells.to_dict("records")}
    header: list[Inline] = [Verbatim("tokenizer"), *(Verbatim(p) for p in perturbations)]
    body: list[list[Inline]] = []
    values: list[list[float | None]] = []
    facts: list[dict[str, str]] = []
    for tokenizer in tokenizer_order(cells):
        first = cells[cells["tokenizer"] == tokenizer].iloc[0]
        reached = f" {REACHED_MARK}{first['reached_mark']}" if first["reached_mark"] else ""
        row: list[Inline] = [f"{tokenizer}{reached}"]
        numbers: list[float | None] = [None]
        for p in perturbations:
            row.append(_cell([records.get((tokenizer, f"{quantity}_{p}")) for quantity in QUANTITIES]))
            inflation = records.get((tokenizer, f"token_inflation_{p}"))
            numbers.append(None if inflation is None or math.isnan(inflation["value"]) else float(inflation["value"]))
        body.append(row)
        values.append(numbers)
        facts.append({"language": language, "family": str(first["kind"])})
    blocks: list[Block] = [Heading(3, Verbatim(label)),
                           SimpleTable(header, body, "l" + "r" * len(perturbations), values, facts)]  # fmt: skip
    notes = table_notes(run, cells)
    if notes:
        blocks.append(Notes([text(note) for note in notes]))
    return blocks


def _cell(records: list[dict[str, Any] | None]) -> Inline:
    """The printed quantities of one cell, `` · `` between them: the token inflation with its marker and interval,
    then each word metric the cell has; ``MISSING`` when it has no token inflation."""
    inflation = records[0]
    if inflation is None or math.isnan(inflation["value"]):
        return MISSING
    parts: list[Inline] = [_value(inflation), Verbatim(MARKS.get(inflation["not_ranked"], ""))]
    info = METRICS[inflation["metric"]]
    if not (math.isnan(inflation["ci_low"]) or math.isnan(inflation["ci_high"])):
        parts.append(Verbatim(f" [{format_value(info, inflation['ci_low'])}, "
                              f"{format_value(info, inflation['ci_high'])}]"))  # fmt: skip
    for record in records[1:]:
        if record is not None:
            parts += [Verbatim(" · "), _value(record)]
    return tuple(parts)


def _value(record: dict[str, Any]) -> Inline:
    printed = Verbatim(format_value(METRICS[record["metric"]], record["value"]))
    return Strong(printed) if record["best"] else printed
