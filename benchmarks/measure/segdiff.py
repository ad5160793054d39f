"""How two tokenizers segment the same text differently: word by word, and boundary by boundary.

Definitions (``docs/inspect.md``, "Segmentation diff", is the user-facing version):

* **Words** are the whitespace words of each text (``str.split()``), each encoded alone in its
  mid-sentence form (``Tokenizer.encode_word``: after a space, or with sentencepiece's dummy prefix),
  as the isolated-word metrics (``fertility_isolated``, ``continued_word_share``) see them on text
  without gold word segmentation.  A *word token* is one occurrence, a *word type* one distinct word.
* **Boundaries** of an encoding of a text are the UTF-8 byte offsets ``b`` with ``0 < b < len(text in
  bytes)`` where a content token (one covering at least one byte) starts or ends: the boundary definition
  of the morphology metrics (``benchmarks.measure.metrics``).  A bare ``</w>`` or dummy-prefix ``▁`` covers no
  byte and makes no boundary; a byte-level token ending inside a multi-byte character makes a boundary
  inside that character.
* Two tokenizers **segment a word differently** iff the boundaries of their isolated encodings of it
  differ.  The ids are not compared (two vocabularies number pieces differently), nor whether a piece is
  ``<unk>``: the diff is about where the cuts are.
* ``token_share = differing word tokens / word tokens`` and ``type_share = differing word types / word
  types``, over every word of every text.
* The differing words are listed by their number of occurrences, most frequent first; ties by the word
  (code point order), so the list is deterministic.

``sentence_boundaries`` and ``boundary_diff`` compare two encodings of one sentence (running text, not
isolated words): the boundaries only one of them has.  The HTML explorer (``benchmarks.report.explorer``) marks
exactly these.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from benchmarks.errors import BenchmarkError
from bpe.base import Encoding, Tokenizer
from bpe.render import render_pieces


def sentence_boundaries(text: str, encoding: Encoding) -> frozenset[int]:
    """The inner byte offsets of ``text`` where a content token of ``encoding`` starts or ends."""
    size = len(text.encode("utf-8"))
    return frozenset(offset for start, end in encoding.spans if end > start for offset in (start, end)
                     if 0 < offset < size)  # fmt: skip


@dataclass(frozen=True)
class BoundaryDiff:
    """Where two encodings of one text cut differently: sorted inner byte offsets that only A has, only
    B has, and their character offsets (the index of the character a byte offset falls in: a boundary
    inside a multi-byte character has the index of that character, and ``inside_a``/``inside_b`` list
    such byte offsets)."""

    only_a: tuple[int, ...]
    only_b: tuple[int, ...]
    chars_a: tuple[int, ...]
    chars_b: tuple[int, ...]
    inside_a: tuple[int, ...]
    inside_b: tuple[int, ...]

    @property
    def count(self) -> int:
        """Differing boundaries, both sides."""
        return len(self.only_a) + len(self.only_b)


def byte_to_char(text: str) -> list[int]:
    """``offsets[b]`` = index of the character byte ``b`` of ``text`` (UTF-8) belongs to, for
    ``0 <= b <= len(bytes)`` (the end maps to ``len(text)``)."""
    offsets: list[int] = []
    for index, char in enumerate(text):
        offsets.extend([index] * len(char.encode("utf-8")))
    offsets.append(len(text))
    return offsets


def char_starts(text: str) -> frozenset[int]:
    """The byte offsets at which a character of ``text`` starts, and the end."""
    starts, position = [0], 0
    for char in text:
        position += len(char.encode("utf-8"))
        starts.append(position)
    return frozenset(starts)


def boundary_diff(text: str, encoding_a: Encoding, encoding_b: Encoding) -> BoundaryDiff:
    """The boundaries (``sentence_boundaries``) that only one of two encodings of ``text`` has."""
    a, b = sentence_boundaries(text, encoding_a), sentence_boundaries(text, encoding_b)
    only_a, only_b = tuple(sorted(a - b)), tuple(sorted(b - a))
    to_char, starts = byte_to_char(text), char_starts(text)
    return BoundaryDiff(
        only_a=only_a,
        only_b=only_b,
        chars_a=tuple(to_char[offset] for offset in only_a),
        chars_b=tuple(to_char[offset] for offset in only_b),
        inside_a=tuple(offset for offset in only_a if offset not in starts),
        inside_b=tuple(offset for offset in only_b if offset not in starts),
    )


@dataclass(frozen=True)
class WordDiff:
    """A word two tokenizers segment differently: its occurrences and both splits, as ``tokbench show``
    renders pieces (``bpe.render``)."""

    word: str
    count: int
    pieces_a: tuple[str, ...]
    pieces_b: tuple[str, ...]


@dataclass(frozen=True)
class SegmentationDiff:
    """The words of some texts that tokenizers A and B segment differently (module docstring)."""

    words: tuple[WordDiff, ...]
    word_tokens: int
    word_types: int
    differing_tokens: int
    differing_types: int

    @property
    def token_share(self) -> float:
        """Share of word occurrences segmented differently."""
        return self.differing_tokens / self.word_tokens

    @property
    def type_share(self) -> float:
        """Share of distinct words segmented differently."""
        return self.differing_types / self.word_types


def segmentation_diff(texts: Iterable[str], tokenizer_a: Tokenizer, tokenizer_b: Tokenizer) -> SegmentationDiff:
    """Every word of ``texts`` that ``tokenizer_a`` and ``tokenizer_b`` segment differently, with its
    frequency and both splits, and the shares of word tokens and types that differ (module docstring).
    Each distinct word is encoded once per tokenizer.  No word at all is a ``BenchmarkError``."""
    counts = Counter(word for text in texts for word in text.split())
    if not counts:
        raise BenchmarkError("segmentation diff: the texts hold no words (empty or whitespace only)", code="no_items")
    differing: list[WordDiff] = []
    for word, count in counts.items():
        encoding_a, encoding_b = tokenizer_a.encode_word(word), tokenizer_b.encode_word(word)
        if sentence_boundaries(word, encoding_a) != sentence_boundaries(word, encoding_b):
            differing.append(WordDiff(
                word,
                count,
                tuple(render_pieces(word, encoding_a, tokenizer_a.unk_id)),
                tuple(render_pieces(word, encoding_b, tokenizer_b.unk_id)),
            ))  # fmt: skip
    differing.sort(key=lambda diff: (-diff.count, diff.word))
    return SegmentationDiff(
        words=tuple(differing),
        word_tokens=sum(counts.values()),
        word_types=len(counts),
        differing_tokens=sum(diff.count for diff in differing),
        differing_types=len(differing),
    )
