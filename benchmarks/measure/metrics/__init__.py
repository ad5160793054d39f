"""Intrinsic tokenization metrics, and the registry that declares them (``METRICS``, at the end).

The functions live in one module per report group (``GROUPS``): ``oov``, ``compression``,
``fertility``, ``morphology``, ``parity``, ``distribution``, ``fidelity``, ``numbers``, ``robustness``
(its input, ``PerturbedText``, beside its functions) and ``cost``; their input objects and ``MetricResult``
in ``inputs``, the span arithmetic several groups share in ``spans``.  Every public name is importable
from ``benchmarks.measure.metrics`` itself.

Every metric function takes ONE input object, the one its declaration's ``needs``
names (``benchmarks.measure.registry.Needs``): ``RunningText`` (texts of an evaluation set
and their encodings), ``IsolatedWords`` (its words, each encoded alone),
``ReferenceWords`` (a morpheme reference and its words encoded alone),
``PairedCounts`` (per-item token counts of two tokenizer rows), ``JoinedCounts``
(token counts of one joined string per row) or ``TokenizerFacts``.  Encodings
are ``bpe.Encoding``: ids + UTF-8 *byte* spans into the text that was encoded.
Nothing here trains, loads or encodes: the evaluator (``benchmarks.run.evaluate``)
does that, builds each input once and passes it to every metric that needs it.

Conventions shared by all metrics (``docs/metrics.md`` is the user-facing
version of these definitions and of each function's docstring):

* **Items.**  A corpus-level metric is a *ratio of sums* over items
  (sentences, lines, or words): ``value = sum(numerators) / sum(denominators)``.
  The per-item numerators and denominators are returned so that
  ``benchmarks.measure.stats`` can bootstrap the same ratio by resampling items.
  No items at all is a ``BenchmarkError``; a zero denominator sum gives NaN
  ("undefined", e.g. boundary precision of a tokenizer that never splits).
* **Tokens** are everything the tokenizer emits, including a bare end-of-word
  marker ``</w>`` or a bare ``▁`` (they occupy sequence positions).  Encoders
  add no BOS/EOS tokens, so none need stripping.
* **Content tokens** are tokens whose byte span is non-empty.  Only they can
  split a word: a bare ``</w>`` or a dummy-prefix ``▁`` covers no input byte,
  so it never creates a boundary, never makes a word "continued", and printed
  markers (``</w>``, ``Ġ``, ``▁``, ``##``) never shift offsets because
  offsets come from spans, not piece strings.
* **Boundaries** of a word encoded in isolation are the byte offsets ``b`` with
  ``0 < b < len(word in bytes)`` where a content token starts or ends.  Gold
  morpheme boundaries are character offsets and are converted to byte offsets
  before comparison, so a byte token ending inside a multi-byte character is a
  boundary that matches no gold boundary (a false positive).

Adding a metric: write its function in the module of its group, add its ``Metric``
line to ``METRICS`` below and its section to ``docs/metrics.md``; nothing else changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.measure.metrics.compression import (
    bytes_per_token,
    chars_per_token,
    tokens_per_kchar,
    tokens_per_sentence,
    tokens_vs_char,
)
from benchmarks.measure.metrics.cost import vocab_size_reached
from benchmarks.measure.metrics.distribution import (
    RENYI_ALPHA,
    bigram_entropy,
    renyi_efficiency,
    shannon_efficiency,
    token_gini,
    type_token_ratio,
    vocab_overlap,
    vocab_utilisation,
    vocabulary_jaccard,
)
from benchmarks.measure.metrics.fertility import (
    continued_word_share,
    continued_word_share_running,
    fertility_isolated,
    fertility_running,
    single_token_word_share,
    single_token_word_share_running,
)
from benchmarks.measure.metrics.fidelity import (
    chars_lost_rate,
    has_partial_characters,
    longest_common_subsequence,
    partial_char_token_share,
    roundtrip_failure_rate,
)
from benchmarks.measure.metrics.inputs import (
    Analyses,
    EncodedWords,
    IsolatedWords,
    JoinedCounts,
    MetricResult,
    MorphScoreRows,
    PairedCounts,
    ReferenceWords,
    RunningText,
    TokenizerFacts,
    VocabularyPair,
    ratio_of_sums,
)
from benchmarks.measure.metrics.morphology import (
    boundary_metrics,
    in_vocabulary_boundary_metrics,
    morphscore,
    morphscore_upstream,
)
from benchmarks.measure.metrics.numbers import (
    LONG_NUMBER_DIGITS,
    digit_chunk_share,
    number_context_split_share,
    punctuation_attached_share,
    tokens_per_digit,
)
from benchmarks.measure.metrics.oov import oov_token_rate, oov_type_rate, unk_token_rate, unk_word_rate
from benchmarks.measure.metrics.parity import (
    parity_joined_vs_eng,
    parity_mean_ratio_vs_eng,
    parity_vs_eng,
    parity_vs_eng_held_out,
)
from benchmarks.measure.metrics.robustness import PerturbedText, robustness
from benchmarks.measure.perturb import PERTURBATIONS
from benchmarks.measure.registry import DESCRIPTIVE, HIGHER, LOWER, Capability, Metric, Needs, declare

__all__ = [
    "ALWAYS_COMPUTED",
    "COMPUTED_TOGETHER",
    "GROUPS",
    "LANGUAGE_MODEL_METRICS",
    "LONG_NUMBER_DIGITS",
    "METRICS",
    "RENYI_ALPHA",
    "Analyses",
    "EncodedWords",
    "IsolatedWords",
    "JoinedCounts",
    "MetricResult",
    "MorphScoreRows",
    "PairedCounts",
    "PerturbedText",
    "ReferenceWords",
    "RunningText",
    "TokenizerFacts",
    "VocabularyPair",
    "bigram_entropy",
    "boundary_metrics",
    "bytes_per_token",
    "chars_lost_rate",
    "chars_per_token",
    "continued_word_share",
    "continued_word_share_running",
    "digit_chunk_share",
    "fertility_isolated",
    "fertility_running",
    "has_partial_characters",
    "in_vocabulary_boundary_metrics",
    "longest_common_subsequence",
    "morphscore",
    "morphscore_upstream",
    "number_context_split_share",
    "oov_token_rate",
    "oov_type_rate",
    "parity_joined_vs_eng",
    "parity_mean_ratio_vs_eng",
    "parity_vs_eng",
    "parity_vs_eng_held_out",
    "partial_char_token_share",
    "punctuation_attached_share",
    "ratio_of_sums",
    "renyi_efficiency",
    "robustness",
    "roundtrip_failure_rate",
    "select_metrics",
    "shannon_efficiency",
    "single_token_word_share",
    "single_token_word_share_running",
    "token_gini",
    "tokens_per_digit",
    "tokens_per_kchar",
    "tokens_per_sentence",
    "tokens_vs_char",
    "type_token_ratio",
    "unk_token_rate",
    "unk_word_rate",
    "vocab_overlap",
    "vocab_size_reached",
    "vocab_utilisation",
    "vocabulary_jaccard",
]

# --------------------------------------------------------------------------- the registry

#: Report sections, in report order, with their titles.
GROUPS: dict[str, str] = {
    "oov": "Unknown and out-of-vocabulary words",
    "compression": "Compression",
    "fertility": "Fertility",
    "morphology": "Morpheme-boundary alignment",
    "parity": "Cross-lingual parity (premium vs English)",
    "distribution": "Token distribution",
    "fidelity": "Fidelity (what comes back from the tokenizer)",
    "numbers": "Numbers and punctuation",
    "robustness": "Robustness to noise (perturbed text)",
    "cost": "Cost",
    "downstream": "Language modelling (bits per byte)",
}

_TEXT, _WORDS, _REFERENCE = Needs.RUNNING_TEXT, Needs.ISOLATED_WORDS, Needs.MORPHEME_REFERENCE
_REFERENCE_VOCABULARY = Needs.MORPHEME_REFERENCE_VOCABULARY
_WHOLE_PRETOKENS = frozenset({Capability.WHOLE_PRETOKENS})
#: one function per perturbation, shared by its metrics (``metric_results`` runs it once)
_ROBUSTNESS = {name: robustness(name) for name in PERTURBATIONS}

#: Every metric tokbench reports, by name, in report order (tables within a group follow this order).
METRICS: dict[str, Metric] = declare(GROUPS, [
    # name, label, group, direction, format, needs, function
    Metric("unk_token_rate", "<unk> token share", "oov", LOWER, "{:.4f}", _TEXT, unk_token_rate),
    Metric("unk_word_rate", "words with <unk>", "oov", LOWER, "{:.4f}", _WORDS, unk_word_rate),
    Metric("oov_token_rate", "OOV word tokens", "oov", LOWER, "{:.4f}", _TEXT, oov_token_rate,
           requires=_WHOLE_PRETOKENS),
    Metric("oov_type_rate", "OOV word types", "oov", LOWER, "{:.4f}", _TEXT, oov_type_rate,
           requires=_WHOLE_PRETOKENS),
    Metric("bytes_per_token", "bytes / token", "compression", HIGHER, "{:.2f}", _TEXT, bytes_per_token),
    Metric("chars_per_token", "chars / token", "compression", HIGHER, "{:.2f}", _TEXT, chars_per_token),
    Metric("tokens_per_kchar", "tokens / 1k chars", "compression", LOWER, "{:.1f}", _TEXT, tokens_per_kchar),
    Metric("tokens_per_sentence", "tokens / sentence", "compression", LOWER, "{:.1f}", _TEXT, tokens_per_sentence,
           optional=True),
    Metric("tokens_vs_char", "tokens vs char-level", "compression", LOWER, "{:.3f}", Needs.CHAR_BASELINE,
           tokens_vs_char),
    Metric("fertility_isolated", "fertility (isolated words)", "fertility", LOWER, "{:.2f}", _WORDS,
           fertility_isolated),
    Metric("fertility_running", "fertility (running text)", "fertility", LOWER, "{:.2f}", _TEXT, fertility_running),
    Metric("continued_word_share", "continued words", "fertility", LOWER, "{:.3f}", _WORDS, continued_word_share),
    Metric("single_token_word_share", "single-token words", "fertility", HIGHER, "{:.3f}", _WORDS,
           single_token_word_share),
    Metric("continued_word_share_running", "continued words (running text)", "fertility", LOWER, "{:.3f}", _TEXT,
           continued_word_share_running),
    Metric("single_token_word_share_running", "single-token words (running text)", "fertility", HIGHER, "{:.3f}",
           _TEXT, single_token_word_share_running),
    # morphology: one row per morpheme reference, named in the `reference` column
    Metric("boundary_precision", "boundary precision", "morphology", HIGHER, "{:.3f}", _REFERENCE, boundary_metrics),
    Metric("boundary_recall", "boundary recall", "morphology", HIGHER, "{:.3f}", _REFERENCE, boundary_metrics),
    Metric("boundary_f1", "boundary F1", "morphology", HIGHER, "{:.3f}", _REFERENCE, boundary_metrics),
    Metric("exact_segmentation", "exact segmentation", "morphology", HIGHER, "{:.3f}", _REFERENCE, boundary_metrics),
    Metric("morphscore", "MorphScore v1", "morphology", HIGHER, "{:.3f}", Needs.MORPHSCORE_REFERENCE, morphscore),
    Metric("morphscore_excluded", "MorphScore words excluded (single token)", "morphology", DESCRIPTIVE, "{:.0f}",
           Needs.MORPHSCORE_REFERENCE, morphscore),
    # comparability modes (opt-in: a config names them in `extra_metrics`)
    Metric("boundary_precision_in_vocab", "boundary precision (Uzan filter)", "morphology", HIGHER, "{:.3f}",
           _REFERENCE_VOCABULARY, in_vocabulary_boundary_metrics, optional=True),
    Metric("boundary_recall_in_vocab", "boundary recall (Uzan filter)", "morphology", HIGHER, "{:.3f}",
           _REFERENCE_VOCABULARY, in_vocabulary_boundary_metrics, optional=True),
    Metric("boundary_f1_in_vocab", "boundary F1 (Uzan filter)", "morphology", HIGHER, "{:.3f}",
           _REFERENCE_VOCABULARY, in_vocabulary_boundary_metrics, optional=True),
    Metric("in_vocab_word_share", "words scored (Uzan filter)", "morphology", DESCRIPTIVE, "{:.3f}",
           _REFERENCE_VOCABULARY, in_vocabulary_boundary_metrics, optional=True),
    Metric("morphscore_upstream", "MorphScore v1 (upstream)", "morphology", HIGHER, "{:.3f}", Needs.MORPHSCORE_ROWS,
           morphscore_upstream, optional=True),
    Metric("parity_vs_eng", "premium vs English (ratio of totals)", "parity", LOWER, "{:.3f}", Needs.ENGLISH_PARTNER,
           parity_vs_eng, definition="ratio of totals, Σ tokens(language) / Σ tokens(English) over the parallel "
           "sentences both hold, each sentence encoded alone"),
    Metric("parity_joined_vs_eng", "premium vs English (joined text, Petrov et al.)", "parity", LOWER, "{:.3f}",
           Needs.ENGLISH_PARTNER_JOINED, parity_joined_vs_eng, definition="Petrov et al. 2023's joined text, "
           "tokens of one string joining the parallel sentences both hold / tokens of the English string"),
    Metric("parity_mean_ratio_vs_eng", "premium vs English (mean of ratios on dev, TokSuite)", "parity", LOWER,
           "{:.3f}", Needs.ENGLISH_PARTNER_DEV, parity_mean_ratio_vs_eng, definition="TokSuite's mean of "
           "per-sentence ratios, mean over the FLORES dev sentences both hold of tokens(language) / tokens(English)"),
    Metric("parity_vs_eng_held_out", "premium vs English on devtest (ratio of totals)", "parity", LOWER, "{:.3f}",
           Needs.ENGLISH_PARTNER_HELD_OUT, parity_vs_eng_held_out, optional=True, definition="ratio of totals over "
           "the parallel sentences outside the set's dev split (FLORES devtest), each sentence encoded alone"),
    Metric("renyi_efficiency", "Rényi efficiency (α=2.5)", "distribution", HIGHER, "{:.3f}", _TEXT,
           renyi_efficiency),
    Metric("shannon_efficiency", "Shannon efficiency", "distribution", HIGHER, "{:.3f}", _TEXT, shannon_efficiency),
    Metric("vocab_utilisation", "vocabulary used", "distribution", HIGHER, "{:.3f}", _TEXT, vocab_utilisation),
    Metric("token_gini", "Gini of token frequencies", "distribution", DESCRIPTIVE, "{:.3f}", _TEXT, token_gini),
    Metric("bigram_entropy", "bigram entropy (bits)", "distribution", DESCRIPTIVE, "{:.2f}", _TEXT, bigram_entropy),
    Metric("type_token_ratio", "type-token ratio", "distribution", DESCRIPTIVE, "{:.4f}", _TEXT, type_token_ratio),
    # one row per pair of tokenizer rows of a corpus at the report size, the other row in `partner`
    Metric("vocab_overlap", "vocabulary overlap (Jaccard)", "distribution", DESCRIPTIVE, "{:.3f}",
           Needs.VOCABULARY_PARTNER, vocab_overlap),
    Metric("roundtrip_failure_rate", "texts not round-tripped", "fidelity", LOWER, "{:.3f}", _TEXT,
           roundtrip_failure_rate),
    Metric("chars_lost_rate", "characters lost", "fidelity", LOWER, "{:.4f}", _TEXT, chars_lost_rate),
    Metric("partial_char_token_share", "tokens ending inside a character", "fidelity", DESCRIPTIVE, "{:.3f}",
           _TEXT, partial_char_token_share),
    Metric("digit_chunk_share", "numbers in chunks of ≤ 3 digits", "numbers", DESCRIPTIVE, "{:.3f}", _TEXT,
           digit_chunk_share),
    Metric("tokens_per_digit", "tokens / digit", "numbers", DESCRIPTIVE, "{:.3f}", _TEXT, tokens_per_digit),
    Metric("number_context_split_share", "numbers split differently alone", "numbers", LOWER, "{:.3f}", _TEXT,
           number_context_split_share),
    Metric("punctuation_attached_share", "punctuation attached to words", "numbers", DESCRIPTIVE, "{:.3f}", _TEXT,
           punctuation_attached_share),
    # opt-in, per perturbation of benchmarks.measure.perturb: token inflation, and the two word metrics where the
    # words pair up (a language without the perturbation has no row)
    *(Metric(f"token_inflation_{name}", f"token inflation ({name})", "robustness", LOWER, "{:.3f}",
             Needs.PERTURBED_TEXT, _ROBUSTNESS[name], optional=True) for name in PERTURBATIONS),
    *(Metric(f"changed_word_share_{name}", f"words split differently ({name})", "robustness", LOWER, "{:.3f}",
             Needs.PERTURBED_TEXT, _ROBUSTNESS[name], optional=True)
      for name, perturbation in PERTURBATIONS.items() if perturbation.keeps_words),
    *(Metric(f"boundary_edit_distance_{name}", f"boundary edits per word ({name})", "robustness", LOWER, "{:.3f}",
             Needs.PERTURBED_TEXT, _ROBUSTNESS[name], optional=True)
      for name, perturbation in PERTURBATIONS.items() if perturbation.keeps_words),
    Metric("vocab_size_reached", "vocab size reached", "cost", DESCRIPTIVE, "{:.0f}", Needs.TOKENIZER,
           vocab_size_reached),
    Metric("train_seconds", "training time (s)", "cost", LOWER, "{:.2f}", Needs.MEASUREMENT, None,
           deterministic=False),
    Metric("encode_mb_per_s", "encode MB/s", "cost", HIGHER, "{:.2f}", Needs.MEASUREMENT, None,
           deterministic=False),
    # rows of a run with a [downstream] table only (benchmarks.downstream), never selected by `metrics`
    Metric("bpb", "bits per byte (small LM)", "downstream", LOWER, "{:.3f}", Needs.LANGUAGE_MODEL, None,
           optional=True, definition="summed negative log-likelihood in bits of a small causal LM trained on the "
           "row's ids, plus 8 bits per byte under an <unk> token, divided by the UTF-8 bytes of the text"),
])  # fmt: skip

#: the metrics a run's language models give (``[downstream]``), not the metric selection
LANGUAGE_MODEL_METRICS = tuple(name for name, metric in METRICS.items() if metric.needs is Needs.LANGUAGE_MODEL)


#: Computed whatever a config selects: the report marks every cell with them (the vocabulary size a
#: tokenizer reached; whether its <unk> share makes it a degenerate row).
ALWAYS_COMPUTED = ("unk_token_rate", "vocab_size_reached")
#: Computed together or not at all: an F1 without its precision and recall hides over-segmentation.
COMPUTED_TOGETHER = (
    ("boundary_precision", "boundary_recall", "boundary_f1"),
    ("boundary_precision_in_vocab", "boundary_recall_in_vocab", "boundary_f1_in_vocab", "in_vocab_word_share"),
)


def select_metrics(names: Sequence[str] | None, extra: Sequence[str] = ()) -> list[Metric]:
    """The metrics a config asks for, in registry order: ``names`` (``None``: every metric that is not
    optional) and ``extra``, plus ``ALWAYS_COMPUTED`` and the companions of ``COMPUTED_TOGETHER``."""
    chosen = {name for name, metric in METRICS.items() if not metric.optional} if names is None else set(names)
    chosen |= set(extra) | set(ALWAYS_COMPUTED)
    for together in COMPUTED_TOGETHER:
        if chosen & set(together):
            chosen |= set(together)
    return [metric for name, metric in METRICS.items() if name in chosen]
