"""Evaluating the units of a run: glue between a trained tokenizer, a corpus and the metric registry (what
is measured, apart from any unit, is ``benchmarks.measure.evaluate``'s).

``evaluate_tokenizer`` builds each input a metric can need (``registry.Needs``) once
per unit and hands it to every selected metric that needs it and applies to the
unit's tokenizer (``Metric.requires``): the tokenizer's own facts, then per
evaluation role its running texts (encoded once) and its words encoded in isolation,
then per morpheme reference its words encoded in isolation.  Every result becomes a
row with its bootstrap CI.  The unit's per-document token counts go with it, and the
token counts of its joined parallel texts (Petrov et al.'s one string per language,
when a metric needs them), for the metrics that pair two units (``cross_unit_rows``: the
char baseline by document id, the English partner by parallel sentence key, as the run's
``parallel.ParallelPlan`` pairs them) and for the paired tests (``paired_rows``),
computed once every unit is done, as is the overlap of two rows' vocabularies
(``vocab_overlap_rows``: one result row per pair, its ``partner`` named).

Which words an isolated-word metric sees: the gold UD FORM words of a document
when the corpus has them (Rust et al. 2021), otherwise its whitespace-separated
words.  Each word is encoded alone in its mid-sentence form
(``Tokenizer.encode_word``: after a space, or with sentencepiece's dummy prefix).
Morphology metrics run over the words of each morpheme reference, each word
encoded that way; their rows carry ``eval_set = "reference"`` and the reference name.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain, combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from benchmarks.measure.evaluate import (
    PAIRED_COLUMNS,
    REFERENCE_ROLE,
    TRAIN_ROLE,
    holm_by_family,
    metric_results,
    permutations_for_family,
    vocabulary_bytes,
)
from benchmarks.measure.metrics import (
    EncodedWords,
    IsolatedWords,
    JoinedCounts,
    MetricResult,
    MorphScoreRows,
    PairedCounts,
    PerturbedText,
    ReferenceWords,
    RunningText,
    TokenizerFacts,
    VocabularyPair,
    has_partial_characters,
)
from benchmarks.measure.paired import paired_tests
from benchmarks.measure.registry import Capability, Metric, Needs
from benchmarks.measure.stats import metric_intervals, seed_item_interval
from benchmarks.run.parallel import PARALLEL_ROLE, ParallelPair, ParallelPlan
from benchmarks.run.units import DocumentCounts, ResultRow, Unit, UnitResult, tidy_rows
from bpe.base import Tokenizer

if TYPE_CHECKING:
    from benchmarks.run.config import ExperimentConfig
    from corpora.loader import Corpus

#: the token-count statistic paired tests compare: tokens per 1,000 characters
PAIRED_METRIC = "tokens_per_kchar"


def bootstrap_settings(config: ExperimentConfig) -> dict[str, Any]:
    return {"confidence": config.confidence, "n_resamples": config.bootstrap_resamples, "seed": config.seed}


#: one metric result of a unit: (evaluation set, reference name or "", the result)
Measured = tuple[str, str, MetricResult]


def _rows(measured: Sequence[Measured], settings: dict[str, Any]) -> list[ResultRow]:
    """One row per measured result, with its bootstrap CI (computed together: ``stats.metric_intervals``)."""
    rows = []
    intervals = metric_intervals([result for _, _, result in measured], **settings)
    for (eval_set, reference, result), interval in zip(measured, intervals, strict=True):
        low, high = (float("nan"), float("nan")) if interval is None else (float(interval.low), float(interval.high))
        rows.append(ResultRow(eval_set, reference, result.name, float(result.value), low, high, int(result.n)))
    return rows


def metric_rows(metrics: Sequence[Metric], data: Any, eval_set: str, settings: dict[str, Any],
                reference: str = "") -> list[ResultRow]:  # fmt: skip
    """The rows of ``metric_results``, each with its bootstrap CI."""
    return _rows([(eval_set, reference, result) for result in metric_results(metrics, data)], settings)


def _fill(cache: EncodedWords, tokenizer: Tokenizer, words: Iterable[str]) -> None:
    """Encode the words of ``words`` that ``cache`` does not hold yet, in one ``Tokenizer.encode_word_arrays``
    call (words recur across sentences and references: each is encoded once)."""
    missing = [word for word in dict.fromkeys(words) if word not in cache]
    cache.add(missing, tokenizer.encode_word_arrays(missing))


def evaluate_tokenizer(unit: Unit, tokenizer: Tokenizer, corpus: Corpus, roles: Sequence[str],
                       metrics: Sequence[Metric], config: ExperimentConfig,
                       joined_texts: Mapping[str, str] | None = None) -> UnitResult:  # fmt: skip
    """The rows of every metric of ``metrics`` that applies to ``unit``, its encoding throughput, its
    per-document token counts and, when a metric needs them, the token counts of ``joined_texts``
    (the corpus's joined parallel texts, by paired corpus: ``ParallelPlan.joined_texts``)."""
    result = UnitResult(unit)
    result.rows = _rows(list(_measure(result, tokenizer, corpus, roles, metrics, joined_texts)),
                        bootstrap_settings(config))  # fmt: skip
    return result


def evaluate_over_seeds(unit: Unit, tokenizer: Tokenizer, seeds: Sequence[int], corpus: Corpus, roles: Sequence[str],
                        metrics: Sequence[Metric], config: ExperimentConfig,
                        joined_texts: Mapping[str, str] | None = None) -> UnitResult:  # fmt: skip
    """``evaluate_tokenizer`` for a tokenizer that samples (BPE-dropout, unigram sampling): encoded once
    per seed of ``seeds`` (``with_encode_options(seed=...)``), each metric reported as the mean over
    the seeds with the items-and-seeds bootstrap CI of ``stats.seed_item_interval``.  The per-document
    and joined token counts (cross-unit metrics, paired tests) and the throughput are the first
    seed's."""
    settings = bootstrap_settings(config)
    result = UnitResult(unit)
    per_seed: list[list[Measured]] = []
    for position, seed in enumerate(seeds):
        sampled = tokenizer.with_encode_options(seed=seed)
        target = result if position == 0 else UnitResult(unit)
        per_seed.append(list(_measure(target, sampled, corpus, roles, metrics, joined_texts)))
    for measured in zip(*per_seed, strict=True):
        eval_set, reference, _ = measured[0]
        result.rows.append(seed_mean_row([item[2] for item in measured], eval_set, reference, settings))
    return result


def seed_mean_row(results: Sequence[MetricResult], eval_set: str, reference: str,
                  settings: dict[str, Any]) -> ResultRow:  # fmt: skip
    """One metric over seeds: the mean of the per-seed values, ``seed_item_interval`` when every seed
    has the same items (a ratio of sums over the same documents or words), else no interval (a
    metric that is not a ratio of sums, or ``morphscore``, whose scored words depend on the
    segmentation); ``n``: the first seed's items."""
    values = np.array([result.value for result in results], dtype=float)
    value = float(values.mean())
    low = high = float("nan")
    ratios = all(result.numerators is not None and result.denominators is not None for result in results)
    same_items = ratios and len({len(result.numerators) for result in results}) == 1  # type: ignore[arg-type]
    if same_items and results[0].name not in SEGMENTATION_DEPENDENT_ITEMS:
        interval = seed_item_interval(np.stack([result.numerators for result in results]),
                                      np.stack([result.denominators for result in results]), **settings)  # fmt: skip
        low, high = interval.low, interval.high
    return ResultRow(eval_set, reference, results[0].name, value, low, high, int(results[0].n))


#: metrics whose items are chosen by the segmentation itself (MorphScore excludes single-token words)
SEGMENTATION_DEPENDENT_ITEMS = frozenset({"morphscore"})


def _measure(result: UnitResult, tokenizer: Tokenizer, corpus: Corpus, roles: Sequence[str], metrics: Sequence[Metric],
             joined_texts: Mapping[str, str] | None) -> Iterator[Measured]:  # fmt: skip
    """Every applicable metric's result on ``tokenizer``, in a fixed order; fills ``result``'s costs,
    per-document counts and joined counts on the way."""
    applicable = [metric for metric in metrics if metric.applies_to(result.unit.capabilities)]
    needing = {need: [metric for metric in applicable if metric.needs is need] for need in Needs}
    if needing[Needs.ENGLISH_PARTNER_JOINED] and joined_texts:
        counted: dict[str, int] = {}  # an English text shared by several pairs is encoded once
        for paired, text in sorted(joined_texts.items()):
            if text not in counted:
                counted[text] = len(tokenizer.encode(text))
            result.joined[paired] = counted[text]
    word_cache = EncodedWords()
    facts = TokenizerFacts(tokenizer.vocab_size, tokenizer.unk_id)
    partial_characters = functools.cache(lambda: has_partial_characters(tokenizer.all_token_bytes()))
    for measured in metric_results(needing[Needs.TOKENIZER], facts):
        yield TRAIN_ROLE, "", measured
    for role in roles:
        documents = corpus.documents(role)
        if not documents:
            continue
        texts = [document.text for document in documents]
        # without gold words, a script written without spaces has no words to count: no such metric then
        wordless = not corpus.spec.writes_word_spaces and any(document.words is None for document in documents)
        running_metrics = [m for m in needing[Needs.RUNNING_TEXT] if not (wordless and m.counts_words)]
        start = time.perf_counter()
        encodings = tokenizer.encode_texts(texts)
        seconds = time.perf_counter() - start
        if role == roles[0]:
            total_bytes = sum(len(text.encode("utf-8")) for text in texts)
            result.costs["encode_mb_per_s"] = total_bytes / 1e6 / seconds if seconds > 0 else float("nan")
        running = RunningText(texts, encodings, facts.unk_id, facts.vocab_size, tokenizer.decode,
                              tokenizer.encode_with_spans, partial_characters)
        for measured in metric_results(running_metrics, running):
            yield role, "", measured
        if needing[Needs.PERTURBED_TEXT]:  # opt-in: the perturbed texts are encoded only then
            perturbed = PerturbedText(running, corpus.spec.language, tokenizer.encode_texts, spaced=not wordless)
            for measured in metric_results(needing[Needs.PERTURBED_TEXT], perturbed):
                yield role, "", measured
        if needing[Needs.ISOLATED_WORDS] and not wordless:
            split = [d.words if d.words is not None else d.text.split() for d in documents]
            _fill(word_cache, tokenizer, chain.from_iterable(split))
            words = IsolatedWords(word_cache.arrays(list(chain.from_iterable(split))),
                                  np.array([len(item) for item in split], dtype=np.int64), facts.unk_id)  # fmt: skip
            for measured in metric_results(needing[Needs.ISOLATED_WORDS], words):
                yield role, "", measured
        result.counts[role] = DocumentCounts([document.id for document in documents],
                                             [len(encoding) for encoding in encodings], [len(text) for text in texts])
    vocabulary: tuple[frozenset[bytes], bytes] | None = None
    for name, reference in sorted(corpus.references().items()):
        plain = Needs.MORPHSCORE_REFERENCE if reference.is_morphscore else Needs.MORPHEME_REFERENCE
        with_vocabulary = not reference.is_morphscore and needing[Needs.MORPHEME_REFERENCE_VOCABULARY]
        if needing[plain] or with_vocabulary:
            _fill(word_cache, tokenizer, reference.analyses)
            if with_vocabulary:
                vocabulary = vocabulary or vocabulary_bytes(tokenizer)
            # one object for both kinds of metrics: they share its boundary counts (``ReferenceWords.counts``)
            words = ReferenceWords(reference.analyses, word_cache, *(vocabulary if with_vocabulary else ()))
            for measured in metric_results(needing[plain], words):
                yield REFERENCE_ROLE, name, measured
            if with_vocabulary:
                for measured in metric_results(needing[Needs.MORPHEME_REFERENCE_VOCABULARY], words):
                    yield REFERENCE_ROLE, name, measured
        if reference.is_morphscore and needing[Needs.MORPHSCORE_ROWS]:
            bare = {word: tokenizer.encode_with_spans(word) for word, _ in reference.rows}
            for measured in metric_results(needing[Needs.MORPHSCORE_ROWS], MorphScoreRows(reference.rows, bare)):
                yield REFERENCE_ROLE, name, measured


# --------------------------------------------------------------------------- cross-unit metrics

#: yields (unit result, evaluation set, the input of its metrics: the counts of that unit and its partner)
Pairs = Iterator[tuple[UnitResult, str, Any]]


def _by_id(counts: DocumentCounts, ids: Sequence[str]) -> np.ndarray:
    """The token counts of the documents ``ids``, in that order."""
    position = _positions(tuple(counts.ids))
    return np.asarray(counts.tokens, dtype=float)[[position[doc_id] for doc_id in ids]]


@functools.lru_cache(maxsize=64)
def _positions(ids: tuple[str, ...]) -> dict[str, int]:
    """Each id's position in ``ids``: the units of a corpus list the same documents, looked up once."""
    return {doc_id: i for i, doc_id in enumerate(ids)}


def _same_documents(a: DocumentCounts, b: DocumentCounts) -> PairedCounts | None:
    """Token counts of the documents ``a`` and ``b`` share (by id), in ``a``'s order."""
    shared = set(b.ids)
    ids = [doc_id for doc_id in a.ids if doc_id in shared]
    return PairedCounts(_by_id(a, ids), _by_id(b, ids)) if ids else None


def char_baseline_pairs(results: Sequence[UnitResult], parallel: ParallelPlan) -> Pairs:
    """Every unit against its corpus's char-level baseline (the run's ``CHARACTER_TOKENS`` tokenizer with
    the largest vocabulary, then the most training text on a run with a ``train_chars`` axis; the first
    planned on a tie), per evaluation set, documents matched by id."""
    baselines: dict[str, UnitResult] = {}
    for result in results:
        unit = result.unit
        if Capability.CHARACTER_TOKENS in unit.capabilities:
            best = baselines.get(unit.corpus)
            if best is None or (unit.vocab_size, unit.train_chars or 0) > (best.unit.vocab_size,
                                                                            best.unit.train_chars or 0):  # fmt: skip
                baselines[unit.corpus] = result
    for result in results:
        baseline = baselines.get(result.unit.corpus)
        if baseline is None:
            continue
        for role, counts in result.counts.items():
            aligned = _same_documents(counts, baseline.counts[role]) if role in baseline.counts else None
            if aligned is not None:
                yield result, role, aligned


def _english_partners(results: Sequence[UnitResult], parallel: ParallelPlan
                      ) -> Iterator[tuple[UnitResult, UnitResult, ParallelPair]]:  # fmt: skip
    """Every unit of a paired corpus with the same row (label, vocab size and train_chars) on its English partner."""
    units = {(r.unit.corpus, r.unit.tokenizer, r.unit.vocab_size, r.unit.train_chars): r for r in results}
    for result in results:
        pair = parallel.pairs.get(result.unit.corpus)
        if pair is None:
            continue
        partner = units.get((pair.partner, result.unit.tokenizer, result.unit.vocab_size, result.unit.train_chars))
        if partner is not None:
            yield result, partner, pair


def english_partner_pairs(results: Sequence[UnitResult], parallel: ParallelPlan) -> Pairs:
    """Every unit of a paired corpus against the same row on its English partner, on the parallel
    sentences both hold, paired by key (``ParallelPair``)."""
    for result, partner, pair in _english_partners(results, parallel):
        if PARALLEL_ROLE in result.counts and PARALLEL_ROLE in partner.counts:
            counts = _by_id(result.counts[PARALLEL_ROLE], pair.ids)
            yield result, PARALLEL_ROLE, PairedCounts(counts, _by_id(partner.counts[PARALLEL_ROLE], pair.partner_ids))


def english_partner_dev_pairs(results: Sequence[UnitResult], parallel: ParallelPlan) -> Pairs:
    """As ``english_partner_pairs``, on the sentences of the set's dev split only (none when the
    corpus spec declares no dev split, or no common sentence is in it)."""
    for result, eval_set, counts in english_partner_pairs(results, parallel):
        dev = parallel.pairs[result.unit.corpus].dev
        if dev is not None and any(dev):
            mask = np.asarray(dev)
            dev_counts = PairedCounts(np.asarray(counts.tokens)[mask], np.asarray(counts.partner_tokens)[mask])
            yield result, eval_set, dev_counts


def english_partner_held_out_pairs(results: Sequence[UnitResult], parallel: ParallelPlan) -> Pairs:
    """As ``english_partner_pairs``, on the sentences outside the set's dev split only (FLORES devtest; none when
    the corpus spec declares no dev split, or every common sentence is in it)."""
    for result, eval_set, counts in english_partner_pairs(results, parallel):
        dev = parallel.pairs[result.unit.corpus].dev
        if dev is not None and not all(dev):
            mask = ~np.asarray(dev)
            held_out = PairedCounts(np.asarray(counts.tokens)[mask], np.asarray(counts.partner_tokens)[mask])
            yield result, eval_set, held_out


def english_partner_joined(results: Sequence[UnitResult], parallel: ParallelPlan) -> Pairs:
    """Every unit of a paired corpus against the same row on its English partner: the token counts of
    the two joined texts of the sentences both hold."""
    for result, partner, pair in _english_partners(results, parallel):
        if pair.corpus in result.joined and pair.corpus in partner.joined:
            yield result, PARALLEL_ROLE, JoinedCounts(result.joined[pair.corpus], partner.joined[pair.corpus], pair.n)


#: how each cross-unit need finds its pairs
PARTNERS: dict[Needs, Callable[[Sequence[UnitResult], ParallelPlan], Pairs]] = {
    Needs.CHAR_BASELINE: char_baseline_pairs,
    Needs.ENGLISH_PARTNER: english_partner_pairs,
    Needs.ENGLISH_PARTNER_DEV: english_partner_dev_pairs,
    Needs.ENGLISH_PARTNER_HELD_OUT: english_partner_held_out_pairs,
    Needs.ENGLISH_PARTNER_JOINED: english_partner_joined,
}


def cross_unit_rows(results: Sequence[UnitResult], metrics: Sequence[Metric], config: ExperimentConfig,
                    parallel: ParallelPlan) -> list[dict[str, Any]]:  # fmt: skip
    """The tidy rows of every selected metric that pairs two units (``parallel``: the run's pairing of
    parallel evaluation sentences)."""
    measured: list[tuple[Unit, Measured]] = []
    for need, find_pairs in PARTNERS.items():
        paired = [metric for metric in metrics if metric.needs is need]
        if not paired:
            continue
        for result, eval_set, counts in find_pairs(results, parallel):
            applicable = [metric for metric in paired if metric.applies_to(result.unit.capabilities)]
            measured += [(result.unit, (eval_set, "", value)) for value in metric_results(applicable, counts)]
    # every pair's CI in one ``metric_intervals`` call: pairs of one item count share their resampled sums
    computed = _rows([item for _, item in measured], bootstrap_settings(config))
    return [row for (unit, _), computed_row in zip(measured, computed, strict=True)
            for row in tidy_rows(unit, [computed_row])]  # fmt: skip


def is_report_size(unit: Unit, config: ExperimentConfig) -> bool:
    """Whether ``unit`` is a row the paired and side tables compare: a trained row at the report vocab size
    (on a run with a ``train_chars`` axis, at its largest value), or a production row."""
    return unit.vocab_size in (None, config.report_vocab_size) and unit.train_chars in (None,
                                                                                      max(config.train_chars or [0]))


def report_size_results(results: Sequence[UnitResult], corpus: str, config: ExperimentConfig) -> list[UnitResult]:
    """The tokenizer rows of ``corpus`` that the paired tables compare (``is_report_size``), sorted by label."""
    chosen = [r for r in results if r.unit.corpus == corpus and is_report_size(r.unit, config)]
    return sorted(chosen, key=lambda r: r.unit.tokenizer)


def vocab_overlap_rows(results: Sequence[UnitResult], vocabulary: Callable[[Unit], frozenset[bytes]],
                       metrics: Sequence[Metric], config: ExperimentConfig) -> list[dict[str, Any]]:  # fmt: skip
    """The tidy rows of the selected metrics of two vocabularies (``Needs.VOCABULARY_PARTNER``:
    ``vocab_overlap``) for every two tokenizer rows of a corpus (``report_size_results``): the row whose
    label sorts first carries the value, the other is its ``partner``; ``vocabulary`` gives a unit's
    vocabulary bytes (``overlap_vocabulary``)."""
    chosen = [metric for metric in metrics if metric.needs is Needs.VOCABULARY_PARTNER]
    if not chosen:
        return []
    settings = bootstrap_settings(config)
    rows: list[dict[str, Any]] = []
    for corpus in sorted({result.unit.corpus for result in results}):
        for a, b in combinations(report_size_results(results, corpus, config), 2):
            pair = VocabularyPair(vocabulary(a.unit), vocabulary(b.unit))
            measured = metric_rows(chosen, pair, TRAIN_ROLE, settings)
            rows += [dict(row, partner=b.unit.tokenizer) for row in tidy_rows(a.unit, measured)]
    return rows


def paired_rows(results: Sequence[UnitResult], config: ExperimentConfig) -> pd.DataFrame:
    """Paired tests of tokens per 1,000 characters between every two tokenizer rows of a corpus
    at the report vocab size (production rows included), on the same test documents; on a run with a
    ``train_chars`` axis, the trained rows at its largest value.  ``p_value`` is each test's own,
    ``p_value_holm`` its Holm–Bonferroni adjustment within its family (``HOLM_FAMILY``: here every
    test of the table); each permutation test draws ``permutations_for_family`` swap patterns."""
    settings = bootstrap_settings(config)
    columns = list(PAIRED_COLUMNS)
    pairs = []
    for corpus in sorted({result.unit.corpus for result in results}):
        chosen = [r for r in report_size_results(results, corpus, config) if "test" in r.counts]
        pairs += [(corpus, a, b) for a, b in combinations(chosen, 2) if a.counts["test"].ids == b.counts["test"].ids]
    permutations = permutations_for_family(len(pairs), settings["n_resamples"])
    sides: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # by unit result: its tokens and kchars (one object each)

    def side(result: UnitResult) -> tuple[np.ndarray, np.ndarray]:
        if id(result) not in sides:
            counts = result.counts["test"]
            sides[id(result)] = (np.asarray(counts.tokens, float), np.asarray(counts.chars, dtype=float) / 1000)
        return sides[id(result)]

    # all tests at once (``paired_tests``: the same numbers as ``paired_test`` one by one); a pair's two sides
    # hold the same documents, so both use A's characters, as each test always did
    comparisons = paired_tests([(side(a), (side(b)[0], side(a)[1])) for _, a, b in pairs],
                               n_permutations=permutations, **settings)  # fmt: skip
    rows = []
    for (corpus, a, b), comparison in zip(pairs, comparisons, strict=True):
        rows.append([corpus, "test", PAIRED_METRIC, a.unit.tokenizer, b.unit.tokenizer,
                     config.report_vocab_size, comparison.difference, comparison.interval.low,
                     comparison.interval.high, comparison.p_value, math.nan, comparison.n])  # fmt: skip
    frame = pd.DataFrame(rows, columns=columns)
    frame["p_value_holm"] = holm_by_family(frame)
    return frame
