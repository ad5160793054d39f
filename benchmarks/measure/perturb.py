"""Realistic noise on evaluation text, for the robustness metrics (``benchmarks.measure.metrics.robustness``;
definitions in docs/metrics.md, "Robustness").

Each perturbation is a pure function ``(text, seed) -> text``.  The seeded ones (``swap``, ``spaces``) draw
from ``numpy.random.default_rng((STREAMS[name], seed))``; the evaluator passes a document's index in its
evaluation set as ``seed`` (``perturb_texts``), so every tokenizer sees the same noisy text.  Which
perturbations a language gets is declared once, in ``LANGUAGE_PERTURBATIONS`` (by ISO 639-3 code) and
``UNIVERSAL``; nothing else names a language.

TokSuite (2025) measures tokenizer robustness on hand-made perturbed benchmark items; these are tokbench's
own definitions, applied to every document of the running evaluation text.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

#: adjacent-letter swaps: the chance that a position whose character and the next are both letters
#: (``str.isalpha``, so inside one whitespace word) is swapped with the next; a swapped pair is skipped
SWAP_RATE = 0.02
#: spaces (U+0020 only): the chance each is doubled, and the chance each is removed (exclusive)
SPACE_DOUBLE_RATE = 0.02
SPACE_DROP_RATE = 0.02
#: the first entry of each seeded perturbation's seed sequence: its own random stream per document
STREAMS = {"swap": 1, "spaces": 2}

_TURKISH_ASCII = str.maketrans("şğıİöüçŞĞÖÜÇ", "sgiIoucSGOUC")
_YO_AS_YE = str.maketrans("ёЁ", "еЕ")


def no_diacritics(text: str, seed: int = 0) -> str:
    """Turkish typed without its letters beyond ASCII: ş→s, ğ→g, ı→i, İ→I, ö→o, ü→u, ç→c and capitals
    (``seed`` unused: deterministic)."""
    return text.translate(_TURKISH_ASCII)


def yo_as_ye(text: str, seed: int = 0) -> str:
    """Russian written with е for ё (ё→е, Ё→Е), as most Russian text is (``seed`` unused)."""
    return text.translate(_YO_AS_YE)


def nfd(text: str, seed: int = 0) -> str:
    """Unicode NFD: Hangul syllables as conjoining jamo (U+1100–U+11FF), as macOS file names and some input
    methods store them (``seed`` unused)."""
    return unicodedata.normalize("NFD", text)


def upper(text: str, seed: int = 0) -> str:
    """``str.upper`` (locale-free: Turkish i → I, not İ; ß → SS) (``seed`` unused)."""
    return text.upper()


def swap(text: str, seed: int) -> str:
    """Typos: scanning left to right, each position whose character and the next are letters is swapped
    with the next with chance ``SWAP_RATE`` (one uniform draw per position of the text), and a swapped
    pair is never touched again."""
    draws = np.random.default_rng((STREAMS["swap"], seed)).random(max(len(text) - 1, 0))
    chars = list(text)
    position = 0
    while position < len(text) - 1:
        if draws[position] < SWAP_RATE and text[position].isalpha() and text[position + 1].isalpha():
            chars[position], chars[position + 1] = text[position + 1], text[position]
            position += 2
        else:
            position += 1
    return "".join(chars)


def spaces(text: str, seed: int) -> str:
    """Spacing noise: each space (U+0020) is doubled with chance ``SPACE_DOUBLE_RATE`` and removed with
    chance ``SPACE_DROP_RATE`` (one uniform draw per character of the text, read at spaces only)."""
    draws = np.random.default_rng((STREAMS["spaces"], seed)).random(len(text))
    out = []
    for char, draw in zip(text, draws, strict=True):
        if char != " " or draw >= SPACE_DOUBLE_RATE + SPACE_DROP_RATE:
            out.append(char)
        elif draw < SPACE_DOUBLE_RATE:
            out.append("  ")
    return "".join(out)


@dataclass(frozen=True)
class Perturbation:
    """A perturbation and how its output lines up with its input, character by character: ``image`` (a
    character-wise one) gives the characters one input character becomes; None: a positional one (same
    length, character ``j`` of the output sits where character ``j`` of the input was).  ``keeps_words``:
    whether the whitespace words stay the same in number, so that they pair up word by word."""

    name: str
    apply: Callable[[str, int], str]
    image: Callable[[str], str] | None
    keeps_words: bool


#: every perturbation, in report order
PERTURBATIONS: dict[str, Perturbation] = {p.name: p for p in (
    Perturbation("no_diacritics", no_diacritics, no_diacritics, True),
    Perturbation("yo_as_ye", yo_as_ye, yo_as_ye, True),
    Perturbation("nfd", nfd, nfd, True),
    Perturbation("upper", upper, upper, True),
    Perturbation("swap", swap, None, True),
    Perturbation("spaces", spaces, None, False),
)}  # fmt: skip

#: the language-specific perturbations, by ISO 639-3 code (the part of a corpus language before ``_``)
LANGUAGE_PERTURBATIONS: dict[str, tuple[str, ...]] = {
    "tur": ("no_diacritics",),
    "rus": ("yo_as_ye",),
    "kor": ("nfd",),
}
#: the perturbations every language gets
UNIVERSAL: tuple[str, ...] = ("upper", "swap", "spaces")


def perturbations_for(language: str) -> tuple[str, ...]:
    """The perturbations of ``language`` (``tur_Latn`` or ``tur``), in ``PERTURBATIONS`` order."""
    chosen = set(LANGUAGE_PERTURBATIONS.get(language.split("_")[0], ())) | set(UNIVERSAL)
    return tuple(name for name in PERTURBATIONS if name in chosen)


def perturb_texts(name: str, texts: Sequence[str]) -> list[str]:
    """Perturbation ``name`` of every text, the seed of text ``i`` being ``i`` (its index in the evaluation set)."""
    apply = PERTURBATIONS[name].apply
    return [apply(text, index) for index, text in enumerate(texts)]


def origins(perturbation: Perturbation, word: str, perturbed: str) -> list[int] | None:
    """For each character of ``perturbed`` (the perturbation of ``word``), the index of the character of
    ``word`` it stands for; None where the two do not line up (an NFD whose canonical reordering moved a
    mark across characters, a positional perturbation that changed the length)."""
    if perturbation.image is None:
        return list(range(len(word))) if len(perturbed) == len(word) else None
    images = [perturbation.image(char) for char in word]
    if "".join(images) != perturbed:
        return None
    return [index for index, image in enumerate(images) for _ in image]
