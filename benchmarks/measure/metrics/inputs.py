"""What a metric function takes and returns: one input object per ``benchmarks.measure.registry.Needs``, the
``MetricResult`` it gives back, and ``ratio_of_sums``, the aggregation most metrics use (items, numerators
and denominators: the ``benchmarks.measure.metrics`` package docstring)."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks.errors import BenchmarkError
from benchmarks.measure.metrics.spans import (
    JoinedSpans,
    JoinedText,
    Number,
    content_spans,
    joined_spans,
    joined_text,
    numbers_in,
    tokens_per_whitespace_word,
)
from bpe.base import Encoding, WordEncodings

#: Gold analyses of a morpheme reference: word -> alternative sets of inner CHARACTER boundaries
#: (``corpora.morph.MorphReference.analyses``).
Analyses = Mapping[str, Sequence[frozenset[int]]]


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


def ratio_of_sums(name: str, numerators: Sequence[float], denominators: Sequence[float]) -> MetricResult:
    """A metric whose value is ``sum(numerators) / sum(denominators)`` over items (NaN if the sum is 0)."""
    num = np.asarray(numerators, dtype=np.float64)
    den = np.asarray(denominators, dtype=np.float64)
    if len(den) == 0:
        raise BenchmarkError(f"metric {name}: no items to aggregate (empty evaluation set?)", code="no_items",
                             value=name)  # fmt: skip
    total = den.sum()
    # a zero denominator sum is a legitimate "undefined" (e.g. precision of a tokenizer that never splits)
    value = float(num.sum() / total) if total > 0 else math.nan
    return MetricResult(name, value, len(num), num, den)


def _check_aligned(what: str, first: Sequence[object], second: Sequence[object]) -> None:
    if len(first) != len(second):
        raise BenchmarkError(f"{what} differ in length ({len(first)} vs {len(second)})", code="length_mismatch",
                             value=(len(first), len(second)))  # fmt: skip


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
    def ids(self) -> np.ndarray:
        """Every token id of the texts, in order (int64), read once for the metrics that count them."""
        return np.fromiter(itertools.chain.from_iterable(e.ids for e in self.encodings), dtype=np.int64,
                           count=sum(len(e.ids) for e in self.encodings))  # fmt: skip

    @functools.cached_property
    def decoded(self) -> list[str]:
        """Per text, ``decode(encode(text))``."""
        if self.decode is None:
            raise BenchmarkError("running text: no decoder given (round-trip metrics need the tokenizer's decode)",
                                 code="missing_input", value="decode")  # fmt: skip
        return [self.decode(encoding.ids) for encoding in self.encodings]

    @functools.cached_property
    def numbers(self) -> list[list[Number]]:
        """Per text, its numbers (``numbers_in``), computed once for the metrics that share them."""
        return [numbers_in(t, e) for t, e in zip(self.texts, self.encodings, strict=True)]

    @functools.cached_property
    def joined(self) -> JoinedText:
        """The texts joined end to end (``joined_text``; kept per process for the next unit of the same texts)."""
        return joined_text(tuple(self.texts))

    @functools.cached_property
    def spans(self) -> JoinedSpans:
        """Every token's span in the joined texts (``joined_spans``), for the metrics vectorized over them."""
        return joined_spans(self.joined, self.encodings)

    @functools.cached_property
    def tokens_per_word(self) -> np.ndarray:
        """Per whitespace word of the texts (``JoinedText.word_text`` names its text),
        ``tokens_per_whitespace_word``: computed once for the metrics that share it."""
        return tokens_per_whitespace_word(self.joined, self.spans)


