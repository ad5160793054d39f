"""Unknown and out-of-vocabulary words (group ``oov``): ``<unk>`` shares and word-level OOV rates."""

from __future__ import annotations

from benchmarks.errors import BenchmarkError
from benchmarks.measure.metrics.inputs import IsolatedWords, MetricResult, RunningText, ratio_of_sums
from bpe.base import Encoding


def _count_unk(encoding: Encoding, unk_id: int | None) -> int:
    return 0 if unk_id is None else sum(1 for token in encoding.ids if token == unk_id)


def _unk_share(name: str, text: RunningText) -> MetricResult:
    return ratio_of_sums(name, [_count_unk(e, text.unk_id) for e in text.encodings], [len(e) for e in text.encodings])


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
        raise BenchmarkError("metric oov_type_rate: nothing to aggregate (no word types in the texts)", code="no_items",
                             value="oov_type_rate")  # fmt: skip
    return MetricResult("oov_type_rate", len(unknown) / len(types), len(types))


def unk_word_rate(words: IsolatedWords) -> MetricResult:
    """Share of words containing at least one ``<unk>`` token, words tokenized in isolation.

    Formula: sum_i #{words of i with an <unk>} / sum_i #words(i) over items i
    (sentences; their words each encoded alone, ``IsolatedWords``).
    Aggregation: ratio of sums.  Source: Rust et al. 2021 ("How Good is Your
    Tokenizer?"), UNK word rate on UD FORM words.
    """
    return ratio_of_sums("unk_word_rate", words.per_item(words.unknown), words.words_per_item)
