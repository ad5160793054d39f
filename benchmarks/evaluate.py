"""Glue between a trained tokenizer, a corpus and the metric registry.

``evaluate_tokenizer`` builds each input a metric can need (``registry.Needs``) once
per unit and hands it to every selected metric that needs it and applies to the
unit's tokenizer (``Metric.requires``): the tokenizer's own facts, then per
evaluation role its running texts (encoded once) and its words encoded in isolation,
then per morpheme reference its words encoded in isolation.  Every result becomes a
row with its bootstrap CI.  The unit's per-document token counts go with it, for the
metrics that pair two units (``cross_unit_rows``: the char baseline and the English
partner) and for the paired tests (``paired_rows``), computed once every unit is done.

Which words an isolated-word metric sees: the gold UD FORM words of a document
when the corpus has them (Rust et al. 2021), otherwise its whitespace-separated
words.  Each word is encoded alone in its mid-sentence form
(``Tokenizer.encode_word``: after a space, or with sentencepiece's dummy prefix).
Morphology metrics run over the words of each morpheme reference, each word
encoded that way; their rows carry ``eval_set = "reference"`` and the reference name.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from benchmarks.errors import BenchmarkError
from benchmarks.metrics import (
    IsolatedWords,
    MetricResult,
    PairedCounts,
    ReferenceWords,
    RunningText,
    TokenizerFacts,
)
from benchmarks.registry import Capability, Compute, Metric, Needs
from benchmarks.stats import metric_interval, paired_test
from benchmarks.units import DocumentCounts, ResultRow, Unit, UnitResult, tidy_rows
from bpe.base import Encoding, Tokenizer

TRAIN_ROLE = "train"  # the eval set of Needs.TOKENIZER rows
REFERENCE_ROLE = "reference"  # the eval set of morphology rows
PARALLEL_ROLE = "eval"  # the role holding a parallel corpus (FLORES): lines align across languages
ENGLISH = "eng_Latn"
#: the token-count statistic paired tests compare: tokens per 1,000 characters
PAIRED_METRIC = "tokens_per_kchar"


def bootstrap_settings(config: Any) -> dict[str, Any]:
    return {"confidence": config.confidence, "n_resamples": config.bootstrap_resamples, "seed": config.seed}


def _row(result: MetricResult, eval_set: str, settings: dict[str, Any], reference: str) -> ResultRow:
    interval = metric_interval(result, **settings)
    low, high = (float("nan"), float("nan")) if interval is None else (float(interval.low), float(interval.high))
    return ResultRow(eval_set, reference, result.name, float(result.value), low, high, int(result.n))


def metric_rows(metrics: Sequence[Metric], data: Any, eval_set: str, settings: dict[str, Any],
                reference: str = "") -> list[ResultRow]:  # fmt: skip
    """Every metric of ``metrics`` on ``data`` (the input they all need).  A function that computes
    several metrics in one pass (it returns them by name) runs once."""
    computed: dict[Compute, Any] = {}
    rows = []
    for metric in metrics:
        if metric.compute not in computed:
            computed[metric.compute] = metric.compute(data)
        output = computed[metric.compute]
        result = output[metric.name] if isinstance(output, Mapping) else output
        if result.name != metric.name:
            raise BenchmarkError(f"internal error: the function of metric {metric.name!r} returned {result.name!r}")
        rows.append(_row(result, eval_set, settings, reference))
    return rows


class _WordCache:
    """Encodes each distinct word once (words recur across sentences and references)."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.cache: dict[str, Encoding] = {}

    def __call__(self, word: str) -> Encoding:
        encoding = self.cache.get(word)
        if encoding is None:
            encoding = self.cache[word] = self.tokenizer.encode_word(word)
        return encoding


def evaluate_tokenizer(unit: Unit, tokenizer: Tokenizer, corpus: Any, roles: Sequence[str],
                       metrics: Sequence[Metric], config: Any) -> UnitResult:  # fmt: skip
    """The rows of every metric of ``metrics`` that applies to ``unit``, its encoding throughput and its
    per-document token counts."""
    settings = bootstrap_settings(config)
    result = UnitResult(unit)
    applicable = [metric for metric in metrics if metric.applies_to(result.unit.capabilities)]
    needing = {need: [metric for metric in applicable if metric.needs is need] for need in Needs}
    encode_word = _WordCache(tokenizer)
    facts = TokenizerFacts(tokenizer.vocab_size, tokenizer.unk_id)
    result.rows += metric_rows(needing[Needs.TOKENIZER], facts, TRAIN_ROLE, settings)
    for role in roles:
        documents = corpus.documents(role)
        if not documents:
            continue
        texts = [document.text for document in documents]
        start = time.perf_counter()
        encodings = [tokenizer.encode_with_spans(text) for text in texts]
        seconds = time.perf_counter() - start
        if role == roles[0]:
            total_bytes = sum(len(text.encode("utf-8")) for text in texts)
            result.costs["encode_mb_per_s"] = total_bytes / 1e6 / seconds if seconds > 0 else float("nan")
        running = RunningText(texts, encodings, facts.unk_id, facts.vocab_size)
        result.rows += metric_rows(needing[Needs.RUNNING_TEXT], running, role, settings)
        if needing[Needs.ISOLATED_WORDS]:
            words = [[encode_word(w) for w in (d.words if d.words is not None else d.text.split())]
                     for d in documents]  # fmt: skip
            result.rows += metric_rows(needing[Needs.ISOLATED_WORDS], IsolatedWords(words, facts.unk_id), role,
                                       settings)  # fmt: skip
        result.counts[role] = DocumentCounts([document.id for document in documents],
                                             [len(encoding) for encoding in encodings], [len(text) for text in texts])
    for name, reference in sorted(corpus.references().items()):
        need = Needs.MORPHSCORE_REFERENCE if reference.is_morphscore else Needs.MORPHEME_REFERENCE
        if needing[need]:
            words = ReferenceWords(reference.analyses, {word: encode_word(word) for word in reference.analyses})
            result.rows += metric_rows(needing[need], words, REFERENCE_ROLE, settings, reference=name)
    return result


