"""Confidence intervals for ratio-of-sums metrics.

Every corpus-level metric in ``benchmarks.measure.metrics`` is ``sum(num) / sum(den)``
over items (sentences, lines, words).  Uncertainty comes from which items
the evaluation set happens to contain, so both procedures resample ITEMS,
keeping an item's numerator and denominator together:

* ``ratio_interval`` — bootstrap confidence interval of the ratio
  (``scipy.stats.bootstrap``, paired resampling of (num, den), percentile
  method by default; ``"BCa"`` and ``"basic"`` are selectable).
  ``metric_intervals`` gives the same intervals for all metrics of a unit at
  once, drawing each batch of resample indices once (the runner's path).
* ``seed_item_interval`` — a tokenizer that samples, evaluated once per seed: the CI of the mean
  over seeds of the ratio, resampling items and seeds (two-way bootstrap, percentile).

Paired tests of two tokenizers and the Holm–Bonferroni adjustment (``benchmarks.measure.paired``) use the
same resampling.

Both are deterministic for a given ``seed`` (``np.random.default_rng(seed)``).
Degenerate data (fewer than 2 items, or every resample giving the same value)
is handled without warnings: the interval is NaN or collapses to the point.
"""

from __future__ import annotations

import math
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from benchmarks.errors import BenchmarkError
from benchmarks.measure.metrics import MetricResult

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95
DEFAULT_METHOD = "percentile"
METHODS = ("percentile", "basic", "BCa")
# cap on resampled elements held at once per array (scipy's `batch`): bounds memory on large item counts
_MAX_BATCH_ELEMENTS = 2_000_000


@dataclass(frozen=True)
class Interval:
    """A bootstrap confidence interval (``low``/``high`` NaN when it cannot be computed)."""

    low: float
    high: float
    confidence: float
    method: str
    n_resamples: int


def _as_items(name: str, values: Sequence[float] | np.ndarray) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise BenchmarkError(f"{name}: expected one value per item (1-D), got shape {array.shape}",
                             code="wrong_shape", value=name)  # fmt: skip
    if not np.all(np.isfinite(array)):
        raise BenchmarkError(f"{name}: contains NaN or infinite values", code="not_finite", value=name)
    return array


def _check_settings(confidence: float, n_resamples: int, method: str) -> None:
    if not 0 < confidence < 1:
        raise BenchmarkError(f"bootstrap confidence must lie strictly between 0 and 1, got {confidence}",
                             code="out_of_range", value=confidence, field="confidence")  # fmt: skip
    if n_resamples < 1:
        raise BenchmarkError(f"bootstrap n_resamples must be a positive integer, got {n_resamples}",
                             code="out_of_range", value=n_resamples, field="n_resamples")  # fmt: skip
    if method not in METHODS:
        raise BenchmarkError(f"unknown bootstrap method {method!r} (choose one of: {', '.join(METHODS)})",
                             code="unknown_method", value=method)  # fmt: skip


def _undefined(reason: str, confidence: float, method: str, n_resamples: int) -> Interval:
    return Interval(math.nan, math.nan, confidence, f"{method} (undefined: {reason})", n_resamples)


