"""Byte-span arithmetic several metric groups share: the content tokens of an encoding, character
offsets in UTF-8 bytes, the tokens of each whitespace word and the numbers of a text with their chunks.
Conventions (content tokens, byte offsets): the ``benchmarks.measure.metrics`` package docstring."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bpe.base import Encoding

_WHITESPACE_WORD = re.compile(r"\S+")  # the words of str.split(): same notion of whitespace
_DIGITS = re.compile(r"[0-9]+")  # a number: a maximal run of ASCII digits


def content_spans(encoding: Encoding) -> list[tuple[int, int]]:
    """The byte spans of the content tokens of ``encoding`` (the non-empty ones), in order."""
    return [(start, end) for start, end in encoding.spans if end > start]


#: texts whose text-only facts (``utf8_offsets``, ``whitespace_word_bytes``) a process keeps: every unit of a
#: corpus measures the same texts, so a worker computes them once per text, not once per unit
TEXT_FACTS_KEPT = 1 << 16


@functools.lru_cache(maxsize=TEXT_FACTS_KEPT)
def utf8_offsets(text: str) -> np.ndarray:
    """``offsets[i]`` = UTF-8 byte offset of character ``i``; ``offsets[len(text)]`` = byte length
    (read-only: one array per text, shared by its callers)."""
    code_points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    widths = 1 + (code_points >= 0x80) + (code_points >= 0x800) + (code_points >= 0x10000)
    offsets = np.concatenate(([0], np.cumsum(widths))).astype(np.int64)
    offsets.flags.writeable = False
    return offsets


@functools.lru_cache(maxsize=TEXT_FACTS_KEPT)
def whitespace_word_bytes(text: str) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 byte starts and ends of the whitespace words of ``text`` (``str.split``'s words), read-only."""
    offsets = utf8_offsets(text)
    bounds = np.array([(m.start(), m.end()) for m in _WHITESPACE_WORD.finditer(text)], dtype=np.int64).reshape(-1, 2)
    starts, ends = offsets[bounds[:, 0]], offsets[bounds[:, 1]]
    starts.flags.writeable = ends.flags.writeable = False
    return starts, ends


def tokens_per_whitespace_word(text: str, encoding: Encoding) -> np.ndarray:
    """For every whitespace word of ``text``, the number of content tokens whose byte span overlaps it.

    A token overlapping several words (a piece spanning a space) counts for each of them;
    tokens covering only whitespace count for none.
    """
    word_starts, word_ends = whitespace_word_bytes(text)
    if not len(word_starts):
        return np.zeros(0, dtype=np.int64)
    spans = content_spans(encoding)
    starts = np.sort(np.array([s for s, _ in spans], dtype=np.int64))
    ends = np.sort(np.array([e for _, e in spans], dtype=np.int64))
    # tokens overlapping [ws, we) = tokens starting before we minus tokens ending at or before ws
    # (every token ending at or before ws also starts before we, so the difference is exact)
    return np.searchsorted(starts, word_ends, side="left") - np.searchsorted(ends, word_starts, side="right")


@dataclass(frozen=True)
class Number:
    """A number of a text: its digits and the digit counts of its chunks (the parts of it each content
    token covers, in order)."""

    digits: str
    chunks: tuple[int, ...]
    tokens: int  # content tokens overlapping it


def span_chunks(start: int, end: int, spans: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    """The byte lengths of the parts of ``[start, end)`` each span overlaps, in span order."""
    return tuple(min(e, end) - max(s, start) for s, e in spans if s < end and e > start)


def numbers_in(text: str, encoding: Encoding) -> list[Number]:
    """Every number of ``text`` (``_DIGITS``) with its chunks in ``encoding`` (digits are one byte, so
    byte and character offsets agree inside a number; only the number's start offset is converted)."""
    found = list(_DIGITS.finditer(text))
    if not found:
        return []
    offsets = utf8_offsets(text)
    spans = content_spans(encoding)
    numbers = []
    for match in found:
        start, end = int(offsets[match.start()]), int(offsets[match.end()])
        chunks = span_chunks(start, end, spans)
        numbers.append(Number(match.group(), chunks, len(chunks)))
    return numbers
