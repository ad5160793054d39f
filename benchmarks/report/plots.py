"""Seaborn plots of a run, sized for a paper: metric against vocabulary size, heatmaps, precision-recall
panels, parity bars.

Every figure is at most ``MAX_WIDTH`` (7 in, a two-column page's text width) wide, its text set in 8 pt
(DejaVu Sans), and written three times: ``<stem>.png`` (150 dpi, for report.md), ``<stem>.pdf`` (TrueType
fonts embedded: venues reject Type 3) and ``<stem>.svg``.  Wide comparisons are small multiples (one panel
per language, evaluation set or reference), never one long row of bars.

Deterministic by construction: figures are drawn on matplotlib's Agg canvas (no display, no global
pyplot state) with a fixed style, font and size; categories are sorted (rows by label, tokenizers in
table order); and no file carries a date or software stamp (PNG ``Software``, PDF ``CreationDate`` and
``Producer``, SVG ``Date``; SVG ids come from a fixed hash salt), so identical inputs give byte-identical
files.

Inputs are tidy cells as built by ``benchmarks.report`` (columns ``row``, ``tokenizer``, ``vocab_size``,
``value``, ``ci_low``, ``ci_high``; ``reached``, the vocabulary size reached; ``not_ranked``, why a cell is
not ranked).  Confidence intervals are drawn from ``ci_low``/``ci_high`` as given; seaborn never
re-estimates them.  A point whose tokenizer stopped below its requested vocabulary is drawn at the size
it reached, hollow; a cell that is not ranked is hatched (bars) or hollow (points).
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
from matplotlib.patches import Patch
from matplotlib.ticker import NullFormatter, NullLocator

from benchmarks.measure.registry import Metric
from benchmarks.report.findings import format_value, vocab_label

FORMATS = ("png", "pdf", "svg")
DPI = 150
MAX_WIDTH = 7.0  # inches
FONT_SIZE = 8
MAX_COLUMNS = 4  # small-multiple panels per line
LEGEND_ENTRY_WIDTH = 1.75  # inches a legend entry takes at 8 pt, e.g. "not ranked (baseline, <unk>)"
METADATA = {
    "png": {"Software": None},
    "pdf": {"CreationDate": None, "Producer": None, "Creator": None},
    "svg": {"Date": None, "Creator": None},
}
STYLE = {"font.family": "DejaVu Sans", "font.size": FONT_SIZE, "axes.titlesize": FONT_SIZE,
         "axes.labelsize": FONT_SIZE, "legend.fontsize": FONT_SIZE, "legend.title_fontsize": FONT_SIZE,
         "xtick.labelsize": FONT_SIZE, "ytick.labelsize": FONT_SIZE, "pdf.fonttype": 42, "svg.hashsalt": "tokbench",
         "svg.fonttype": "path"}  # fmt: skip
HOLLOW = "white"


def tokenizer_palette(tokenizers: list[str]) -> dict[str, Any]:
    """One colour per tokenizer, fixed for every plot of a report (``tokenizers`` in column order)."""
    colours = sns.color_palette("tab10" if len(tokenizers) <= 10 else "husl", len(tokenizers))
    return dict(zip(tokenizers, colours, strict=True))


@contextmanager
def _figure(width: float, height: float, stem: Path) -> Iterator[Figure]:
    """A styled Agg figure, saved as ``stem``.png/.pdf/.svg without metadata when the block ends."""
    if width > MAX_WIDTH + 1e-9:
        raise ValueError(f"internal error: a {width:.2f} in wide figure does not fit a page ({MAX_WIDTH} in)")
    with sns.axes_style("whitegrid"), matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
        FigureCanvasAgg(figure)
        yield figure
        for kind in FORMATS:
            figure.savefig(stem.with_name(f"{stem.name}.{kind}"), format=kind, dpi=DPI, metadata=METADATA[kind])
            # the first save placed everything (constrained layout, the costliest step of drawing); the
            # other formats keep those positions.  No engine at all (None, not "none", whose placeholder
            # engine still makes savefig draw the whole figure once more before saving it)
            figure.set_layout_engine(None)


def _grid(figure: Figure, panels: int, **options: Any) -> tuple[np.ndarray, int]:
    columns = min(MAX_COLUMNS, panels)
    lines = math.ceil(panels / columns)
    axes = figure.subplots(lines, columns, squeeze=False, **options)
    for ax in list(axes.flat)[panels:]:
        ax.set_visible(False)
    return axes, columns


def _outer_labels(axes: np.ndarray, panels: int, x_label: str, y_label: str) -> None:
    """Axis labels on the left column and on the lowest panel of each column only (the axes are shared)."""
    lines, columns = axes.shape
    for index, ax in enumerate(axes.flat[:panels]):
        line, column = divmod(index, columns)
        lowest = line == lines - 1 or index + columns >= panels
        ax.set_xlabel(x_label if lowest else "")
        ax.set_ylabel(y_label if column == 0 else "")


def _legend_columns(width: float) -> int:
    """Columns of a bottom legend that fit a figure ``width`` inches wide (at most 4)."""
    return max(1, min(4, int(width // LEGEND_ENTRY_WIDTH)))


def _bottom_legend(figure: Figure, handles: list[Any], title: str | None = None) -> None:
    columns = min(_legend_columns(figure.get_figwidth()), len(handles))
    figure.legend(handles=handles, loc="outside lower center", ncols=columns, frameon=False, title=title)


def _legend_rows(count: int, width: float) -> float:
    """Inches a bottom legend of ``count`` entries takes in a figure ``width`` inches wide."""
    return 0.25 + 0.17 * math.ceil(count / _legend_columns(width))


def vocab_curves(frame: pd.DataFrame, info: Metric, palette: dict[str, Any], stem: Path,
                 baselines: set[str] = frozenset(), x: str = "vocab_size",
                 x_label: str = "vocabulary size reached") -> None:  # type: ignore[assignment]  # fmt: skip
    """One panel per row (language and evaluation set): the metric against the vocabulary size REACHED
    (log x; ticks at the requested sizes), a line per trained tokenizer with its CI band, points hollow
    where the tokenizer stopped below the size requested; flat lines for tokenizers without a vocabulary
    size (published rows: dashed; ``baselines``, whose vocabulary is their alphabet: dotted).  Another
    column ``x`` (e.g. ``train_chars``, named ``x_label``) replaces the vocabulary size on the x axis."""
    rows = sorted(frame["row"].unique())
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
    legend = len(trained) + len(lines) + 1
    width = min(MAX_WIDTH, 1.75 * columns)
    with _figure(width, 1.75 * math.ceil(len(rows) / columns) + _legend_rows(legend, width), stem) as figure:
        axes, _ = _grid(figure, len(rows), sharex=True, sharey=True)
        for ax, row in zip(axes.flat, rows, strict=False):
            data = sized[sized["row"] == row]
            for tokenizer, points in data.groupby("tokenizer", sort=True):
                colour = palette[tokenizer]
                ax.fill_between(points["x"], points["ci_low"], points["ci_high"], color=colour, alpha=0.2, linewidth=0)
                ax.plot(points["x"], points["value"], color=colour, linewidth=1)
                ax.scatter(points["x"], points["value"], s=14, zorder=3, linewidths=1, edgecolors=[colour],
                           facecolors=[HOLLOW if short else colour for short in points["short"]])  # fmt: skip
            for _, cell in flat[flat["row"] == row].sort_values("tokenizer").iterrows():
                style = ":" if cell["tokenizer"] in baselines else "--"
                ax.axhline(cell["value"], color=palette[cell["tokenizer"]], linestyle=style, linewidth=1)
            ax.set_xscale("log")
            if requested:
                ax.set_xticks(requested, [vocab_label(size) for size in requested])
            ax.xaxis.set_minor_locator(NullLocator())
            ax.tick_params(axis="x", labelrotation=45 if len(requested) > 4 else 0)
            ax.set_title(row)
        _outer_labels(axes, len(rows), x_label, info.label)
        handles = [Line2D([], [], color=palette[t], marker="o", markersize=4, label=t) for t in trained]
        handles += [Line2D([], [], color=palette[t], linestyle=":" if t in baselines else "--",
                           label=f"{t} ({'alphabet' if t in baselines else 'own vocabulary'})") for t in lines]
        handles.append(Line2D([], [], color="grey", marker="o", markerfacecolor=HOLLOW, linestyle="",
                              label="stopped below the size requested"))  # fmt: skip
        _bottom_legend(figure, handles)


def parity_bars(cells: pd.DataFrame, info: Metric, palette: dict[str, Any], stem: Path) -> None:
    """Two panels: the premium of each shared (published) tokenizer per language, and the ratio of the
    separately trained monolingual tokenizers; CI as error bars, 1 (parity) as a grey line; bars of cells
    that are not ranked are hatched."""
    panels = [("shared tokenizer (premium)", cells[cells["vocab_size"].isna()]),
              ("monolingual tokenizers (ratio)", cells[cells["vocab_size"].notna()])]  # fmt: skip
    panels = [(title, data) for title, data in panels if not data.empty]
    shown = [t for t in palette if t in set(cells["tokenizer"])]
    with _figure(MAX_WIDTH, 2.6 + _legend_rows(len(shown) + 1, MAX_WIDTH), stem) as figure:
        # a panel is as wide as its bars need, and its row labels
        axes = figure.subplots(1, len(panels), squeeze=False,
                               width_ratios=[max(data["tokenizer"].nunique(), 1.4 * data["row"].nunique())
                                             for _, data in panels])  # fmt: skip
        for ax, (title, data) in zip(axes.flat, panels, strict=True):
            _grouped_bars(ax, data, palette)
            ax.axhline(1.0, color="grey", linestyle="--", linewidth=1)
            ax.set_title(title)
            ax.set_ylabel(info.label)
        handles = [Patch(color=palette[t], label=t) for t in shown]
        handles.append(Patch(facecolor=HOLLOW, edgecolor="grey", hatch="///", label="not ranked (see tables)"))
        _bottom_legend(figure, handles)


#: marker shapes cycled over tokenizers, so lines stay apart where colours are close
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")
#: inches per language on the language axis of ``premium_curves``
LANGUAGE_PITCH = 0.11
#: the premiums ``premium_curves`` labels on its log axis (those within the data's range)
PREMIUM_TICKS = (0.5, 0.7, 1, 1.5, 2, 3, 5, 7, 10, 15, 20, 30)


def premium_curves(cells: pd.DataFrame, info: Metric, palette: dict[str, Any], stem: Path) -> None:
    """Petrov et al. 2023's view of the premium across many languages: one row per language, sorted by the
    median premium over the tokenizers (highest at the top), the premium on a log axis, one line with its
    own marker per tokenizer; a cell that is not ranked is drawn hollow.  The figure grows with the languages
    (``LANGUAGE_PITCH`` each), so 200 languages stay readable in the PDF and SVG."""
    order = cells.groupby("row")["value"].median().sort_values(kind="stable")
    rows = list(order.index)  # lowest first: matplotlib draws y = 0 at the bottom
    tokenizers = [t for t in palette if t in set(cells["tokenizer"])]
    height = 1.0 + LANGUAGE_PITCH * len(rows) + _legend_rows(len(tokenizers), MAX_WIDTH)
    with _figure(MAX_WIDTH, height, stem) as figure:
        ax = figure.subplots()
        y = np.arange(len(rows), dtype=float)
        for index, tokenizer in enumerate(tokenizers):
            data = cells[cells["tokenizer"] == tokenizer].set_index("row").reindex(rows)
            values = data["value"].to_numpy(dtype=float)
            hollow = (data["not_ranked"].fillna("") != "").to_numpy()
            marker = MARKERS[index % len(MARKERS)]
            ax.plot(values, y, color=palette[tokenizer], linewidth=0.6, alpha=0.7)
            ax.scatter(values[~hollow], y[~hollow], color=palette[tokenizer], marker=marker, s=9, zorder=3,
                       label=tokenizer)  # fmt: skip
            if hollow.any():
                ax.scatter(values[hollow], y[hollow], facecolor=HOLLOW, edgecolor=palette[tokenizer], marker=marker,
                           s=9, zorder=3, linewidth=0.6)  # fmt: skip
        ax.axvline(1.0, color="grey", linestyle="--", linewidth=1)
        ax.set_xscale("log")
        low, high = np.nanmin(cells["value"]), np.nanmax(cells["value"])
        ticks = [tick for tick in PREMIUM_TICKS if low / 1.5 <= tick <= high * 1.5]
        ax.set_xticks(ticks, [f"{tick:g}" for tick in ticks])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_yticks(y, rows, fontsize=5 if len(rows) > 40 else FONT_SIZE)
        ax.set_ylim(-0.8, len(rows) - 0.2)
        ax.set_xlabel(f"{info.label} (log scale; 1 = as long as English)")
        ax.tick_params(axis="x", top=True, labeltop=True)  # a tall plot reads its scale at the top too
        _bottom_legend(figure, ax.get_legend_handles_labels()[0])


def _grouped_bars(ax: Any, cells: pd.DataFrame, palette: dict[str, Any]) -> None:
    rows = sorted(cells["row"].unique())
    tokenizers = [t for t in palette if t in set(cells["tokenizer"])]
    bar_width = 0.8 / len(tokenizers)
    centres = np.arange(len(rows), dtype=float)
    for index, tokenizer in enumerate(tokenizers):
        data = cells[cells["tokenizer"] == tokenizer].set_index("row").reindex(rows)
        x = centres + (index - (len(tokenizers) - 1) / 2) * bar_width
        values = data["value"].to_numpy(dtype=float)
        hatched = (data["not_ranked"].fillna("") != "").to_numpy()
        ax.bar(x, values, bar_width, color=palette[tokenizer], hatch=["///" if h else "" for h in hatched],
               edgecolor="white", linewidth=0.3)  # fmt: skip
        low, high = data["ci_low"].to_numpy(dtype=float), data["ci_high"].to_numpy(dtype=float)
        ok = np.isfinite(values) & np.isfinite(low) & np.isfinite(high)
        if ok.any():
            # an interval need not contain the point estimate (e.g. BCa); clip so bars stay drawable
            errors = np.clip([values[ok] - low[ok], high[ok] - values[ok]], 0, None)
            ax.errorbar(x[ok], values[ok], yerr=errors, fmt="none", ecolor="black", elinewidth=0.6, capsize=1.5)
    long = max(len(row) for row in rows) > 10  # e.g. "tur_Latn (ud-tur)": slanted, so neighbours do not overlap
    ax.set_xticks(centres, rows, rotation=25 if long else 0, ha="right" if long else "center")


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


def heatmap(cells: pd.DataFrame, info: Metric, tokenizers: list[str], stem: Path) -> None:
    """Tokenizers x rows (languages and evaluation sets), annotated with the values as the tables print
    them, with the tables' markers (reached size, not ranked)."""
    rows = sorted(cells["row"].unique())
    grid = cells.pivot(index="tokenizer", columns="row", values="value").reindex(index=tokenizers, columns=rows)
    marks = {"unk": "‡", "baseline": "§"}
    labels = pd.DataFrame("", index=tokenizers, columns=rows)
    for cell in cells.itertuples():
        text = format_value(info, cell.value) + marks.get(cell.not_ranked, "")
        if cell.reached_mark:
            text += f"\n†{cell.reached_mark}"
        labels.loc[cell.tokenizer, cell.row] = text
    two_lines = any("\n" in text for text in labels.to_numpy().ravel())
    column_width = min(0.75, (MAX_WIDTH - 2.4) / max(1, len(rows)))
    width = min(MAX_WIDTH, 2.4 + column_width * len(rows))
    height = 0.9 + (0.4 if two_lines else 0.26) * len(tokenizers)
    with _figure(width, height, stem) as figure, _no_trial_draw():
        ax = figure.subplots()
        sns.heatmap(grid.astype("float64"), annot=labels.to_numpy(), fmt="", cmap="rocket_r", linewidths=0.5,
                    annot_kws={"fontsize": FONT_SIZE}, cbar_kws={"label": info.label}, ax=ax)  # fmt: skip
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.tick_params(axis="x", labelrotation=30)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
        ax.tick_params(axis="y", labelrotation=0)


