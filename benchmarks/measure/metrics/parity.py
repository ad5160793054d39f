"""Cross-lingual parity (group ``parity``): the tokenization premium against English on parallel
sentences, counted three ways (ratio of totals, Petrov et al. 2023, TokSuite)."""

from __future__ import annotations

import numpy as np

from benchmarks.errors import BenchmarkError
from benchmarks.measure.metrics.inputs import JoinedCounts, MetricResult, PairedCounts, ratio_of_sums


def parity_vs_eng(pair: PairedCounts) -> MetricResult:
    """Tokenization premium against English on a parallel corpus (FLORES-200): ratio of totals.

    Formula: sum_i tokens(lang, i) / sum_i tokens(eng, i) over the parallel
    sentences i both corpora hold (``Needs.ENGLISH_PARTNER``: paired by the
    key the corpus spec declares, e.g. the FLORES line number), each encoded
    on its own by the same tokenizer row.
    Aggregation: ratio of sums over sentences; the bootstrap resamples sentence
    indices (paired).  1 = parity; 2 = twice as many tokens as English.
    Source: Petrov et al. 2023's premium, counted sentence by sentence.
    Differences: Petrov et al. count one joined string per language
    (``parity_joined_vs_eng``); TokSuite averages per-sentence ratios on dev
    (``parity_mean_ratio_vs_eng``).
    """
    return ratio_of_sums("parity_vs_eng", pair.tokens, pair.partner_tokens)


def parity_vs_eng_held_out(pair: PairedCounts) -> MetricResult:
    """The premium against English (ratio of totals, as ``parity_vs_eng``) on the parallel sentences outside the set's
    dev split only (``Needs.ENGLISH_PARTNER_HELD_OUT``: FLORES-200 devtest, 1,012 sentences).

    Formula: sum_i tokens(lang, i) / sum_i tokens(eng, i) over those sentences.
    Aggregation and bootstrap: as ``parity_vs_eng``.
    Source: Petrov et al. 2023's premium, counted sentence by sentence on the held-out split.
    Differences: the dev split is left out, so that a tokenizer that chose its merges on the dev sentences
    (parity-aware BPE, Foroutan et al. 2025, whose merges improve the worst language's compression of a parallel
    dev set) is judged on sentences it never saw; the other premiums include the dev split.
    """
    return ratio_of_sums("parity_vs_eng_held_out", pair.tokens, pair.partner_tokens)


def parity_joined_vs_eng(joined: JoinedCounts) -> MetricResult:
    """Tokenization premium against English as Petrov et al. 2023 count it: one string per language.

    Formula: len(encode(s_lang)) / len(encode(s_eng)), where s joins the
    parallel sentences both corpora hold like their ``compute_tokenizations.py``
    joins FLORES-200: ``" ".join(dev.split("\\n") + devtest.split("\\n"))``,
    the dev split then the other sentences, each file's trailing newline kept as
    an empty string (``corpora.flores.petrov_join``); no special tokens.
    Aggregation: one ratio of two counts (``n`` = sentences joined); no CI.
    Source: Petrov et al. 2023 ("Language Model Tokenizers Introduce
    Unfairness Between Languages"); ``tokbench reproduce petrov2023`` checks
    the counts against their published table.
    """
    if joined.partner_tokens <= 0:
        raise BenchmarkError("metric parity_joined_vs_eng: the English text has no tokens", code="no_english_tokens")
    return MetricResult("parity_joined_vs_eng", joined.tokens / joined.partner_tokens, joined.sentences)


def parity_mean_ratio_vs_eng(pair: PairedCounts) -> MetricResult:
    """Tokenization premium against English as TokSuite averages it: mean of per-sentence ratios.

    Formula: (1/N) sum_i tokens(lang, i) / tokens(eng, i) over the N parallel
    sentences of the set's dev split (``Needs.ENGLISH_PARTNER_DEV``: FLORES-200
    dev, 997 sentences, paired by key).
    Aggregation: mean of ratios (numerators = the ratios, denominators = 1),
    so short sentences weigh as much as long ones; the bootstrap resamples
    sentences.  Not comparable with the ratio of totals.
    Source: TokSuite (FLORES dev only, mean of per-sentence ratios).
    """
    tokens = np.asarray(pair.tokens, dtype=np.float64)
    english = np.asarray(pair.partner_tokens, dtype=np.float64)
    if np.any(english <= 0):
        raise BenchmarkError("metric parity_mean_ratio_vs_eng: an English sentence has no tokens",
                             code="no_english_tokens")  # fmt: skip
    return ratio_of_sums("parity_mean_ratio_vs_eng", tokens / english, np.ones(len(tokens)))
