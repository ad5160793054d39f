"""The ``lemminflect`` silver analyzer (lemminflect, English).

Stem | inflectional ending, the stem being the longest common prefix of the word and its first dictionary
lemma when that is the whole lemma or the lemma less its last letter (walk|ed, stud|ies, mak|ing; ran, men
and geese get no boundary); a possessive ``'s`` or ``'`` is split off first.  Words absent from lemminflect's
dictionary are dropped.  It sees inflection only, so its recall against derivational gold is low by design.
"""

from __future__ import annotations

import functools
from typing import Any

from corpora.silver.analyzer import MeasuredAgreement, SilverAnalyzer, missing
from corpora.silver.store import Segmentation


@functools.cache
def _lemminflect() -> Any:
    try:
        import lemminflect
    except ImportError:
        raise missing("lemminflect", "lemminflect") from None
    return lemminflect


def _common_prefix_length(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _segment_lemminflect(words: list[str]) -> list[Segmentation]:
    lemminflect = _lemminflect()
    results: list[Segmentation] = []
    for word in words:
        base = word[:-2] if word.endswith("'s") else word[:-1] if word.endswith("'") else word
        boundaries = {len(base)}
        lemmas = [lemma for by_pos in lemminflect.getAllLemmas(base).values() for lemma in by_pos]
        if not lemmas:
            results.append("not in the lemma dictionary")
            continue
        lemma = lemmas[0].lower()
        stem = _common_prefix_length(base.lower(), lemma)
        if stem >= len(lemma) - 1:  # the stem is the lemma or lacks only its last letter (stud|ies, mak|ing)
            boundaries.add(stem)  # suppletive and vowel-changing forms (ran, men, geese) get no boundary
        results.append(frozenset(b for b in boundaries if 0 < b < len(word)))
    return results


ANALYZER = SilverAnalyzer("lemminflect", "en", "lemminflect", "stem | inflectional ending by lemma",
                          _segment_lemminflect, "lemminflect stem|ending",
                          (MeasuredAgreement("sigmorphon2022-word", 3745, 40065, 0.981, 0.492, 0.656),
                           MeasuredAgreement("morphochallenge2010", 1311, 1686, 0.900, 0.494, 0.638)),
                          "lemminflect 0.2.3", loader=_lemminflect)  # fmt: skip