class EncodedWords(Mapping[str, Encoding]):
    """Words each encoded alone (``Tokenizer.encode_word``), kept as flat arrays (``WordEncodings``) and
    looked up by word: ``arrays(words)`` gathers the tokens of a sequence of them (repetitions included) in
    one step; ``self[word]`` builds one word's ``Encoding`` (error messages).  ``add`` takes the arrays of
    new words, as ``Tokenizer.encode_word_arrays`` gives them."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._parts: list[WordEncodings] = []
        self._flat: WordEncodings | None = None

    @classmethod
    def of(cls, encodings: Mapping[str, Encoding]) -> EncodedWords:
        """The words of ``encodings`` with their encodings."""
        encoded = cls()
        encoded.add(list(encodings), WordEncodings.of(list(encodings.values())))
        return encoded

    def add(self, words: Sequence[str], encodings: WordEncodings) -> None:
        """Keep ``encodings`` (one per word of ``words``, in order) for words not kept yet."""
        if len(words) != len(encodings):
            raise BenchmarkError(f"encoded words: {len(words)} words but {len(encodings)} encodings",
                                 code="length_mismatch", value=(len(words), len(encodings)))  # fmt: skip
        start = sum(len(part) for part in self._parts)
        for position, word in enumerate(words):
            self._index.setdefault(word, start + position)
        self._parts.append(encodings)
        self._flat = None

    @property
    def flat(self) -> WordEncodings:
        """Every kept encoding, in the order added."""
        if self._flat is None:
            parts = self._parts or [WordEncodings.of([])]
            self._flat = WordEncodings(np.concatenate([part.ids for part in parts]),
                                       np.concatenate([part.spans for part in parts]),
                                       np.concatenate([part.counts for part in parts]))  # fmt: skip
            self._parts = [self._flat]
        return self._flat

    def arrays(self, words: Sequence[str]) -> WordEncodings:
        """The encodings of ``words``, in order (a word may repeat); every word must be kept."""
        flat = self.flat
        chosen = np.fromiter((self._index[word] for word in words), dtype=np.int64, count=len(words))
        counts = flat.counts[chosen]
        # token positions: each chosen word's first token, then the next ones, word after word
        tokens = np.repeat(flat.firsts[chosen] - (np.cumsum(counts) - counts), counts) + np.arange(int(counts.sum()))
        return WordEncodings(flat.ids[tokens], flat.spans[tokens], counts)

    def __getitem__(self, word: str) -> Encoding:
        return self.flat.encoding(self._index[word])

    def __contains__(self, word: object) -> bool:
        return word in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)


@dataclass(frozen=True)
class IsolatedWords:
    """``Needs.ISOLATED_WORDS``: per item (sentence) of an evaluation set, its words each encoded alone
    (``Tokenizer.encode_word``): every word of every item in order (``words``), and how many words each item
    has.  ``of`` makes one from the encodings of each item's words."""

    words: WordEncodings
    words_per_item: np.ndarray
    unk_id: int | None = None

    @classmethod
    def of(cls, encodings: Sequence[Sequence[Encoding]], unk_id: int | None = None) -> IsolatedWords:
        return cls(WordEncodings.of([encoding for item in encodings for encoding in item]),
                   np.array([len(item) for item in encodings], dtype=np.int64), unk_id)  # fmt: skip

    @functools.cached_property
    def word_item(self) -> np.ndarray:
        """Per word, the index of its item."""
        return np.repeat(np.arange(len(self.words_per_item)), self.words_per_item)

    @functools.cached_property
    def _owner(self) -> np.ndarray:
        """Per token, the index of its word."""
        return np.repeat(np.arange(len(self.words)), self.words.counts)

    @property
    def tokens(self) -> np.ndarray:
        """Per word, its number of tokens."""
        return self.words.counts

    @functools.cached_property
    def content_tokens(self) -> np.ndarray:
        """Per word, its number of content tokens (``content_spans``)."""
        spans = self.words.spans
        return np.bincount(self._owner[spans[:, 1] > spans[:, 0]], minlength=len(self.words))

    @functools.cached_property
    def unknown(self) -> np.ndarray:
        """Per word, whether one of its tokens is ``<unk>`` (never, without an ``unk_id``)."""
        if self.unk_id is None:
            return np.zeros(len(self.words), dtype=bool)
        return np.bincount(self._owner[self.words.ids == self.unk_id], minlength=len(self.words)) > 0

    def per_item(self, counted: np.ndarray) -> np.ndarray:
        """Per item, the sum of ``counted`` (one value per word) over its words."""
        return np.bincount(self.word_item, weights=counted, minlength=len(self.words_per_item))


