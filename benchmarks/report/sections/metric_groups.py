"""One section per metric group with rows in this run: its tables, then its plots with their findings (the cost
group also the wall-clock costs, ``costs.cost_section``); the groups without rows named in one line, each with the
reason the run knows (parity: no parallel set)."""

from __future__ import annotations

from benchmarks.measure.metrics import GROUPS, METRICS
from benchmarks.report.document import (
    Block,
    Emph,
    Figure,
    Heading,
    Inline,
    Paragraph,
    SkippedFigure,
    TableBlock,
    Verbatim,
    text,
)
from benchmarks.report.figures import Plot, Skipped
from benchmarks.report.sections.context import Context
from benchmarks.report.sections.costs import cost_section
from benchmarks.report.tables import Table
from benchmarks.run.parallel import why_no_parity


def metric_groups(context: Context) -> list[Block]:
    tables, figures = context.tables, context.figures
    why_absent = {"parity": why_no_parity(context.run.manifest.get("parallel"))}
    present = [group for group in GROUPS if any(table.group == group for table in tables)
               or any(isinstance(figure, Plot) for figure in figures.get(group, []))]  # fmt: skip
    # a group of opt-in metrics only (the language models of a [downstream] table) is no gap when absent
    absent = [group for group in GROUPS if group not in present
              and any(not metric.optional for metric in METRICS.values() if metric.group == group)]  # fmt: skip
    blocks: list[Block] = [Paragraph(Verbatim("Groups without rows in this run: " + ", ".join(absent) + "."))] \
        if absent else []  # fmt: skip
    reasons = [f"No {group} rows: {why_absent[group]}." for group in absent if why_absent.get(group)]
    if reasons:
        lines: list[Inline] = []
        for index, reason in enumerate(reasons):
            lines += [Verbatim("\n")] if index else []
            lines += [text(reason, escape=False)]
        blocks.append(Paragraph(tuple(lines)))
    for group in present:
        blocks += group_section(group, [table for table in tables if table.group == group], figures.get(group, []))
        if group == "cost":  # the wall-clock costs, which the regression check never compares, under the cost tables
            blocks += cost_section(context)
    return blocks if "cost" in present else [*blocks, *cost_section(context)]


def group_section(group: str, tables: list[Table], figures: list[Plot | Skipped]) -> list[Block]:
    blocks: list[Block] = [Heading(2, Verbatim(GROUPS[group]))]
    if not tables:
        blocks.append(Paragraph(Emph(Verbatim(f"This run has no {group} rows."), "_")))
    for table in tables:
        blocks += [Heading(3, text(table.heading)), TableBlock(table)]
    for figure in figures:
        if isinstance(figure, Skipped):
            blocks.append(SkippedFigure(figure.caption, figure.reason))
        else:
            blocks.append(Figure(figure.stem, figure.caption, figure.sentences))
    return blocks
