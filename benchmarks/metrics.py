"""Intrinsic tokenization metrics, and the registry that declares them (``METRICS``, at the end).

Every metric function takes ONE input object, the one its declaration's ``needs``
names (``benchmarks.registry.Needs``): ``RunningText`` (texts of an evaluation set
and their encodings), ``IsolatedWords`` (its words, each encoded alone),
``ReferenceWords`` (a morpheme reference and its words encoded alone),
``PairedCounts`` (per-item token counts of two tokenizer rows), ``JoinedCounts``
(token counts of one joined string per row) or ``TokenizerFacts``.  Encodings
are ``bpe.Encoding``: ids + UTF-8 *byte* spans into the text that was encoded.
Nothing here trains, loads or encodes: the evaluator (``benchmarks.evaluate``)
does that, builds each input once and passes it to every metric that needs it.

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

Adding a metric: write its function here, add its ``Metric`` line to ``METRICS``
and its section to ``docs/metrics.md``; nothing else changes.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks.errors import BenchmarkError
from benchmarks.registry import DESCRIPTIVE, HIGHER, LOWER, Capability, Metric, Needs, declare
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
    """

    name: str
    value: float
    n: int
    numerators: np.ndarray | None = None
    denominators: np.ndarray | None = None


# --------------------------------------------------------------------------- inputs


def _check_aligned(what: str, first: Sequence[object], second: Sequence[object]) -> None:
    if len(first) != len(second):
        raise BenchmarkError(f"{what} differ in length ({len(first)} vs {len(second)})")


@dataclass(frozen=True)
class TokenizerFacts:
    """``Needs.TOKENIZER``: what a metric may read from the trained tokenizer itself."""

    vocab_size: int  # ids in the vocabulary, special tokens included
    unk_id: int | None  # None: the tokenizer cannot produce <unk>


@dataclass(frozen=True)
class RunningText:
    """``Needs.RUNNING_TEXT``: the texts (items) of an evaluation set, each encoded as running text,
    with the tokenizer facts some metrics need."""

    texts: Sequence[str]
    encodings: Sequence[Encoding]
    unk_id: int | None = None  # None: the tokenizer cannot produce <unk>
    vocab_size: int | None = None  # needed by the token-distribution metrics only
    #: the tokenizer's decoder (ids -> text), for the round-trip metrics; None: they are not computed
    decode: Callable[[Sequence[int]], str] | None = None
    #: the tokenizer's encoder, for the split of a number written alone; None: that metric is not computed
    encode: Callable[[str], Encoding] | None = None
    #: whether some vocabulary entry is not whole UTF-8 characters (a byte-level or byte-fallback token),
    #: asked only by the metric that needs it: only then can a token end inside a character; None: not
    #: known, that metric is not computed
    partial_characters: Callable[[], bool] | None = None

    def __post_init__(self) -> None:
        _check_aligned("running text: texts and encodings", self.texts, self.encodings)

    @functools.cached_property
    def decoded(self) -> list[str]:
        """Per text, ``decode(encode(text))``."""
        if self.decode is None:
            raise BenchmarkError("running text: no decoder given (round-trip metrics need the tokenizer's decode)")
        return [self.decode(encoding.ids) for encoding in self.encodings]

    @functools.cached_property
    def numbers(self) -> list[list[_Number]]:
        """Per text, its numbers (``_numbers``), computed once for the metrics that share them."""
        return [_numbers(t, e) for t, e in zip(self.texts, self.encodings, strict=True)]

    @functools.cached_property
    def tokens_per_word(self) -> list[np.ndarray]:
        """Per text, ``_tokens_per_whitespace_word``: computed once for the metrics that share it."""
        return [_tokens_per_whitespace_word(t, e) for t, e in zip(self.texts, self.encodings, strict=True)]


@dataclass(frozen=True)
class IsolatedWords:
    """``Needs.ISOLATED_WORDS``: per item (sentence) of an evaluation set, its words each encoded alone
    (``Tokenizer.encode_word``)."""

    encodings: Sequence[Sequence[Encoding]]
    unk_id: int | None = None


@dataclass(frozen=True)
class ReferenceWords:
    """``Needs.MORPHEME_REFERENCE`` / ``Needs.MORPHSCORE_REFERENCE``: a morpheme reference's analyses
    (``MorphReference.analyses``) and every reference word encoded alone.  Items are the reference words,
    in reference order.  ``Needs.MORPHEME_REFERENCE_VOCABULARY`` adds the tokenizer's vocabulary (the
    bytes of every token) and the prefix its word-initial tokens carry (``b" "`` for ``Ġ``/``▁`` tokens)."""

    analyses: Analyses
    encodings: Mapping[str, Encoding]
    vocabulary: frozenset[bytes] = frozenset()
    word_prefix: bytes = b""

    @functools.cached_property
    def boundaries(self) -> list[_WordBoundaries]:
        """Every word's predicted and gold boundaries (``_word_boundaries``), computed once for the
        metrics that share them."""
        return _word_boundaries(self)


