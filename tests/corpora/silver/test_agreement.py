"""The agreement of the silver analyzers with the gold references, and the figures written down for runs
without gold."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpora.errors import CorpusError
from corpora.morph import CITATIONS, Coverage, MorphReference, read_reference
from corpora.silver import SILVER, analyze, gold_references
from corpora.silver.agreement import agreement
from corpora.spec import list_corpora, parse_spec
from tests.conftest import DATA_ROOT, by_data
from tests.errors import raises_code

MC = "morph/{0}/morphochallenge2010_goldstd_combined.segmentation.{0}"


def reference(analyses: dict[str, tuple[frozenset[int], ...]], kind: str = "gold") -> MorphReference:
    return MorphReference("ref", "tr", kind, analyses, Coverage(len(analyses), len(analyses), {}), "test")


def spec(corpus_id: str, language: str, references: list[dict]) -> object:
    """A minimal valid corpus spec carrying ``references`` (its text source is never read here)."""
    return parse_spec(
        {
            "id": corpus_id,
            "language": language,
            "license": "test",
            "description": "test",
            "sources": [{"kind": "path", "role": "test", "format": "text", "files": "flores/tur_Latn.txt"}],
            "references": references,
        }
    )


def test_agreement_counts_the_best_alternative_on_covered_words() -> None:
    gold = reference({"ab": (frozenset({1}),), "abcd": (frozenset({1, 3}), frozenset({2})), "xyz": (frozenset(),)})
    predicted = reference({"ab": (frozenset({1}),), "abcd": (frozenset({2}),)}, kind="silver")
    result = agreement(predicted, gold)
    assert (result.words, result.gold_words) == (2, 3)  # xyz: not segmented by the analyzer, not scored
    assert (result.tp, result.fp, result.fn) == (2, 0, 0)  # abcd matches its second alternative exactly
    assert (result.precision, result.recall, result.f1) == (1.0, 1.0, 1.0)


def test_zemberek_agrees_with_morpho_challenge_turkish(data_root: Path) -> None:
    gold = read_reference("morphochallenge2010", [data_root / MC.format("tur")], "mc-tur", "tr")
    result = agreement(analyze("zemberek", gold.analyses, "tr"), gold)
    assert result.words >= 0.99 * result.gold_words
    assert result.f1 > 0.90  # data README: ~0.90; measured 0.953 with best-matching alternatives


def test_kiwi_agrees_with_kaist_lemmas() -> None:
    gold = read_reference("ud-korean-lemma", [DATA_ROOT / "ud/ko/ko_kaist-ud-dev.conllu"], "kaist", "ko")
    result = agreement(analyze("kiwi", gold.analyses, "ko"), gold)
    assert result.words == result.gold_words
    assert result.f1 > 0.92  # data README: ~0.94


def test_pymorphy_sees_inflection_only(data_root: Path) -> None:
    gold = read_reference("tikhonov", [data_root / "morph/rus/tikhonov_word2morph_rus.valid"], "tikhonov", "ru")
    result = agreement(analyze("pymorphy", gold.analyses, "ru"), gold)
    # one or two boundaries per word against a full segmentation: precise, low recall
    assert result.precision > 0.65 and result.recall < 0.35


def test_gold_references_read_spec_files_once_and_skip_missing() -> None:
    specs = [
        spec("a-tur", "tur_Latn", [{"name": "mc-tur", "reader": "morphochallenge2010", "files": MC.format("tur")}]),
        spec(
            "b-tur",
            "tur_Latn",
            [
                {"name": "mc-again", "reader": "morphochallenge2010", "files": MC.format("tur")},
                {"name": "absent", "reader": "morphscore", "files": "morph/tur/absent.csv"},
                {"name": "silver", "analyzer": "zemberek"},
            ],
        ),
    ]
    golds, skipped = gold_references(DATA_ROOT, specs)
    assert [(g.name, g.language, len(g.analyses)) for g in golds] == [("mc-tur", "tr", by_data(4, 1760))]
    assert len(skipped) == 1 and "'absent'" in skipped[0] and "absent.csv: no such file" in skipped[0]


def test_gold_references_need_a_data_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKBENCH_DATA", raising=False)
    with raises_code(CorpusError, "needs_data_root"):
        gold_references(None, [])


@pytest.fixture(scope="module")
def shipped_golds(data_root: Path) -> dict[tuple[str, str], MorphReference]:
    """The gold references the shipped corpus specs score tokenizers against, by (reader name, language)
    (not the ``role = "training"`` ones BPE-knockout learns from)."""
    golds, _ = gold_references(data_root)
    readers = {reference.name: reference.reader for spec in list_corpora() for reference in spec.references
               if reference.role == "evaluation"}  # fmt: skip
    return {(readers[gold.name], gold.language): gold for gold in golds if gold.name in readers}


def test_documented_agreement_is_what_the_analyzer_measures_now(shipped_golds) -> None:
    """A run on the embedded corpora (no gold) prints these figures beside each silver reference: they
    must be what `tokbench corpora agreement` measures with the installed analyzer. Every documented
    figure is measured (one test: they all need the full data root); the failures are reported together."""
    failures = []
    figures = [(name, figure) for name, analyzer in SILVER.items() for figure in analyzer.measured]
    assert figures
    for analyzer, measured in figures:
        spec = SILVER[analyzer]
        label = f"{analyzer} vs {measured.gold}"
        if spec.version() not in spec.measured_with:
            failures.append(f"{label}: the analyzer changed: measure again and update `measured`")
            continue
        gold = shipped_golds[measured.gold, spec.language]
        result = agreement(analyze(analyzer, gold.analyses, spec.language), gold)
        got = (result.words, result.gold_words, *(round(x, 3) for x in (result.precision, result.recall, result.f1)))
        documented = (measured.words, measured.gold_words, measured.precision, measured.recall, measured.f1)
        if got != documented:
            failures.append(f"{label}: measured (words, gold words, P, R, F1) {got}, documented {documented}")
        if not CITATIONS.get(measured.gold):  # the report cites the gold reference by this name
            failures.append(f"{label}: no citation for the gold reference")
    assert not failures, "\n".join(failures)