def overlap_heatmaps(overlap: pd.DataFrame, tokenizers: list[str], stem: Path) -> None:
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
        for ax in list(axes.flat)[len(panels):]:
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


F1_CONTOURS = (0.2, 0.4, 0.6, 0.8)


def precision_recall(cells: pd.DataFrame, palette: dict[str, Any], stem: Path) -> None:
    """One panel per ``panel`` (language and morpheme reference): each tokenizer as a point at (recall,
    precision), hollow when not ranked there (a boundary baseline, a degenerate row), with F1 contours.
    A segmenter that splits everywhere sits at recall 1, one that never splits at recall 0: the panel
    shows what a single F1 number hides."""
    wide = cells.pivot_table(index=["panel", "tokenizer"], columns="metric", values="value", aggfunc="first")
    reasons = cells.drop_duplicates(["panel", "tokenizer"]).set_index(["panel", "tokenizer"])["not_ranked"]
    panels = sorted(cells["panel"].unique())
    shown = [t for t in palette if t in set(cells["tokenizer"])]
    lines = math.ceil(len(panels) / 3)
    columns = math.ceil(len(panels) / lines)
    size = MAX_WIDTH / 3
    recall = np.linspace(0.01, 1, 200)
    width = size * columns
    with _figure(width, size * lines + _legend_rows(len(shown) + 1, width), stem) as figure:
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
                hollow = reasons.get((panel, tokenizer), "") != ""
                ax.scatter([r], [p], s=18, zorder=3, linewidths=1, edgecolors=[palette[tokenizer]],
                           facecolors=[HOLLOW if hollow else palette[tokenizer]])  # fmt: skip
            ax.set_xlim(0, 1.02)
            ax.set_ylim(0, 1.02)
            ax.set_title(_wrap(panel, 34))
        _outer_labels(axes, len(panels), "boundary recall", "boundary precision")
        handles = [Line2D([], [], color=palette[t], marker="o", markersize=4, linestyle="", label=t) for t in shown]
        handles.append(Line2D([], [], color="grey", marker="o", markerfacecolor=HOLLOW, linestyle="",
                              label="not ranked (baseline, <unk>)"))  # fmt: skip
        _bottom_legend(figure, handles)


