"""Seaborn plots of a run: metric against vocabulary size, grouped bars, heatmaps.

Deterministic by construction: figures are drawn on matplotlib's Agg canvas
(no display, no global pyplot state), with a fixed style, font, figure size
per panel and dpi; categories are sorted (rows by label, tokenizers in table
column order); and the PNG carries no metadata (matplotlib would otherwise
stamp its version), so identical inputs give byte-identical files.

Inputs are tidy cells as built by ``benchmarks.report`` (columns ``row``,
``tokenizer``, ``vocab_size``, ``value``, ``ci_low``, ``ci_high``).  Confidence
intervals are drawn from ``ci_low``/``ci_high`` as given; seaborn never
re-estimates them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import NullLocator

from benchmarks.findings import format_value, vocab_label
from benchmarks.registry import Metric

DPI = 100
PANEL_SIZE = (3.4, 2.6)  # inches per small-multiple panel
LEGEND_WIDTH = 1.8  # inches reserved for the legend on the right
MAX_COLUMNS = 4
PNG_METADATA = {"Software": None}
STYLE = {"font.family": "DejaVu Sans", "font.size": 8, "axes.titlesize": 9, "axes.labelsize": 8,
         "legend.fontsize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7}  # fmt: skip


def tokenizer_palette(tokenizers: list[str]) -> dict[str, Any]:
    """One colour per tokenizer, fixed for every plot of a report (``tokenizers`` in column order)."""
    colours = sns.color_palette("tab10" if len(tokenizers) <= 10 else "husl", len(tokenizers))
    return dict(zip(tokenizers, colours, strict=True))


@contextmanager
def _figure(width: float, height: float, path: Path) -> Iterator[Figure]:
    """A styled Agg figure, saved to ``path`` as PNG without metadata when the block ends."""
    with sns.axes_style("whitegrid"), matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
        FigureCanvasAgg(figure)
        yield figure
        figure.savefig(path, format="png", dpi=DPI, metadata=PNG_METADATA)


def _legend(figure: Figure, palette: dict[str, Any], trained: list[str], production: list[str]) -> None:
    handles = [Line2D([], [], color=palette[t], marker="o", label=t) for t in trained]
    handles += [Line2D([], [], color=palette[t], linestyle="--", label=f"{t} (production)") for t in production]
    figure.legend(handles=handles, loc="outside right upper", title="tokenizer", frameon=False)


def vocab_curves(frame: pd.DataFrame, info: Metric, palette: dict[str, Any], path: Path, x: str = "vocab_size",
                 x_label: str = "vocabulary size") -> None:  # fmt: skip
    """One panel per row (language): the metric against vocabulary size (or the column ``x``, named
    ``x_label``; log x), a line per trained tokenizer with its CI band, a dashed horizontal line per
    production tokenizer."""
    rows = sorted(frame["row"].unique())
    trained = frame[frame[x].notna()].astype({x: "float64"})
    production = frame[frame[x].isna()]
    sizes = sorted(int(size) for size in trained[x].unique())
    columns = min(MAX_COLUMNS, len(rows))
    lines = math.ceil(len(rows) / columns)
    width, height = PANEL_SIZE[0] * columns + LEGEND_WIDTH, PANEL_SIZE[1] * lines
    with _figure(width, height, path) as figure:
        axes = figure.subplots(lines, columns, squeeze=False, sharex=True, sharey=True)
        for ax, row in zip(axes.flat, rows, strict=False):
            data = trained[trained["row"] == row].sort_values(["tokenizer", x], kind="stable")
            if not data.empty:
                sns.lineplot(data=data, x=x, y="value", hue="tokenizer", palette=palette,
                             hue_order=[t for t in palette if t in set(data["tokenizer"])], marker="o",
                             errorbar=None, legend=False, ax=ax)  # fmt: skip
                for tokenizer, band in data.groupby("tokenizer", sort=True):
                    ax.fill_between(band[x], band["ci_low"], band["ci_high"], color=palette[tokenizer],
                                    alpha=0.2, linewidth=0)  # fmt: skip
            for _, cell in production[production["row"] == row].sort_values("tokenizer").iterrows():
                ax.axhline(cell["value"], color=palette[cell["tokenizer"]], linestyle="--", linewidth=1)
            ax.set_xscale("log")
            ax.set_xticks(sizes, [vocab_label(size) for size in sizes])
            ax.xaxis.set_minor_locator(NullLocator())
            ax.set_title(row)
            ax.set_xlabel(x_label)
            ax.set_ylabel(info.label)
        for ax in list(axes.flat)[len(rows) :]:
            ax.set_visible(False)
        present = set(frame["tokenizer"])
        _legend(figure, palette, [t for t in palette if t in set(trained["tokenizer"])],
                [t for t in palette if t in present and t in set(production["tokenizer"])])  # fmt: skip


def bars(
    cells: pd.DataFrame,
    info: Metric,
    palette: dict[str, Any],
    path: Path,
    x_label: str,
    reference_line: float | None = None,
) -> None:
    """Grouped bars: one group per row, one bar per tokenizer, CI as error bars."""
    rows = sorted(cells["row"].unique())
    tokenizers = [t for t in palette if t in set(cells["tokenizer"])]
    bar_width = 0.8 / len(tokenizers)
    width = 1.2 + len(rows) * (0.25 * len(tokenizers) + 0.4) + LEGEND_WIDTH
    with _figure(max(width, 4.5), 3.4, path) as figure:
        ax = figure.subplots()
        centres = np.arange(len(rows), dtype=float)
        for index, tokenizer in enumerate(tokenizers):
            data = cells[cells["tokenizer"] == tokenizer].set_index("row").reindex(rows)
            x = centres + (index - (len(tokenizers) - 1) / 2) * bar_width
            values = data["value"].to_numpy(dtype=float)
            ax.bar(x, values, bar_width, color=palette[tokenizer], label=tokenizer)
            low, high = data["ci_low"].to_numpy(dtype=float), data["ci_high"].to_numpy(dtype=float)
            ok = np.isfinite(values) & np.isfinite(low) & np.isfinite(high)
            if ok.any():
                # an interval need not contain the point estimate (e.g. BCa); clip so bars stay drawable
                errors = np.clip([values[ok] - low[ok], high[ok] - values[ok]], 0, None)
                ax.errorbar(x[ok], values[ok], yerr=errors, fmt="none", ecolor="black", elinewidth=0.8, capsize=2)
        if reference_line is not None:
            ax.axhline(reference_line, color="grey", linestyle="--", linewidth=1)
        ax.set_xticks(centres, rows, rotation=20 if len(rows) > 4 else 0, ha="right" if len(rows) > 4 else "center")
        ax.set_xlabel(x_label)
        ax.set_ylabel(info.label)
        figure.legend(loc="outside right upper", title="tokenizer", frameon=False)


def heatmap(cells: pd.DataFrame, info: Metric, tokenizers: list[str], path: Path) -> None:
    """Rows x tokenizers, annotated with the values as the tables print them."""
    rows = sorted(cells["row"].unique())
    grid = cells.pivot(index="row", columns="tokenizer", values="value").reindex(index=rows, columns=tokenizers)
    labels = grid.map(lambda value: format_value(info, value)).to_numpy()
    width = 1.6 + 0.85 * len(tokenizers) + 1.2
    height = 1.4 + 0.4 * len(rows)
    with _figure(width, height, path) as figure:
        ax = figure.subplots()
        sns.heatmap(grid.astype("float64"), annot=labels, fmt="", cmap="rocket_r", linewidths=0.5,
                    cbar_kws={"label": info.label}, ax=ax)  # fmt: skip
        ax.set_xlabel("tokenizer")
        ax.set_ylabel("")
        ax.tick_params(axis="x", labelrotation=30)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
        ax.tick_params(axis="y", labelrotation=0)
