"""Token distribution (group ``distribution``): efficiency, utilisation and inequality of the token
frequencies, and the vocabulary overlap of two tokenizers (``vocab_overlap``)."""

from __future__ import annotations

import math

import numpy as np

from benchmarks.errors import BenchmarkError
from benchmarks.measure.metrics.inputs import MetricResult, RunningText, VocabularyPair

#: Rényi order used by ``renyi_efficiency`` (Zouhar et al. 2023 and Uzan et al. 2024 use 2.5;
#: the ``tokenization-scorer`` package silently defaults to 3.0).
RENYI_ALPHA = 2.5


def _id_counts(name: str, text: RunningText) -> tuple[np.ndarray, int]:
    """How often each id occurs in ``text`` (index = id), and the vocabulary size."""
    vocab_size = text.vocab_size
    if vocab_size is None or vocab_size < 2:
        raise BenchmarkError(f"metric {name}: vocab_size must be at least 2, got {vocab_size}", code="out_of_range",
                             value=vocab_size, field="vocab_size")  # fmt: skip
    ids = text.ids
    if len(ids) == 0:
        raise BenchmarkError(f"metric {name}: nothing to aggregate (no tokens)", code="no_items", value=name)
    if ids.min() < 0 or ids.max() >= vocab_size:
        raise BenchmarkError(f"metric {name}: token id {ids.max()} outside the vocabulary (size {vocab_size})",
                             code="token_id_out_of_range", value=int(ids.max()))  # fmt: skip
    return np.bincount(ids, minlength=vocab_size), vocab_size


def renyi_efficiency(text: RunningText, alpha: float = RENYI_ALPHA) -> MetricResult:
    """Rényi efficiency of the unigram token distribution, α = 2.5.

    Formula: H_α(p) / log2 |V| with H_α(p) = 1/(1-α) · log2 Σ_t p_t^α (Shannon
    entropy at α = 1), p_t = count(t) / #tokens over all test tokens, |V| =
    the tokenizer's vocabulary size.
    Aggregation: one distribution over the whole test set (``n`` = tokens);
    not a ratio of sums, so no bootstrap CI.
    Source: Zouhar et al. 2023 ("Tokenization and the Noiseless Channel"),
    α = 2.5 as in Zouhar et al. and Uzan et al. 2024.
    Differences: the ``tokenization-scorer`` package defaults to α = 3.0 and
    divides by the log of the number of token types OBSERVED in the text
    unless given ``vocab``; we always use the full vocabulary size.
    """
    if alpha < 0:
        raise BenchmarkError(f"metric renyi_efficiency: alpha must be >= 0, got {alpha}", code="out_of_range",
                             value=alpha, field="alpha")  # fmt: skip
    counts, vocab_size = _id_counts("renyi_efficiency", text)
    p = counts[counts > 0] / counts.sum()
    if math.isclose(alpha, 1.0):
        entropy = -float(np.sum(p * np.log2(p)))
    else:
        entropy = float(np.log2(np.sum(p**alpha)) / (1 - alpha))
    return MetricResult("renyi_efficiency", entropy / math.log2(vocab_size), int(counts.sum()))


def vocab_utilisation(text: RunningText) -> MetricResult:
    """Share of the vocabulary used on the test set.

    Formula: #{distinct ids emitted} / |V| (special tokens included in |V|).
    Aggregation: one set over the whole test set (``n`` = tokens); no CI.
    Source: vocabulary utilisation as in TokEval (cimeister/tokenizer-analysis-suite).
    """
    counts, vocab_size = _id_counts("vocab_utilisation", text)
    return MetricResult("vocab_utilisation", float(np.count_nonzero(counts)) / vocab_size, int(counts.sum()))


def shannon_efficiency(text: RunningText) -> MetricResult:
    """Shannon efficiency of the unigram token distribution: ``renyi_efficiency`` at α = 1.

    Formula: H(p) / log2 |V| with H(p) = -Σ_t p_t log2 p_t, p_t = count(t) / #tokens over all test
    tokens, |V| the tokenizer's vocabulary size.
    Aggregation: one distribution over the whole test set (``n`` = tokens); no CI.
    Source: Zouhar et al. 2023 (``tokenization-scorer``'s ``shannon_efficiency``).
    Differences: ``tokenization-scorer`` divides by log2 of the number of token types observed in the
    text; we divide by the full vocabulary size, as ``renyi_efficiency`` does.
    """
    result = renyi_efficiency(text, alpha=1.0)
    return MetricResult("shannon_efficiency", result.value, result.n)


