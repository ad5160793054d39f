"""Fidelity (group ``fidelity``): what comes back from the tokenizer (round trips, characters lost) and
tokens that end inside a UTF-8 character."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from benchmarks.measure.metrics.inputs import MetricResult, RunningText, ratio_of_sums


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
    boundaries, spans, texts = text.joined.offsets, text.spans, len(text.texts)
    # over the joined texts at once: a token ends inside its text, where the only boundaries are its own
    at_boundary = boundaries[np.searchsorted(boundaries, spans.ends).clip(max=len(boundaries) - 1)] == spans.ends
    inside = np.bincount(spans.text[~at_boundary], minlength=texts)
    totals = np.bincount(spans.text, minlength=texts)
    return ratio_of_sums("partial_char_token_share", inside, totals)


def has_partial_characters(entries: Iterable[bytes]) -> bool:
    """Whether some vocabulary entry (its bytes) is not a sequence of whole UTF-8 characters."""
    for entry in entries:
        try:
            entry.decode("utf-8")
        except UnicodeDecodeError:
            return True
    return False