@dataclass(frozen=True)
class MorphScoreRows:
    """``Needs.MORPHSCORE_ROWS``: every row of a MorphScore file as listed (``MorphReference.rows``: word and
    the character offset of its split point, None when ``pt1`` or ``rest`` is empty), each word encoded bare
    (``encode_with_spans(word)``, no leading space), as upstream's ``get_morphscore`` encodes it."""

    rows: Sequence[tuple[str, int | None]]
    encodings: Mapping[str, Encoding]


@dataclass(frozen=True)
class PairedCounts:
    """``Needs.CHAR_BASELINE`` / ``Needs.ENGLISH_PARTNER`` / ``Needs.ENGLISH_PARTNER_DEV``: token counts
    of one tokenizer row and of its partner on the same items (documents, or parallel sentences paired
    by key), aligned by index."""

    tokens: Sequence[float]
    partner_tokens: Sequence[float]

    def __post_init__(self) -> None:
        _check_aligned("paired counts: the two token count lists", self.tokens, self.partner_tokens)


@dataclass(frozen=True)
class JoinedCounts:
    """``Needs.ENGLISH_PARTNER_JOINED``: the token count of one string joining a corpus's parallel
    sentences as Petrov et al. 2023 join FLORES (``benchmarks.reproductions.petrov2023.petrov_join``), the count of
    the English partner's string of the same sentences by the same tokenizer row, and how many
    sentences each string joins."""

    tokens: int
    partner_tokens: int
    sentences: int


# --------------------------------------------------------------------------- shared helpers


def ratio_of_sums(name: str, numerators: Sequence[float], denominators: Sequence[float]) -> MetricResult:
    """A metric whose value is ``sum(numerators) / sum(denominators)`` over items (NaN if the sum is 0)."""
    num = np.asarray(numerators, dtype=np.float64)
    den = np.asarray(denominators, dtype=np.float64)
    if len(den) == 0:
        raise BenchmarkError(f"metric {name}: no items to aggregate (empty evaluation set?)")
    total = den.sum()
    # a zero denominator sum is a legitimate "undefined" (e.g. precision of a tokenizer that never splits)
    value = float(num.sum() / total) if total > 0 else math.nan
    return MetricResult(name, value, len(num), num, den)


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


def _unk_share(name: str, text: RunningText) -> MetricResult:
    return ratio_of_sums(name, [_count_unk(e, text.unk_id) for e in text.encodings], [len(e) for e in text.encodings])


# --------------------------------------------------------------------------- OOV


def unk_token_rate(text: RunningText) -> MetricResult:
    """Share of ``<unk>`` tokens.

    Formula: sum_i #unk(i) / sum_i #tokens(i) over items i (sentences).
    Aggregation: ratio of sums; a family without ``<unk>`` (``unk_id`` None) scores 0.
    Source: Petrov et al. 2023 ("Language Model Tokenizers Introduce Unfairness
    Between Languages"), fraction of UNK tokens.
    Differences: Petrov et al. mask tokenizer/language pairs above 10% UNK as
    invalid; we report the rate and leave masking to the report.
    """
    return _unk_share("unk_token_rate", text)


def oov_token_rate(text: RunningText) -> MetricResult:
    """Word-level tokenizer only: share of test word tokens not in the vocabulary.

    Formula: sum_i #unk(i) / sum_i #tokens(i) over sentences; for a tokenizer
    whose every token is one whole pre-token (word or punctuation run), an
    out-of-vocabulary one is encoded as ``<unk>`` (never dropped), so this is
    the classic OOV token rate.  Same computation as ``unk_token_rate``,
    reported under its own name for such tokenizers
    (``Capability.WHOLE_PRETOKENS``).
    Aggregation: ratio of sums.  Source: standard word-level OOV rate.
    """
    return _unk_share("oov_token_rate", text)


def oov_type_rate(text: RunningText) -> MetricResult:
    """Word-level tokenizer only: share of test word TYPES not in the vocabulary.

    Formula: |{types with an <unk> occurrence}| / |{types}|, where the type of
    a token is the text its byte span covers with surrounding whitespace
    stripped (so `` world`` and ``world`` are one type); tokens covering only
    whitespace or nothing are not types.
    Aggregation: over distinct types of the whole test set, so ``n`` is the
    number of types and there are no per-item arrays (no bootstrap CI).
    Source: standard word-level OOV type rate.
    """
    types: set[str] = set()
    unknown: set[str] = set()
    for sentence, encoding in zip(text.texts, text.encodings, strict=True):
        data = sentence.encode("utf-8")
        for token, (start, end) in zip(encoding.ids, encoding.spans, strict=True):
            surface = data[start:end].decode("utf-8", errors="replace").strip()
            if surface:
                types.add(surface)
                if token == text.unk_id:
                    unknown.add(surface)
    if not types:
        raise BenchmarkError("metric oov_type_rate: nothing to aggregate (no word types in the texts)")
    return MetricResult("oov_type_rate", len(unknown) / len(types), len(types))