def token_gini(text: RunningText) -> MetricResult:
    """Gini coefficient of the frequencies of the token types used on the test set.

    Formula: with the counts x_1 <= ... <= x_m of the m distinct ids emitted,
    G = Σ_i (2i - m - 1) x_i / (m Σ_i x_i): 0 when every used type occurs equally often, towards 1 when a
    few types take all occurrences.  Ids never emitted are left out (``vocab_utilisation`` counts them).
    Aggregation: one distribution over the whole test set (``n`` = tokens); no CI.
    Source: the Gini coefficient of token frequencies as TokEval reports it (swiss-ai/tokenizer-intrinsic-evals).
    """
    counts, _ = _id_counts("token_gini", text)
    used = np.sort(counts[counts > 0]).astype(np.float64)
    m = len(used)
    ranks = np.arange(1, m + 1, dtype=np.float64)
    gini = float(np.sum((2 * ranks - m - 1) * used) / (m * used.sum()))
    return MetricResult("token_gini", gini, int(counts.sum()))


def bigram_entropy(text: RunningText) -> MetricResult:
    """Shannon entropy, in bits, of the distribution of adjacent token pairs.

    Formula: H = -Σ_(a,b) q_ab log2 q_ab, q_ab = count of token a directly followed by token b / #pairs,
    pairs taken within each text (a text of k tokens gives k - 1 pairs; none crosses from one text to
    the next).  Aggregation: one distribution over the whole test set (``n`` = pairs); no CI; NaN when
    no text has two tokens.
    Source: the bigram entropy of the token stream (TokEval; TokEntropyDrift's pairwise entropy).
    Differences: the joint entropy of the pair, not the conditional entropy of the next token given the
    previous one (which is this minus the unigram entropy of the first tokens).
    """
    firsts, seconds = [], []
    for encoding in text.encodings:
        ids = np.asarray(encoding.ids, dtype=np.int64)
        firsts.append(ids[:-1])
        seconds.append(ids[1:])
    if not text.encodings:
        raise BenchmarkError("metric bigram_entropy: nothing to aggregate (no texts)", code="no_items",
                             value="bigram_entropy")  # fmt: skip
    first, second = np.concatenate(firsts), np.concatenate(seconds)
    if len(first) == 0:
        return MetricResult("bigram_entropy", math.nan, 0)
    if min(first.min(), second.min()) < 0:
        raise BenchmarkError(f"metric bigram_entropy: negative token id {min(first.min(), second.min())}",
                             code="token_id_out_of_range", value=int(min(first.min(), second.min())))  # fmt: skip
    _, counts = np.unique(first * (int(second.max()) + 1) + second, return_counts=True)  # one key per pair
    q = counts / counts.sum()
    return MetricResult("bigram_entropy", float(-np.sum(q * np.log2(q))), len(first))


def type_token_ratio(text: RunningText) -> MetricResult:
    """Type–token ratio of the tokens: distinct ids emitted / tokens, over the whole test set.

    Aggregation: one set over the whole test set (``n`` = tokens); no CI (the number of types grows
    more slowly than the number of tokens, so it is comparable only on the same text).
    Source: TTR as TokEval reports it.
    """
    counts, _ = _id_counts("type_token_ratio", text)
    return MetricResult("type_token_ratio", float(np.count_nonzero(counts)) / float(counts.sum()), int(counts.sum()))


def vocabulary_jaccard(a: frozenset[bytes], b: frozenset[bytes]) -> float:
    """Vocabulary overlap of two tokenizers: the Jaccard index of their vocabularies as byte strings.

    Formula: |A ∩ B| / |A ∪ B|, A and B the sets of the text bytes of every vocabulary entry
    (``Tokenizer.id_to_bytes``: markers removed, so ``Ġworld``, ``▁world`` and `` world`` are the same
    entry ``b" world"``), without empty entries (a bare ``</w>``, control ids) and without the special
    tokens every trained family reserves (``<pad> <unk> <s> </s>``); NaN when both sets are empty.
    Source: vocabulary overlap as TokEval reports it (swiss-ai/tokenizer-intrinsic-evals).
    """
    shared = len(a & b)
    union = len(a) + len(b) - shared  # |A ∪ B| without building it (the intersection walks the smaller set)
    return shared / union if union else math.nan


def vocab_overlap(pair: VocabularyPair) -> MetricResult:
    """``vocabulary_jaccard`` of a tokenizer row and its partner (another row of the same corpus), one
    value per pair with ``n`` = |A ∪ B| (the entries compared; the shared ones are value × n) and no CI:
    it is a property of two vocabularies, not an aggregate over text items.  One row per unordered pair
    (the row whose label sorts first carries it, the other named in ``partner``).
    Source: vocabulary overlap as TokEval reports it (swiss-ai/tokenizer-intrinsic-evals), as ``vocabulary_jaccard``.
    """
    a, b = pair.vocabulary, pair.partner_vocabulary
    return MetricResult("vocab_overlap", vocabulary_jaccard(a, b), len(a) + len(b) - len(a & b))