# --------------------------------------------------------------------------- cross-unit metrics

#: yields (unit result, evaluation set, the paired counts of that unit and its partner)
Pairs = Iterator[tuple[UnitResult, str, PairedCounts]]


def _line_key(document_id: str) -> str:
    """The position part of a document id (``flores/tur_Latn.txt:17`` -> ``17``): parallel lines share it."""
    return document_id.rsplit(":", 1)[-1]


def _aligned(a: DocumentCounts, b: DocumentCounts, by_line: bool) -> PairedCounts | None:
    """Token counts of the documents ``a`` and ``b`` share (by id, or by line position), in ``a``'s order."""
    key: Callable[[str], str] = _line_key if by_line else (lambda x: x)
    index_b = {key(doc_id): i for i, doc_id in enumerate(b.ids)}
    pairs = [(i, index_b[key(doc_id)]) for i, doc_id in enumerate(a.ids) if key(doc_id) in index_b]
    if not pairs:
        return None
    ia, ib = map(list, zip(*pairs, strict=True))
    return PairedCounts(np.asarray(a.tokens, dtype=float)[ia], np.asarray(b.tokens, dtype=float)[ib])


def char_baseline_pairs(results: Sequence[UnitResult]) -> Pairs:
    """Every unit against its corpus's char-level baseline (the run's ``CHARACTER_TOKENS`` tokenizer with
    the largest vocabulary; the first planned on a tie), per evaluation set, documents matched by id."""
    baselines: dict[str, UnitResult] = {}
    for result in results:
        unit = result.unit
        if Capability.CHARACTER_TOKENS in unit.capabilities:
            best = baselines.get(unit.corpus)
            if best is None or unit.vocab_size > best.unit.vocab_size:
                baselines[unit.corpus] = result
    for result in results:
        baseline = baselines.get(result.unit.corpus)
        if baseline is None:
            continue
        for role, counts in result.counts.items():
            aligned = _aligned(counts, baseline.counts[role], by_line=False) if role in baseline.counts else None
            if aligned is not None:
                yield result, role, aligned


def english_partner_pairs(results: Sequence[UnitResult]) -> Pairs:
    """Every non-English unit against the same row (label and vocab size) on the run's first English
    corpus, on the parallel role, lines matched by position."""
    english = sorted({result.unit.corpus for result in results if result.unit.language == ENGLISH})
    if not english:
        return
    partners = {(r.unit.corpus, r.unit.tokenizer, r.unit.vocab_size): r for r in results}
    for result in results:
        if result.unit.language == ENGLISH or PARALLEL_ROLE not in result.counts:
            continue
        partner = partners.get((english[0], result.unit.tokenizer, result.unit.vocab_size))
        if partner is None or PARALLEL_ROLE not in partner.counts:
            continue
        aligned = _aligned(result.counts[PARALLEL_ROLE], partner.counts[PARALLEL_ROLE], by_line=True)
        if aligned is not None:
            yield result, PARALLEL_ROLE, aligned


#: how each cross-unit need finds its pairs
PARTNERS: dict[Needs, Callable[[Sequence[UnitResult]], Pairs]] = {
    Needs.CHAR_BASELINE: char_baseline_pairs,
    Needs.ENGLISH_PARTNER: english_partner_pairs,
}


def cross_unit_rows(results: Sequence[UnitResult], metrics: Sequence[Metric], config: Any) -> list[dict[str, Any]]:
    """The tidy rows of every selected metric that pairs two units."""
    settings = bootstrap_settings(config)
    rows: list[dict[str, Any]] = []
    for need, find_pairs in PARTNERS.items():
        paired = [metric for metric in metrics if metric.needs is need]
        if not paired:
            continue
        for result, eval_set, counts in find_pairs(results):
            applicable = [metric for metric in paired if metric.applies_to(result.unit.capabilities)]
            rows += tidy_rows(result.unit, metric_rows(applicable, counts, eval_set, settings))
    return rows


def paired_rows(results: Sequence[UnitResult], config: Any) -> pd.DataFrame:
    """Paired tests of tokens per 1,000 characters between every two tokenizer rows of a corpus
    at the report vocab size (production rows included), on the same test documents."""
    settings = bootstrap_settings(config)
    columns = ["corpus", "eval_set", "metric", "tokenizer_a", "tokenizer_b", "vocab_size", "difference",
               "ci_low", "ci_high", "p_value", "n"]  # fmt: skip
    rows = []
    for corpus in sorted({result.unit.corpus for result in results}):
        chosen = [r for r in results if r.unit.corpus == corpus and "test" in r.counts
                  and r.unit.vocab_size in (None, config.report_vocab_size)]  # fmt: skip
        chosen.sort(key=lambda r: r.unit.tokenizer)
        for a, b in combinations(chosen, 2):
            ca, cb = a.counts["test"], b.counts["test"]
            if ca.ids != cb.ids:
                continue
            chars = np.asarray(ca.chars, dtype=float) / 1000
            comparison = paired_test((np.asarray(ca.tokens, float), chars), (np.asarray(cb.tokens, float), chars),
                                     **settings)  # fmt: skip
            rows.append([corpus, "test", PAIRED_METRIC, a.unit.tokenizer, b.unit.tokenizer,
                         config.report_vocab_size, comparison.difference, comparison.interval.low,
                         comparison.interval.high, comparison.p_value, comparison.n])  # fmt: skip
    return pd.DataFrame(rows, columns=columns)
