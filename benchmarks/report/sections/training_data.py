""""Training data": on a run with a ``train_chars`` axis, how a compression metric moves with the amount
of training text (Goldman et al. 2024, "Unpacking Tokenization"): per language and trained row at the
report vocabulary size (the closest size), one column per ``train_chars`` value, and the same as a plot.
Nothing for a run without the axis."""

from __future__ import annotations

import pandas as pd

from benchmarks.measure.metrics import METRICS
from benchmarks.report.cells import tokenizer_order
from benchmarks.report.document import Block, Figure, Heading, Inline, Paragraph, SimpleTable, Verbatim, text
from benchmarks.report.figures import train_chars_cells
from benchmarks.report.formats import MISSING
from benchmarks.report.sections.context import Context


def training_data(context: Context) -> list[Block]:
    run = context.run
    found = train_chars_cells(run)
    if found is None or context.training is None:
        return []
    metric, cells = found
    info = METRICS[metric]
    amounts = sorted(cells["train_chars"].unique())
    table = cells.pivot(index=["row", "tokenizer"], columns="train_chars", values="value")
    order = {label: position for position, label in enumerate(tokenizer_order(cells))}
    keys = sorted(table.index, key=lambda key: (key[0], order[key[1]]))
    kinds = cells.drop_duplicates("tokenizer").set_index("tokenizer")["kind"]
    languages = cells.drop_duplicates("row").set_index("row")["language"]
    body: list[list[Inline]] = []
    values: list[list[float | None]] = []
    for row, tokenizer in keys:
        numbers = [table.loc[(row, tokenizer), amount] for amount in amounts]
        body.append([row, tokenizer, *(MISSING if pd.isna(v) else info.fmt.format(v) for v in numbers)])
        values.append([None, None, *(None if pd.isna(v) else float(v) for v in numbers)])
    facts = [{"language": str(languages[row]), "family": str(kinds[tokenizer])} for row, tokenizer in keys]
    better = {True: "higher is better", False: "lower is better", None: "descriptive"}[info.higher_is_better]
    intro = (f"{info.label} ({better}) of every trained row at {run.at} (or the closest size it has), each trained "
             "on the first training documents of its corpus up to `train_chars` characters (nested prefixes of one "
             "stream). The other sections show the rows trained on the most text.")  # fmt: skip
    header: list[Inline] = [Verbatim(name) for name in
                            ["language", "tokenizer", *(f"{amount:,} chars" for amount in amounts)]]  # fmt: skip
    figure = context.training
    return [Heading(2, Verbatim("Training data")), Paragraph(text(intro, escape=False)),
            SimpleTable(header, body, "ll" + "r" * len(amounts), values, facts),
            Figure(figure.stem, figure.caption, [], formats=())]  # fmt: skip
