"""The pymorphy analyzer (Russian) on real words."""

from __future__ import annotations

from corpora.silver import analyze


def test_pymorphy_splits_stem_and_paradigm_ending() -> None:
    result = analyze("pymorphy", ["столами", "наибольший", "кошки-мышки"], "ru")
    assert result.analyses["столами"] == (frozenset({4}),)  # стол|ами
    assert result.analyses["наибольший"] == (frozenset({3, 8}),)  # paradigm prefix наи, ending ий
    assert result.coverage.dropped == {"no paradigm in the best parse": 1}  # hyphenated compound
