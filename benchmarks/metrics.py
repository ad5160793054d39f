"""Intrinsic tokenization metrics as plain functions over encodings.

Every function takes encodings (``bpe.Encoding``: ids + UTF-8 *byte* spans
into the text that was encoded), the texts or words they came from, and a few
tokenizer facts (``unk_id``, ``vocab_size``).  Nothing here trains, loads or
encodes: the runner does that and passes the results in.

Conventions shared by all metrics (``docs/metrics.md`` is the user-facing
version of these definitions and of each function's docstring):

* **Items.**  A corpus-level metric is a *ratio of sums* over items
  (sentences, lines, or words): ``value = sum(numerators) / sum(denominators)``.
  The per-item numerators and denominators are returned so that
  ``benchmarks.stats`` can bootstrap the same ratio by resampling items.
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
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from benchmarks.errors import BenchmarkError
from bpe.base import Encoding
from corpora.morph import boundary_counts

#: Rényi order used by ``renyi_efficiency`` (Zouhar et al. 2023 and Uzan et al. 2024 use 2.5;
#: the ``tokenization-scorer`` package silently defaults to 3.0).
RENYI_ALPHA = 2.5

#: Gold analyses of a morpheme reference: word -> alternative sets of inner CHARACTER boundaries
#: (``corpora.morph.MorphReference.analyses``).
Analyses = Mapping[str, Sequence[frozenset[int]]]

_WHITESPACE_WORD = re.compile(r"\S+")  # the words of str.split(): same notion of whitespace


@dataclass(frozen=True)
class MetricResult:
    """One metric value on one evaluation set.

    ``n`` is the number of items aggregated (sentences, lines, words or word
    types).  ``numerators``/``denominators`` hold one entry per item such that
    ``value == numerators.sum() / denominators.sum()``; they are ``None`` for
    metrics that are not a ratio of sums over items (no bootstrap CI then).
    ``details`` carries side counts a report should show (e.g. items excluded).
    """

    name: str
    value: float
    n: int
    numerators: np.ndarray | None = None
    denominators: np.ndarray | None = None
    details: dict[str, int] = field(default_factory=dict)


# --------------------------------------------------------------------------- shared helpers


def ratio_of_sums(name: str, numerators: Sequence[float], denominators: Sequence[float],
                  details: dict[str, int] | None = None) -> MetricResult:  # fmt: skip
    """A metric whose value is ``sum(numerators) / sum(denominators)`` over items (NaN if the sum is 0).

    Public so that callers holding per-item counts (e.g. token counts of two units aligned by
    line) build results exactly like the metrics here do.
    """
    num = np.asarray(numerators, dtype=np.float64)
    den = np.asarray(denominators, dtype=np.float64)
    if len(den) == 0:
        raise BenchmarkError(f"metric {name}: no items to aggregate (empty evaluation set?)")
    total = den.sum()
    # a zero denominator sum is a legitimate "undefined" (e.g. precision of a tokenizer that never splits)
    value = float(num.sum() / total) if total > 0 else math.nan
    return MetricResult(name, value, len(num), num, den, details or {})


def _check_aligned(name: str, first: Sequence[object], second: Sequence[object], what: str) -> None:
    if len(first) != len(second):
        raise BenchmarkError(f"metric {name}: {what} differ in length ({len(first)} vs {len(second)})")


def _content_spans(encoding: Encoding) -> list[tuple[int, int]]:
    return [(start, end) for start, end in encoding.spans if end > start]


def _utf8_offsets(text: str) -> np.ndarray:
    """``offsets[i]`` = UTF-8 byte offset of character ``i``; ``offsets[len(text)]`` = byte length."""
    code_points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    widths = 1 + (code_points >= 0x80) + (code_points >= 0x800) + (code_points >= 0x10000)
    return np.concatenate(([0], np.cumsum(widths))).astype(np.int64)


def _tokens_per_whitespace_word(text: str, encoding: Encoding) -> np.ndarray:
    """For every whitespace word of ``text``, the number of content tokens whose byte span overlaps it.

    A token overlapping several words (a piece spanning a space) counts for each of them;
    tokens covering only whitespace count for none.
    """
    offsets = _utf8_offsets(text)
    words = [(offsets[m.start()], offsets[m.end()]) for m in _WHITESPACE_WORD.finditer(text)]
    spans = _content_spans(encoding)
    if not words:
        return np.zeros(0, dtype=np.int64)
    word_starts, word_ends = np.array(words, dtype=np.int64).T
    starts = np.sort(np.array([s for s, _ in spans], dtype=np.int64))
    ends = np.sort(np.array([e for _, e in spans], dtype=np.int64))
    # tokens overlapping [ws, we) = tokens starting before we minus tokens ending at or before ws
    # (every token ending at or before ws also starts before we, so the difference is exact)
    return np.searchsorted(starts, word_ends, side="left") - np.searchsorted(ends, word_starts, side="right")


def _count_unk(encoding: Encoding, unk_id: int | None) -> int:
    return 0 if unk_id is None else sum(1 for token in encoding.ids if token == unk_id)


# --------------------------------------------------------------------------- OOV


def unk_token_rate(encodings: Sequence[Encoding], unk_id: int | None) -> MetricResult:
    """Share of ``<unk>`` tokens.

    Formula: sum_i #unk(i) / sum_i #tokens(i) over items i (sentences).
    Aggregation: ratio of sums; a family without ``<unk>`` (``unk_id`` None) scores 0.
    Source: Petrov et al. 2023 ("Language Model Tokenizers Introduce Unfairness
    Between Languages"), fraction of UNK tokens.
    Differences: Petrov et al. mask tokenizer/language pairs above 10% UNK as
    invalid; we report the rate and leave masking to the report.
    """
    return ratio_of_sums("unk_token_rate", [_count_unk(e, unk_id) for e in encodings], [len(e) for e in encodings])


def oov_token_rate(encodings: Sequence[Encoding], unk_id: int | None) -> MetricResult:
    """Word-level tokenizer only: share of test word tokens not in the vocabulary.

    Formula: sum_i #unk(i) / sum_i #tokens(i) over sentences; for the ``word``
    family every token is one pre-token (word or punctuation run) and an
    out-of-vocabulary one is encoded as ``<unk>`` (never dropped), so this is
    the classic OOV token rate.  Same computation as ``unk_token_rate``,
    reported under its own name for the word family.
    Aggregation: ratio of sums.  Source: standard word-level OOV rate.
    """
    result = unk_token_rate(encodings, unk_id)
    return MetricResult("oov_token_rate", result.value, result.n, result.numerators, result.denominators)


def oov_type_rate(texts: Sequence[str], encodings: Sequence[Encoding], unk_id: int | None) -> MetricResult:
    """Word-level tokenizer only: share of test word TYPES not in the vocabulary.

    Formula: |{types with an <unk> occurrence}| / |{types}|, where the type of
    a token is the text its byte span covers with surrounding whitespace
    stripped (so `` world`` and ``world`` are one type); tokens covering only
    whitespace or nothing are not types.
    Aggregation: over distinct types of the whole test set, so ``n`` is the
    number of types and there are no per-item arrays (no bootstrap CI).
    Source: standard word-level OOV type rate.
    """
    _check_aligned("oov_type_rate", texts, encodings, "texts and encodings")
    types: set[str] = set()
    unknown: set[str] = set()
    for text, encoding in zip(texts, encodings, strict=True):
        data = text.encode("utf-8")
        for token, (start, end) in zip(encoding.ids, encoding.spans, strict=True):
            surface = data[start:end].decode("utf-8", errors="replace").strip()
            if surface:
                types.add(surface)
                if token == unk_id:
                    unknown.add(surface)
    if not types:
        raise BenchmarkError("metric oov_type_rate: nothing to aggregate (no word types in the texts)")
    return MetricResult("oov_type_rate", len(unknown) / len(types), len(types))


def unk_word_rate(word_encodings: Sequence[Sequence[Encoding]], unk_id: int | None) -> MetricResult:
    """Share of words containing at least one ``<unk>`` token, words tokenized in isolation.

    Formula: sum_i #{words of i with an <unk>} / sum_i #words(i) over items i
    (sentences; ``word_encodings[i]`` holds the isolated encodings of i's words).
    Aggregation: ratio of sums.  Source: Rust et al. 2021 ("How Good is Your
    Tokenizer?"), UNK word rate on UD FORM words.
    """
    return ratio_of_sums(
        "unk_word_rate",
        [sum(1 for e in words if _count_unk(e, unk_id)) for words in word_encodings],
        [len(words) for words in word_encodings],
    )


# --------------------------------------------------------------------------- compression


def bytes_per_token(texts: Sequence[str], encodings: Sequence[Encoding]) -> MetricResult:
    """UTF-8 bytes per token.

    Formula: sum_i bytes(i) / sum_i tokens(i) over items i (sentences/documents).
    Aggregation: ratio of sums (NOT the mean of per-sentence ratios, which
    weights short sentences up and gives a different number).
    Source: Goldman et al. 2024 ("Unpacking Tokenization"); Schmidt et al. 2024.
    """
    _check_aligned("bytes_per_token", texts, encodings, "texts and encodings")
    return ratio_of_sums("bytes_per_token", [len(t.encode("utf-8")) for t in texts], [len(e) for e in encodings])


def chars_per_token(texts: Sequence[str], encodings: Sequence[Encoding]) -> MetricResult:
    """Characters (Unicode code points) per token.

    Formula: sum_i chars(i) / sum_i tokens(i).  Aggregation: ratio of sums.
    Source: Goldman et al. 2024; Schmidt et al. 2024.  Always <= bytes per
    token; exactly 1 for a character tokenizer that emits one token per
    character.
    """
    _check_aligned("chars_per_token", texts, encodings, "texts and encodings")
    return ratio_of_sums("chars_per_token", [len(t) for t in texts], [len(e) for e in encodings])


def tokens_per_kchar(texts: Sequence[str], encodings: Sequence[Encoding]) -> MetricResult:
    """Tokens per 1,000 characters.

    Formula: 1000 * sum_i tokens(i) / sum_i chars(i).  Aggregation: ratio of
    sums (so it is exactly 1000 / chars_per_token).  Source: a normalised
    corpus token count (Schmidt et al. 2024 report corpus token counts).
    """
    _check_aligned("tokens_per_kchar", texts, encodings, "texts and encodings")
    return ratio_of_sums("tokens_per_kchar", [1000 * len(e) for e in encodings], [len(t) for t in texts])


def _token_count_ratio(name: str, encodings: Sequence[Encoding], baseline: Sequence[Encoding]) -> MetricResult:
    _check_aligned(name, encodings, baseline, "the two aligned encoding lists")
    return ratio_of_sums(name, [len(e) for e in encodings], [len(e) for e in baseline])


def tokens_vs_char(encodings: Sequence[Encoding], char_encodings: Sequence[Encoding]) -> MetricResult:
    """Token count relative to the character-level tokenizer on the same texts.

    Formula: sum_i tokens(i) / sum_i char_tokens(i), ``char_encodings[i]``
    being the ``char`` family's encoding of the same text i.
    Aggregation: ratio of sums over the same items (paired: resample items,
    keep both counts of an item together).  Below 1 = shorter sequences than
    characters.  Source: tokbench's own normalisation (the char tokenizer is
    the no-merge baseline of the BPE families).
    """
    return _token_count_ratio("tokens_vs_char", encodings, char_encodings)


def parity_vs_eng(encodings: Sequence[Encoding], english_encodings: Sequence[Encoding]) -> MetricResult:
    """Tokenization premium against English on a line-aligned parallel corpus (FLORES-200).

    Formula: sum_i tokens(lang, i) / sum_i tokens(eng, i), line i of both
    being translations of each other, both encoded by the same tokenizer.
    Aggregation: ratio of sums over lines; the bootstrap resamples line indices
    (paired).  1 = parity; 2 = twice as many tokens as English.
    Source: Petrov et al. 2023.  Differences: TokSuite averages per-sentence
    ratios instead; the two aggregations are not comparable.
    """
    return _token_count_ratio("parity_vs_eng", encodings, english_encodings)


# --------------------------------------------------------------------------- fertility


def fertility_isolated(word_encodings: Sequence[Sequence[Encoding]]) -> MetricResult:
    """Tokens per word, every word tokenized IN ISOLATION.

    Formula: sum_i sum_{w in i} tokens(w) / sum_i #words(i), items i being
    sentences whose words were each encoded alone (the runner passes UD FORM
    words where the corpus has them, multiword ranges skipped; otherwise
    whitespace words).  Aggregation: ratio of sums.
    Source: Rust et al. 2021 (hgiyt ``analyze_UD_file``).
    Differences: Rust et al. strip [CLS]/[SEP]; tokbench encoders add no
    special tokens, but a bare ``</w>`` or ``▁`` token IS counted (it takes a
    sequence position).
    """
    return ratio_of_sums(
        "fertility_isolated",
        [sum(len(e) for e in words) for words in word_encodings],
        [len(words) for words in word_encodings],
    )


def _isolated_split_share(name: str, word_encodings: Sequence[Sequence[Encoding]],
                          is_counted: Callable[[int], bool]) -> MetricResult:  # fmt: skip
    return ratio_of_sums(
        name,
        [sum(1 for e in words if is_counted(len(_content_spans(e)))) for words in word_encodings],
        [len(words) for words in word_encodings],
    )


def continued_word_share(word_encodings: Sequence[Sequence[Encoding]]) -> MetricResult:
    """Proportion of continued words (PCW): words split into >= 2 content tokens, in isolation.

    Formula: sum_i #{w in i : content_tokens(w) >= 2} / sum_i #words(i).
    Aggregation: ratio of sums over sentences.  Source: Rust et al. 2021.
    Differences: a bare ``</w>``/``▁`` token (empty span) does not make a word
    continued: only tokens covering text split it.
    """
    return _isolated_split_share("continued_word_share", word_encodings, lambda count: count >= 2)


def single_token_word_share(word_encodings: Sequence[Sequence[Encoding]]) -> MetricResult:
    """Share of words kept as exactly one content token, in isolation.

    Formula: sum_i #{w in i : content_tokens(w) == 1} / sum_i #words(i).
    Aggregation: ratio of sums.  Source: single-token retention rate (STRR,
    arXiv 2510.09947).  With PCW it sums to 1 except for words with no
    content token (impossible for non-empty words).
    """
    return _isolated_split_share("single_token_word_share", word_encodings, lambda count: count == 1)


def fertility_running(texts: Sequence[str], encodings: Sequence[Encoding]) -> MetricResult:
    """Tokens per whitespace word on running text.

    Formula: sum_i tokens(i) / sum_i len(text_i.split()), every token of the
    running-text encoding counted (including whitespace-only tokens).
    Aggregation: ratio of sums over sentences.  Source: Uzan et al. 2024
    ("Greed is All You Need"), running-text fertility; not interchangeable
    with ``fertility_isolated`` (punctuation attached to whitespace words,
    context-dependent merges).
    """
    _check_aligned("fertility_running", texts, encodings, "texts and encodings")
    return ratio_of_sums("fertility_running", [len(e) for e in encodings], [len(t.split()) for t in texts])


def _running_split_share(name: str, texts: Sequence[str], encodings: Sequence[Encoding],
                         is_counted: Callable[[np.ndarray], np.ndarray]) -> MetricResult:  # fmt: skip
    _check_aligned(name, texts, encodings, "texts and encodings")
    per_word = [_tokens_per_whitespace_word(t, e) for t, e in zip(texts, encodings, strict=True)]
    return ratio_of_sums(name, [int(is_counted(c).sum()) for c in per_word], [len(c) for c in per_word])


def continued_word_share_running(texts: Sequence[str], encodings: Sequence[Encoding]) -> MetricResult:
    """PCW on running text: whitespace words overlapped by >= 2 content tokens.

    Token-to-word assignment: a content token belongs to every whitespace word
    its byte span overlaps (``start < word_end and end > word_start``); a
    token spanning a space (``of the`` as one piece) therefore counts once for
    each word, a whitespace-only token for none, and a bare marker (empty
    span) for none.
    Formula: sum_i #{words of i with >= 2 overlapping tokens} / sum_i #words(i).
    Aggregation: ratio of sums.  Source: Rust et al. 2021's PCW, transferred
    to running text.
    """
    return _running_split_share("continued_word_share_running", texts, encodings, lambda c: c >= 2)


def single_token_word_share_running(texts: Sequence[str], encodings: Sequence[Encoding]) -> MetricResult:
    """Share of whitespace words overlapped by exactly one content token on running text.

    Assignment as in ``continued_word_share_running`` (a token spanning several
    words makes each of them "single-token" if nothing else overlaps it).
    Formula: sum_i #{words of i with exactly 1 overlapping token} / sum_i #words(i).
    Aggregation: ratio of sums.  Source: STRR (arXiv 2510.09947) on running text.
    """
    return _running_split_share("single_token_word_share_running", texts, encodings, lambda c: c == 1)


# --------------------------------------------------------------------------- morphology


@dataclass(frozen=True)
class _WordBoundaries:
    """A reference word encoded in isolation, in byte offsets."""

    predicted: frozenset[int]  # tokenizer boundaries
    gold: tuple[frozenset[int], ...]  # alternative gold boundary sets
    content_tokens: int


def _word_boundaries(name: str, analyses: Analyses, word_encodings: Mapping[str, Encoding]) -> list[_WordBoundaries]:
    if not analyses:
        raise BenchmarkError(f"{name}: the morpheme reference has no words")
    words = []
    for word, alternatives in analyses.items():
        encoding = word_encodings.get(word)
        if encoding is None:
            raise BenchmarkError(f"{name}: no isolated encoding given for reference word {word!r}")
        if not alternatives:
            raise BenchmarkError(f"{name}: reference word {word!r} has no analysis")
        n_bytes = len(word.encode("utf-8"))
        spans = _content_spans(encoding)
        predicted = {offset for span in spans for offset in span}
        if predicted and (min(predicted) < 0 or max(predicted) > n_bytes):
            raise BenchmarkError(f"{name}: a token span lies outside word {word!r} ({n_bytes} bytes): {spans}")
        gold = []
        for alternative in alternatives:
            if any(not 0 < b < len(word) for b in alternative):
                raise BenchmarkError(f"{name}: gold boundaries {sorted(alternative)} of {word!r} are not "
                                     f"inner character offsets (0 < b < {len(word)})")  # fmt: skip
            gold.append(frozenset(len(word[:b].encode("utf-8")) for b in alternative))
        predicted.difference_update((0, n_bytes))
        words.append(_WordBoundaries(frozenset(predicted), tuple(gold), len(spans)))
    return words


# metric -> (numerators, denominators) from the per-word table with columns TP, FP, FN, EXACT
_BOUNDARY_RATIOS: dict[str, Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]] = {
    "boundary_precision": lambda table: (table[:, 0], table[:, 0] + table[:, 1]),
    "boundary_recall": lambda table: (table[:, 0], table[:, 0] + table[:, 2]),
    "boundary_f1": lambda table: (table[:, 0], table[:, 0] + 0.5 * (table[:, 1] + table[:, 2])),
    "exact_segmentation": lambda table: (table[:, 3], np.ones(len(table))),
}


def boundary_metrics(analyses: Analyses, word_encodings: Mapping[str, Encoding],
                     names: Sequence[str] = tuple(_BOUNDARY_RATIOS)) -> dict[str, MetricResult]:  # fmt: skip
    """``boundary_precision``, ``boundary_recall``, ``boundary_f1`` and ``exact_segmentation``
    from ONE pass over the reference words (the runner's entry point; each is documented below).

    ``analyses``: word -> alternative gold boundary sets (``MorphReference.analyses``);
    ``word_encodings``: word -> its encoding in isolation, for every reference word.
    Items are the reference words, in reference order.
    """
    rows = []
    for word in _word_boundaries("boundary metrics", analyses, word_encodings):
        tp, fp, fn = boundary_counts(set(word.predicted), word.gold)
        rows.append((tp, fp, fn, float(word.predicted in word.gold)))
    table = np.array(rows, dtype=np.float64)
    return {name: ratio_of_sums(name, *_BOUNDARY_RATIOS[name](table)) for name in names}


def boundary_precision(analyses: Analyses, word_encodings: Mapping[str, Encoding]) -> MetricResult:
    """Morpheme-boundary precision, micro-averaged over reference words.

    Formula: sum_w TP(w) / sum_w (TP(w) + FP(w)), boundaries as defined in the
    module docstring (inner byte offsets of the word encoded in isolation vs.
    gold character offsets converted to bytes).  Against several gold
    alternatives, each word uses its best-matching alternative, chosen by
    ``corpora.morph.boundary_counts``: fewest errors (FP + FN), ties to more
    TP, then to the earlier alternative (the same choice for P, R and F1).
    Aggregation: ratio of sums over words (items = reference words).
    Source: Uzan et al. 2024 (MeLeLBGU/tokenizers_intrinsic_benchmark).
    Differences: offsets come from byte spans, so markers (``</w>``, ``▁``,
    ``Ġ``, ``##``) can never shift them (the bug fixed in morphscore PR #2).
    """
    return boundary_metrics(analyses, word_encodings, ["boundary_precision"])["boundary_precision"]


def boundary_recall(analyses: Analyses, word_encodings: Mapping[str, Encoding]) -> MetricResult:
    """Morpheme-boundary recall, micro-averaged: sum_w TP / sum_w (TP + FN).

    Same boundaries, alternatives and aggregation as ``boundary_precision``.
    Source: Uzan et al. 2024.
    """
    return boundary_metrics(analyses, word_encodings, ["boundary_recall"])["boundary_recall"]


def boundary_f1(analyses: Analyses, word_encodings: Mapping[str, Encoding]) -> MetricResult:
    """Morpheme-boundary F1, micro: F1 = sum TP / (sum TP + ½ (sum FP + sum FN)).

    This equals the harmonic mean of micro precision and recall and is a ratio
    of sums (per word: TP over TP + ½(FP + FN)), so it bootstraps like the
    others.  Same boundaries and alternatives as ``boundary_precision``.
    Source: Uzan et al. 2024.
    """
    return boundary_metrics(analyses, word_encodings, ["boundary_f1"])["boundary_f1"]


def exact_segmentation(analyses: Analyses, word_encodings: Mapping[str, Encoding]) -> MetricResult:
    """Share of reference words whose boundary set equals one gold alternative exactly.

    Formula: #{w : boundaries(w) in gold_alternatives(w)} / #words.  A
    monomorphemic word kept as one token counts as exact.
    Aggregation: ratio of sums over words.  Source: word-level segmentation
    accuracy, as in SIGMORPHON 2022 shared task evaluation.
    """
    return boundary_metrics(analyses, word_encodings, ["exact_segmentation"])["exact_segmentation"]


def morphscore(analyses: Analyses, word_encodings: Mapping[str, Encoding]) -> MetricResult:
    """MorphScore v1: does the tokenizer put a boundary exactly at the gold split point?

    Items: MorphScore rows ``(word, pt1, rest)``, given as analyses whose
    alternatives hold exactly ONE boundary ``len(pt1)`` each (a reference of
    kind ``"morphscore"``; rows with an empty pt1 or rest have no inner
    boundary and are dropped by the reader).
    Score of a word: 1 if its boundaries contain a gold boundary, else 0;
    words encoded as a single content token are EXCLUDED (count reported in
    ``details["excluded_single_token"]``).  Value = mean score over the rest.
    Source: Arnett & Bergen (MorphScore v1, ``morph_eval``).
    Differences: boundaries from byte spans instead of decoded token strings
    (markers never interfere); a word listed with several split points counts
    once and scores 1 if any of them is matched.
    """
    if any(len(alternative) != 1 for alternatives in analyses.values() for alternative in alternatives):
        raise BenchmarkError("metric morphscore: needs a MorphScore reference (exactly one boundary per analysis)")
    words = _word_boundaries("metric morphscore", analyses, word_encodings)
    scored = [w for w in words if w.content_tokens > 1]
    details = {"excluded_single_token": len(words) - len(scored), "items": len(words)}
    if not scored:  # e.g. a word-level tokenizer: every item excluded, the score is undefined
        return MetricResult("morphscore", math.nan, 0, np.zeros(0), np.zeros(0), details)
    hits = [float(any(gold <= w.predicted for gold in w.gold)) for w in scored]
    return ratio_of_sums("morphscore", hits, np.ones(len(scored)), details)


# --------------------------------------------------------------------------- token distribution


def _id_counts(name: str, encodings: Sequence[Encoding], vocab_size: int) -> np.ndarray:
    if vocab_size < 2:
        raise BenchmarkError(f"metric {name}: vocab_size must be at least 2, got {vocab_size}")
    ids = np.fromiter((i for e in encodings for i in e.ids), dtype=np.int64)
    if len(ids) == 0:
        raise BenchmarkError(f"metric {name}: nothing to aggregate (no tokens)")
    if ids.min() < 0 or ids.max() >= vocab_size:
        raise BenchmarkError(f"metric {name}: token id {ids.max()} outside the vocabulary (size {vocab_size})")
    return np.bincount(ids, minlength=vocab_size)


def renyi_efficiency(encodings: Sequence[Encoding], vocab_size: int, alpha: float = RENYI_ALPHA) -> MetricResult:
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
        raise BenchmarkError(f"metric renyi_efficiency: alpha must be >= 0, got {alpha}")
    counts = _id_counts("renyi_efficiency", encodings, vocab_size)
    p = counts[counts > 0] / counts.sum()
    if math.isclose(alpha, 1.0):
        entropy = -float(np.sum(p * np.log2(p)))
    else:
        entropy = float(np.log2(np.sum(p**alpha)) / (1 - alpha))
    return MetricResult("renyi_efficiency", entropy / math.log2(vocab_size), int(counts.sum()))


def vocab_utilisation(encodings: Sequence[Encoding], vocab_size: int) -> MetricResult:
    """Share of the vocabulary used on the test set.

    Formula: #{distinct ids emitted} / |V| (special tokens included in |V|).
    Aggregation: one set over the whole test set (``n`` = tokens); no CI.
    Source: vocabulary utilisation as in TokEval (cimeister/tokenizer-analysis-suite).
    """
    counts = _id_counts("vocab_utilisation", encodings, vocab_size)
    return MetricResult("vocab_utilisation", float(np.count_nonzero(counts)) / vocab_size, int(counts.sum()))


#: Every metric this module computes, by the name it reports (keys of ``benchmarks.catalog.METRICS``
#: plus the running-text word shares).  Signatures differ by what the metric needs: see each docstring.
METRIC_FUNCTIONS: dict[str, Callable[..., MetricResult]] = {
    "unk_token_rate": unk_token_rate,
    "unk_word_rate": unk_word_rate,
    "oov_token_rate": oov_token_rate,
    "oov_type_rate": oov_type_rate,
    "bytes_per_token": bytes_per_token,
    "chars_per_token": chars_per_token,
    "tokens_per_kchar": tokens_per_kchar,
    "tokens_vs_char": tokens_vs_char,
    "fertility_isolated": fertility_isolated,
    "fertility_running": fertility_running,
    "continued_word_share": continued_word_share,
    "single_token_word_share": single_token_word_share,
    "continued_word_share_running": continued_word_share_running,
    "single_token_word_share_running": single_token_word_share_running,
    "boundary_precision": boundary_precision,
    "boundary_recall": boundary_recall,
    "boundary_f1": boundary_f1,
    "exact_segmentation": exact_segmentation,
    "morphscore": morphscore,
    "parity_vs_eng": parity_vs_eng,
    "renyi_efficiency": renyi_efficiency,
    "vocab_utilisation": vocab_utilisation,
}
