"""Compression (group ``compression``): bytes, characters and tokens per token, and the token count
relative to the character-level tokenizer."""

from __future__ import annotations

from benchmarks.measure.metrics.inputs import MetricResult, PairedCounts, RunningText, ratio_of_sums


def bytes_per_token(text: RunningText) -> MetricResult:
    """UTF-8 bytes per token.

    Formula: sum_i bytes(i) / sum_i tokens(i) over items i (sentences/documents).
    Aggregation: ratio of sums (NOT the mean of per-sentence ratios, which
    weights short sentences up and gives a different number).
    Source: Goldman et al. 2024 ("Unpacking Tokenization"); Schmidt et al. 2024.
    """
    return ratio_of_sums("bytes_per_token", [len(t.encode("utf-8")) for t in text.texts],
                         [len(e) for e in text.encodings])  # fmt: skip


def chars_per_token(text: RunningText) -> MetricResult:
    """Characters (Unicode code points) per token.

    Formula: sum_i chars(i) / sum_i tokens(i).  Aggregation: ratio of sums.
    Source: Goldman et al. 2024; Schmidt et al. 2024.  Always <= bytes per
    token; exactly 1 for a character tokenizer that emits one token per
    character.
    """
    return ratio_of_sums("chars_per_token", [len(t) for t in text.texts], [len(e) for e in text.encodings])


def tokens_per_kchar(text: RunningText) -> MetricResult:
    """Tokens per 1,000 characters.

    Formula: 1000 * sum_i tokens(i) / sum_i chars(i).  Aggregation: ratio of
    sums (so it is exactly 1000 / chars_per_token).  Source: a normalised
    corpus token count (Schmidt et al. 2024 report corpus token counts).
    """
    return ratio_of_sums("tokens_per_kchar", [1000 * len(e) for e in text.encodings], [len(t) for t in text.texts])


def tokens_per_sentence(text: RunningText) -> MetricResult:
    """Tokens per document (per sentence on a sentence-per-line set such as FLORES-200).

    Formula: sum_i tokens(i) / n, n the number of documents.  Aggregation: ratio
    of sums (each item's denominator is 1, so the bootstrap resamples documents).
    Source: the sequence-length view of Petrov et al. 2023 and tokka-bench, per
    sentence rather than per corpus.
    """
    return ratio_of_sums("tokens_per_sentence", [len(e) for e in text.encodings], [1] * len(text.texts))


def tokens_vs_char(pair: PairedCounts) -> MetricResult:
    """Token count relative to the character-level tokenizer on the same texts.

    Formula: sum_i tokens(i) / sum_i char_tokens(i), ``char_tokens(i)`` being
    the token count of the run's char-level tokenizer on the same document i
    (``Needs.CHAR_BASELINE``: documents matched by id).
    Aggregation: ratio of sums over the same items (paired: resample items,
    keep both counts of an item together).  Below 1 = shorter sequences than
    characters.  Source: tokbench's own normalisation (the char tokenizer is
    the no-merge baseline of the BPE families).
    """
    return ratio_of_sums("tokens_vs_char", pair.tokens, pair.partner_tokens)
