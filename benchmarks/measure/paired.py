"""Paired tests of two tokenizers on the same items, and the Holm–Bonferroni adjustment of a family of them.

* ``paired_test`` — two tokenizers on the SAME items: the difference of their
  ratios of sums, a paired bootstrap CI of that difference (``benchmarks.measure.stats``), and a
  two-sided paired permutation test (vectorized numpy; same test as
  ``scipy.stats.permutation_test`` with ``permutation_type="samples"``): under the null
  hypothesis the two tokenizers are exchangeable on every item, so each
  item's pair of (num, den) is swapped between A and B at random.  It tests
  the statistic we actually report (a ratio of sums) and needs no
  distributional assumption; Wilcoxon's signed-rank test would test
  per-sentence ratios (a mean-of-ratios quantity) instead.
* ``paired_tests`` — many comparisons at once, with the same numbers as ``paired_test`` one by one:
  comparisons of one item count share their bootstrap indices and swap patterns, drawn once.
* ``holm_adjust`` — Holm–Bonferroni adjusted p-values of a family of tests (Holm 1979), so that
  a difference is called significant at level α only when its adjusted p-value is below α; the
  family-wise error rate (any false "significant" in the family) is then at most α.

Deterministic for a given ``seed`` (``np.random.default_rng(seed)``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks.errors import BenchmarkError
from benchmarks.measure.stats import (
    _MAX_BATCH_ELEMENTS,
    DEFAULT_CONFIDENCE,
    DEFAULT_METHOD,
    DEFAULT_RESAMPLES,
    Interval,
    _as_items,
    _bootstrap,
    _check_settings,
    _is_exact,
    _percentile_intervals,
    _ratio_difference,
    _resampled_sums,
    _undefined,
)


@dataclass(frozen=True)
class PairedComparison:
    """Tokenizer A vs. tokenizer B on the same items."""

    difference: float  # value(A) - value(B)
    interval: Interval  # paired bootstrap CI of the difference
    p_value: float  # two-sided paired permutation test
    n: int  # items


def paired_test(
    a: tuple[Sequence[float] | np.ndarray, Sequence[float] | np.ndarray],
    b: tuple[Sequence[float] | np.ndarray, Sequence[float] | np.ndarray],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    method: str = DEFAULT_METHOD,
    n_permutations: int | None = None,
) -> PairedComparison:
    """Compare two ratio-of-sums metrics measured on the same items.

    ``a`` and ``b`` are (numerators, denominators) per item, item i being the
    same sentence for both.  Returns ratio(A) - ratio(B), its paired bootstrap
    CI (items resampled jointly for A and B) and the two-sided p-value of a
    paired permutation test (see ``_swap_permutation_p_value``) drawing
    ``n_permutations`` swap patterns (None: ``n_resamples``).
    """
    if n_permutations is not None and n_permutations < 1:
        raise BenchmarkError(f"paired test n_permutations must be a positive integer, got {n_permutations}",
                             code="out_of_range", value=n_permutations, field="n_permutations")  # fmt: skip
    _check_settings(confidence, n_resamples, method)
    num_a, den_a = _as_items("A numerators", a[0]), _as_items("A denominators", a[1])
    num_b, den_b = _as_items("B numerators", b[0]), _as_items("B denominators", b[1])
    lengths = {len(num_a), len(den_a), len(num_b), len(den_b)}
    if len(lengths) != 1:
        raise BenchmarkError(f"paired test needs the same items for A and B, got lengths {sorted(lengths)}",
                             code="length_mismatch", value=tuple(sorted(lengths)))  # fmt: skip
    n = len(num_a)
    if den_a.sum() <= 0 or den_b.sum() <= 0:  # a metric value is undefined (NaN): so is the comparison
        undefined = _undefined("denominators sum to 0", confidence, method, n_resamples)
        return PairedComparison(math.nan, undefined, math.nan, n)
    observed = float(_ratio_difference(num_a, den_a, num_b, den_b))
    interval = _bootstrap((num_a, den_a, num_b, den_b), _ratio_difference, observed, confidence=confidence,
                          n_resamples=n_resamples, seed=seed, method=method)  # fmt: skip

    p_value = _swap_permutation_p_value(num_a, den_a, num_b, den_b, observed, n_permutations or n_resamples, seed)
    return PairedComparison(observed, interval, p_value, n)


def _swap_permutation_p_value(num_a: np.ndarray, den_a: np.ndarray, num_b: np.ndarray, den_b: np.ndarray,
                              observed: float, n_resamples: int, seed: int) -> float:  # fmt: skip
    """Two-sided p-value of the paired swap (sign-flip) permutation test of ratio(A) - ratio(B).

    Each null draw swaps every item between A and B with probability ½.  Swapping ALL items turns
    the statistic into its negative, so the null is symmetric and "as extreme" means |null| >= |observed|.
    Exact enumeration of the 2**n swap patterns when 2**n <= n_resamples (p = share of extreme
    patterns); otherwise ``n_resamples`` random patterns and p = (1 + #extreme) / (1 + n_resamples).
    Vectorized in numpy: ``scipy.stats.permutation_test`` gives the same test but spends ~0.15 s per
    call at 2,000 items in a Python loop.
    """
    n = len(num_a)
    exact = n < 31 and 2**n <= n_resamples
    total_num, total_den = num_a.sum() + num_b.sum(), den_a.sum() + den_b.sum()
    num_delta, den_delta = num_b - num_a, den_b - den_a  # what swapping item i moves into A
    rng = np.random.default_rng(seed)
    draws = 2**n if exact else n_resamples
    rows_per_batch = max(1, _MAX_BATCH_ELEMENTS // max(n, 1))
    tolerance = 1e-9 * max(1.0, abs(observed))  # the identity pattern must count as extreme despite rounding
    extreme = 0
    for first in range(0, draws, rows_per_batch):
        rows = min(rows_per_batch, draws - first)
        if exact:
            patterns = (np.arange(first, first + rows)[:, None] >> np.arange(n)) & 1
        else:
            patterns = rng.integers(0, 2, size=(rows, n))
        swaps = patterns.astype(np.float64)
        a_num, a_den = num_a.sum() + swaps @ num_delta, den_a.sum() + swaps @ den_delta
        with np.errstate(divide="ignore", invalid="ignore"):  # a swap emptying a denominator: NaN, never extreme
            null = a_num / a_den - (total_num - a_num) / (total_den - a_den)
        extreme += int(np.count_nonzero(np.abs(null) >= abs(observed) - tolerance))
    return extreme / draws if exact else (1 + extreme) / (1 + n_resamples)



#: one side of a paired comparison: (numerators, denominators) per item
Side = tuple[Sequence[float] | np.ndarray, Sequence[float] | np.ndarray]


def paired_tests(
    comparisons: Sequence[tuple[Side, Side]],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    method: str = DEFAULT_METHOD,
    n_permutations: int | None = None,
) -> list[PairedComparison]:
    """``paired_test(a, b, ...)`` of every (a, b) of ``comparisons``, equal to calling it on each, but faster.

    ``paired_test`` seeds a new generator for its bootstrap and for its permutations, so all comparisons over
    the same number of items n draw the very same resample indices and the very same swap patterns.  Here
    each batch of them is drawn once per n and applied to every comparison: resampled sums as
    ``metric_intervals`` takes them (``_resampled_sums``: an array shared by several comparisons, such as
    the characters of the documents both tokenizers encode, is summed once), the swap patterns multiplied
    with every comparison's differences in one matrix product when they are exact (``_is_exact``: then
    the product is the same numbers), else one by one as ``paired_test`` does.  The percentile and basic
    intervals are taken as scipy takes them; BCa, fewer than 2 items, an undefined ratio and the exact
    enumeration of small item counts go through ``paired_test`` itself."""
    if n_permutations is not None and n_permutations < 1:
        raise BenchmarkError(f"paired test n_permutations must be a positive integer, got {n_permutations}",
                             code="out_of_range", value=n_permutations, field="n_permutations")  # fmt: skip
    _check_settings(confidence, n_resamples, method)
    draws = n_permutations or n_resamples
    results: list[PairedComparison | None] = [None] * len(comparisons)
    by_items: dict[int, list[tuple[int, tuple[np.ndarray, ...]]]] = {}
    for position, (a, b) in enumerate(comparisons):
        arrays = (_as_items("A numerators", a[0]), _as_items("A denominators", a[1]),
                  _as_items("B numerators", b[0]), _as_items("B denominators", b[1]))  # fmt: skip
        n = len(arrays[0])
        lengths = {len(array) for array in arrays}
        simple = (method != "BCa" and len(lengths) == 1 and n >= 2 and not (n < 31 and 2**n <= draws)
                  and arrays[1].sum() > 0 and arrays[3].sum() > 0)  # fmt: skip
        if simple:
            by_items.setdefault(n, []).append((position, arrays))
        else:
            results[position] = paired_test(a, b, confidence=confidence, n_resamples=n_resamples, seed=seed,
                                            method=method, n_permutations=n_permutations)  # fmt: skip
    for n, members in by_items.items():
        sums = _resampled_sums(n, [array for _, arrays in members for array in arrays], n_resamples, seed)
        p_values = _swap_permutation_p_values(n, [arrays for _, arrays in members], draws, seed)
        observed = [float(_ratio_difference(*arrays)) for _, arrays in members]
        with np.errstate(divide="ignore", invalid="ignore"):  # as in _bootstrap: NaN resamples stay NaN
            distributions = (sums[:, 0::4] / sums[:, 1::4] - sums[:, 2::4] / sums[:, 3::4]).T
        intervals = _percentile_intervals(distributions, observed, confidence, method, n_resamples)
        for index, (position, _) in enumerate(members):
            results[position] = PairedComparison(observed[index], intervals[index], p_values[index], n)
    return results  # type: ignore[return-value]  # every position is filled above


def _swap_permutation_p_values(n: int, members: Sequence[tuple[np.ndarray, ...]], draws: int,
                               seed: int) -> list[float]:  # fmt: skip
    """``_swap_permutation_p_value`` (random patterns) of every (num_a, den_a, num_b, den_b) of ``members``,
    n items each, from one draw of the swap patterns all of them use."""
    observed = [float(_ratio_difference(*arrays)) for arrays in members]
    deltas = [array for num_a, den_a, num_b, den_b in members for array in (num_b - num_a, den_b - den_a)]
    exact = [column for column, delta in enumerate(deltas) if _is_exact(delta, n)]
    exact_deltas = np.stack([deltas[column] for column in exact], axis=1) if exact else None
    rng = np.random.default_rng(seed)
    rows_per_batch = max(1, _MAX_BATCH_ELEMENTS // max(n, 1))
    extreme = [0] * len(members)
    moved = np.empty((min(rows_per_batch, draws), len(deltas)))
    for first in range(0, draws, rows_per_batch):
        rows = min(rows_per_batch, draws - first)
        swaps = rng.integers(0, 2, size=(rows, n)).astype(np.float64)
        if exact_deltas is not None:
            moved[:rows, exact] = swaps @ exact_deltas
        for column in range(len(deltas)):
            if exact_deltas is None or column not in exact:
                moved[:rows, column] = swaps @ deltas[column]
        for index, (num_a, den_a, num_b, den_b) in enumerate(members):
            total_num, total_den = num_a.sum() + num_b.sum(), den_a.sum() + den_b.sum()
            a_num = num_a.sum() + moved[:rows, 2 * index]
            a_den = den_a.sum() + moved[:rows, 2 * index + 1]
            with np.errstate(divide="ignore", invalid="ignore"):  # a swap emptying a denominator: never extreme
                null = a_num / a_den - (total_num - a_num) / (total_den - a_den)
            tolerance = 1e-9 * max(1.0, abs(observed[index]))
            extreme[index] += int(np.count_nonzero(np.abs(null) >= abs(observed[index]) - tolerance))
    return [(1 + count) / (1 + draws) for count in extreme]


def holm_adjust(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values (Holm 1979, "A Simple Sequentially Rejective Multiple Test
    Procedure"), in the order given.

    With the m finite p-values sorted ascending, p_(1) <= ... <= p_(m), the adjusted value of the i-th is
    ``min(1, max_{j <= i} (m - j + 1) p_(j))``: rejecting every hypothesis whose adjusted p-value is below
    α is Holm's step-down procedure at level α.  NaN p-values (an undefined comparison) stay NaN and are
    not counted in m.  Ties get the same adjusted value (the running maximum makes the order among them
    irrelevant).
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise BenchmarkError(f"holm_adjust: expected one p-value per test (1-D), got shape {p.shape}",
                             code="wrong_shape", value=p.shape)  # fmt: skip
    finite = np.isfinite(p)
    if np.any((p[finite] < 0) | (p[finite] > 1)):
        raise BenchmarkError(f"holm_adjust: p-values must lie in [0, 1], got {p[finite].min()}..{p[finite].max()}",
                             code="out_of_range", field="p")  # fmt: skip
    adjusted = np.full(len(p), math.nan)
    positions = np.flatnonzero(finite)
    m = len(positions)
    if m == 0:
        return adjusted
    order = positions[np.argsort(p[positions], kind="stable")]
    scaled = (m - np.arange(m)) * p[order]
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return adjusted
