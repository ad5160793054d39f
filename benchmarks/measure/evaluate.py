"""What evaluating a tokenizer measures, apart from any unit or run (units are evaluated by
``benchmarks.run.evaluate``): every selected metric on the one input they need (``metric_results``), the
bytes of a tokenizer's vocabulary (``vocabulary_bytes``; ``overlap_vocabulary``, which ``vocab_overlap``
compares), the evaluation sets of rows that measure no text (``TRAIN_ROLE``, ``REFERENCE_ROLE``), and the
statistics of the paired tests' table ``paired.csv``: its columns, its Holm–Bonferroni families
(``holm_by_family``), the significance level and the permutations a family of tests draws.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from benchmarks.errors import BenchmarkError
from benchmarks.measure.metrics import MetricResult
from benchmarks.measure.paired import holm_adjust
from benchmarks.measure.registry import Compute, Metric
from bpe.base import DEFAULT_SPECIAL_TOKENS, Tokenizer

TRAIN_ROLE = "train"  # the eval set of Needs.TOKENIZER rows
REFERENCE_ROLE = "reference"  # the eval set of morphology rows


def metric_results(metrics: Sequence[Metric], data: Any) -> list[MetricResult]:
    """Every metric of ``metrics`` on ``data`` (the input they all need).  A function that computes
    several metrics in one pass (it returns them by name) runs once."""
    computed: dict[Compute, Any] = {}
    results = []
    for metric in metrics:
        if metric.compute not in computed:
            computed[metric.compute] = metric.compute(data)
        output = computed[metric.compute]
        result = output[metric.name] if isinstance(output, Mapping) else output
        if result is None:  # undefined for this tokenizer (e.g. tokens inside a character of a char tokenizer)
            continue
        if result.name != metric.name:
            raise BenchmarkError(f"internal error: the function of metric {metric.name!r} returned {result.name!r}",
                                 code="internal_error", value=metric.name)  # fmt: skip
        results.append(result)
    return results


def vocabulary_bytes(tokenizer: Tokenizer) -> tuple[frozenset[bytes], bytes]:
    """The bytes of every token of ``tokenizer`` and the prefix of its word-initial tokens: ``b" "`` when the
    vocabulary holds tokens made of a space and more than whitespace (``Ġword``, ``▁word``), else ``b""``."""
    vocabulary = frozenset(tokenizer.all_token_bytes())
    spaced = any(token.startswith(b" ") and token[1:2].strip() for token in vocabulary)  # a space, then a letter
    return vocabulary, b" " if spaced else b""


def overlap_vocabulary(tokenizer: Tokenizer) -> frozenset[bytes]:
    """The vocabulary ``metrics.vocabulary_jaccard`` compares: every entry's bytes, without empty entries
    and the special tokens of the trained families."""
    entries, _ = vocabulary_bytes(tokenizer)
    return entries - {b"", *(token.encode("utf-8") for token in DEFAULT_SPECIAL_TOKENS)}


#: the level at which the report calls a difference significant (after the Holm–Bonferroni adjustment)
SIGNIFICANCE_LEVEL = 0.05


def permutations_for_family(tests: int, n_resamples: int) -> int:
    """Random swap patterns each permutation test of a family of ``tests`` draws: at least the config's
    ``n_resamples``, and enough that the smallest adjusted p-value a test can reach, about
    tests / (1 + permutations), is at most half the significance level (with 1,000 draws and 112 tests it
    would be 0.11: no difference could ever be significant)."""
    return max(n_resamples, math.ceil(2 * tests / SIGNIFICANCE_LEVEL))


#: the columns of paired.csv (``benchmarks.run.evaluate.paired_rows``)
PAIRED_COLUMNS = ("corpus", "eval_set", "metric", "tokenizer_a", "tokenizer_b", "vocab_size", "difference", "ci_low",
                  "ci_high", "p_value", "p_value_holm", "n")


#: the columns that declare a family of paired tests for the Holm–Bonferroni adjustment: one family per
#: metric and evaluation set, across tokenizer pairs and corpora (languages)
HOLM_FAMILY = ("metric", "eval_set")


def holm_by_family(paired: pd.DataFrame) -> pd.Series:
    """The Holm–Bonferroni adjusted p-value of every row of a ``paired.csv`` table within its family
    (``HOLM_FAMILY``), aligned with its index."""
    adjusted = pd.Series(math.nan, index=paired.index, dtype=float)
    for _, family in paired.groupby(list(HOLM_FAMILY), sort=False):
        adjusted[family.index] = holm_adjust(family["p_value"].to_numpy(dtype=float))
    return adjusted
