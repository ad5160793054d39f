"""Fairness across languages: the Gini coefficient of a tokenizer's parity premiums.

A tokenizer is fair across languages when it encodes the same sentences in every language at about the
same length: its premiums against English (``parity_vs_eng``, ``parity_joined_vs_eng`` or
``parity_mean_ratio_vs_eng``, one per language) are all alike.  The Gini coefficient summarises how unequal
they are, as TokEval scores fairness across languages:

    G = Σ_i Σ_j |x_i − x_j| / (2 n² x̄)

over the n languages paired with English (English itself, premium 1 by definition, is not one of them):
0 when every language costs the same, approaching 1 when one language takes all the length.  It reads
the premiums only, so it is scale-free (a tokenizer twice as long in every language has the same G).

Interval: a percentile bootstrap over languages (resampling the n languages with replacement,
``resamples`` times, seeded by ``seed``): how much G depends on which languages the set holds.  It does not
resample sentences: the premiums' own intervals (over sentences) are far narrower at FLORES-200's 1,012 to
2,009 sentences per language.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def gini(values: Sequence[float]) -> float:
    """The Gini coefficient of positive ``values`` (NaN for fewer than 2), by the sorted-sum identity
    G = 2 Σ_k k x_(k) / (n Σ x) − (n + 1) / n, k = 1..n over the sorted values."""
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    if n < 2 or not np.all(np.isfinite(x)) or x.sum() <= 0:
        return math.nan
    return float(2 * np.sum(np.arange(1, n + 1) * x) / (n * x.sum()) - (n + 1) / n)


def gini_interval(values: Sequence[float], resamples: int, confidence: float, seed: int) -> tuple[float, float]:
    """The percentile bootstrap interval of ``gini`` over languages (NaN, NaN for fewer than 3 values)."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n < 3:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    drawn = np.sort(x[rng.integers(0, n, size=(resamples, n))], axis=1)
    totals = drawn.sum(axis=1)
    statistics = 2 * (drawn * np.arange(1, n + 1)).sum(axis=1) / (n * totals) - (n + 1) / n
    tail = (1 - confidence) / 2
    low, high = np.quantile(statistics, [tail, 1 - tail])
    return float(low), float(high)