@dataclass(frozen=True)
class ReferenceWords:
    """``Needs.MORPHEME_REFERENCE`` / ``Needs.MORPHSCORE_REFERENCE``: a morpheme reference's analyses
    (``MorphReference.analyses``) and every reference word encoded alone.  Items are the reference words,
    in reference order.  ``Needs.MORPHEME_REFERENCE_VOCABULARY`` adds the tokenizer's vocabulary (the
    bytes of every token) and the prefix its word-initial tokens carry (``b" "`` for ``Ġ``/``▁`` tokens)."""

    analyses: Analyses
    encodings: Mapping[str, Encoding]  # at least the reference's words; an ``EncodedWords`` is read as arrays
    vocabulary: frozenset[bytes] = frozenset()
    word_prefix: bytes = b""

    @functools.cached_property
    def counts(self) -> BoundaryCounts:
        """Every word's boundaries against each of its gold alternatives (``count_boundaries``), computed
        once for the metrics that share them."""
        return count_boundaries(self)


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
    sentences as Petrov et al. 2023 join FLORES (``corpora.flores.petrov_join``), the count of
    the English partner's string of the same sentences by the same tokenizer row, and how many
    sentences each string joins."""

    tokens: int
    partner_tokens: int
    sentences: int


@dataclass(frozen=True)
class VocabularyPair:
    """``Needs.VOCABULARY_PARTNER``: the vocabularies of two tokenizer rows of one corpus, each as the set
    of its entries' byte strings (``benchmarks.measure.evaluate.overlap_vocabulary``)."""

    vocabulary: frozenset[bytes]
    partner_vocabulary: frozenset[bytes]


@dataclass(frozen=True, eq=False)  # one per reference object: compared by identity
class GoldTable:
    """The gold boundaries of a morpheme reference in byte offsets, as arrays over its words (in reference
    order) and over their alternatives (word by word, each word's in its own order); text-only, so built
    once per reference object (``gold_table``), read-only."""

    analyses: Analyses
    words: list[_Gold]  # per word: (UTF-8 length, its alternatives as byte-offset sets, what is wrong or None)
    word_bytes: np.ndarray  # per word, its UTF-8 length
    alternative_word: np.ndarray  # per alternative, the index of its word
    alternative_size: np.ndarray  # per alternative, its number of boundaries
    boundary_alternative: np.ndarray  # per gold boundary of every alternative, the index of that alternative
    boundary_key: np.ndarray  # ... and its word index * ``stride`` + byte offset
    stride: int  # above every byte offset of every word

    @property
    def sound(self) -> bool:
        """Whether every word has an analysis and every analysis inner character offsets."""
        return all(gold and fault is None for _, gold, fault in self.words)

    @functools.cached_property
    def morphemes(self) -> GoldMorphemes:
        """The morphemes of every alternative (of a sound table), for vocabulary lookups."""
        first: dict[bytes, int] = {}
        later: dict[bytes, int] = {}
        first_of, later_of, later_alternative = [], [], []
        for word, alternatives in self.analyses.items():
            for alternative in alternatives:
                cuts = [0, *sorted(alternative), len(word)]
                head, *tail = (word[a:b].encode("utf-8") for a, b in itertools.pairwise(cuts))
                first_of.append(first.setdefault(head, len(first)))
                later_of += [later.setdefault(morpheme, len(later)) for morpheme in tail]
                later_alternative += [len(first_of) - 1] * len(tail)
        return GoldMorphemes(list(first), np.array(first_of, dtype=np.int64), list(later),
                             np.array(later_of, dtype=np.int64), np.array(later_alternative, dtype=np.int64),
                             [word.encode("utf-8") for word in self.analyses])  # fmt: skip