def _wrap(text: str, width: int) -> str:
    lines: list[str] = []
    for word in text.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


#: the markers of a scatter's vocabulary sizes, in size order
SIZE_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def pareto_front(points: pd.DataFrame) -> pd.DataFrame:
    """The points no other point beats on both ``x`` and ``y`` (higher is better on both), by ``x``; ties on
    both keep every one."""
    x, y = points["x"].to_numpy(dtype=float), points["y"].to_numpy(dtype=float)
    beaten = [bool(((x >= a) & (y >= b) & ((x > a) | (y > b))).any()) for a, b in zip(x, y, strict=True)]
    return points[[not flag for flag in beaten]].sort_values("x", kind="stable")


def pareto_panels(points: pd.DataFrame, x_label: str, y_label: str, palette: dict[str, Any], stem: Path) -> None:
    """One panel per ``language``: each tokenizer at (``x``, ``y``) with its CIs as error bars (``x_low`` ...
    ``y_high``), coloured by tokenizer with its own marker; the Pareto front (``pareto_front``) drawn as a
    dashed step line through the points no other beats on both axes."""
    languages = sorted(points["language"].unique())
    shown = [t for t in palette if t in set(points["tokenizer"])]
    markers = {t: MARKERS[index % len(MARKERS)] for index, t in enumerate(shown)}
    size = MAX_WIDTH / max(3, len(languages))
    width = size * len(languages)
    handles = [Line2D([], [], color=palette[t], marker=markers[t], markersize=4, linestyle="", label=t) for t in shown]
    handles.append(Line2D([], [], color="grey", linestyle="--", label="Pareto front"))
    with _figure(width, size + 0.4 + _legend_rows(len(handles), width), stem) as figure:
        axes = figure.subplots(1, len(languages), squeeze=False)
        for ax, language in zip(axes.flat, languages, strict=True):
            panel = points[points["language"] == language]
            for row in panel.itertuples():
                x_error = [[row.x - row.x_low], [row.x_high - row.x]] if math.isfinite(row.x_low) else None
                y_error = [[row.y - row.y_low], [row.y_high - row.y]] if math.isfinite(row.y_low) else None
                ax.errorbar([row.x], [row.y], xerr=x_error, yerr=y_error, color=palette[row.tokenizer],
                            marker=markers[row.tokenizer], markersize=4, linestyle="", elinewidth=0.6)  # fmt: skip
            front = pareto_front(panel)
            ax.step(front["x"], front["y"], where="post", color="grey", linestyle="--", linewidth=0.8, zorder=0)
            ax.set_title(language)
            ax.set_xlabel(x_label)
            ax.set_ylabel(y_label if ax is axes.flat[0] else "")
        _bottom_legend(figure, handles)


