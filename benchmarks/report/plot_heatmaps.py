"""Heatmaps of the report's plots (``benchmarks.report.plots``): a metric's tokenizers x rows, and the
vocabulary overlap of each pair of tokenizers.

An off-scale cell (``off_scale``, ``benchmarks.report.plot_limits``) sets no colour range: one beyond it takes
the colour bar's end colour, the bar pointed at that end.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from benchmarks.measure.registry import Metric
from benchmarks.report.findings import format_value
from benchmarks.report.plot_layout import FONT_SIZE, MAX_WIDTH, _figure
from benchmarks.report.plot_limits import _off_scale


@contextmanager
def _no_trial_draw() -> Iterator[None]:
    """``sns.heatmap`` without its trial draw: seaborn draws the whole figure (constrained layout and all)
    once per heatmap, to rotate tick labels that overlap; every heatmap here sets its labels' rotation
    itself afterwards, so that draw, about a third of a heatmap figure's time, would go unused."""
    trial_draw = getattr(sns.matrix, "_draw_figure", None)
    if trial_draw is None:  # a seaborn without it: nothing to skip
        yield
        return
    sns.matrix._draw_figure = lambda figure: None
    try:
        yield
    finally:
        sns.matrix._draw_figure = trial_draw


def heatmap(cells: pd.DataFrame, info: Metric, tokenizers: list[str], stem: Path) -> Figure:
    """Tokenizers x rows (languages and evaluation sets), annotated with the values as the tables print
    them, with the tables' markers (reached size, not ranked).  The colour range spans the cells that are not
    off scale; an off-scale cell beyond it takes the end colour, and the colour bar is pointed at that end."""
    rows = sorted(cells["row"].unique())
    grid = cells.pivot(index="tokenizer", columns="row", values="value").reindex(index=tokenizers, columns=rows)
    marks = {"unk": "‡", "baseline": "§"}
    labels = pd.DataFrame("", index=tokenizers, columns=rows)
    for cell in cells.itertuples():
        text = format_value(info, cell.value) + marks.get(cell.not_ranked, "")
        if cell.reached_mark:
            text += f"\n†{cell.reached_mark}"
        labels.loc[cell.tokenizer, cell.row] = text
    values = cells["value"].to_numpy(dtype=float)
    off = _off_scale(cells) & np.isfinite(values)
    scaled = values[~off & np.isfinite(values)]
    colour_range: dict[str, Any] = {}
    if scaled.size and off.any():
        low, high = float(scaled.min()), float(scaled.max())
        below, above = bool((values[off] < low).any()), bool((values[off] > high).any())
        extend = {(False, False): "neither", (True, False): "min", (False, True): "max", (True, True): "both"}
        colour_range = {"vmin": low, "vmax": high, "extend": extend[below, above]}
    two_lines = any("\n" in text for text in labels.to_numpy().ravel())
    column_width = min(0.75, (MAX_WIDTH - 2.4) / max(1, len(rows)))
    width = min(MAX_WIDTH, 2.4 + column_width * len(rows))
    height = 0.9 + (0.4 if two_lines else 0.26) * len(tokenizers)
    with _figure(width, height, stem) as figure, _no_trial_draw():
        ax = figure.subplots()
        extend = colour_range.pop("extend", "neither")
        sns.heatmap(grid.astype("float64"), annot=labels.to_numpy(), fmt="", cmap="rocket_r", linewidths=0.5,
                    annot_kws={"fontsize": FONT_SIZE}, cbar_kws={"label": info.label, "extend": extend}, ax=ax,
                    **colour_range)  # fmt: skip
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.tick_params(axis="x", labelrotation=30)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
        ax.tick_params(axis="y", labelrotation=0)
    return figure


def overlap_heatmaps(overlap: pd.DataFrame, tokenizers: list[str], stem: Path) -> Figure:
    """One tokenizer x tokenizer heatmap of the vocabulary overlap (Jaccard) per ``panel`` (language and
    corpus), symmetric, the diagonal 1; ``overlap``: the ``vocab_overlap`` pairs (``report.load.overlap_pairs``)
    with a ``panel`` column;
    ``tokenizers``: the axis order."""
    panels = sorted(overlap["panel"].unique())
    columns = min(2, len(panels))
    lines = math.ceil(len(panels) / columns)
    shown = [t for t in tokenizers if t in set(overlap["tokenizer_a"]) | set(overlap["tokenizer_b"])]
    side = min(MAX_WIDTH / columns, 1.4 + 0.3 * len(shown))
    with _figure(side * columns, side * lines, stem) as figure, _no_trial_draw():
        axes = figure.subplots(lines, columns, squeeze=False)
        for ax in list(axes.flat)[len(panels) :]:
            ax.set_visible(False)
        for index, (ax, panel) in enumerate(zip(axes.flat, panels, strict=False)):
            cells = overlap[overlap["panel"] == panel]
            present = [t for t in shown if t in set(cells["tokenizer_a"]) | set(cells["tokenizer_b"])]
            grid = pd.DataFrame(np.eye(len(present)), index=present, columns=present)
            for row in cells.itertuples():
                grid.loc[row.tokenizer_a, row.tokenizer_b] = grid.loc[row.tokenizer_b, row.tokenizer_a] = row.jaccard
            labels = grid.map(lambda value: f"{value:.2f}".lstrip("0") if value < 1 else "1")
            sns.heatmap(grid.astype("float64"), annot=labels.to_numpy(), fmt="", cmap="rocket_r", vmin=0, vmax=1,
                        linewidths=0.5, annot_kws={"fontsize": FONT_SIZE - 2}, cbar=index == len(panels) - 1,
                        cbar_kws={"label": "vocabulary overlap (Jaccard)"}, square=True, ax=ax)  # fmt: skip
            ax.set_title(panel)
            ax.set_xlabel("")
            ax.set_ylabel("")
            ax.tick_params(axis="x", labelrotation=45)
            for label in ax.get_xticklabels():
                label.set_horizontalalignment("right")
            ax.tick_params(axis="y", labelrotation=0)
    return figure

