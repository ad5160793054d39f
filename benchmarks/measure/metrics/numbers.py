"""Numbers and punctuation (group ``numbers``): how digits are grouped into tokens, whether a number's
split depends on its context, and whether punctuation shares tokens with words."""

from __future__ import annotations

import functools
import unicodedata

import numpy as np

from benchmarks.measure.metrics.inputs import MetricResult, RunningText, ratio_of_sums
from benchmarks.measure.metrics.spans import JOINED_TEXTS_KEPT, JoinedText, content_spans, span_chunks

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
                alone[number.digits] = span_chunks(0, len(number.digits), content_spans(text.encode(number.digits)))
        differ.append(sum(1 for n in long if n.chunks != alone[n.digits]))
        counted.append(len(long))
    return ratio_of_sums("number_context_split_share", differ, counted)


def _is_punctuation(character: str) -> bool:
    return unicodedata.category(character).startswith("P")


def _is_word_character(character: str) -> bool:
    return unicodedata.category(character)[0] in "LNM"


@functools.lru_cache(maxsize=JOINED_TEXTS_KEPT)
def _character_classes(joined: JoinedText) -> tuple[np.ndarray, np.ndarray]:
    """Per character of the joined texts, whether it is punctuation, and how many word characters precede
    each position (``words_before[i]``: among the first i characters).  Text-only, so computed once per
    evaluation set (the Unicode category of every character is the cost), read-only."""
    text = joined.text
    punctuation = np.fromiter((_is_punctuation(c) for c in text), dtype=bool, count=len(text))
    word = np.fromiter((_is_word_character(c) for c in text), dtype=bool, count=len(text))
    words_before = np.concatenate(([0], np.cumsum(word)))
    punctuation.flags.writeable = words_before.flags.writeable = False
    return punctuation, words_before


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
    joined, spans = text.joined, text.spans
    punctuation, words_before = _character_classes(joined)
    content = spans.content
    # computed over the joined texts at once: a token lies inside its text (``JoinedSpans``)
    first = np.searchsorted(joined.offsets, spans.starts[content], side="right") - 1  # the character of its first byte
    last = np.searchsorted(joined.offsets, spans.ends[content] - 1, side="right") - 1  # ... and of its last byte
    with_word = words_before[last + 1] - words_before[first] > 0
    # characters covered by a token holding a word character: +1 where such a token starts, -1 after it ends
    size = len(joined.text) + 1
    cover = np.bincount(first[with_word], minlength=size) - np.bincount(last[with_word] + 1, minlength=size)
    covered = np.cumsum(cover)[:-1] > 0
    texts = len(text.texts)
    attached = np.bincount(joined.char_text[punctuation & covered], minlength=texts)
    totals = np.bincount(joined.char_text[punctuation], minlength=texts)
    return ratio_of_sums("punctuation_attached_share", attached, totals)
