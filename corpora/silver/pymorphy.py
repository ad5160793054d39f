"""The ``pymorphy`` silver analyzer (pymorphy3 + Russian OpenCorpora dictionary, Russian).

Stem | inflectional ending of the best parse, read from its paradigm (plus a paradigm prefix: наи|больш|ий).
pymorphy's ending is the part that varies in the lexeme (ёлка: ёл|ка, because of ёлок), not a linguist's
morpheme; words parsed without a paradigm (hyphenated compounds) are dropped.
"""

from __future__ import annotations

import functools
from typing import Any

from corpora.silver.analyzer import MeasuredAgreement, SilverAnalyzer, missing
from corpora.silver.store import Segmentation


@functools.cache
def _pymorphy() -> Any:
    try:
        import pymorphy3
    except ImportError:
        raise missing("pymorphy", "pymorphy3") from None
    return pymorphy3.MorphAnalyzer(lang="ru")


def _segment_pymorphy(words: list[str]) -> list[Segmentation]:
    analyzer = _pymorphy()
    results: list[Segmentation] = []
    for word in words:
        parse = analyzer.parse(word)[0]  # parses come sorted by score; ties keep the dictionary's order
        first = parse.methods_stack[0]
        if len(first) != 4 or not isinstance(first[2], int):  # (analyzer, fixed word, paradigm id, form index)
            results.append("no paradigm in the best parse")
            continue
        prefix, _tag, ending = analyzer.dictionary.build_paradigm_info(first[2])[first[3]]
        boundaries = {len(word) - len(ending)}
        if len(parse.methods_stack) == 1:  # a paradigm prefix belongs to the word only for plain dictionary words
            boundaries.add(len(prefix))
        results.append(frozenset(b for b in boundaries if 0 < b < len(word)))
    return results


ANALYZER = SilverAnalyzer("pymorphy", "ru", "pymorphy3", "stem | inflectional ending of best parse", _segment_pymorphy,
                          "pymorphy3 stem|ending",
                          (MeasuredAgreement("tikhonov", 14168, 14404, 0.729, 0.223, 0.341),),
                          "pymorphy3 2.0.6", loader=_pymorphy)  # fmt: skip
