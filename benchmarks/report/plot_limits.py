"""Axis limits of the report's plots (``benchmarks.report.plots``) and the marks of the cells beyond them.

Off-scale cells (``off_scale`` True: the report marks degenerate rows and baselines so,
``benchmarks.report.figures``) are drawn, but the axis limits (with a ``MARGIN``) come from the other cells
only, so that one degenerate row does not flatten every other line of a panel; a cell beyond the limits is
drawn on the border with an arrow and its value (``_edge_text``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from benchmarks.report.plot_layout import FONT_SIZE

#: the share of the data's span left free beyond each end of a limited axis (on a log axis: in decades)
MARGIN = 0.05
ARROWS = {"top": "↑", "bottom": "↓", "left": "←", "right": "→"}
#: an axis's (low, high), None where no cell sets it
Limits = tuple[float, float] | None


def _off_scale(frame: pd.DataFrame) -> np.ndarray:
    """True for the cells that set no axis limit (the optional ``off_scale`` column)."""
    if "off_scale" not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    return frame["off_scale"].fillna(False).to_numpy(dtype=bool)


def _limits(values: Sequence[Any], log: bool = False) -> tuple[float, float] | None:
    """The (low, high) an axis needs to show every finite number of ``values`` (arrays) with ``MARGIN`` of
    their span free beyond each end (a log axis: positive numbers, the margin in log space); None without
    any number."""
    numbers = np.concatenate([np.asarray(value, dtype="float64").ravel() for value in values] or [np.empty(0)])
    numbers = numbers[np.isfinite(numbers) & ((numbers > 0) if log else True)]
    if not numbers.size:
        return None
    if log:
        numbers = np.log10(numbers)
    low, high = float(numbers.min()), float(numbers.max())
    span = (high - low) or (0.2 if log else abs(high) * 0.2 or 1.0)  # one value: a window around it
    low, high = low - MARGIN * span, high + MARGIN * span
    return (10**low, 10**high) if log else (low, high)


def _side(value: float, limits: tuple[float, float] | None, low: str, high: str) -> str | None:
    """``low`` or ``high`` where ``value`` lies beyond ``limits``, else None."""
    if limits is None or not math.isfinite(value):
        return None
    return low if value < limits[0] else high if value > limits[1] else None


def _clip(values: np.ndarray, limits: tuple[float, float] | None) -> np.ndarray:
    return values if limits is None else np.clip(values, *limits)


def _edge_text(ax: Any, x: float, y: float, side: str, text: str, stack: int = 0, transform: Any = None,
               toward: str = "left", rotation: float = 0) -> None:  # fmt: skip
    """An arrow pointing out of the axes at ``side`` and the value ``text`` beside a mark on the border at
    (``x``, ``y``), just inside the axes; ``stack``: how many marks of that side the panel placed already
    (moved further in, so marks never overlap); ``toward``: which way the text runs from a top or bottom mark;
    ``rotation`` 90: upright, over a narrow bar (a top mark only)."""
    inward = {"top": (0, -1), "bottom": (0, 1), "left": (1, 0), "right": (-1, 0)}[side]
    if rotation:
        offset, ha, va = (0.0, inward[1] * (3 + 7 * stack)), "center", "top" if side == "top" else "bottom"
    elif side in ("top", "bottom"):
        offset = (4.0 if toward == "right" else -4.0, inward[1] * (3 + 7 * stack))
        ha, va = ("left" if toward == "right" else "right"), "top" if side == "top" else "bottom"
    else:
        offset, ha, va = (inward[0] * (6 + 30 * stack), 0.0), "left" if side == "left" else "right", "center"
    # upright text turns its glyphs too: "→" at its end then points up, out of the axes
    label = f"{text}→" if rotation else f"{ARROWS[side]}{text}"
    ax.annotate(label, (x, y), xycoords=transform or ax.transData, xytext=offset,
                textcoords="offset points", ha=ha, va=va, fontsize=FONT_SIZE - 2, color="0.2", rotation=rotation,
                annotation_clip=False, zorder=5)  # fmt: skip


def _short(value: float) -> str:
    """A value beyond an axis, printed in three significant digits."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _value_range(values: np.ndarray, fmt: Callable[[float], str]) -> str:
    low, high = fmt(float(np.min(values))), fmt(float(np.max(values)))
    return low if low == high else f"{low}–{high}"



def _scatter_limits(points: pd.DataFrame, axis: str) -> tuple[float, float] | None:
    """The limits of axis ``axis`` ("x" or "y") from the points that are not off scale, CIs included (all
    points where every one is off scale)."""
    off = _off_scale(points)
    for chosen in (points[~off], points):
        found = _limits([chosen[axis], chosen[f"{axis}_low"], chosen[f"{axis}_high"]])
        if found is not None:
            return found
    return None
