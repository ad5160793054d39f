"""A report ``Table`` printed: Markdown (report.md), LaTeX booktabs (tables/<slug>.tex) and CSV (its
cells in long form, full precision).  The layout of each format is ``benchmarks.render``'s."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from benchmarks import render
from benchmarks.measure.metrics import METRICS
from benchmarks.render import latex_escape, md_escape
from benchmarks.report import findings
from benchmarks.report.tables import BASELINE_MARK, INCLUDES_ZERO_MARK, REACHED_MARK, UNK_MARK, Table

MISSING = findings.MISSING  # an empty cell (this tokenizer has no row for this language)
#: not_ranked reason -> the marker after the value
MARKS = {"unk": UNK_MARK, "baseline": BASELINE_MARK, "interval_includes_zero": INCLUDES_ZERO_MARK}


def cell_texts(cell: Mapping[str, Any] | None, bold: Callable[[str], str], escape: Callable[[str], str]) -> list[str]:
    """A cell as printed, in three parts: the value with its markers (bold when best), the confidence
    interval, the reached vocabulary size; escaped for the target format by ``escape``.  ``MISSING`` when
    there is no cell; empty parts when the cell has no interval or reached the size requested."""
    if cell is None or math.isnan(cell["value"]):
        return [escape(MISSING), "", ""]
    # a cell that is not a metric's value (a correlation of the validity tables) carries its own format
    own = cell.get("fmt")

    def shown(number: float) -> str:
        return own.format(number) if isinstance(own, str) else findings.format_value(METRICS[cell["metric"]], number)

    value = escape(shown(cell["value"]))
    value = bold(value) if cell["best"] else value
    value += escape(MARKS.get(cell["not_ranked"], ""))
    reached = escape(f"{REACHED_MARK}{cell['reached_mark']}") if cell["reached_mark"] else ""
    if math.isnan(cell["ci_low"]) or math.isnan(cell["ci_high"]):
        return [value, "", reached]
    return [value, escape(f"[{shown(cell['ci_low'])}, {shown(cell['ci_high'])}]"), reached]


def markdown_table(table: Table) -> str:
    header = [md_escape(h) for h in [table.corner, *table.column_labels]]
    rows = []
    for tokenizer in table.tokenizers:
        cells = [cell_texts(table.cell(tokenizer, c), lambda v: f"**{v}**", md_escape) for c in table.columns]
        rows.append([md_escape(tokenizer), *(" ".join(part for part in parts if part) for parts in cells)])
    return render.markdown(header, rows, "l" + "r" * len(table.columns))


def latex_text(text: str) -> str:
    """Plain text with `names` in backticks as LaTeX: names in typewriter type, breakable after _ and -."""
    out = []
    for index, part in enumerate(text.split("`")):
        escaped = latex_escape(part)
        if index % 2:
            escaped = r"\texttt{" + escaped.replace(r"\_", r"\_\allowbreak{}").replace("-", r"-\allowbreak{}") + "}"
        out.append(escaped)
    return "".join(out)


def latex_table(table: Table) -> str:
    header = [latex_escape(h) for h in [table.corner, *table.column_labels]]
    rows, sublines = [], []
    for tokenizer in table.tokenizers:
        cells = [cell_texts(table.cell(tokenizer, c), lambda v: rf"\textbf{{{v}}}", latex_escape)
                 for c in table.columns]  # fmt: skip
        rows.append([latex_escape(tokenizer), *(f"{value} {reached}".strip() for value, _, reached in cells)])
        sublines.append(["", *(ci for _, ci, _ in cells)])
    body = render.latex(header, rows, "l" + "r" * len(table.columns), latex_text(table.caption), f"tab:{table.slug}",
                        sublines=sublines, rules_before=table.rules_before,
                        notes=[latex_text(note) for note in table.notes])  # fmt: skip
    return f"% tokbench table {table.slug}: needs \\usepackage{{booktabs,graphicx}}\n{render.FIT_MACRO}\n{body}\n"


def csv_table(table: Table) -> str:
    """The table's cells in long form, with full precision, the sizes each cell used and why it is not ranked."""
    columns = ["tokenizer", "column", "language", "corpus", "eval_set", "reference", "metric", "row_type",
               "vocab_size", "reached", "value", "ci_low", "ci_high", "n", "unk_share", "not_ranked",
               "best"]  # fmt: skip
    order = {t: i for i, t in enumerate(table.tokenizers)}
    column_order = {c: i for i, c in enumerate(table.columns)}
    cells = table.cells[columns]
    cells = cells.assign(order=cells["tokenizer"].map(order), column_order=cells["column"].map(column_order))
    cells = cells.sort_values(["order", "column_order"], kind="stable")[columns]
    return cells.to_csv(index=False, lineterminator="\n")


def code_span(text: str) -> str:
    """``text`` as inline code inside a Markdown table cell (a pipe escaped, backticks fenced)."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded.replace('|', chr(92) + '|')}{fence}"