def unk_word_rate(words: IsolatedWords) -> MetricResult:
    """Share of words containing at least one ``<unk>`` token, words tokenized in isolation.

    Formula: sum_i #{words of i with an <unk>} / sum_i #words(i) over items i
    (sentences; ``words.encodings[i]`` holds the isolated encodings of i's words).
    Aggregation: ratio of sums.  Source: Rust et al. 2021 ("How Good is Your
    Tokenizer?"), UNK word rate on UD FORM words.
    """
    return ratio_of_sums(
        "unk_word_rate",
        [sum(1 for e in item if _count_unk(e, words.unk_id)) for item in words.encodings],
        [len(item) for item in words.encodings],
    )


# --------------------------------------------------------------------------- compression


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


# --------------------------------------------------------------------------- fertility


def fertility_isolated(words: IsolatedWords) -> MetricResult:
    """Tokens per word, every word tokenized IN ISOLATION.

    Formula: sum_i sum_{w in i} tokens(w) / sum_i #words(i), items i being
    sentences whose words were each encoded alone (the evaluator passes UD FORM
    words where the corpus has them, multiword ranges skipped; otherwise
    whitespace words).  Aggregation: ratio of sums.
    Source: Rust et al. 2021 (hgiyt ``analyze_UD_file``).
    Differences: Rust et al. strip [CLS]/[SEP]; tokbench encoders add no
    special tokens, but a bare ``</w>`` or ``▁`` token IS counted (it takes a
    sequence position).
    """
    return ratio_of_sums(
        "fertility_isolated",
        [sum(len(e) for e in item) for item in words.encodings],
        [len(item) for item in words.encodings],
    )


def _isolated_split_share(name: str, words: IsolatedWords, is_counted: Callable[[int], bool]) -> MetricResult:
    return ratio_of_sums(
        name,
        [sum(1 for e in item if is_counted(len(_content_spans(e)))) for item in words.encodings],
        [len(item) for item in words.encodings],
    )


def continued_word_share(words: IsolatedWords) -> MetricResult:
    """Proportion of continued words (PCW): words split into >= 2 content tokens, in isolation.

    Formula: sum_i #{w in i : content_tokens(w) >= 2} / sum_i #words(i).
    Aggregation: ratio of sums over sentences.  Source: Rust et al. 2021.
    Differences: a bare ``</w>``/``▁`` token (empty span) does not make a word
    continued: only tokens covering text split it.
    """
    return _isolated_split_share("continued_word_share", words, lambda count: count >= 2)


def single_token_word_share(words: IsolatedWords) -> MetricResult:
    """Share of words kept as exactly one content token, in isolation.

    Formula: sum_i #{w in i : content_tokens(w) == 1} / sum_i #words(i).
    Aggregation: ratio of sums.  Source: single-token retention rate (STRR,
    arXiv 2510.09947).  With PCW it sums to 1 except for words with no
    content token (impossible for non-empty words).
    """
    return _isolated_split_share("single_token_word_share", words, lambda count: count == 1)


def fertility_running(text: RunningText) -> MetricResult:
    """Tokens per whitespace word on running text.

    Formula: sum_i tokens(i) / sum_i len(text_i.split()), every token of the
    running-text encoding counted (including whitespace-only tokens).
    Aggregation: ratio of sums over sentences.  Source: Uzan et al. 2024
    ("Greed is All You Need"), running-text fertility; not interchangeable
    with ``fertility_isolated`` (punctuation attached to whitespace words,
    context-dependent merges).
    """
    return ratio_of_sums("fertility_running", [len(e) for e in text.encodings], [len(t.split()) for t in text.texts])


def _running_split_share(name: str, text: RunningText, is_counted: Callable[[np.ndarray], np.ndarray]) -> MetricResult:
    per_word = text.tokens_per_word
    return ratio_of_sums(name, [int(is_counted(c).sum()) for c in per_word], [len(c) for c in per_word])


def continued_word_share_running(text: RunningText) -> MetricResult:
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
    return _running_split_share("continued_word_share_running", text, lambda c: c >= 2)


def single_token_word_share_running(text: RunningText) -> MetricResult:
    """Share of whitespace words overlapped by exactly one content token on running text.

    Assignment as in ``continued_word_share_running`` (a token spanning several
    words makes each of them "single-token" if nothing else overlaps it).
    Formula: sum_i #{words of i with exactly 1 overlapping token} / sum_i #words(i).
    Aggregation: ratio of sums.  Source: STRR (arXiv 2510.09947) on running text.
    """
    return _running_split_share("single_token_word_share_running", text, lambda c: c == 1)


# --------------------------------------------------------------------------- morphology


@dataclass(frozen=True)
class _WordBoundaries:
    """A reference word encoded in isolation, in byte offsets."""

    predicted: frozenset[int]  # tokenizer boundaries
    gold: tuple[frozenset[int], ...]  # alternative gold boundary sets
    content_tokens: int


def _word_boundaries(reference: ReferenceWords) -> list[_WordBoundaries]:
    name = "morphology metrics"
    if not reference.analyses:
        raise BenchmarkError(f"{name}: the morpheme reference has no words")
    words = []
    for word, alternatives in reference.analyses.items():
        encoding = reference.encodings.get(word)
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


