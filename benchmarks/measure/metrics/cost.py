"""Cost (group ``cost``): the vocabulary size a tokenizer reached.  Training time and encoding speed are
measured by the runner, not computed from an input (``Needs.MEASUREMENT``)."""

from __future__ import annotations

from benchmarks.measure.metrics.inputs import MetricResult, TokenizerFacts


def vocab_size_reached(tokenizer: TokenizerFacts) -> MetricResult:
    """The number of ids in the trained vocabulary, special tokens included (one value, no CI).

    It may be below the requested size: a vocabulary size is an upper bound (training stops when no
    pair reaches ``min_frequency`` or the text has nothing more to learn).
    """
    return MetricResult("vocab_size_reached", float(tokenizer.vocab_size), 1)
