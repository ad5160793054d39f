"""Fertility (group ``fertility``): tokens per word and the shares of continued and single-token words,
on words encoded in isolation and on running text."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from benchmarks.measure.metrics.inputs import IsolatedWords, MetricResult, RunningText, ratio_of_sums


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
    return ratio_of_sums("fertility_isolated", words.per_item(words.tokens), words.words_per_item)


def _isolated_split_share(name: str, words: IsolatedWords,
                          is_counted: Callable[[np.ndarray], np.ndarray]) -> MetricResult:  # fmt: skip
    return ratio_of_sums(name, words.per_item(is_counted(words.content_tokens)), words.words_per_item)


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
    word_text, texts = text.joined.word_text, len(text.texts)
    return ratio_of_sums(
        name,
        np.bincount(word_text[is_counted(text.tokens_per_word)], minlength=texts),
        np.bincount(word_text, minlength=texts),
    )


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