def boundary_metrics(reference: ReferenceWords) -> dict[str, MetricResult]:
    """Morpheme-boundary precision, recall, F1 and exact segmentation, from ONE pass over the words.

    Boundaries as defined in the module docstring (inner byte offsets of the word
    encoded in isolation vs. gold character offsets converted to bytes).  Against
    several gold alternatives, each word uses its best-matching alternative, chosen
    by ``corpora.morph.boundary_counts``: fewest errors (FP + FN), ties to more TP,
    then to the earlier alternative (the same choice for all four metrics).
    Items are the reference words; every metric is a ratio of sums over them (micro).

    * ``boundary_precision``: sum_w TP(w) / sum_w (TP(w) + FP(w)).
    * ``boundary_recall``: sum_w TP(w) / sum_w (TP(w) + FN(w)).
    * ``boundary_f1``: sum TP / (sum TP + ½ (sum FP + sum FN)), which equals the
      harmonic mean of micro precision and recall and is a ratio of sums (per word:
      TP over TP + ½(FP + FN)), so it bootstraps like the others.
    * ``exact_segmentation``: #{w : boundaries(w) in gold_alternatives(w)} / #words;
      a monomorphemic word kept as one token counts as exact.

    Source: Uzan et al. 2024 (MeLeLBGU/tokenizers_intrinsic_benchmark) for P/R/F1;
    word-level segmentation accuracy as in the SIGMORPHON 2022 shared task for exact
    segmentation.  Differences: offsets come from byte spans, so markers (``</w>``,
    ``▁``, ``Ġ``, ``##``) can never shift them (the bug fixed in morphscore PR #2).
    """
    rows = []
    for word in reference.boundaries:
        tp, fp, fn = boundary_counts(set(word.predicted), word.gold)
        rows.append((tp, fp, fn, float(word.predicted in word.gold)))
    table = np.array(rows, dtype=np.float64)
    return {name: ratio_of_sums(name, *ratios(table)) for name, ratios in _BOUNDARY_RATIOS.items()}


def morphscore(reference: ReferenceWords) -> dict[str, MetricResult]:
    """MorphScore v1 (``morphscore``) and the number of items it excludes (``morphscore_excluded``).

    Items: MorphScore rows ``(word, pt1, rest)``, given as analyses whose
    alternatives hold exactly ONE boundary ``len(pt1)`` each (a reference of
    kind ``"morphscore"``; rows with an empty pt1 or rest have no inner
    boundary and are dropped by the reader).
    Score of a word: 1 if its boundaries contain a gold boundary, else 0;
    words encoded as a single content token are EXCLUDED.  ``morphscore`` =
    mean score over the rest (NaN when every word is excluded);
    ``morphscore_excluded`` = the number excluded, its ``n`` the number of items
    (descriptive, no CI).
    Source: Arnett & Bergen (MorphScore v1, ``morph_eval``).
    Differences: boundaries from byte spans instead of decoded token strings
    (markers never interfere); a word listed with several split points counts
    once and scores 1 if any of them is matched.
    """
    if any(len(alternative) != 1 for alternatives in reference.analyses.values() for alternative in alternatives):
        raise BenchmarkError("metric morphscore: needs a MorphScore reference (exactly one boundary per analysis)")
    words = reference.boundaries
    scored = [w for w in words if w.content_tokens > 1]
    excluded = MetricResult("morphscore_excluded", float(len(words) - len(scored)), len(words))
    if not scored:  # e.g. a word-level tokenizer: every item excluded, the score is undefined
        return {"morphscore": MetricResult("morphscore", math.nan, 0, np.zeros(0), np.zeros(0)),
                "morphscore_excluded": excluded}  # fmt: skip
    hits = [float(any(gold <= w.predicted for gold in w.gold)) for w in scored]
    return {"morphscore": ratio_of_sums("morphscore", hits, np.ones(len(scored))), "morphscore_excluded": excluded}


def _morphemes(word: str, boundaries: frozenset[int]) -> list[str]:
    cuts = [0, *sorted(boundaries), len(word)]
    return [word[a:b] for a, b in itertools.pairwise(cuts)]


