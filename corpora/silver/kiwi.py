"""The ``kiwi`` silver analyzer (kiwipiepy, Korean).

Morpheme tokens carry character ``start``/``len`` offsets; fused morphemes overlap inside a syllable
(했다 = 하 [0,1) + 었 [0,1) + 다 [1,2)).  A character offset is a boundary iff some token starts there and no
token spans across it, so a fused syllable is never cut: 서울입니다 (서울 + 이 + ㅂ니다, the last two fused in
입) -> 서울|입니다.  A loaded kiwi holds worker threads: a process that has loaded it is never forked
(``pool.analyzers_loaded``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from corpora.silver.analyzer import MeasuredAgreement, SilverAnalyzer, missing
from corpora.silver.store import Segmentation


@functools.cache
def _kiwi() -> Any:
    try:
        from kiwipiepy import Kiwi
    except ImportError:
        raise missing("kiwi", "kiwipiepy") from None
    return Kiwi()


def kiwi_boundaries(spans: Iterable[tuple[int, int]], length: int) -> frozenset[int] | None:
    """Character boundaries from possibly overlapping morpheme spans ``(start, len)`` of a word.

    An offset is a boundary iff a morpheme starts there and no morpheme spans across it (fused
    morphemes share a syllable, which must not be cut).  None when the spans leave a character
    of the word uncovered.
    """
    spans = list(spans)
    covered = set()
    for start, size in spans:
        covered.update(range(start, start + size))
    if covered != set(range(length)):
        return None
    inside = {offset for start, size in spans for offset in range(start + 1, start + size)}
    return frozenset(start for start, _ in spans if 0 < start < length and start not in inside)


def _segment_kiwi(words: list[str]) -> list[Segmentation]:
    results: list[Segmentation] = []
    # a list input lets kiwi analyze in worker threads; results come back in input order
    for word, tokens in zip(words, _kiwi().tokenize(words), strict=True):
        boundaries = kiwi_boundaries(((t.start, t.len) for t in tokens), len(word))
        results.append("analysis does not cover the word" if boundaries is None else boundaries)
    return results


ANALYZER = SilverAnalyzer("kiwi", "ko", "kiwipiepy", "morpheme offsets, fused syllables never cut", _segment_kiwi,
                          "kiwipiepy morphemes",
                          (MeasuredAgreement("ud-korean-lemma", 10561, 10561, 0.921, 0.969, 0.945),),
                          "kiwipiepy 0.24.1", loader=_kiwi)  # fmt: skip
