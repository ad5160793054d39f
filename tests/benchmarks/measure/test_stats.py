"""benchmarks.measure.stats: bootstrap intervals and the paired permutation test, on items from real text (the
documents of the embedded corpora: 272 English news articles, 4,360 Turkish, 8,349 Russian and 2,257
Korean sentences or snippets)."""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pytest
from scipy import stats as scipy_stats

from benchmarks.errors import BenchmarkError
from benchmarks.measure import paired as P
from benchmarks.measure import stats as S
from benchmarks.measure.metrics import MetricResult
from tests.errors import raises_code


def bytes_and_chars(lines: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per text: UTF-8 bytes (numerator) and characters (denominator) -> bytes per character."""
    return np.array([len(t.encode()) for t in lines], dtype=float), np.array([len(t) for t in lines], dtype=float)


def words(lines: list[str]) -> np.ndarray:
    return np.array([len(t.split()) for t in lines], dtype=float)


@pytest.mark.parametrize("method", S.METHODS)
def test_interval_contains_point_and_is_deterministic(embedded_text, method):
    for lang in ("tur_Latn", "kor_Hang"):
        num, den = bytes_and_chars(embedded_text[lang])
        point = num.sum() / den.sum()
        interval = S.ratio_interval(num, den, method=method, seed=7)
        assert interval.low < point < interval.high
        assert interval.high - interval.low < 0.05 * point  # thousands of documents pin bytes/char down tightly
        assert (interval.confidence, interval.method, interval.n_resamples) == (0.95, method, 1000)
        assert S.ratio_interval(num, den, method=method, seed=7) == interval
        assert S.ratio_interval(num, den, method=method, seed=8) != interval


def test_wider_confidence_gives_wider_interval(embedded_text):
    num, den = bytes_and_chars(embedded_text["rus_Cyrl"])
    narrow, wide = S.ratio_interval(num, den, confidence=0.5), S.ratio_interval(num, den, confidence=0.99)
    assert wide.low < narrow.low < narrow.high < wide.high


def test_interval_covers_population_ratio(embedded_text):
    """Treat the 4,360 Turkish documents as the population: 95% CIs from random 150-document samples
    should cover the population's words-per-character ratio about 95% of the time."""
    population_num, population_den = words(embedded_text["tur_Latn"]), bytes_and_chars(embedded_text["tur_Latn"])[1]
    truth = population_num.sum() / population_den.sum()
    rng = np.random.default_rng(0)
    trials, covered = 200, 0
    for trial in range(trials):
        rows = rng.choice(len(population_num), size=150, replace=False)
        interval = S.ratio_interval(population_num[rows], population_den[rows], n_resamples=500, seed=trial)
        covered += interval.low <= truth <= interval.high
    assert 0.88 <= covered / trials <= 0.99


def test_degenerate_data_without_warnings(embedded_text):
    lines = embedded_text["kor_Hang"]
    chars = np.array([len(t) for t in lines], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method in S.METHODS:  # a char tokenizer: tokens == chars on every line -> constant ratio
            interval = S.ratio_interval(chars, chars, method=method)
            assert (interval.low, interval.high) == (1.0, 1.0)
        single = S.ratio_interval([3.0], [2.0])
        assert math.isnan(single.low) and math.isnan(single.high) and "fewer than 2 items" in single.method
        undefined = S.ratio_interval([0.0, 0.0], [0.0, 0.0])
        assert math.isnan(undefined.low)
        # mostly-zero denominators: some resamples divide by zero
        sparse = S.ratio_interval([1.0] + [0.0] * 30, [2.0] + [0.0] * 30, method="BCa")
        assert sparse.confidence == 0.95
        same = P.paired_test((chars, chars), (chars, chars))
        assert (same.difference, same.interval.low, same.interval.high, same.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_metric_interval(embedded_text):
    num, den = bytes_and_chars(embedded_text["eng_Latn"])
    result = MetricResult("bytes_per_char", num.sum() / den.sum(), len(num), num, den)
    assert S.metric_interval(result) == S.ratio_interval(num, den)
    assert S.metric_interval(MetricResult("renyi_efficiency", 0.4, 10)) is None


@pytest.mark.parametrize("method", S.METHODS)
def test_metric_intervals_are_the_one_by_one_intervals(embedded_text, method):
    """Computed together (shared resample draws, sums through draw counts), every interval is exactly the
    one ``ratio_interval`` gives alone: integer and fractional items, two item counts, degenerate data."""
    num, den = bytes_and_chars(embedded_text["kor_Hang"][:700])
    fractions = num / 3  # not integer-valued: summed by gathering, as scipy does
    sparse = np.zeros(len(den))
    sparse[:3] = 1.0  # most resamples of sparse/sparse are 0/0
    results = [
        MetricResult("bytes_per_char", 0.0, len(num), num, den),
        MetricResult("thirds", 0.0, len(num), fractions, den),
        MetricResult("halves", 0.0, len(num), num / 2, den + num / 2),  # F1-like half counts: summed exactly
        MetricResult("words", 0.0, len(num), words(embedded_text["kor_Hang"][:700]), den),
        MetricResult("shorter", 0.0, 50, num[:50], den[:50]),
        MetricResult("constant", 0.0, len(num), den, den),
        MetricResult("sparse", 0.0, len(num), sparse, sparse),
        MetricResult("single", 0.0, 1, num[:1], den[:1]),
        MetricResult("zero", 0.0, 2, np.zeros(2), np.zeros(2)),
        MetricResult("renyi_efficiency", 0.4, 10),
    ]
    expected = [S.ratio_interval(r.numerators, r.denominators, method=method, seed=3) if r.numerators is not None
                else None for r in results]  # fmt: skip
    assert repr(S.metric_intervals(results, method=method, seed=3)) == repr(expected)  # repr: NaN == NaN


def test_paired_test_detects_a_real_difference(embedded_text):
    # bytes per word vs characters per word on the same Turkish texts: bytes are always >= characters
    lines = embedded_text["tur_Latn"]
    (num_bytes, num_chars), den = bytes_and_chars(lines), words(lines)
    comparison = P.paired_test((num_bytes, den), (num_chars, den))
    assert comparison.difference == pytest.approx(num_bytes.sum() / den.sum() - num_chars.sum() / den.sum())
    assert 0 < comparison.interval.low < comparison.difference < comparison.interval.high
    assert comparison.p_value == pytest.approx(1 / 1001)  # the smallest p-value 1000 random swaps can give
    assert comparison.n == len(lines)
    assert P.paired_test((num_bytes, den), (num_chars, den)) == comparison  # deterministic


def test_paired_test_is_calibrated_under_the_null(embedded_text):
    """A and B drawn by randomly swapping the same two per-line measurements: H0 holds exactly,
    so p-values are (nearly) uniform and about 5% fall below 0.05."""
    lines = embedded_text["rus_Cyrl"][:300]
    (first, second), den = bytes_and_chars(lines), words(lines)
    rng = np.random.default_rng(1)
    p_values = []
    for trial in range(100):
        swap = rng.random(len(lines)) < 0.5
        a_num, b_num = np.where(swap, second, first), np.where(swap, first, second)
        p_values.append(P.paired_test((a_num, den), (b_num, den), n_resamples=400, seed=trial).p_value)
    assert np.mean(np.array(p_values) < 0.05) <= 0.12
    assert 0.35 < np.median(p_values) < 0.65


@pytest.mark.parametrize("n", [4, 7, 10])
def test_exact_permutation_p_value_equals_scipy(embedded_text, n):
    """With 2**n <= n_resamples every swap pattern is enumerated; scipy.stats.permutation_test
    (paired 'samples' permutations, exact) must give the same p-value."""
    lines = embedded_text["eng_Latn"][:n]
    num_a, den_a = bytes_and_chars(lines)
    num_b, den_b = words(lines), np.ones(n)

    def statistic(signs: np.ndarray, axis: int = -1) -> np.ndarray:
        swapped = signs < 0
        a = np.sum(np.where(swapped, num_b, num_a), axis) / np.sum(np.where(swapped, den_b, den_a), axis)
        b = np.sum(np.where(swapped, num_a, num_b), axis) / np.sum(np.where(swapped, den_a, den_b), axis)
        return a - b

    expected = scipy_stats.permutation_test(
        (np.ones(n),), statistic, permutation_type="samples", vectorized=True, n_resamples=5000
    ).pvalue
    assert P.paired_test((num_a, den_a), (num_b, den_b), n_resamples=5000).p_value == pytest.approx(expected)


def test_bad_input():
    with raises_code(BenchmarkError, "length_mismatch", value=(2, 1)):
        S.ratio_interval([1, 2], [1])
    with raises_code(BenchmarkError, "not_finite", value="numerators"):
        S.ratio_interval([1, math.nan], [1, 1])
    with raises_code(BenchmarkError, "unknown_method", value="bca"):
        S.ratio_interval([1, 2], [1, 2], method="bca")
    with raises_code(BenchmarkError, "out_of_range", field="confidence", value=95):
        S.ratio_interval([1, 2], [1, 2], confidence=95)
    with raises_code(BenchmarkError, "out_of_range", field="n_resamples", value=0):
        S.ratio_interval([1, 2], [1, 2], n_resamples=0)
    with raises_code(BenchmarkError, "length_mismatch", value=(2, 3)):
        P.paired_test(([1, 2], [1, 2]), ([1, 2, 3], [1, 2, 3]))


def test_speed_per_call(embedded_text):
    """The runner calls these for dozens of tokenizers x metrics x corpora: keep them well under a second."""
    num, den = bytes_and_chars(embedded_text["kor_Hang"])
    S.ratio_interval(num, den)  # warm-up (imports, caches)
    start = time.perf_counter()
    for seed in range(5):
        S.ratio_interval(num, den, seed=seed)
    interval_seconds = (time.perf_counter() - start) / 5
    start = time.perf_counter()
    for seed in range(5):
        P.paired_test((num, den), (den, den), seed=seed)
    paired_seconds = (time.perf_counter() - start) / 5
    # measured ~0.03 s and ~0.06 s on an idle 2-core machine; generous bounds for a loaded CI runner
    assert interval_seconds < 1.0 and paired_seconds < 2.0, (interval_seconds, paired_seconds)


def test_seed_item_interval_covers_items_and_seeds(embedded_text):
    """Bytes per character of Turkish documents as a sampled tokenizer would see them: per-seed noise on
    the same documents.  The interval holds the mean over seeds, is deterministic, and widens with the
    seed-to-seed spread (which an items-only interval would miss)."""
    num, den = bytes_and_chars(embedded_text["tur_Latn"][:1000])
    rng = np.random.default_rng(3)
    same = np.stack([num] * 5), np.stack([den] * 5)
    noisy = np.stack([num * (1 + 0.05 * rng.standard_normal()) for _ in range(5)]), same[1]
    for numerators, denominators in (same, noisy):
        point = np.mean(numerators.sum(axis=1) / denominators.sum(axis=1))
        interval = S.seed_item_interval(numerators, denominators, seed=1)
        assert interval.low < point < interval.high
        assert S.seed_item_interval(numerators, denominators, seed=1) == interval
    items_only = S.seed_item_interval(*same, seed=1)
    assert items_only.high - items_only.low == pytest.approx(
        (lambda i: i.high - i.low)(S.ratio_interval(num, den, seed=1)), rel=0.25)  # one seed: the items' interval
    both = S.seed_item_interval(*noisy, seed=1)
    assert both.high - both.low > 2 * (items_only.high - items_only.low)
    assert math.isnan(S.seed_item_interval(num[None, :1], den[None, :1]).low)  # one item: undefined
    with raises_code(BenchmarkError, "wrong_shape"):
        S.seed_item_interval(num, den)


def test_seed_item_interval_equals_its_definition_and_keeps_its_draws(embedded_text):
    """Each resample as the docstring defines it, computed resample by resample from the same generator calls
    (items, then seeds; one batch at this size): the same percentile interval.  A second call with other
    values but the same item and seed counts reuses the kept draws and equals a fresh computation."""
    num, den = bytes_and_chars(embedded_text["tur_Latn"][:300])
    rng = np.random.default_rng(5)
    numerators = np.stack([num * (1 + 0.05 * rng.standard_normal(num.size)) for _ in range(4)])
    denominators = np.stack([den] * 4)
    draws = np.random.default_rng(2)
    items = draws.integers(0, num.size, size=(500, num.size))
    seeds = draws.integers(0, 4, size=(500, 4))
    statistics = [np.mean([numerators[s, drawn].sum() / denominators[s, drawn].sum() for s in chosen])
                  for drawn, chosen in zip(items, seeds, strict=True)]  # fmt: skip
    low, high = np.percentile(statistics, [2.5, 97.5])
    S._DRAW_COUNTS.clear()
    interval = S.seed_item_interval(numerators, denominators, seed=2, n_resamples=500)
    assert (interval.low, interval.high) == pytest.approx((low, high), rel=1e-12)
    assert ("seeds", 4, num.size, 500, 2) in S._DRAW_COUNTS
    kept = S.seed_item_interval(numerators[::-1] * 1.5, denominators, seed=2, n_resamples=500)
    S._DRAW_COUNTS.clear()
    assert S.seed_item_interval(numerators[::-1] * 1.5, denominators, seed=2, n_resamples=500) == kept


# --------------------------------------------------------------------------- Holm–Bonferroni


def holm_rejections(p_values: np.ndarray, alpha: float) -> set[int]:
    """Holm's step-down procedure at level alpha, as Holm 1979 states it: reject the hypotheses in ascending
    order of p while p_(i) <= alpha / (m - i + 1), and stop at the first that fails."""
    rejected = set()
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    for rank, index in enumerate(order, start=1):
        if p_values[index] > alpha / (len(p_values) - rank + 1):
            break
        rejected.add(index)
    return rejected


def test_holm_adjusted_p_values_by_hand():
    # sorted: 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> running max 0.06
    adjusted = P.holm_adjust([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert P.holm_adjust([0.5, 0.9]).tolist() == [1.0, 1.0]  # capped at 1
    nan_kept = P.holm_adjust([0.01, math.nan, 0.02])  # an undefined comparison is not counted in m
    assert math.isnan(nan_kept[1]) and nan_kept[[0, 2]] == pytest.approx([0.02, 0.02])
    assert P.holm_adjust([]).size == 0
    with raises_code(BenchmarkError, "out_of_range", field="p"):
        P.holm_adjust([0.2, 1.5])


def test_holm_equals_the_step_down_procedure_on_paired_tests_of_real_text(embedded_text):
    # p-values of real paired tests (bytes per character of Turkish documents against the same counts with
    # noise of growing size added: some differences real, some not), random p-values and ties
    num, den = bytes_and_chars(embedded_text["tur_Latn"][:400])
    rng = np.random.default_rng(0)
    p_values = []
    for trial in range(12):
        shifted = num + rng.normal(0, 1 + trial, len(num)) * (trial % 3)
        p_values.append(P.paired_test((num, den), (np.clip(shifted, 0, None), den), n_resamples=300,
                                      seed=trial).p_value)  # fmt: skip
    real = np.array(p_values)
    for p in (real, rng.uniform(0, 0.2, 40), np.array([0.01, 0.01, 0.02, 0.2])):
        adjusted = P.holm_adjust(p)
        for alpha in (0.001, 0.01, 0.02, 0.05, 0.1, 0.2):
            assert {i for i, a in enumerate(adjusted) if a <= alpha} == holm_rejections(p, alpha)
        # Holm lies between Benjamini-Hochberg (scipy) and Bonferroni
        assert np.all(adjusted >= scipy_stats.false_discovery_control(p, method="bh") - 1e-12)
        assert np.all(adjusted <= np.minimum(1, len(p) * p) + 1e-12)


def test_holm_families_of_paired_csv():
    import pandas as pd

    from benchmarks.measure.evaluate import holm_by_family

    paired = pd.DataFrame({"metric": ["m", "m", "m", "other"], "eval_set": ["test"] * 4,
                           "p_value": [0.01, 0.04, 0.02, 0.01]})  # fmt: skip
    adjusted = holm_by_family(paired)
    # family (m, test): 0.01 x 3, 0.02 x 2, 0.04 x 1 -> 0.03, 0.04, 0.04; family (other, test) alone: 0.01
    assert adjusted.tolist() == pytest.approx([0.03, 0.04, 0.04, 0.01])


def test_permutations_are_enough_for_the_family(embedded_text):
    from benchmarks.measure.evaluate import permutations_for_family

    assert permutations_for_family(112, 1000) == 4480 and permutations_for_family(10, 1000) == 1000
    # a clear difference on real text: the p-value is the smallest the draws allow, 1 / (1 + R), and with
    # R = permutations_for_family(m) its Holm adjustment in a family of m such tests is below 0.05
    num, den = bytes_and_chars(embedded_text["kor_Hang"][:300])
    m = 112
    draws = permutations_for_family(m, 1000)
    comparison = P.paired_test((num, den), (num * 1.1, den), n_resamples=200, n_permutations=draws)
    assert comparison.p_value == pytest.approx(1 / (1 + draws))
    assert P.holm_adjust([comparison.p_value] * m).max() < 0.05
    assert P.holm_adjust([P.paired_test((num, den), (num * 1.1, den), n_resamples=1000).p_value] * m).max() > 0.05
    with raises_code(BenchmarkError, "out_of_range", field="n_permutations", value=0):
        P.paired_test((num, den), (num, den), n_permutations=0)


@pytest.mark.parametrize("method", S.METHODS)
def test_paired_tests_are_the_one_by_one_tests(embedded_text, method):
    """All at once (shared resample indices and swap patterns, sums through draw counts and one matrix
    product), every comparison is exactly what ``paired_test`` gives alone: token-like counts over
    fractional characters (the runner's tokens per 1,000 characters), fractional numerators, a
    comparison with itself, two item counts, the exact enumeration of a few items and a single item."""
    lines = embedded_text["rus_Cyrl"][:600]
    num, den = bytes_and_chars(lines)
    kchars = den / 1000  # not multiples of 1/1024: gathered, as scipy does
    counts = words(lines)
    comparisons = [((num, kchars), (counts, kchars)), ((counts, kchars), (num // 2, kchars.copy())),
                   ((num / 3, kchars), (counts, kchars)), ((num, kchars), (num, kchars)),
                   ((num[:80], den[:80]), (counts[:80], den[:80])), ((num[:9], den[:9]), (counts[:9], den[:9])),
                   ((num[:1], den[:1]), (counts[:1], den[:1]))]  # fmt: skip
    expected = [P.paired_test(a, b, method=method, seed=5, n_resamples=300, n_permutations=700)
                for a, b in comparisons]  # fmt: skip
    together = P.paired_tests(comparisons, method=method, seed=5, n_resamples=300, n_permutations=700)
    assert repr(together) == repr(expected)  # repr: NaN == NaN
    assert together[0].p_value < 0.01 and together[3].difference == 0.0


def test_small_counts_are_the_bincount_of_each_row_in_the_smallest_exact_type():
    """Per row, how often each item is drawn: uint8 while every count fits, uint32 for the whole batch once
    one count exceeds 255 (an item drawn 300 times)."""
    drawn = np.random.default_rng(3).integers(0, 50, size=(40, 50))
    counts = S._small_counts(drawn, 50)
    assert counts.dtype == np.uint8
    assert np.array_equal(counts, np.stack([np.bincount(row, minlength=50) for row in drawn]))
    heavy = np.concatenate([np.random.default_rng(4).integers(0, 300, size=(2, 300)), np.zeros((1, 300), int),
                            np.random.default_rng(5).integers(0, 300, size=(2, 300))])  # fmt: skip
    counts = S._small_counts(heavy, 300)
    assert counts.dtype == np.uint32 and counts[2, 0] == 300
    assert np.array_equal(counts, np.stack([np.bincount(row, minlength=300) for row in heavy]))


def test_draw_counts_kept_between_calls_give_the_same_intervals(embedded_text, monkeypatch):
    """A unit after another with the same item count reuses the draw counts (``_DRAW_COUNTS``): the same
    intervals as drawing them afresh and as scipy one by one; beyond the byte bound nothing is kept."""
    num, den = bytes_and_chars(embedded_text["tur_Latn"][:900])
    results = [MetricResult("bytes_per_char", 0.0, len(num), num, den),
               MetricResult("words", 0.0, len(num), words(embedded_text["tur_Latn"][:900]), den)]  # fmt: skip
    S._DRAW_COUNTS.clear()
    fresh = S.metric_intervals(results, seed=7, n_resamples=300)
    assert (len(num), 300, 7) in S._DRAW_COUNTS
    # one byte a count: a paper run's item counts of every corpus fit in the bound together
    assert all(counts.dtype == np.uint8 for counts in S._DRAW_COUNTS[len(num), 300, 7])
    assert S._draw_counts_bytes() == len(num) * 300
    assert repr(S.metric_intervals(results, seed=7, n_resamples=300)) == repr(fresh)
    assert repr(fresh) == repr([S.ratio_interval(r.numerators, r.denominators, seed=7, n_resamples=300)
                                for r in results])  # fmt: skip
    monkeypatch.setattr(S, "_DRAW_COUNTS_BYTES", 1000)
    S._DRAW_COUNTS.clear()
    assert repr(S.metric_intervals(results, seed=7, n_resamples=300)) == repr(fresh) and not S._DRAW_COUNTS