def in_vocabulary_boundary_metrics(reference: ReferenceWords) -> dict[str, MetricResult]:
    """Boundary precision, recall and F1 on the words Uzan et al. 2024 score, and the share of words scored.

    Filter (Uzan et al.'s ``get_seg_coverage``): a reference word is scored when every gold morpheme is a
    token of the vocabulary and the whole word is not; the first morpheme and the whole word are looked up
    in their word-initial form (``word_prefix`` + text: `` walk`` for a ``Ġ``/``▁`` vocabulary), later
    morphemes as they are.  A word with several gold alternatives is scored when one of them passes, and
    against the passing ones (best-matching, as in ``boundary_metrics``).
    * ``boundary_precision_in_vocab``, ``boundary_recall_in_vocab``, ``boundary_f1_in_vocab``: as the
      unfiltered metrics, micro over the scored words (NaN when no word passes);
    * ``in_vocab_word_share``: scored words / reference words (descriptive: the filter's coverage).
    Source: Uzan et al. 2024 (MeLeLBGU/tokenizers_intrinsic_benchmark, ``Intrinsic_measures/ling_utils.py``).
    Differences: boundaries from byte spans of the word in its mid-sentence form (Uzan et al. tokenize the
    bare word and compare with a ``Ġ``-prefixed gold); vocabulary membership by token bytes, so a
    family's markers (``Ġ``, ``▁``, ``</w>``) need no special case.
    """
    vocabulary, prefix = reference.vocabulary, reference.word_prefix
    rows, scored = [], []
    for word, boundaries in zip(reference.analyses, reference.boundaries, strict=True):
        passing = []
        for alternative, gold in zip(reference.analyses[word], boundaries.gold, strict=True):
            morphemes = [m.encode("utf-8") for m in _morphemes(word, alternative)]
            morphemes[0] = prefix + morphemes[0]
            if all(m in vocabulary for m in morphemes) and prefix + word.encode("utf-8") not in vocabulary:
                passing.append(gold)
        scored.append(float(bool(passing)))
        if passing:
            tp, fp, fn = boundary_counts(set(boundaries.predicted), tuple(passing))
            rows.append((tp, fp, fn, 0.0))
    results = {"in_vocab_word_share": ratio_of_sums("in_vocab_word_share", scored, np.ones(len(scored)))}
    table = np.array(rows, dtype=np.float64).reshape(-1, 4)
    for name in ("boundary_precision", "boundary_recall", "boundary_f1"):
        filtered = f"{name}_in_vocab"
        results[filtered] = (ratio_of_sums(filtered, *_BOUNDARY_RATIOS[name](table)) if rows
                             else MetricResult(filtered, math.nan, 0, np.zeros(0), np.zeros(0)))  # fmt: skip
    return results


def morphscore_upstream(rows: MorphScoreRows) -> MetricResult:
    """MorphScore v1 computed as upstream's ``get_morphscore`` does (upstream-compatible mode).

    Items: every row of the file, duplicates included; the word is encoded bare (no leading space).
    A row scores nothing when its word is ONE token (all tokens counted: a bare ``▁`` is a token);
    otherwise 1 when exactly one split after token t (t < last) puts ``pt1`` before it and ``rest`` after,
    else 0 (``morph_eval``: points -1 count 0).  A row with an empty ``pt1`` or ``rest`` scores 0; a
    token that cuts a character (byte fallback, a byte-level piece) decodes to U+FFFD upstream, so such a
    word scores 0.  Value: mean over the scored rows (``n``).
    Source: Arnett & Bergen, MorphScore v1 (catherinearnett/morphscore, ``morphscore.py``).
    Differences from ``morphscore``: which rows are scored and how the word is encoded; nothing else.
    """
    points = []
    for word, split in rows.rows:
        encoding = rows.encodings.get(word)
        if encoding is None:
            raise BenchmarkError(f"metric morphscore_upstream: no bare encoding given for MorphScore word {word!r}")
        if len(encoding) == 1:
            continue
        if split is None:
            points.append(0.0)
            continue
        offsets = set(_utf8_offsets(word).tolist())
        if any(start not in offsets or end not in offsets for start, end in encoding.spans):
            points.append(0.0)
            continue
        target = len(word[:split].encode("utf-8"))
        points.append(float([end for _, end in encoding.spans[:-1]].count(target) == 1))
    if not points:
        return MetricResult("morphscore_upstream", math.nan, 0, np.zeros(0), np.zeros(0))
    return ratio_of_sums("morphscore_upstream", points, np.ones(len(points)))


# --------------------------------------------------------------------------- cross-lingual


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


def parity_joined_vs_eng(joined: JoinedCounts) -> MetricResult:
    """Tokenization premium against English as Petrov et al. 2023 count it: one string per language.

    Formula: len(encode(s_lang)) / len(encode(s_eng)), where s joins the
    parallel sentences both corpora hold like their ``compute_tokenizations.py``
    joins FLORES-200: ``" ".join(dev.split("\\n") + devtest.split("\\n"))``,
    the dev split then the other sentences, each file's trailing newline kept as
    an empty string (``benchmarks.reproductions.petrov2023.petrov_join``); no special tokens.
    Aggregation: one ratio of two counts (``n`` = sentences joined); no CI.
    Source: Petrov et al. 2023 ("Language Model Tokenizers Introduce
    Unfairness Between Languages"); ``tokbench reproduce petrov2023`` checks
    the counts against their published table.
    """
    if joined.partner_tokens <= 0:
        raise BenchmarkError("metric parity_joined_vs_eng: the English text has no tokens")
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
        raise BenchmarkError("metric parity_mean_ratio_vs_eng: an English sentence has no tokens")
    return ratio_of_sums("parity_mean_ratio_vs_eng", tokens / english, np.ones(len(tokens)))


# --------------------------------------------------------------------------- token distribution