def _ratio(num: np.ndarray, den: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.sum(num, axis=axis) / np.sum(den, axis=axis)


def _ratio_difference(num_a: np.ndarray, den_a: np.ndarray, num_b: np.ndarray, den_b: np.ndarray,
                      axis: int = -1) -> np.ndarray:  # fmt: skip
    return _ratio(num_a, den_a, axis) - _ratio(num_b, den_b, axis)


def _bootstrap(data: tuple[np.ndarray, ...], statistic, point: float, *, confidence: float, n_resamples: int,
               seed: int, method: str) -> Interval:  # fmt: skip
    """Paired item bootstrap of ``statistic`` over the arrays in ``data`` (all the same length)."""
    n = len(data[0])
    if n < 2:
        return _undefined("fewer than 2 items", confidence, method, n_resamples)
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        # a resample whose denominators are all 0 yields NaN; a constant bootstrap distribution
        # makes BCa warn -- both are handled below instead of being printed
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.bootstrap(
            data, statistic, paired=True, vectorized=True, n_resamples=n_resamples,
            batch=max(1, _MAX_BATCH_ELEMENTS // n), confidence_level=confidence, method=method,
            rng=np.random.default_rng(seed),
        )  # fmt: skip
    distribution = result.bootstrap_distribution
    if np.all(distribution == distribution[0]):  # every resample gives the same value
        return Interval(point, point, confidence, method, n_resamples)
    return Interval(float(result.confidence_interval.low), float(result.confidence_interval.high),
                    confidence, method, n_resamples)  # fmt: skip


def ratio_interval(
    numerators: Sequence[float] | np.ndarray,
    denominators: Sequence[float] | np.ndarray,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    method: str = DEFAULT_METHOD,
) -> Interval:
    """Bootstrap CI of ``sum(numerators) / sum(denominators)``, resampling items with replacement.

    Percentile is the default method: it is fast (no jackknife; BCa costs
    ~3x more per call) and adequate for ratios over hundreds or thousands of items.
    """
    _check_settings(confidence, n_resamples, method)
    num, den = _as_items("numerators", numerators), _as_items("denominators", denominators)
    if len(num) != len(den):
        raise BenchmarkError(f"numerators and denominators differ in length ({len(num)} vs {len(den)})",
                             code="length_mismatch", value=(len(num), len(den)))  # fmt: skip
    if den.sum() <= 0:  # the metric itself is undefined (NaN): so is its interval
        return _undefined("denominators sum to 0", confidence, method, n_resamples)
    point = float(num.sum() / den.sum())
    return _bootstrap((num, den), _ratio, point, confidence=confidence, n_resamples=n_resamples, seed=seed,
                      method=method)  # fmt: skip


def metric_interval(result: MetricResult, **settings) -> Interval | None:
    """CI of a metric result, or None for metrics that are not a ratio of sums over items."""
    return metric_intervals([result], **settings)[0]


def metric_intervals(
    results: Sequence[MetricResult],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    method: str = DEFAULT_METHOD,
) -> list[Interval | None]:
    """``metric_interval`` of every result, equal to computing them one by one, but faster.

    ``ratio_interval`` seeds a new generator for every metric, so all metrics over the same number of
    items n (the documents of one evaluation set, the words of one reference) resample the very same
    items.  Here each batch of resample indices is drawn once per n, exactly as ``scipy.stats.bootstrap``
    draws it (same generator calls, same batches), and every metric's ratio is summed from it:
    items that are counts (or multiples of 1/1024, like F1's half counts) through a matrix product with
    the draw counts (such sums below 2**53 units are exact in any order, so they are the same numbers),
    other items by gathering as scipy does.
    The interval is then taken from each bootstrap distribution as scipy takes it (``stats.quantile``).
    BCa needs a jackknife per metric and is computed one by one."""
    _check_settings(confidence, n_resamples, method)
    intervals: list[Interval | None] = [None] * len(results)
    by_items: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {}
    for position, result in enumerate(results):
        if result.numerators is None or result.denominators is None:
            continue
        num, den = _as_items("numerators", result.numerators), _as_items("denominators", result.denominators)
        if method == "BCa" or len(num) != len(den) or len(num) < 2 or den.sum() <= 0:
            intervals[position] = ratio_interval(num, den, confidence=confidence, n_resamples=n_resamples,
                                                 seed=seed, method=method)  # fmt: skip
        else:
            by_items.setdefault(len(num), []).append((position, num, den))
    for n, members in by_items.items():
        distributions = _ratio_distributions(n, [(num, den) for _, num, den in members], n_resamples, seed)
        points = [float(_ratio(num, den)) for _, num, den in members]
        found = _percentile_intervals(distributions, points, confidence, method, n_resamples)
        for (position, _, _), interval in zip(members, found, strict=True):
            intervals[position] = interval
    return intervals


_EXACT_UNITS = 1024.0


def _ratio_distributions(n: int, pairs: Sequence[tuple[np.ndarray, np.ndarray]], n_resamples: int,
                         seed: int) -> np.ndarray:  # fmt: skip
    """The bootstrap distribution of ``sum(num) / sum(den)`` of every (num, den) pair of ``pairs`` (n items
    each), one row per pair, from the resample indices ``scipy.stats.bootstrap(paired=True)`` draws."""
    sums = _resampled_sums(n, [array for pair in pairs for array in pair], n_resamples, seed)
    with np.errstate(divide="ignore", invalid="ignore"):  # all-zero resampled denominators: NaN, as in scipy
        return (sums[:, 0::2] / sums[:, 1::2]).T


def _is_exact(values: np.ndarray, n: int) -> bool:
    """Whether every sum of up to n of ``values`` (each taken up to n times) is exact in any order: multiples
    of 1/1024 (counts, and F1's half counts) whose sums stay below 2**53 units."""
    units = values * _EXACT_UNITS
    return bool(np.all(units == np.round(units))) and float(np.abs(units).max(initial=0.0)) * n < 2**53


def _resampled_sums(n: int, arrays: Sequence[np.ndarray], n_resamples: int, seed: int) -> np.ndarray:
    """``sum(array[i])`` of every array of ``arrays`` (n items each) over each resample ``i`` that
    ``scipy.stats.bootstrap(paired=True)`` draws with ``np.random.default_rng(seed)`` (same generator calls,
    same batches): shape (n_resamples, len(arrays)).  Equal arrays are summed once.
    Exact arrays (``_is_exact``) are summed through a matrix product with the draw counts, which gives
    scipy's sums bit for bit; the others by gathering, as scipy does."""
    batch = max(1, _MAX_BATCH_ELEMENTS // n)
    # equal arrays (several metrics share a denominator: tokens, characters, words) are summed once
    distinct: dict[bytes, int] = {}  # an array's bytes -> its column in the distinct arrays
    unique: list[np.ndarray] = []
    columns = []
    for array in arrays:
        key = np.ascontiguousarray(array, dtype=np.float64).tobytes()
        if key not in distinct:
            distinct[key] = len(unique)
            unique.append(array)
        columns.append(distinct[key])
    exact = [column for column, array in enumerate(unique) if _is_exact(array, n)]
    gathered = [column for column in range(len(unique)) if column not in set(exact)]
    exact_values = np.stack([unique[column] for column in exact], axis=1) if exact else None
    sums = np.empty((n_resamples, len(unique)))
    if exact_values is not None:
        for first, counts in zip(range(0, n_resamples, batch), _draw_counts(n, n_resamples, seed), strict=True):
            # counts are kept small (``_draw_counts``); as float64 the product is the same as before, exact
            sums[first : first + len(counts), exact] = counts.astype(np.float64) @ exact_values
    if gathered:
        rng = np.random.default_rng(seed)
        for first in range(0, n_resamples, batch):
            drawn = rng.integers(0, n, size=(min(batch, n_resamples - first), n))
            for column in gathered:
                sums[first : first + len(drawn), column] = np.sum(unique[column][drawn], axis=-1)
    return sums[:, columns]


#: the draw counts of recent (n, n_resamples, seed), and ``seed_item_interval``'s draws: every unit of a corpus
#: resamples the same item counts with the same seed, so a worker evaluating them one after the other draws them
#: once
_DRAW_COUNTS: OrderedDict[tuple, tuple] = OrderedDict()
#: bytes those draw counts may hold per process (least recently used ones are dropped first).  One byte per
#: count: a paper run's item counts of every corpus (documents, sentences, reference words; about 30,000 per
#: corpus) fit at once, where float64 counts filled the budget with one corpus's and were drawn again for
#: every unit (an LRU cache smaller than the cycle of its keys misses every time)
_DRAW_COUNTS_BYTES = 400_000_000


def _draw_counts(n: int, n_resamples: int, seed: int) -> tuple[np.ndarray, ...]:
    """Per batch of the resamples ``scipy.stats.bootstrap(paired=True)`` draws with
    ``np.random.default_rng(seed)``, how often each of the n items is drawn in each resample (one row per
    resample; ``_small_counts``); kept for later calls with the same arguments (``_DRAW_COUNTS``)."""

    def draw() -> tuple[np.ndarray, ...]:
        rng = np.random.default_rng(seed)
        batch = max(1, _MAX_BATCH_ELEMENTS // n)
        return tuple(_small_counts(rng.integers(0, n, size=(min(batch, n_resamples - first), n)), n)
                     for first in range(0, n_resamples, batch))  # fmt: skip

    return _kept((n, n_resamples, seed), draw)


def _small_counts(drawn: np.ndarray, n: int) -> np.ndarray:
    """How often each of the n items is drawn in each row of ``drawn`` (item indices): uint8, or uint32 in the
    rare batch where an item is drawn more than 255 times (exact as float64, in a matrix product).  Counted
    row by row (a row's counts stay in the cache and go straight into the small type: a third of the time of
    one bincount over the whole batch)."""
    counts: np.ndarray = np.empty((len(drawn), n), dtype=np.uint8)
    for row, items in enumerate(drawn):
        row_counts = np.bincount(items, minlength=n)
        if counts.dtype == np.uint8 and row_counts.max(initial=0) > 255:
            counts = counts.astype(np.uint32)  # the rows so far, and every row after
        counts[row] = row_counts
    return counts


def _kept(key: tuple, draw: Callable[[], tuple]) -> tuple:
    """``draw()``, kept in ``_DRAW_COUNTS`` under ``key`` for later calls while within its byte budget."""
    if key in _DRAW_COUNTS:
        _DRAW_COUNTS.move_to_end(key)
        return _DRAW_COUNTS[key]
    kept = draw()
    size = _nbytes(kept)
    if size <= _DRAW_COUNTS_BYTES:
        while _DRAW_COUNTS and size + _draw_counts_bytes() > _DRAW_COUNTS_BYTES:
            _DRAW_COUNTS.popitem(last=False)
        _DRAW_COUNTS[key] = kept
    return kept


def _nbytes(kept: tuple) -> int:
    return sum(part.nbytes if isinstance(part, np.ndarray) else _nbytes(part) for part in kept)


def _draw_counts_bytes() -> int:
    return sum(_nbytes(kept) for kept in _DRAW_COUNTS.values())


def _percentile_intervals(distributions: np.ndarray, points: Sequence[float], confidence: float, method: str,
                          n_resamples: int) -> list[Interval]:  # fmt: skip
    """The percentile (or basic) interval of each bootstrap distribution (a row of ``distributions``) around its
    point, as ``scipy.stats.bootstrap`` takes it: the quantiles of all rows in one ``stats.quantile`` call (the
    same numbers as row by row); a row whose resamples all agree is its point."""
    alpha = (1 - confidence) / 2
    with warnings.catch_warnings(), np.errstate(invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        bounds = stats.quantile(distributions, np.tile([alpha, 1 - alpha], (len(distributions), 1)), axis=-1)
    intervals = []
    for distribution, point, (low, high) in zip(distributions, points, bounds, strict=True):
        if np.all(distribution == distribution[0]):  # every resample gives the same value
            intervals.append(Interval(point, point, confidence, method, n_resamples))
            continue
        if method == "basic":
            low, high = 2 * point - high, 2 * point - low
        intervals.append(Interval(float(low), float(high), confidence, method, n_resamples))
    return intervals


def seed_item_interval(
    numerators: np.ndarray,
    denominators: np.ndarray,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """Bootstrap CI of the mean over seeds of ``sum(num[s]) / sum(den[s])``, resampling items AND seeds.

    For a tokenizer that samples its segmentation (BPE-dropout, Provilkov et al. 2020; unigram
    sampling, Kudo 2018), evaluated once per seed of a fixed list on the same items: ``numerators``
    and ``denominators`` have one row per seed and one column per item.  Each resample draws n items
    with replacement (the same items for every seed: an item is one sentence or word, hard or easy
    under any seed) and S seeds with replacement, and computes the mean over the drawn seeds of the
    ratio over the drawn items.  The interval therefore covers both sources of variation: which items
    the evaluation set holds, and which segmentations the sampler drew.  Percentile method only (the
    resampling is two-way, which ``scipy.stats.bootstrap`` does not do).  Deterministic for ``seed``.
    """
    _check_settings(confidence, n_resamples, "percentile")
    num = np.asarray(numerators, dtype=np.float64)
    den = np.asarray(denominators, dtype=np.float64)
    if num.ndim != 2 or num.shape != den.shape:
        raise BenchmarkError(f"seed x item arrays expected, got shapes {num.shape} and {den.shape}",
                             code="wrong_shape", value=(num.shape, den.shape))  # fmt: skip
    seeds, n = num.shape
    if n < 2:
        return _undefined("fewer than 2 items", confidence, "percentile", n_resamples)
    if np.any(den.sum(axis=1) <= 0):
        return _undefined("denominators sum to 0", confidence, "percentile", n_resamples)
    point = float(np.mean(num.sum(axis=1) / den.sum(axis=1)))
    statistics = np.empty(n_resamples)
    first = 0
    with np.errstate(divide="ignore", invalid="ignore"):  # a resample of zero denominators: NaN, dropped below
        for counts, chosen in _seed_item_draws(n, seeds, n_resamples, seed):
            weights = counts.astype(np.float64)  # how often each item is drawn
            ratios = (weights @ num.T) / (weights @ den.T)  # (rows, seeds): each seed's ratio on the drawn items
            statistics[first : first + len(counts)] = np.take_along_axis(ratios, chosen, axis=1).mean(axis=1)
            first += len(counts)
    statistics = statistics[np.isfinite(statistics)]
    if statistics.size == 0 or np.all(statistics == statistics[0]):
        return Interval(point, point, confidence, "percentile", n_resamples)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(statistics, [tail, 100 - tail])
    return Interval(float(low), float(high), confidence, "percentile", n_resamples)


def _seed_item_draws(n: int, seeds: int, n_resamples: int, seed: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """Per batch of ``seed_item_interval``'s resamples: how often each of the n items is drawn in each resample
    (``_small_counts``) and the seeds drawn, in the order ``np.random.default_rng(seed)`` draws them (items, then
    seeds, batch after batch); kept like the draw counts (every metric of a unit draws the same)."""

    def draw() -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        rng = np.random.default_rng(seed)
        batch = max(1, _MAX_BATCH_ELEMENTS // n)
        draws = []
        for first in range(0, n_resamples, batch):
            rows = min(batch, n_resamples - first)
            counts = _small_counts(rng.integers(0, n, size=(rows, n)), n)
            draws.append((counts, rng.integers(0, seeds, size=(rows, seeds))))
        return tuple(draws)

    return _kept(("seeds", seeds, n, n_resamples, seed), draw)
