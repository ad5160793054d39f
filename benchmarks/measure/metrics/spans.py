"""Byte-span arithmetic several metric groups share: the content tokens of an encoding, character
offsets in UTF-8 bytes, the tokens of each whitespace word and the numbers of a text with their chunks.
Conventions (content tokens, byte offsets): the ``benchmarks.measure.metrics`` package docstring."""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks.errors import BenchmarkError
from bpe.base import Encoding

_WHITESPACE_WORD = re.compile(r"\S+")  # the words of str.split(): same notion of whitespace
_DIGITS = re.compile(r"[0-9]+")  # a number: a maximal run of ASCII digits


def content_spans(encoding: Encoding) -> list[tuple[int, int]]:
    """The byte spans of the content tokens of ``encoding`` (the non-empty ones), in order."""
    return [(start, end) for start, end in encoding.spans if end > start]


#: texts whose text-only facts (``utf8_offsets``) a process keeps: every unit of a
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


#: evaluation sets whose joined-text facts (``joined_text``) a process keeps: every unit of a corpus measures
#: the same texts, so a worker computes them once per evaluation set, not once per unit
JOINED_TEXTS_KEPT = 16


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: ``joined_text`` keeps one per texts
class JoinedText:
    """The texts of an evaluation set joined end to end with nothing between them (text i is characters
    ``char_starts[i]:char_starts[i + 1]``, bytes ``byte_starts[i]:byte_starts[i + 1]``), and the facts
    metrics read from it: character offsets in bytes and the whitespace words of every text.  A metric
    vectorized over the joined text gives each text what it would alone: every token of text i lies in
    its bytes (``JoinedSpans``), and whitespace words are found per text.  Read-only."""

    text: str
    char_starts: np.ndarray  # per text, then the joined length: n + 1 character offsets
    byte_starts: np.ndarray  # the same in UTF-8 bytes
    offsets: np.ndarray  # ``utf8_offsets`` of the joined text
    word_starts: np.ndarray  # byte range of every whitespace word (``str.split``'s words) of every text, in order
    word_ends: np.ndarray
    word_text: np.ndarray  # the index of each word's text

    @functools.cached_property
    def char_text(self) -> np.ndarray:
        """The index of each character's text."""
        return np.repeat(np.arange(len(self.char_starts) - 1), np.diff(self.char_starts))


@functools.lru_cache(maxsize=JOINED_TEXTS_KEPT)
def joined_text(texts: tuple[str, ...]) -> JoinedText:
    """``JoinedText`` of ``texts``, kept for later calls with the same texts (``JOINED_TEXTS_KEPT``)."""
    joined = "".join(texts)
    char_starts = np.concatenate(([0], np.cumsum([len(text) for text in texts], dtype=np.int64)))
    offsets = utf8_offsets.__wrapped__(joined)  # not kept in the per-text cache
    bounds = [(m.start() + int(first), m.end() + int(first)) for text, first in zip(texts, char_starts, strict=False)
              for m in _WHITESPACE_WORD.finditer(text)]  # fmt: skip
    bounds_array = np.array(bounds, dtype=np.int64).reshape(-1, 2)
    word_text = np.searchsorted(char_starts, bounds_array[:, 0], side="right") - 1
    facts = JoinedText(joined, char_starts, offsets[char_starts], offsets, offsets[bounds_array[:, 0]],
                       offsets[bounds_array[:, 1]], word_text)  # fmt: skip
    for array in (facts.char_starts, facts.byte_starts, facts.word_starts, facts.word_ends, facts.word_text):
        array.flags.writeable = False
    return facts


@dataclass(frozen=True)
class JoinedSpans:
    """The byte spans of every token of a list of encodings in the bytes of their ``JoinedText``, in order,
    and the index of each token's text."""

    starts: np.ndarray
    ends: np.ndarray
    text: np.ndarray

    @property
    def content(self) -> np.ndarray:
        """Which tokens are content tokens (a non-empty span)."""
        return self.ends > self.starts


def spans_array(encodings: Sequence[Encoding]) -> tuple[np.ndarray, np.ndarray]:
    """The spans of every token of ``encodings``, in order, as one (tokens, 2) array, and the index of each
    token's encoding."""
    tokens = np.fromiter((len(encoding.spans) for encoding in encodings), dtype=np.int64, count=len(encodings))
    flat = np.fromiter(itertools.chain.from_iterable(itertools.chain.from_iterable(e.spans for e in encodings)),
                       dtype=np.int64, count=2 * int(tokens.sum())).reshape(-1, 2)  # fmt: skip
    return flat, np.repeat(np.arange(len(encodings)), tokens)


def joined_spans(joined: JoinedText, encodings: Sequence[Encoding]) -> JoinedSpans:
    """The spans of ``encodings`` (one per text of ``joined``) moved into the joined text; a span outside
    its text's bytes is a ``BenchmarkError`` (it would land in a neighbour's)."""
    flat, text = spans_array(encodings)
    per_text = np.bincount(text, minlength=len(encodings))
    lengths = np.diff(joined.byte_starts)[text]
    outside = np.flatnonzero((flat < 0).any(axis=1) | (flat > lengths[:, None]).any(axis=1))
    if len(outside):
        token = outside[0]
        raise BenchmarkError(f"running text: token {token - int(per_text[: text[token]].sum())} of text "
                             f"{text[token]} spans bytes {tuple(flat[token].tolist())} outside the text "
                             f"({lengths[token]} bytes)", code="bad_span",
                             value=tuple(flat[token].tolist()))  # fmt: skip
    base = joined.byte_starts[text]
    return JoinedSpans(flat[:, 0] + base, flat[:, 1] + base, text)


def tokens_per_whitespace_word(joined: JoinedText, spans: JoinedSpans) -> np.ndarray:
    """For every whitespace word of the joined texts (``JoinedText.word_starts``), the number of content
    tokens whose byte span overlaps it.

    A token overlapping several words (a piece spanning a space) counts for each of them;
    tokens covering only whitespace count for none.
    """
    content = spans.content
    starts, ends = np.sort(spans.starts[content]), np.sort(spans.ends[content])
    # tokens overlapping [ws, we) = tokens starting before we minus tokens ending at or before ws
    # (every token ending at or before ws also starts before we, so the difference is exact)
    return np.searchsorted(starts, joined.word_ends, side="left") - np.searchsorted(ends, joined.word_starts,
                                                                                   side="right")  # fmt: skip


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