def _id_counts(name: str, text: RunningText) -> tuple[np.ndarray, int]:
    """How often each id occurs in ``text`` (index = id), and the vocabulary size."""
    vocab_size = text.vocab_size
    if vocab_size is None or vocab_size < 2:
        raise BenchmarkError(f"metric {name}: vocab_size must be at least 2, got {vocab_size}")
    ids = np.fromiter((i for e in text.encodings for i in e.ids), dtype=np.int64)
    if len(ids) == 0:
        raise BenchmarkError(f"metric {name}: nothing to aggregate (no tokens)")
    if ids.min() < 0 or ids.max() >= vocab_size:
        raise BenchmarkError(f"metric {name}: token id {ids.max()} outside the vocabulary (size {vocab_size})")
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
        raise BenchmarkError(f"metric renyi_efficiency: alpha must be >= 0, got {alpha}")
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
        raise BenchmarkError("metric bigram_entropy: nothing to aggregate (no texts)")
    first, second = np.concatenate(firsts), np.concatenate(seconds)
    if len(first) == 0:
        return MetricResult("bigram_entropy", math.nan, 0)
    if min(first.min(), second.min()) < 0:
        raise BenchmarkError(f"metric bigram_entropy: negative token id {min(first.min(), second.min())}")
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
    tokens every trained family reserves (``<pad> <unk> <s> </s>``).  One value per pair of tokenizer
    rows (``overlap.csv``); NaN when both sets are empty.
    Source: vocabulary overlap as TokEval reports it (swiss-ai/tokenizer-intrinsic-evals).
    Differences: a cross-row table of its own, not a row of ``results.*``: it is a property of two
    vocabularies, not of a text.
    """
    union = len(a | b)
    return len(a & b) / union if union else math.nan


# --------------------------------------------------------------------------- fidelity


def roundtrip_failure_rate(text: RunningText) -> MetricResult:
    """Share of texts that do not come back from the tokenizer: ``decode(encode(x)) != x``.

    Formula: Σ_i 1[decode(encode(x_i)) != x_i] / #texts, texts compared as Python strings (code point
    by code point, no normalization).  Aggregation: ratio of sums over texts.
    Source: the round-trip (losslessness) check of sentencepiece and HF ``tokenizers`` issue trackers;
    lossless tokenization as Kudo & Richardson 2018 (SentencePiece) define it.
    """
    return ratio_of_sums("roundtrip_failure_rate",
                         [float(decoded != original) for original, decoded in zip(text.texts, text.decoded,
                                                                                   strict=True)],
                         np.ones(len(text.texts)))  # fmt: skip


def longest_common_subsequence(a: str, b: str) -> int:
    """Length of a longest common subsequence of ``a`` and ``b`` (bit-parallel, Hyyrö 2004)."""
    masks: dict[str, int] = {}
    for position, character in enumerate(a):
        masks[character] = masks.get(character, 0) | (1 << position)
    width = (1 << len(a)) - 1
    row = width
    for character in b:
        matched = row & masks.get(character, 0)
        row = ((row + matched) | (row - matched)) & width
    return len(a) - row.bit_count()


def chars_lost_rate(text: RunningText) -> MetricResult:
    """Characters of the text that do not survive the round trip, per character.

    Formula: Σ_i (len(x_i) - LCS(x_i, decode(encode(x_i)))) / Σ_i len(x_i), LCS the length of a longest
    common subsequence of code points: a character replaced by ``<unk>`` (or by its normalized form) is
    lost, the characters ``<unk>`` decodes to are not counted as recovered unless they match.
    Aggregation: ratio of sums over texts.
    Source: tokbench's measure of the loss behind ``roundtrip_failure_rate`` (sentencepiece's
    ``character_coverage`` drops rare characters silently, google/sentencepiece#175).
    """
    lost = [len(original) - (len(original) if decoded == original else longest_common_subsequence(original, decoded))
            for original, decoded in zip(text.texts, text.decoded, strict=True)]  # fmt: skip
    return ratio_of_sums("chars_lost_rate", lost, [len(original) for original in text.texts])


def partial_char_token_share(text: RunningText) -> MetricResult | None:
    """Share of tokens that end inside a UTF-8 character (byte-level and byte-fallback tokenizers).

    Formula: Σ_i #{tokens of i whose span end is not a character boundary of x_i} / Σ_i #tokens(i);
    a character boundary is a byte offset where a character starts (or the text's end).
    Aggregation: ratio of sums over texts.  Computed only for a tokenizer whose vocabulary holds an
    entry that is not whole UTF-8 characters (``partial_characters``); others have no row.
    Source: the share of tokens that are not valid UTF-8 on their own, a cost of byte-level BPE
    (Radford et al. 2019) that TokEval and Land & Bartolo 2024 discuss.
    """
    if text.partial_characters is None or not text.partial_characters():
        return None
    inside, totals = [], []
    for original, encoding in zip(text.texts, text.encodings, strict=True):
        boundaries = _utf8_offsets(original)
        ends = np.fromiter((end for _, end in encoding.spans), dtype=np.int64, count=len(encoding))
        at_boundary = boundaries[np.searchsorted(boundaries, ends).clip(max=len(boundaries) - 1)] == ends
        inside.append(int(np.count_nonzero(~at_boundary)))
        totals.append(len(encoding))
    return ratio_of_sums("partial_char_token_share", inside, totals)


def has_partial_characters(entries: Iterable[bytes]) -> bool:
    """Whether some vocabulary entry (its bytes) is not a sequence of whole UTF-8 characters."""
    for entry in entries:
        try:
            entry.decode("utf-8")
        except UnicodeDecodeError:
            return True
    return False


# --------------------------------------------------------------------------- numbers and punctuation

_DIGITS = re.compile(r"[0-9]+")  # a number: a maximal run of ASCII digits


@dataclass(frozen=True)
class _Number:
    """A number of a text: its digits and the digit counts of its chunks (the parts of it each content
    token covers, in order)."""

    digits: str
    chunks: tuple[int, ...]
    tokens: int  # content tokens overlapping it


def _chunks(start: int, end: int, spans: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    """The byte lengths of the parts of ``[start, end)`` each span overlaps, in span order."""
    return tuple(min(e, end) - max(s, start) for s, e in spans if s < end and e > start)


def _numbers(text: str, encoding: Encoding) -> list[_Number]:
    """Every number of ``text`` (``_DIGITS``) with its chunks in ``encoding`` (digits are one byte, so
    byte and character offsets agree inside a number; only the number's start offset is converted)."""
    found = list(_DIGITS.finditer(text))
    if not found:
        return []
    offsets = _utf8_offsets(text)
    spans = _content_spans(encoding)
    numbers = []
    for match in found:
        start, end = int(offsets[match.start()]), int(offsets[match.end()])
        chunks = _chunks(start, end, spans)
        numbers.append(_Number(match.group(), chunks, len(chunks)))
    return numbers


#: a number's digits from which ``digit_chunk_share`` scores it (shorter ones cannot have a longer chunk)
LONG_NUMBER_DIGITS = 4


def digit_chunk_share(text: RunningText) -> MetricResult:
    """Share of numbers of 4 or more digits whose every chunk holds at most 3 digits.

    A *number* is a maximal run of ASCII digits ``[0-9]+`` (so ``1,000`` is the numbers ``1`` and
    ``000``); its *chunks* are the parts of it the content tokens of the running-text encoding cover
    (a token ``" 2019"`` or ``"19."`` contributes only its digits).  Grouping by at most three digits
    is what cl100k's pre-tokenizer enforces (``\\p{N}{1,3}``); one digit per token (Llama 2) also passes.
    Formula: Σ_i #{numbers of i with ≥ 4 digits, every chunk ≤ 3 digits} / Σ_i #{numbers of i with ≥ 4
    digits}.  Aggregation: ratio of sums over texts (NaN when the set has no such number).
    Source: digit grouping as studied by Singh & Strouse 2024 ("Tokenization counts: the impact of
    tokenization on arithmetic in frontier LLMs").
    """
    return ratio_of_sums(
        "digit_chunk_share",
        [sum(1 for n in numbers if len(n.digits) >= LONG_NUMBER_DIGITS and max(n.chunks) <= 3)
         for numbers in text.numbers],
        [sum(1 for n in numbers if len(n.digits) >= LONG_NUMBER_DIGITS) for numbers in text.numbers],
    )  # fmt: skip


def tokens_per_digit(text: RunningText) -> MetricResult:
    """Content tokens per digit of the numbers of the text.

    Formula: Σ_i Σ_{numbers n of i} #{content tokens overlapping n} / Σ_i Σ_n #digits(n), numbers as
    in ``digit_chunk_share`` (a token covering a number and what follows counts once for the number).
    Aggregation: ratio of sums over texts (NaN without numbers).  1 = one token per digit.
    Source: digit tokenization as compared by Singh & Strouse 2024.
    """
    return ratio_of_sums("tokens_per_digit", [sum(n.tokens for n in numbers) for numbers in text.numbers],
                         [sum(len(n.digits) for n in numbers) for numbers in text.numbers])  # fmt: skip


def number_context_split_share(text: RunningText) -> MetricResult | None:
    """Share of numbers whose split in running text differs from their split when written alone.

    For every number of 2 or more digits (``digit_chunk_share``'s numbers; one digit cannot be split),
    its chunks in the running-text encoding are compared with its chunks in ``encode(digits)``, the
    number encoded as a text of its own (no left context, no leading space).  The split *depends on
    its left context* when they differ (``" 2019"`` merging the space into ``" 20" "19"`` while
    ``"2019"`` alone is one token).
    Formula: Σ_i #{numbers of i with ≥ 2 digits and different chunks} / Σ_i #{numbers of i with ≥ 2
    digits}.  Aggregation: ratio of sums over texts (NaN without such numbers).  Not computed without
    the tokenizer's encoder (``encode`` None).
    Source: the context dependence of number tokenization (Singh & Strouse 2024: left-to-right vs
    right-to-left grouping).
    """
    if text.encode is None:
        return None
    alone: dict[str, tuple[int, ...]] = {}
    differ, counted = [], []
    for numbers in text.numbers:
        long = [n for n in numbers if len(n.digits) >= 2]
        for number in long:
            if number.digits not in alone:
                alone[number.digits] = _chunks(0, len(number.digits), _content_spans(text.encode(number.digits)))
        differ.append(sum(1 for n in long if n.chunks != alone[n.digits]))
        counted.append(len(long))
    return ratio_of_sums("number_context_split_share", differ, counted)


def _is_punctuation(character: str) -> bool:
    return unicodedata.category(character).startswith("P")


def _is_word_character(character: str) -> bool:
    return unicodedata.category(character)[0] in "LNM"


def punctuation_attached_share(text: RunningText) -> MetricResult:
    """Share of punctuation characters that share a token with a letter or digit.

    A punctuation character (Unicode general category P*) is *attached* when some content token whose
    span overlaps it also overlaps a letter, digit or combining mark (categories L*, N*, M*): ``"end."``
    or ``"(UTC"`` as one token, not ``"."`` or ``" ("``.  Spaces and symbols (S*) are neither.
    Formula: Σ_i #{attached punctuation characters of i} / Σ_i #{punctuation characters of i}.
    Aggregation: ratio of sums over texts (NaN without punctuation).
    Source: punctuation handling as a pre-tokenization choice (GPT-2's pattern keeps punctuation apart
    from letters, sentencepiece does not; Radford et al. 2019, Kudo & Richardson 2018).
    """
    attached, totals = [], []
    for original, encoding in zip(text.texts, text.encodings, strict=True):
        punctuation = np.fromiter((_is_punctuation(c) for c in original), dtype=bool, count=len(original))
        if not punctuation.any():
            attached.append(0)
            totals.append(0)
            continue
        word = np.fromiter((_is_word_character(c) for c in original), dtype=bool, count=len(original))
        offsets = _utf8_offsets(original)
        spans = np.array(_content_spans(encoding), dtype=np.int64).reshape(-1, 2)
        first = np.searchsorted(offsets, spans[:, 0], side="right") - 1  # the character holding the first byte
        last = np.searchsorted(offsets, spans[:, 1] - 1, side="right") - 1  # ... and the last byte
        words_before = np.concatenate(([0], np.cumsum(word)))
        with_word = words_before[last + 1] - words_before[first] > 0
        cover = np.zeros(len(original) + 1, dtype=np.int64)  # characters covered by a token holding a word char
        np.add.at(cover, first[with_word], 1)
        np.add.at(cover, last[with_word] + 1, -1)
        covered = np.cumsum(cover)[:-1] > 0
        attached.append(int(np.count_nonzero(punctuation & covered)))
        totals.append(int(np.count_nonzero(punctuation)))
    return ratio_of_sums("punctuation_attached_share", attached, totals)


# --------------------------------------------------------------------------- cost


def vocab_size_reached(tokenizer: TokenizerFacts) -> MetricResult:
    """The number of ids in the trained vocabulary, special tokens included (one value, no CI).

    It may be below the requested size: a vocabulary size is an upper bound (training stops when no
    pair reaches ``min_frequency`` or the text has nothing more to learn).
    """
    return MetricResult("vocab_size_reached", float(tokenizer.vocab_size), 1)


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
    "cost": "Cost",
}

_TEXT, _WORDS, _REFERENCE = Needs.RUNNING_TEXT, Needs.ISOLATED_WORDS, Needs.MORPHEME_REFERENCE
_REFERENCE_VOCABULARY = Needs.MORPHEME_REFERENCE_VOCABULARY
_WHOLE_PRETOKENS = frozenset({Capability.WHOLE_PRETOKENS})

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
    Metric("renyi_efficiency", "Rényi efficiency (α=2.5)", "distribution", HIGHER, "{:.3f}", _TEXT,
           renyi_efficiency),
    Metric("shannon_efficiency", "Shannon efficiency", "distribution", HIGHER, "{:.3f}", _TEXT, shannon_efficiency),
    Metric("vocab_utilisation", "vocabulary used", "distribution", HIGHER, "{:.3f}", _TEXT, vocab_utilisation),
    Metric("token_gini", "Gini of token frequencies", "distribution", DESCRIPTIVE, "{:.3f}", _TEXT, token_gini),
    Metric("bigram_entropy", "bigram entropy (bits)", "distribution", DESCRIPTIVE, "{:.2f}", _TEXT, bigram_entropy),
    Metric("type_token_ratio", "type-token ratio", "distribution", DESCRIPTIVE, "{:.4f}", _TEXT, type_token_ratio),
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
    Metric("vocab_size_reached", "vocab size reached", "cost", DESCRIPTIVE, "{:.0f}", Needs.TOKENIZER,
           vocab_size_reached),
    Metric("train_seconds", "training time (s)", "cost", LOWER, "{:.2f}", Needs.MEASUREMENT, None,
           deterministic=False),
    Metric("encode_mb_per_s", "encode MB/s", "cost", HIGHER, "{:.2f}", Needs.MEASUREMENT, None,
           deterministic=False),
])  # fmt: skip


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
