"""Every analyzer of ``SILVER``: installed, and safe on what is not a word."""

from __future__ import annotations

import pytest

from corpora.silver import SILVER, analyze


@pytest.mark.parametrize("name", list(SILVER))
def test_analyzers_survive_non_words(name: str) -> None:
    odd = ["", " ", "a b", "...", "123", "'s", "ab-cd", "😀"]
    result = analyze(name, odd, SILVER[name].language)
    assert result.coverage.total == len(odd)
    assert result.coverage.kept + sum(result.coverage.dropped.values()) == len(odd)
    assert result.coverage.dropped["not a word (empty or contains whitespace)"] == 3
    for word, (boundaries,) in result.analyses.items():
        assert all(0 < b < len(word) for b in boundaries)


def test_every_analyzer_reports_its_installed_version() -> None:
    for analyzer in SILVER.values():
        assert analyzer.version() != "not installed", analyzer.distribution
