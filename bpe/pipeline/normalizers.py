"""Normalizers: the first stage of a tokenizer, rewriting text before it is pre-tokenized.

A normalizer maps the input text to the text the model sees and keeps an
*alignment* back to the input, so byte spans and metrics still refer to the
ORIGINAL text; decoding applies the inverse mapping.  Registry
(``NORMALIZERS``, ``get_normalizer(name)``):

``none`` (default)
    The text as given.
``jamo``
    Every precomposed Hangul syllable (U+AC00..U+D7A3) is decomposed into its
    two or three conjoining jamo (U+1100.., U+1161.., U+11A8..), exactly as
    Unicode's canonical decomposition (NFD) does for Hangul, so a model learns
    sub-character units (initial consonant, vowel, final consonant), the
    "consonant and vowel" setting of Park et al. 2020 ("An Empirical Study of
    Tokenization Strategies for Various Korean NLP Tasks").  Nothing else is
    changed (other characters keep their form).  Decoding recomposes every
    conjoining-jamo sequence L V (T) into its syllable, so text that is in NFC
    (Hangul composed, as every corpus loader gives it) round-trips exactly; a
    text that already held conjoining jamo comes back composed.
``nfc``
    Unicode canonical composition (NFC, ``unicodedata.normalize("NFC", ...)``), the normalization
    Qwen's tokenizer applies before its byte-level BPE.  Text already in NFC (every FLORES-200 and UD
    line of the data root) is unchanged.  NFC loses the original form, so decoding gives the NFC text.

Alignment: outside changed characters (for ``nfc``: changed extended grapheme clusters, the units
NFC composes within) a normalized byte offset maps to the
original one shifted by the length change so far.  Inside a changed character
(one syllable of 3 UTF-8 bytes became 6 or 9 bytes of jamo) an offset maps
proportionally, rounded down: the boundary after the first of three jamo maps
to the syllable's byte 1, after the second to byte 2.  A token boundary between
two jamo of one syllable therefore lies *inside* the syllable's bytes, where
it matches no character boundary of a reference, just like a byte-level
token that ends inside a multi-byte character; spans still tile the original
text in order, and a token holding a whole jamo never has an empty span (a
byte-level token holding only part of one jamo's three bytes may).
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

import regex

from bpe.base import TokenizerError

_SYLLABLE_FIRST, _SYLLABLE_LAST = 0xAC00, 0xD7A3
_LEAD_FIRST, _VOWEL_FIRST, _TRAIL_BEFORE_FIRST = 0x1100, 0x1161, 0x11A7
_VOWELS, _TRAILS = 21, 28
_SYLLABLE = regex.compile("[\uac00-\ud7a3]+")
_JAMO_SEQUENCE = regex.compile("([\u1100-\u1112])([\u1161-\u1175])([\u11a8-\u11c2]?)")


def _decompose(syllable: int) -> str:
    index = syllable - _SYLLABLE_FIRST
    lead, rest = divmod(index, _VOWELS * _TRAILS)
    vowel, trail = divmod(rest, _TRAILS)
    jamo = chr(_LEAD_FIRST + lead) + chr(_VOWEL_FIRST + vowel)
    return jamo + chr(_TRAIL_BEFORE_FIRST + trail) if trail else jamo


_DECOMPOSITION = {code: _decompose(code) for code in range(_SYLLABLE_FIRST, _SYLLABLE_LAST + 1)}


def _compose(match: regex.Match[str]) -> str:
    lead, vowel, trail = match.groups()
    index = (ord(lead) - _LEAD_FIRST) * _VOWELS + ord(vowel) - _VOWEL_FIRST
    return chr(_SYLLABLE_FIRST + index * _TRAILS + (ord(trail) - _TRAIL_BEFORE_FIRST if trail else 0))


@dataclass(frozen=True)
class NormalizedText:
    """A normalized text and its alignment to the original.

    ``changes`` lists, in order, every original character the normalizer
    rewrote as (normalized start, normalized end, original start, original
    end), all UTF-8 byte offsets; everything between changes is unchanged.
    """

    text: str
    changes: tuple[tuple[int, int, int, int], ...] = ()

    def original_offset(self, offset: int) -> int:
        """The byte offset in the original text for byte ``offset`` of the normalized text."""
        index = bisect_right(self.changes, (offset, float("inf"))) - 1
        if index < 0:
            return offset
        start, end, original_start, original_end = self.changes[index]
        if offset >= end:
            return original_end + offset - end
        return original_start + (offset - start) * (original_end - original_start) // (end - start)

    def original_span(self, span: tuple[int, int]) -> tuple[int, int]:
        return self.original_offset(span[0]), self.original_offset(span[1])


class Normalizer:
    """The identity normalizer ``none``; subclasses rewrite text."""

    name = "none"

    def normalize(self, text: str) -> NormalizedText:
        """The text the model sees, with its alignment to ``text``."""
        return NormalizedText(text)

    def normalize_text(self, text: str) -> str:
        """The text the model sees, without the alignment (training, ids-only encoding)."""
        return text

    def denormalize(self, text: str) -> str:
        """Decoded model text back to the original form."""
        return text


class JamoNormalizer(Normalizer):
    """Hangul syllables <-> conjoining jamo (see the module docstring)."""

    name = "jamo"

    def normalize(self, text: str) -> NormalizedText:
        changes: list[tuple[int, int, int, int]] = []
        original = normalized = 0  # byte offsets reached in each text
        character = 0  # character offset reached in the original
        for match in _SYLLABLE.finditer(text):
            skipped = len(text[character : match.start()].encode("utf-8"))
            original, normalized = original + skipped, normalized + skipped
            for syllable in match.group():
                width = len(_DECOMPOSITION[ord(syllable)]) * 3  # every modern jamo is 3 UTF-8 bytes
                changes.append((normalized, normalized + width, original, original + 3))
                original, normalized = original + 3, normalized + width
            character = match.end()
        return NormalizedText(self.normalize_text(text), tuple(changes))

    def normalize_text(self, text: str) -> str:
        return text.translate(_DECOMPOSITION)

    def denormalize(self, text: str) -> str:
        return _JAMO_SEQUENCE.sub(_compose, text)


class NfcNormalizer(Normalizer):
    """Unicode NFC (see the module docstring); each extended grapheme cluster that NFC changes is one
    change of the alignment."""

    name = "nfc"

    def normalize(self, text: str) -> NormalizedText:
        if unicodedata.is_normalized("NFC", text):
            return NormalizedText(text)
        normalized_text = self.normalize_text(text)
        changes: list[tuple[int, int, int, int]] = []
        pieces: list[str] = []
        original = normalized = 0
        for cluster in _GRAPHEME.findall(text):
            composed = unicodedata.normalize("NFC", cluster)
            width, composed_width = len(cluster.encode("utf-8")), len(composed.encode("utf-8"))
            if composed != cluster:
                changes.append((normalized, normalized + composed_width, original, original + width))
            pieces.append(composed)
            original, normalized = original + width, normalized + composed_width
        if "".join(pieces) != normalized_text:  # composition across a cluster boundary: align the text as one change
            changes = [(0, len(normalized_text.encode("utf-8")), 0, len(text.encode("utf-8")))]
        return NormalizedText(normalized_text, tuple(changes))

    def normalize_text(self, text: str) -> str:
        return unicodedata.normalize("NFC", text)


_GRAPHEME = regex.compile(r"\X", regex.DOTALL)

NORMALIZERS: dict[str, Normalizer] = {
    normalizer.name: normalizer for normalizer in (Normalizer(), JamoNormalizer(), NfcNormalizer())
}


def get_normalizer(name: str) -> Normalizer:
    """The registered normalizer called ``name``, or a TokenizerError naming the choices."""
    if not isinstance(name, str) or name not in NORMALIZERS:
        raise TokenizerError(f"unknown normalizer {name!r}; choose one of: {', '.join(NORMALIZERS)}",
                             code="unknown_normalizer", value=name)  # fmt: skip
    return NORMALIZERS[name]


def normalized_texts(texts: Iterable[str], name: str) -> Iterable[str]:
    """Training texts through the normalizer ``name``; anything that is not a string passes
    unchanged, so the trainer's own input checks still report it."""
    normalizer = get_normalizer(name)
    if normalizer.name == "none" or isinstance(texts, (str, bytes)):
        return texts
    return (normalizer.normalize_text(text) if isinstance(text, str) else text for text in texts)
