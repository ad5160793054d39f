"""The metric-validity correlations equal scipy's, point estimates and every bootstrap resample."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from benchmarks.downstream import validity


@pytest.mark.parametrize("method", validity.METHODS)
def test_the_vectorized_resamples_equal_scipy_row_by_row(method: str) -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(0, 4, size=(200, 6)).astype(float)  # ties on purpose
    y = rng.normal(size=(200, 6)).round(1)
    fast = validity.resampled(x, y, method)
    scipy_function = stats.spearmanr if method == "spearman" else stats.kendalltau
    for row in range(len(x)):
        if np.all(x[row] == x[row, 0]) or np.all(y[row] == y[row, 0]):
            assert np.isnan(fast[row])
        else:
            assert fast[row] == pytest.approx(scipy_function(x[row], y[row]).statistic, abs=1e-12)


def test_correlate_gives_scipys_value_and_an_interval_around_it() -> None:
    metric = [4.1, 3.9, 3.2, 2.8, 2.5, 2.0]
    bpb = [2.9, 3.0, 3.1, 3.3, 3.2, 3.6]
    found = {result.method: result for result in validity.correlate([(metric, bpb)], resamples=500, confidence=0.95,
                                                                     seed=0)}  # fmt: skip
    assert found["spearman"].value == pytest.approx(stats.spearmanr(metric, bpb).statistic)
    assert found["kendall"].value == pytest.approx(stats.kendalltau(metric, bpb).statistic)
    assert found["spearman"].p_value == pytest.approx(stats.spearmanr(metric, bpb).pvalue)
    for result in found.values():
        assert result.ci_low <= result.value <= result.ci_high
        assert result.ci_high < 0  # a clear negative relation: the interval excludes 0
        assert result.n == 6


def test_pooling_removes_each_languages_level() -> None:
    """Two languages with the same within-language relation but opposite levels: pooled raw values would mix
    levels with the relation; centred, the pooled correlation is the within-language one."""
    a = ([1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0])
    b = ([11.0, 12.0, 13.0, 14.0], [14.0, 13.0, 12.0, 11.0])
    pooled = {r.method: r for r in validity.correlate([a, b], resamples=200, confidence=0.95, seed=1)}
    assert pooled["spearman"].value == pytest.approx(-1.0)
    assert pooled["spearman"].n == 8


def test_too_few_or_constant_points_give_no_correlation() -> None:
    assert np.isnan(validity.correlation([1, 2], [3, 4], "spearman")[0])
    assert np.isnan(validity.correlation([1, 1, 1], [3, 4, 5], "kendall")[0])
