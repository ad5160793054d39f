"""Which intrinsic metric predicts language-model quality?  Rank correlations with bits per byte.

For one language, each tokenizer row with a language model is one point: its BPB (the mean over seeds)
and the value of an intrinsic metric on the same unit (same corpus, row and vocabulary size).  Per metric
(and evaluation set and reference), across the points:

* **Spearman's ρ** (Pearson's r of the average ranks) and **Kendall's τ-b** (ties corrected), as
  ``scipy.stats.spearmanr`` and ``scipy.stats.kendalltau`` compute them, with their two-sided p-values;
* a **bootstrap CI over tokenizers**: points resampled with replacement (``np.random.default_rng(seed)``),
  the correlation of each resample (a resample whose metric or BPB is constant is undefined and dropped),
  percentile interval.  With a handful of tokenizers the interval is wide: the report says so whenever
  it includes 0.

**Pooled** over languages: every (language, row) point, after subtracting each language's mean from the
metric and from BPB, so that a language being harder to model does not pass for a metric predicting it
(a within-language correlation; the bootstrap resamples points within each language).

Sign: BPB is lower-is-better, so a metric whose higher values go with better models (e.g. bytes per token,
if compression helps) has a negative correlation.  Zouhar et al. 2023 report Rényi efficiency at r = 0.78
with BLEU; Schmidt et al. 2024 and Ali et al. 2024 find compression and fertility not always predictive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

METHODS = ("spearman", "kendall")


@dataclass(frozen=True)
class Correlation:
    method: str
    value: float
    p_value: float
    ci_low: float
    ci_high: float
    n: int


def correlation(x: Sequence[float], y: Sequence[float], method: str) -> tuple[float, float]:
    """scipy's coefficient and two-sided p-value; NaN when fewer than 3 points or either side is constant."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(x) < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan"), float("nan")
    result = stats.spearmanr(x, y) if method == "spearman" else stats.kendalltau(x, y)
    return float(result.statistic), float(result.pvalue)


def resampled(x: np.ndarray, y: np.ndarray, method: str) -> np.ndarray:
    """The coefficient of each row of ``x`` and ``y`` (resamples × points), vectorized; NaN where a row is
    constant.  Equal to scipy's on each row (average ranks; τ-b)."""
    if method == "spearman":
        rx, ry = stats.rankdata(x, axis=1), stats.rankdata(y, axis=1)
        rx, ry = rx - rx.mean(axis=1, keepdims=True), ry - ry.mean(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (rx * ry).sum(axis=1) / np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))
    dx = np.sign(x[:, :, None] - x[:, None, :])
    dy = np.sign(y[:, :, None] - y[:, None, :])
    with np.errstate(invalid="ignore", divide="ignore"):
        return (dx * dy).sum(axis=(1, 2)) / np.sqrt(np.abs(dx).sum(axis=(1, 2)) * np.abs(dy).sum(axis=(1, 2)))


def _interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan"), float("nan")
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def correlate(groups: Sequence[tuple[Sequence[float], Sequence[float]]], *, resamples: int, confidence: float,
              seed: int) -> list[Correlation]:  # fmt: skip
    """Both methods' correlations of metric and BPB over the points of ``groups`` ((metric values, BPB
    values) per language); with more than one group, each group's mean is subtracted first and the
    bootstrap resamples within groups."""
    pooled = len(groups) > 1
    xs = [np.asarray(x, dtype=np.float64) for x, _ in groups]
    ys = [np.asarray(y, dtype=np.float64) for _, y in groups]
    if pooled:
        xs = [x - x.mean() for x in xs]
        ys = [y - y.mean() for y in ys]
    rng = np.random.default_rng(seed)
    drawn = [rng.integers(0, len(x), size=(resamples, len(x))) for x in xs]
    x_all, y_all = np.concatenate(xs), np.concatenate(ys)
    x_boot = np.concatenate([x[index] for x, index in zip(xs, drawn, strict=True)], axis=1)
    y_boot = np.concatenate([y[index] for y, index in zip(ys, drawn, strict=True)], axis=1)
    found = []
    for method in METHODS:
        value, p_value = correlation(x_all, y_all, method)
        low, high = _interval(resampled(x_boot, y_boot, method), confidence) if np.isfinite(value) else (value, value)
        found.append(Correlation(method, value, p_value, low, high, len(x_all)))
    return found