@dataclass(frozen=True, eq=False)
class GoldMorphemes:
    """The morphemes of every gold alternative of a reference (``GoldTable`` order), for a vocabulary
    lookup: each alternative's first morpheme and its later ones, as indices into the distinct UTF-8
    strings of each kind, and every word's UTF-8 form (``ReferenceWords.word_prefix`` goes before the
    first morpheme and the whole word)."""

    first: list[bytes]  # distinct first morphemes
    first_of: np.ndarray  # per alternative, its first morpheme
    later: list[bytes]  # distinct later morphemes
    later_of: np.ndarray  # per later morpheme of every alternative, in order: which one it is
    later_alternative: np.ndarray  # ... and its alternative
    words: list[bytes]  # every word in UTF-8


@dataclass(frozen=True)
class BoundaryCounts:
    """A reference's words encoded in isolation, scored against every gold alternative (``GoldTable``
    order): TP, FP and FN of the word's predicted boundaries against that alternative, and per word its
    content tokens."""

    gold: GoldTable
    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    content_tokens: np.ndarray

    def best(self, among: np.ndarray | None = None) -> np.ndarray:
        """The best-matching alternative of every word (``among``: only alternatives where it is True;
        words with none are left out), in word order: fewest errors (FP + FN), ties to more TP, then to
        the earlier alternative (``corpora.morph.boundary_counts``' choice)."""
        alternatives = np.arange(len(self.tp)) if among is None else np.flatnonzero(among)
        order = np.lexsort((alternatives, -self.tp[alternatives], (self.fp + self.fn)[alternatives],
                            self.gold.alternative_word[alternatives]))  # fmt: skip
        ranked = alternatives[order]
        words = self.gold.alternative_word[ranked]
        return ranked[np.concatenate(([True], words[1:] != words[:-1]))] if len(ranked) else ranked


