"""The Gini coefficient of premiums across languages against its definition, a double sum."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.measure.fairness import gini, gini_interval


def double_sum_gini(values: list[float]) -> float:
    n, mean = len(values), sum(values) / len(values)
    return sum(abs(a - b) for a in values for b in values) / (2 * n * n * mean)


def test_gini_equals_the_double_sum_definition():
    rng = np.random.default_rng(7)
    for size in (2, 3, 10, 204):
        values = list(rng.lognormal(0.5, 0.6, size))
        assert gini(values) == pytest.approx(double_sum_gini(values), rel=1e-12)


def test_gini_bounds_and_scale():
    assert gini([1.7] * 5) == pytest.approx(0.0, abs=1e-15)
    assert gini([0, 0, 0, 4.0]) == pytest.approx(3 / 4)  # one language takes all: (n - 1) / n
    values = [1.0, 1.4, 2.2, 3.9]
    assert gini([3 * v for v in values]) == pytest.approx(gini(values))  # scale-free
    assert math.isnan(gini([2.0])) and math.isnan(gini([1.0, float("nan")]))


def test_the_interval_is_seeded_and_brackets_the_spread_of_resamples():
    values = [1.1, 1.3, 1.9, 2.4, 3.1, 4.8, 1.05, 2.2]
    first = gini_interval(values, 500, 0.95, seed=3)
    assert first == gini_interval(values, 500, 0.95, seed=3) != gini_interval(values, 500, 0.95, seed=4)
    low, high = first
    assert 0 <= low < gini(values) < high < 1
    assert all(math.isnan(x) for x in gini_interval([1.0, 2.0], 100, 0.95, seed=0))
