"""The canvas the report's plots (``benchmarks.report.plots``) are drawn on: a figure sized for a paper, its
small-multiple grid, and the legend under the panels.

Every figure is at most ``MAX_WIDTH`` (7 in, a two-column page's text width) wide, its text set in 8 pt
(DejaVu Sans), and written three times: ``<stem>.png`` (150 dpi, for report.md), ``<stem>.pdf`` (TrueType
fonts embedded: venues reject Type 3) and ``<stem>.svg``.  A legend sits under the panels, in as many columns
as its longest entry lets fit the figure's width (measured, not guessed), so it is never cut at the figure's
edges.

Deterministic by construction: figures are drawn on matplotlib's Agg canvas (no display, no global pyplot
state) with a fixed style, font and size, and no file carries a date or software stamp (PNG ``Software``, PDF
``CreationDate`` and ``Producer``, SVG ``Date``; SVG ids come from a fixed hash salt), so identical inputs
give byte-identical files.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import seaborn as sns
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from benchmarks.report.plot_styles import HOLLOW, Style

FORMATS = ("png", "pdf", "svg")
DPI = 150
MAX_WIDTH = 7.0  # inches
FONT_SIZE = 8
#: the longest line of a y-axis label (a 2.6 in panel holds about 40 characters at FONT_SIZE)
AXIS_LABEL_CHARS = 40
MAX_COLUMNS = 4  # small-multiple panels per line
MAX_LEGEND_COLUMNS = 6
METADATA = {
    "png": {"Software": None},
    "pdf": {"CreationDate": None, "Producer": None, "Creator": None},
    "svg": {"Date": None, "Creator": None},
}
STYLE = {"font.family": "DejaVu Sans", "font.size": FONT_SIZE, "axes.titlesize": FONT_SIZE,
         "axes.labelsize": FONT_SIZE, "legend.fontsize": FONT_SIZE, "legend.title_fontsize": FONT_SIZE,
         "xtick.labelsize": FONT_SIZE, "ytick.labelsize": FONT_SIZE, "pdf.fonttype": 42, "svg.hashsalt": "tokbench",
         "svg.fonttype": "path"}  # fmt: skip


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
        ax.set_ylabel(axis_label(y_label) if column == 0 else "")


def axis_label(label: str) -> str:
    """A y-axis label in lines of at most ``AXIS_LABEL_CHARS`` characters: a long metric label (the TokSuite parity's)
    would run past the figure's top and into the next panel."""
    return textwrap.fill(label, AXIS_LABEL_CHARS)


# -- legends ------------------------------------------------------------------------------------------

#: a legend entry's handle and the pad after it (2 + 0.8 em), the space between two columns (2 em) and the
#: legend's border pad (0.4 em each side): matplotlib's defaults, in ems of the legend's font
HANDLE_EMS, COLUMN_GAP_EMS, BORDER_EMS = 2.8, 2.0, 0.4
#: points kept free at each side of a figure (constrained layout's pad, and some)
EDGE_POINTS = 6.0


@cache
def _measure() -> RendererAgg:
    return RendererAgg(1, 1, 72)  # at 72 dpi a pixel is a point


def _text_points(text: str) -> float:
    """Points ``text`` takes in the figures' font at ``FONT_SIZE``, as Agg draws it."""
    font = FontProperties(family="DejaVu Sans", size=FONT_SIZE)
    width, _, _ = _measure().get_text_width_height_descent(text, font, ismath=False)
    return float(width)


def _legend_columns(labels: Sequence[str], width: float) -> int:
    """Columns of a bottom legend of ``labels`` that fit a figure ``width`` inches wide, every column counted as
    wide as the widest entry (matplotlib sizes each column to its own widest entry, never wider)."""
    if not labels:
        return 1
    entry = max(_text_points(label) for label in labels) + HANDLE_EMS * FONT_SIZE
    room = width * 72 - 2 * EDGE_POINTS - 2 * BORDER_EMS * FONT_SIZE
    columns = int((room + COLUMN_GAP_EMS * FONT_SIZE) // (entry + COLUMN_GAP_EMS * FONT_SIZE))
    return max(1, min(MAX_LEGEND_COLUMNS, len(labels), columns))


def _legend_height(labels: Sequence[str], width: float) -> float:
    """Inches a bottom legend of ``labels`` takes in a figure ``width`` inches wide."""
    return 0.25 + 0.17 * math.ceil(len(labels) / _legend_columns(labels, width))


def _bottom_legend(figure: Figure, handles: Sequence[Any], labels: Sequence[str]) -> None:
    """The legend under the panels (a tuple handle: its parts drawn over each other)."""
    figure.legend(list(handles), list(labels), loc="outside lower center", frameon=False,
                  ncols=_legend_columns(labels, figure.get_figwidth()))  # fmt: skip


def _point_handle(style: Style, line: str = "", **options: Any) -> Line2D:
    return Line2D([], [], color=style.colour, marker=style.marker, markersize=4, linestyle=line, **options)


def _bar_handle(style: Style) -> tuple[Patch, Line2D]:
    return (Patch(color=style.colour), Line2D([], [], marker=style.marker, markersize=3, linestyle="",
                                              markerfacecolor=HOLLOW, markeredgecolor="black",
                                              markeredgewidth=0.3))  # fmt: skip

