"""The lemminflect analyzer (English) on real words."""

from __future__ import annotations

from corpora.silver import analyze


def test_lemminflect_splits_inflection_only() -> None:
    result = analyze("lemminflect", ["studies", "walked", "ran", "accents'", "children's", "qwzxvk"], "en")
    assert result.analyses["studies"] == (frozenset({4}),)  # stud|ies (lemma study less its last letter)
    assert result.analyses["walked"] == (frozenset({4}),)
    assert result.analyses["ran"] == (frozenset(),)  # run: vowel change, no boundary
    assert result.analyses["accents'"] == (frozenset({6, 7}),)
    assert result.analyses["children's"] == (frozenset({5, 8}),)
    assert result.coverage.dropped == {"not in the lemma dictionary": 1}
