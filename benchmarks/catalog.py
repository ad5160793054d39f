"""The names of every metric the runner writes, how to show them, and which way is better.

This is the vocabulary shared by the runner (which writes tidy rows), the
report (tables, plots, findings) and the regression check (tolerances).
Definitions live next to the code in ``benchmarks.metrics`` and in
``docs/metrics.md``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricInfo:
    label: str  # column/axis label in reports
    higher_is_better: bool | None  # None: neither (descriptive)
    group: str  # report section
    fmt: str = "{:.3f}"  # value format in tables
    deterministic: bool = True  # False for wall-clock figures: the check ignores them by default


METRICS: dict[str, MetricInfo] = {
    # OOV
    "unk_token_rate": MetricInfo("<unk> token share", False, "oov", "{:.4f}"),
    "unk_word_rate": MetricInfo("words with <unk>", False, "oov", "{:.4f}"),
    "oov_token_rate": MetricInfo("OOV word tokens", False, "oov", "{:.4f}"),
    "oov_type_rate": MetricInfo("OOV word types", False, "oov", "{:.4f}"),
    # compression
    "bytes_per_token": MetricInfo("bytes / token", True, "compression", "{:.2f}"),
    "chars_per_token": MetricInfo("chars / token", True, "compression", "{:.2f}"),
    "tokens_per_kchar": MetricInfo("tokens / 1k chars", False, "compression", "{:.1f}"),
    "tokens_vs_char": MetricInfo("tokens vs char-level", False, "compression", "{:.3f}"),
    # fertility
    "fertility_isolated": MetricInfo("fertility (isolated words)", False, "fertility", "{:.2f}"),
    "fertility_running": MetricInfo("fertility (running text)", False, "fertility", "{:.2f}"),
    "continued_word_share": MetricInfo("continued words", False, "fertility", "{:.3f}"),
    "single_token_word_share": MetricInfo("single-token words", True, "fertility", "{:.3f}"),
    "continued_word_share_running": MetricInfo("continued words (running text)", False, "fertility", "{:.3f}"),
    "single_token_word_share_running": MetricInfo("single-token words (running text)", True, "fertility", "{:.3f}"),
    # morphology (one row per morpheme reference, named in the `reference` column)
    "boundary_precision": MetricInfo("boundary precision", True, "morphology"),
    "boundary_recall": MetricInfo("boundary recall", True, "morphology"),
    "boundary_f1": MetricInfo("boundary F1", True, "morphology"),
    "exact_segmentation": MetricInfo("exact segmentation", True, "morphology"),
    "morphscore": MetricInfo("MorphScore v1", True, "morphology"),
    "morphscore_excluded": MetricInfo("MorphScore words excluded (single token)", None, "morphology", "{:.0f}"),
    # cross-lingual
    "parity_vs_eng": MetricInfo("premium vs English", False, "parity", "{:.2f}"),
    # distribution
    "renyi_efficiency": MetricInfo("Rényi efficiency (α=2.5)", True, "distribution"),
    "vocab_utilisation": MetricInfo("vocabulary used", True, "distribution"),
    # cost
    "vocab_size_reached": MetricInfo("vocab size reached", None, "cost", "{:.0f}"),
    "train_seconds": MetricInfo("training time (s)", False, "cost", "{:.2f}", deterministic=False),
    "encode_mb_per_s": MetricInfo("encode MB/s", True, "cost", "{:.2f}", deterministic=False),
}

#: Columns of results.parquet / results.csv, in order (one tidy row per metric value).
RESULT_COLUMNS = [
    "corpus",  # corpus spec id, e.g. ud-tur
    "language",  # ISO 639-3 + script, e.g. tur_Latn
    "tokenizer",  # row label, e.g. char-bpe, spm-unigram, cl100k
    "kind",  # family name (word, char, char-bpe, byte-bpe, spm-bpe, spm-unigram) or production name
    "row_type",  # family | reference | production
    "vocab_size",  # requested vocabulary size (<NA> for production rows)
    "options",  # canonical option string, e.g. "end_of_word=separate,pretokenizer=unicode"
    "eval_set",  # corpus role evaluated: test | eval
    "reference",  # morpheme reference name for morphology rows, else ""
    "metric",  # a key of METRICS
    "value",
    "ci_low",  # 95% bootstrap CI (NaN where not applicable)
    "ci_high",
    "n",  # items aggregated (sentences, words or references items)
]