def count_boundaries(reference: ReferenceWords) -> BoundaryCounts:
    """Every reference word's boundaries (as the ``benchmarks.measure.metrics`` package docstring defines
    them) counted against each gold alternative, all words at once; a word without an encoding or an
    analysis, a span outside its word or a gold boundary that is not an inner character offset is a
    ``BenchmarkError`` naming the first such word (``_check_words``)."""
    gold = gold_table(reference.analyses)
    encodings = reference.encodings
    if not reference.analyses or not gold.sound or any(word not in encodings for word in reference.analyses):
        _check_words(reference)
    words = list(reference.analyses)
    tokens = (encodings if isinstance(encodings, EncodedWords) else EncodedWords.of(encodings)).arrays(words)
    spans, owner = tokens.spans, np.repeat(np.arange(len(words)), tokens.counts)
    content = spans[:, 1] > spans[:, 0]
    spans, owner = spans[content], owner[content]
    if np.any(spans < 0) or np.any(spans > gold.word_bytes[owner][:, None]):
        _check_words(reference)
    offsets, owner = spans.ravel(), np.repeat(owner, 2)
    inner = (offsets > 0) & (offsets < gold.word_bytes[owner])
    predicted = np.unique(owner[inner] * gold.stride + offsets[inner])  # word * stride + offset, once each
    place = np.searchsorted(predicted, gold.boundary_key).clip(max=max(len(predicted) - 1, 0))
    found = predicted[place] == gold.boundary_key if len(predicted) else np.zeros(len(gold.boundary_key), bool)
    tp = np.bincount(gold.boundary_alternative[found], minlength=len(gold.alternative_word))
    per_word = np.bincount(predicted // gold.stride, minlength=len(words))
    return BoundaryCounts(gold, tp, per_word[gold.alternative_word] - tp, gold.alternative_size - tp,
                          np.bincount(owner[::2], minlength=len(words)))  # fmt: skip


def _check_words(reference: ReferenceWords) -> None:
    """The ``BenchmarkError`` of the first reference word whose encoding or gold boundaries cannot be
    scored, checked word by word in reference order."""
    name = "morphology metrics"
    if not reference.analyses:
        raise BenchmarkError(f"{name}: the morpheme reference has no words", code="no_items")
    for word, (n_bytes, gold, fault) in zip(reference.analyses, gold_table(reference.analyses).words, strict=True):
        encoding = reference.encodings.get(word)
        if encoding is None:
            raise BenchmarkError(f"{name}: no isolated encoding given for reference word {word!r}",
                                 code="missing_encoding", value=word)  # fmt: skip
        if not gold and fault is None:
            raise BenchmarkError(f"{name}: reference word {word!r} has no analysis", code="bad_reference", value=word)
        spans = content_spans(encoding)
        if any(not 0 <= offset <= n_bytes for offset in itertools.chain.from_iterable(spans)):
            raise BenchmarkError(f"{name}: a token span lies outside word {word!r} ({n_bytes} bytes): {spans}",
                                 code="bad_span", value=word)  # fmt: skip
        if fault is not None:
            raise BenchmarkError(f"{name}: {fault}", code="bad_reference", value=word)
    raise BenchmarkError(f"internal error: {name} found no fault to report", code="internal_error")


#: per word of a reference: its UTF-8 length, its gold alternatives in byte offsets (empty: it has no analysis)
#: and what is wrong with its gold boundaries (None: nothing)
_Gold = tuple[int, tuple[frozenset[int], ...], str | None]
#: ``gold_table`` of the references of recent calls, by ``id`` of the analyses (the object is kept with
#: them, so its id is not reused while the entry lives): they depend on the reference alone, and every unit of
#: a corpus scores the same reference objects
_GOLD: dict[int, tuple[Analyses, GoldTable]] = {}
_GOLD_KEPT = 32


def gold_table(analyses: Analyses) -> GoldTable:
    """The ``GoldTable`` of ``analyses``: per word (in order) its byte length, its gold boundary sets
    converted from character to byte offsets and the first of them that is not inner character offsets,
    said; computed once per reference object (``_GOLD``)."""
    kept = _GOLD.get(id(analyses))
    if kept is not None and kept[0] is analyses and len(kept[1].words) == len(analyses):
        return kept[1]
    words: list[_Gold] = []
    for word, alternatives in analyses.items():
        gold: list[frozenset[int]] = []
        fault = None
        for alternative in alternatives:
            if any(not 0 < b < len(word) for b in alternative):
                fault = (f"gold boundaries {sorted(alternative)} of {word!r} are not "
                         f"inner character offsets (0 < b < {len(word)})")  # fmt: skip
                break
            gold.append(frozenset(len(word[:b].encode("utf-8")) for b in alternative))
        words.append((len(word.encode("utf-8")), tuple(gold), fault))
    word_bytes = np.array([n_bytes for n_bytes, _, _ in words], dtype=np.int64)
    stride = int(word_bytes.max(initial=0)) + 1
    alternatives = [(index, sorted(alternative)) for index, (_, gold, _) in enumerate(words) for alternative in gold]
    boundary_alternative = np.repeat(np.arange(len(alternatives)), [len(b) for _, b in alternatives])
    boundary_word = np.array([index for index, _ in alternatives], dtype=np.int64)[boundary_alternative]
    offsets = np.fromiter(itertools.chain.from_iterable(b for _, b in alternatives), dtype=np.int64,
                          count=len(boundary_alternative))  # fmt: skip
    table = GoldTable(analyses, words, word_bytes, np.array([index for index, _ in alternatives], dtype=np.int64),
                      np.array([len(b) for _, b in alternatives], dtype=np.int64), boundary_alternative,
                      boundary_word * stride + offsets, stride)  # fmt: skip
    if len(_GOLD) >= _GOLD_KEPT:
        _GOLD.pop(next(iter(_GOLD)))
    _GOLD[id(analyses)] = (analyses, table)
    return table