def metric_scatter(points: pd.DataFrame, labels: dict[str, str], palette: dict[str, Any], stem: Path) -> None:
    """One panel per (metric, language): each tokenizer row with a language model as a point at (the metric's
    value, bits per byte), both with their CIs as error bars, coloured by tokenizer and shaped by
    vocabulary size (a published tokenizer: its own size).  ``points``: ``metric``, ``language``,
    ``tokenizer``, ``size`` (a label), ``x``, ``x_low``, ``x_high``, ``y``, ``y_low``, ``y_high``;
    ``labels``: each metric's axis label."""
    metrics = list(dict.fromkeys(points["metric"]))
    languages = sorted(points["language"].unique())
    sizes = list(dict.fromkeys(points.sort_values("size_order")["size"]))
    markers = {size: SIZE_MARKERS[index % len(SIZE_MARKERS)] for index, size in enumerate(sizes)}
    shown = [t for t in palette if t in set(points["tokenizer"])]
    size = MAX_WIDTH / max(3, len(languages))
    width = size * len(languages)
    handles = [Line2D([], [], color=palette[t], marker="o", markersize=4, linestyle="", label=t) for t in shown]
    handles += [Line2D([], [], color="grey", marker=markers[s], markersize=4, linestyle="", label=s) for s in sizes]
    with _figure(width, size * len(metrics) + _legend_rows(len(handles), width), stem) as figure:
        axes = figure.subplots(len(metrics), len(languages), squeeze=False, sharey="col")
        for line, metric in enumerate(metrics):
            for column, language in enumerate(languages):
                ax = axes[line, column]
                panel = points[(points["metric"] == metric) & (points["language"] == language)]
                for row in panel.itertuples():
                    x_error = [[row.x - row.x_low], [row.x_high - row.x]] if math.isfinite(row.x_low) else None
                    y_error = [[row.y - row.y_low], [row.y_high - row.y]] if math.isfinite(row.y_low) else None
                    ax.errorbar([row.x], [row.y], xerr=x_error, yerr=y_error, color=palette[row.tokenizer],
                                marker=markers[row.size], markersize=4, linestyle="", elinewidth=0.6)  # fmt: skip
                ax.set_title(language if line == 0 else "")
                ax.set_xlabel(labels[metric])
                ax.set_ylabel("bits per byte" if column == 0 else "")
        _bottom_legend(figure, handles)
