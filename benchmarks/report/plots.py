"""Seaborn plots of a run, sized for a paper: metric against vocabulary size, heatmaps, precision-recall
panels, parity bars.  Every plot the report draws is importable from here; this module draws the curves and
the bars, the other modules of the plots one job each:

* ``plot_layout``: the figure (at most ``MAX_WIDTH``, 8 pt, saved as PNG, PDF and SVG without a date or
  software stamp, so identical inputs give byte-identical files), its small-multiple grid, the legend under
  the panels;
* ``plot_styles``: each tokenizer's colour and marker (``tokenizer_palette``), the same in every plot of every
  run;
* ``plot_limits``: axis limits from the cells that are not off scale, the marks of those beyond them;
* ``plot_heatmaps``: a metric's heatmap, the vocabulary-overlap heatmaps;
* ``plot_scatters``: precision against recall, Pareto panels, a metric against bits per byte.

Wide comparisons are small multiples (one panel per language, evaluation set or reference), never one long
row of bars.  Each drawing function returns its ``Figure`` (already saved).  Categories are sorted (rows by
label, tokenizers in table order).

Inputs are tidy cells as built by ``benchmarks.report`` (columns ``row``, ``tokenizer``, ``vocab_size``,
``value``, ``ci_low``, ``ci_high``; ``reached``, the vocabulary size reached; ``not_ranked``, why a cell is
not ranked; ``off_scale``, optional, True for a cell that must not set an axis or colour range).  Confidence
intervals are drawn from ``ci_low``/``ci_high`` as given; seaborn never re-estimates them.  A point whose
tokenizer stopped below its requested vocabulary is drawn at the size it reached, hollow; a cell that is not
ranked is hatched (bars) or hollow (points).  Off-scale cells (the report marks degenerate rows and
baselines so, ``benchmarks.report.figures``) are drawn, but the axis limits (with a ``MARGIN``) and a
heatmap's colour range come from the other cells only; one beyond the limits is drawn on the border with an
arrow and its value (a heatmap: the colour bar's end colour, the bar pointed at that end).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import NullFormatter, NullLocator

from benchmarks.measure.registry import Metric
from benchmarks.report.findings import format_value, vocab_label
from benchmarks.report.plot_heatmaps import heatmap, overlap_heatmaps
from benchmarks.report.plot_layout import (
    FONT_SIZE,
    FORMATS,
    MAX_COLUMNS,
    MAX_WIDTH,
    _bar_handle,
    _bottom_legend,
    _figure,
    _grid,
    _legend_height,
    _outer_labels,
    _point_handle,
    axis_label,
)
from benchmarks.report.plot_limits import _clip, _edge_text, _limits, _off_scale, _side, _value_range
from benchmarks.report.plot_scatters import metric_scatter, pareto_front, pareto_panels, precision_recall
from benchmarks.report.plot_styles import HOLLOW, MARKERS, PRODUCTION_COLOURS, TRAINED_COLOURS, Style, tokenizer_palette

#: re-exported: the report (``figures``, ``document``) and its tests call every plot through this module
__all__ = ["FORMATS", "MARKERS", "MAX_WIDTH", "PRODUCTION_COLOURS", "TRAINED_COLOURS", "Style", "heatmap",
           "metric_scatter", "overlap_heatmaps", "pareto_front", "pareto_panels", "parity_bars", "precision_recall",
           "premium_curves", "tokenizer_palette", "vocab_curves"]  # fmt: skip


def vocab_curves(frame: pd.DataFrame, info: Metric, palette: dict[str, Style], stem: Path,
                 baselines: set[str] = frozenset(), x: str = "vocab_size",
                 x_label: str = "vocabulary size reached") -> Figure:  # type: ignore[assignment]  # fmt: skip
    """One panel per row (language and evaluation set): the metric against the vocabulary size REACHED
    (log x; ticks at the requested sizes), a line with the tokenizer's markers per trained tokenizer with its
    CI band, points hollow where the tokenizer stopped below the size requested; flat lines for tokenizers
    without a vocabulary size (published rows: dashed; ``baselines``, whose vocabulary is their alphabet:
    dotted), each with its marker near the right end.  The panels share the y axis, limited to the cells that
    are not off scale.  Another column ``x`` (e.g. ``train_chars``, named ``x_label``) replaces the
    vocabulary size on the x axis."""
    rows = sorted(frame["row"].unique())
    frame = frame.assign(off_scale=_off_scale(frame))
    if x == "vocab_size":
        sized = frame[frame["vocab_size"].notna() & ~frame["tokenizer"].isin(baselines)].copy()
        sized["x"] = sized["reached"].where(sized["reached"].notna(), sized["vocab_size"]).astype("float64")
        sized["short"] = sized["x"] < sized["vocab_size"].astype("float64")
        # several requested sizes can reach one size (training stopped): one point, the smallest request
        sized = sized.sort_values(["tokenizer", "row", "x", "vocab_size"], kind="stable")
        sized = sized.drop_duplicates(["tokenizer", "row", "x"])
        flat = frame[frame["vocab_size"].isna() | frame["tokenizer"].isin(baselines)]
    else:
        sized = frame.assign(x=frame[x].astype("float64"), short=False).sort_values(["tokenizer", "row", "x"])
        flat = frame.iloc[:0]
    requested = sorted(int(size) for size in sized[x].unique())
    columns = min(MAX_COLUMNS, len(rows))
    trained = [t for t in palette if t in set(sized["tokenizer"])]
    lines = [t for t in palette if t in set(flat["tokenizer"])]
    handles = [_point_handle(palette[t], "-") for t in trained]
    labels = list(trained)
    handles += [_point_handle(palette[t], ":" if t in baselines else "--") for t in lines]
    labels += [f"{t} ({'alphabet' if t in baselines else 'own vocabulary'})" for t in lines]
    handles.append(Line2D([], [], color="grey", marker="o", markerfacecolor=HOLLOW, linestyle=""))
    labels.append("stopped below the size requested")
    # one y axis for every panel, from the cells that are not off scale (CI bands included)
    scaled, scaled_flat = sized[~sized["off_scale"]], flat[~flat["off_scale"]]
    limits = _limits([scaled["value"], scaled["ci_low"], scaled["ci_high"], scaled_flat["value"]])
    fmt = _printed(info)
    middle = math.sqrt(sized["x"].min() * sized["x"].max()) if not sized.empty else 0.0  # log axis
    width = min(MAX_WIDTH, 1.75 * columns)
    with _figure(width, 1.75 * math.ceil(len(rows) / columns) + _legend_height(labels, width), stem) as figure:
        axes, _ = _grid(figure, len(rows), sharex=True, sharey=True)
        for ax, row in zip(axes.flat, rows, strict=False):
            stacked: Counter[str] = Counter()  # marks on each side of this panel so far
            data = sized[sized["row"] == row]
            for tokenizer, points in data.groupby("tokenizer", sort=True):
                style = palette[tokenizer]
                xs, values = points["x"].to_numpy(dtype=float), points["value"].to_numpy(dtype=float)
                ax.fill_between(xs, points["ci_low"], points["ci_high"], color=style.colour, alpha=0.2, linewidth=0)
                ax.plot(xs, _clip(values, limits), color=style.colour, linewidth=1)
                ax.scatter(xs, _clip(values, limits), s=14, zorder=3, linewidths=1, marker=style.marker,
                           edgecolors=[style.colour], clip_on=limits is None,
                           facecolors=[HOLLOW if short else style.colour for short in points["short"]])  # fmt: skip
                for side in ("top", "bottom"):
                    beyond = np.array([_side(value, limits, "bottom", "top") == side for value in values], dtype=bool)
                    if beyond.any() and limits is not None:
                        edge = limits[1] if side == "top" else limits[0]
                        at = xs[beyond][-1]
                        _edge_text(ax, at, edge, side, _value_range(values[beyond], fmt), stacked[side],
                                   toward="left" if at >= middle else "right")  # fmt: skip
                        stacked[side] += 1
            for position, cell in enumerate(flat[flat["row"] == row].sort_values("tokenizer").itertuples()):
                style = palette[cell.tokenizer]
                along = ax.get_yaxis_transform()  # x in axes fractions, y in data
                mark_at = 0.97 - 0.07 * position  # each flat line's marker apart from the others'
                side = _side(cell.value, limits, "bottom", "top")
                if side is None:
                    ax.axhline(cell.value, color=style.colour, linestyle=":" if cell.tokenizer in baselines else "--",
                               linewidth=1)  # fmt: skip
                    ax.plot([mark_at], [cell.value], transform=along, **_marker_options(style))
                else:
                    edge = limits[1] if side == "top" else limits[0]  # type: ignore[index]
                    ax.plot([mark_at], [edge], transform=along, clip_on=False, **_marker_options(style))
                    _edge_text(ax, mark_at, edge, side, fmt(cell.value), stacked[side], transform=along)
                    stacked[side] += 1
            if limits is not None:
                ax.set_ylim(limits)
            ax.set_xscale("log")
            if requested:
                ax.set_xticks(requested, [vocab_label(size) for size in requested])
            ax.xaxis.set_minor_locator(NullLocator())
            ax.tick_params(axis="x", labelrotation=45 if len(requested) > 4 else 0)
            ax.set_title(row)
        _outer_labels(axes, len(rows), x_label, info.label)
        _bottom_legend(figure, handles, labels)
    return figure


def _printed(info: Metric) -> Callable[[float], str]:
    """A value of metric ``info`` as the tables print it."""
    return lambda value: format_value(info, value)


def _marker_options(style: Style) -> dict[str, Any]:
    return {"marker": style.marker, "markersize": 4, "color": style.colour, "linestyle": "", "zorder": 3}


def parity_bars(cells: pd.DataFrame, info: Metric, palette: dict[str, Style], stem: Path) -> Figure:
    """Two panels: the premium of each shared (published) tokenizer per language, and the ratio of the
    separately trained monolingual tokenizers; CI as error bars, 1 (parity) as a grey line; bars of cells
    that are not ranked are hatched; each bar has its tokenizer's marker at its foot.  A panel's y axis
    starts at 0 and ends above its highest cell that is not off scale (and 1)."""
    shared = cells["shared"] if "shared" in cells else cells["vocab_size"].isna()
    panels = [("shared tokenizer (premium)", cells[shared]), ("monolingual tokenizers (ratio)", cells[~shared])]
    panels = [(title, data) for title, data in panels if not data.empty]
    shown = [t for t in palette if t in set(cells["tokenizer"])]
    handles: list[Any] = [_bar_handle(palette[t]) for t in shown]
    handles.append(Patch(facecolor=HOLLOW, edgecolor="grey", hatch="///"))
    labels = [*shown, "not ranked (see tables)"]
    with _figure(MAX_WIDTH, 2.6 + _legend_height(labels, MAX_WIDTH), stem) as figure:
        # a panel is as wide as its bars need, and its row labels
        axes = figure.subplots(1, len(panels), squeeze=False,
                               width_ratios=[max(data["tokenizer"].nunique(), 1.4 * data["row"].nunique())
                                             for _, data in panels])  # fmt: skip
        for ax, (title, data) in zip(axes.flat, panels, strict=True):
            _grouped_bars(ax, data, palette, _printed(info))
            ax.axhline(1.0, color="grey", linestyle="--", linewidth=1)
            ax.set_title(title)
            ax.set_ylabel(axis_label(info.label))
        _bottom_legend(figure, handles, labels)
    return figure


#: inches per language on the language axis of ``premium_curves``
LANGUAGE_PITCH = 0.11
#: the premiums ``premium_curves`` labels on its log axis (those within the data's range)
PREMIUM_TICKS = (0.5, 0.7, 1, 1.5, 2, 3, 5, 7, 10, 15, 20, 30)


def premium_curves(cells: pd.DataFrame, info: Metric, palette: dict[str, Style], stem: Path) -> Figure:
    """Petrov et al. 2023's view of the premium across many languages: one row per language, sorted by the
    median premium over the tokenizers (highest at the top), the premium on a log axis, one line with its
    own marker per tokenizer; a cell that is not ranked is drawn hollow.  The figure grows with the languages
    (``LANGUAGE_PITCH`` each), so 200 languages stay readable in the PDF and SVG.  The x axis covers the
    cells that are not off scale (and 1)."""
    order = cells.groupby("row")["value"].median().sort_values(kind="stable")
    rows = list(order.index)  # lowest first: matplotlib draws y = 0 at the bottom
    tokenizers = [t for t in palette if t in set(cells["tokenizer"])]
    handles = [_point_handle(palette[t], "-", linewidth=0.6) for t in tokenizers]
    off = _off_scale(cells)
    values_of = cells["value"].to_numpy(dtype=float)
    limits = _limits([values_of[~off], [1.0]], log=True) or _limits([values_of, [1.0]], log=True)
    fmt = _printed(info)
    height = 1.0 + LANGUAGE_PITCH * len(rows) + _legend_height(tokenizers, MAX_WIDTH)
    with _figure(MAX_WIDTH, height, stem) as figure:
        ax = figure.subplots()
        y = np.arange(len(rows), dtype=float)
        stacked: Counter[tuple[float, str]] = Counter()  # marks at each (row, side) so far
        for tokenizer in tokenizers:
            style = palette[tokenizer]
            data = cells[cells["tokenizer"] == tokenizer].set_index("row").reindex(rows)
            values = data["value"].to_numpy(dtype=float)
            shown = _clip(values, limits)
            hollow = (data["not_ranked"].fillna("") != "").to_numpy()
            ax.plot(shown, y, color=style.colour, linewidth=0.6, alpha=0.7)
            for keep, face in ((~hollow, style.colour), (hollow, HOLLOW)):
                if keep.any():
                    ax.scatter(shown[keep], y[keep], facecolor=face, edgecolor=style.colour, marker=style.marker,
                               s=9, zorder=3, linewidth=0.6, clip_on=False)  # fmt: skip
            for index in np.flatnonzero(shown != values):
                if math.isfinite(values[index]):
                    side = "left" if values[index] < shown[index] else "right"
                    _edge_text(ax, shown[index], y[index], side, fmt(values[index]), stacked[y[index], side])
                    stacked[y[index], side] += 1
        ax.axvline(1.0, color="grey", linestyle="--", linewidth=1)
        ax.set_xscale("log")
        if limits is not None:
            ax.set_xlim(limits)
            ticks = [tick for tick in PREMIUM_TICKS if limits[0] <= tick <= limits[1]]
            ax.set_xticks(ticks, [f"{tick:g}" for tick in ticks])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_yticks(y, rows, fontsize=5 if len(rows) > 40 else FONT_SIZE)
        ax.set_ylim(-0.8, len(rows) - 0.2)
        ax.set_xlabel(f"{info.label} (log scale; 1 = as long as English)")
        ax.tick_params(axis="x", top=True, labeltop=True)  # a tall plot reads its scale at the top too
        _bottom_legend(figure, handles, tokenizers)
    return figure


def _grouped_bars(ax: Any, cells: pd.DataFrame, palette: dict[str, Style], fmt: Callable[[float], str]) -> None:
    """Bars per row and tokenizer, its marker at each bar's foot (colours alone may repeat); the y axis from 0
    to above the highest cell that is not off scale (and 1), taller bars cut there with their value."""
    rows = sorted(cells["row"].unique())
    tokenizers = [t for t in palette if t in set(cells["tokenizer"])]
    off = _off_scale(cells)
    scaled = cells[~off]
    limits = _limits([[0.0, 1.0], scaled["value"], scaled["ci_high"]]) if not scaled.empty else None
    top = limits[1] if limits is not None else None
    bar_width = 0.8 / len(tokenizers)
    centres = np.arange(len(rows), dtype=float)
    stacked: Counter[str] = Counter()
    for index, tokenizer in enumerate(tokenizers):
        style = palette[tokenizer]
        data = cells[cells["tokenizer"] == tokenizer].set_index("row").reindex(rows)
        x = centres + (index - (len(tokenizers) - 1) / 2) * bar_width
        values = data["value"].to_numpy(dtype=float)
        hatched = (data["not_ranked"].fillna("") != "").to_numpy()
        ax.bar(x, values, bar_width, color=style.colour, hatch=["///" if h else "" for h in hatched],
               edgecolor="white", linewidth=0.3)  # fmt: skip
        drawn = np.isfinite(values)
        ax.scatter(x[drawn], np.full(drawn.sum(), 0.035), transform=ax.get_xaxis_transform(), marker=style.marker,
                   s=6, facecolor=HOLLOW, edgecolor="black", linewidth=0.3, zorder=4)  # fmt: skip
        low, high = data["ci_low"].to_numpy(dtype=float), data["ci_high"].to_numpy(dtype=float)
        ok = np.isfinite(values) & np.isfinite(low) & np.isfinite(high)
        if ok.any():
            # an interval need not contain the point estimate (e.g. BCa); clip so bars stay drawable
            errors = np.clip([values[ok] - low[ok], high[ok] - values[ok]], 0, None)
            ax.errorbar(x[ok], values[ok], yerr=errors, fmt="none", ecolor="black", elinewidth=0.6, capsize=1.5)
        if top is not None:
            for position in np.flatnonzero(drawn & (values > top)):
                _edge_text(ax, x[position], top, "top", fmt(values[position]), stacked["top"] % 2, rotation=90)
                stacked["top"] += 1
    if top is not None:
        ax.set_ylim(0, top)
    long = max(len(row) for row in rows) > 10  # e.g. "tur_Latn (ud-tur)": slanted, so neighbours do not overlap
    ax.set_xticks(centres, rows, rotation=25 if long else 0, ha="right" if long else "center")

