"""Scatter plots of the report's plots (``benchmarks.report.plots``): boundary precision against recall, the
Pareto front of two metrics, and a metric against a language model's bits per byte.

Each point carries its tokenizer's colour and marker (``benchmarks.report.plot_styles``) and its CIs as error
bars, drawn from ``*_low``/``*_high`` as given; an off-scale point is hollow, sets no limit, and sits on the
border with its value where it falls beyond it (``benchmarks.report.plot_limits``).
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

from benchmarks.report.plot_layout import (
    MAX_WIDTH,
    _bottom_legend,
    _figure,
    _legend_height,
    _outer_labels,
    _point_handle,
)
from benchmarks.report.plot_limits import Limits, _clip, _edge_text, _off_scale, _scatter_limits, _short, _side
from benchmarks.report.plot_styles import HOLLOW, Style

F1_CONTOURS = (0.2, 0.4, 0.6, 0.8)


def precision_recall(cells: pd.DataFrame, palette: dict[str, Style], stem: Path) -> Figure:
    """One panel per ``panel`` (language and morpheme reference): each tokenizer as its marker at (recall,
    precision), hollow when not ranked there (a boundary baseline, a degenerate row), with F1 contours; both
    axes always 0 to 1.  A segmenter that splits everywhere sits at recall 1, one that never splits at recall
    0: the panel shows what a single F1 number hides."""
    wide = cells.pivot_table(index=["panel", "tokenizer"], columns="metric", values="value", aggfunc="first")
    reasons = cells.drop_duplicates(["panel", "tokenizer"]).set_index(["panel", "tokenizer"])["not_ranked"]
    panels = sorted(cells["panel"].unique())
    shown = [t for t in palette if t in set(cells["tokenizer"])]
    handles = [_point_handle(palette[t]) for t in shown]
    handles.append(Line2D([], [], color="grey", marker="o", markerfacecolor=HOLLOW, linestyle=""))
    labels = [*shown, "not ranked (baseline, <unk>)"]
    lines = math.ceil(len(panels) / 3)
    columns = math.ceil(len(panels) / lines)
    size = MAX_WIDTH / 3
    recall = np.linspace(0.01, 1, 200)
    width = size * columns
    with _figure(width, size * lines + _legend_height(labels, width), stem) as figure:
        axes = figure.subplots(lines, columns, squeeze=False, sharex=True, sharey=True)
        for ax in list(axes.flat)[len(panels) :]:
            ax.set_visible(False)
        for ax, panel in zip(axes.flat, panels, strict=False):
            for f1 in F1_CONTOURS:
                precision = f1 * recall / (2 * recall - f1)
                keep = (precision > 0) & (precision <= 1) & (2 * recall > f1)
                ax.plot(recall[keep], precision[keep], color="lightgrey", linewidth=0.6, zorder=1)
                ax.text(1.0, f1 / (2 - f1), f"F1 {f1:g}", color="grey", ha="right", va="bottom")
            points = wide.loc[panel]
            for tokenizer in [t for t in palette if t in points.index]:
                r = points.loc[tokenizer].get("boundary_recall", math.nan)
                p = points.loc[tokenizer].get("boundary_precision", math.nan)
                if not (math.isfinite(r) and math.isfinite(p)):
                    continue
                style = palette[tokenizer]
                hollow = reasons.get((panel, tokenizer), "") != ""
                ax.scatter([r], [p], s=18, zorder=3, linewidths=1, marker=style.marker, edgecolors=[style.colour],
                           facecolors=[HOLLOW if hollow else style.colour], clip_on=False)  # fmt: skip
            ax.set_xlim(0, 1.02)
            ax.set_ylim(0, 1.02)
            ax.set_title(_wrap(panel, 34))
        _outer_labels(axes, len(panels), "boundary recall", "boundary precision")
        _bottom_legend(figure, handles, labels)
    return figure


def _wrap(text: str, width: int) -> str:
    lines: list[str] = []
    for word in text.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def pareto_front(points: pd.DataFrame) -> pd.DataFrame:
    """The points no other point beats on both ``x`` and ``y`` (higher is better on both), by ``x``; ties on
    both keep every one."""
    x, y = points["x"].to_numpy(dtype=float), points["y"].to_numpy(dtype=float)
    beaten = [bool(((x >= a) & (y >= b) & ((x > a) | (y > b))).any()) for a, b in zip(x, y, strict=True)]
    return points[[not flag for flag in beaten]].sort_values("x", kind="stable")


def _error(value: float, low: float, high: float) -> list[list[float]] | None:
    """A matplotlib error bar from a CI (None without one); an interval need not contain its point estimate
    (e.g. BCa): clipped so the bar stays drawable."""
    if not (math.isfinite(value) and math.isfinite(low) and math.isfinite(high)):
        return None
    return [[max(0.0, value - low)], [max(0.0, high - value)]]



def _scatter_points(ax: Any, points: pd.DataFrame, palette: dict[str, Style], xlim: Limits, ylim: Limits,
                    marker_size: Callable[[Any], float] = lambda row: 4.0) -> None:  # fmt: skip
    """Each row of ``points`` at (``x``, ``y``) in its tokenizer's style with its CIs as error bars in both
    directions (``x_low`` ... ``y_high``), hollow where off scale; a point beyond ``xlim``/``ylim`` on the
    border, with an arrow and its value(s) instead of error bars.  Sets both limits."""
    off = _off_scale(points)
    stacked: Counter[str] = Counter()
    for row, is_off in zip(points.itertuples(), off, strict=True):
        style = palette[row.tokenizer]
        x, y = float(row.x), float(row.y)
        x_side, y_side = _side(x, xlim, "left", "right"), _side(y, ylim, "bottom", "top")
        options = {"color": style.colour, "marker": style.marker, "markersize": marker_size(row), "linestyle": "",
                   "markerfacecolor": HOLLOW if is_off else style.colour, "zorder": 3}  # fmt: skip
        if x_side is None and y_side is None:
            ax.errorbar([x], [y], xerr=_error(x, row.x_low, row.x_high), yerr=_error(y, row.y_low, row.y_high),
                        elinewidth=0.6, capsize=1.2, **options)  # fmt: skip
            continue
        at = (float(_clip(np.array([x]), xlim)[0]), float(_clip(np.array([y]), ylim)[0]))
        ax.plot([at[0]], [at[1]], clip_on=False, **options)
        side = y_side or x_side
        text = ", ".join(_short(value) for value, beyond in ((x, x_side), (y, y_side)) if beyond)
        middle = (xlim[0] + xlim[1]) / 2 if xlim is not None else at[0]
        _edge_text(ax, at[0], at[1], side, text, stacked[side], toward="left" if at[0] >= middle else "right")
        stacked[side] += 1
    if xlim is not None:
        ax.set_xlim(xlim)
    if ylim is not None:
        ax.set_ylim(ylim)


def pareto_panels(points: pd.DataFrame, x_label: str, y_label: str, palette: dict[str, Style], stem: Path) -> Figure:
    """One panel per ``language``: each tokenizer at (``x``, ``y``) with its CIs as error bars in both
    directions (``x_low`` ... ``y_high``, where finite), in its colour and marker; the Pareto front
    (``pareto_front`` of the points that are not off scale) drawn as a dashed step line through the points no
    other beats on both axes.  Off-scale points (``off_scale``: baselines, degenerate rows) are hollow, set no
    limit, and sit on the border with their value where they fall beyond it."""
    languages = sorted(points["language"].unique())
    shown = [t for t in palette if t in set(points["tokenizer"])]
    size = MAX_WIDTH / max(3, len(languages))
    width = size * len(languages)
    handles = [_point_handle(palette[t]) for t in shown]
    labels = list(shown)
    if _off_scale(points).any():
        handles.append(Line2D([], [], color="grey", marker="o", markerfacecolor=HOLLOW, linestyle=""))
        labels.append("not ranked (baseline, <unk>)")
    handles.append(Line2D([], [], color="grey", linestyle="--"))
    labels.append("Pareto front")
    with _figure(width, size + 0.4 + _legend_height(labels, width), stem) as figure:
        axes = figure.subplots(1, len(languages), squeeze=False)
        for ax, language in zip(axes.flat, languages, strict=True):
            panel = points[points["language"] == language]
            _scatter_points(ax, panel, palette, _scatter_limits(panel, "x"), _scatter_limits(panel, "y"))
            front = pareto_front(panel[~_off_scale(panel)])
            ax.step(front["x"], front["y"], where="post", color="grey", linestyle="--", linewidth=0.8, zorder=0)
            ax.set_title(language)
            ax.set_xlabel(x_label)
            ax.set_ylabel(y_label if ax is axes.flat[0] else "")
        _bottom_legend(figure, handles, labels)
    return figure


#: marker sizes (points) of a scatter's vocabulary sizes, smallest size first; the shape is the tokenizer's
SIZE_POINTS = (3.0, 4.5, 6.0, 7.5)


def metric_scatter(points: pd.DataFrame, labels: dict[str, str], palette: dict[str, Style], stem: Path) -> Figure:
    """One panel per (metric, language): each tokenizer row with a language model as a point at (the metric's
    value, bits per byte), both with their CIs as error bars, in its tokenizer's colour and marker, the
    marker larger for a larger vocabulary (a published tokenizer: its own size, the largest).  ``points``:
    ``metric``, ``language``, ``tokenizer``, ``size`` (a label), ``size_order``, ``x``, ``x_low``,
    ``x_high``, ``y``, ``y_low``, ``y_high``, optionally ``off_scale``; ``labels``: each metric's axis label.
    A language's panels share the y axis; limits come from the points that are not off scale."""
    metrics = list(dict.fromkeys(points["metric"]))
    languages = sorted(points["language"].unique())
    sizes = list(dict.fromkeys(points.sort_values("size_order", kind="stable")["size"]))
    size_points = {size: SIZE_POINTS[min(index, len(SIZE_POINTS) - 1)] for index, size in enumerate(sizes)}
    shown = [t for t in palette if t in set(points["tokenizer"])]
    size = MAX_WIDTH / max(3, len(languages))
    width = size * len(languages)
    handles = [_point_handle(palette[t]) for t in shown]
    handles += [Line2D([], [], color="grey", marker="o", markersize=size_points[s], linestyle="") for s in sizes]
    legend = [*shown, *sizes]
    if _off_scale(points).any():
        handles.append(Line2D([], [], color="grey", marker="o", markerfacecolor=HOLLOW, linestyle=""))
        legend.append("not ranked (baseline, <unk>)")
    with _figure(width, size * len(metrics) + _legend_height(legend, width), stem) as figure:
        axes = figure.subplots(len(metrics), len(languages), squeeze=False, sharey="col")
        for column, language in enumerate(languages):
            ylim = _scatter_limits(points[points["language"] == language], "y")  # shared down the column
            for line, metric in enumerate(metrics):
                ax = axes[line, column]
                panel = points[(points["metric"] == metric) & (points["language"] == language)]
                _scatter_points(ax, panel, palette, _scatter_limits(panel, "x"), ylim,
                                marker_size=lambda row: size_points[row.size])  # fmt: skip
                ax.set_title(language if line == 0 else "")
                ax.set_xlabel(labels[metric])
                ax.set_ylabel("bits per byte" if column == 0 else "")
        _bottom_legend(figure, handles, legend)
    return figure
