"""The agreement of the silver analyzers with the gold references.

Agreement with a gold reference counts boundary TP/FP/FN per word against the best-matching gold alternative
(``corpora.morph.boundary_counts``), micro-summed over the gold words the analyzer kept
(``tokbench corpora agreement`` prints it).  The figures written down for runs without gold are each
analyzer's ``SilverAnalyzer.measured``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from corpora.errors import CorpusError
from corpora.morph import MorphReference, boundary_counts, boundary_prf, read_reference
from corpora.silver.pool import analyze
from corpora.silver.registry import SILVER
from corpora.sources import DATA_ROOT_HINT, data_root, path_files
from corpora.spec import CorpusSpec, Source, list_corpora


@dataclass(frozen=True)
class Agreement:
    """Boundary agreement of one silver analyzer with one gold reference (micro-summed over words)."""

    analyzer: str
    gold: str
    language: str
    gold_kind: str  # "gold" or "morphscore" (one boundary per word: only recall is meaningful)
    gold_words: int  # distinct words in the gold reference
    words: int  # of those, words the analyzer segmented (the scored words)
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return boundary_prf(self.tp, self.fp, self.fn)[0]

    @property
    def recall(self) -> float:
        return boundary_prf(self.tp, self.fp, self.fn)[1]

    @property
    def f1(self) -> float:
        return boundary_prf(self.tp, self.fp, self.fn)[2]


def agreement(silver: MorphReference, gold: MorphReference) -> Agreement:
    """Score ``silver`` boundaries against ``gold`` on the gold words the silver reference covers.

    Each word uses the gold alternative that best matches the silver analysis (fewest errors, then
    most true positives, then file order: ``corpora.morph.boundary_counts``).
    """
    tp = fp = fn = words = 0
    for word, alternatives in gold.analyses.items():
        if word in silver.analyses:
            counts = boundary_counts(silver.analyses[word][0], alternatives)
            tp, fp, fn, words = tp + counts[0], fp + counts[1], fn + counts[2], words + 1
    return Agreement(silver.name, gold.name, gold.language, gold.kind, len(gold.analyses), words, tp, fp, fn)


def gold_references(
    data_dir: str | Path | None, specs: Iterable[CorpusSpec] | None = None
) -> tuple[list[MorphReference], list[str]]:
    """The file-based references of ``specs`` (default: the shipped corpus specs), read from the data root.

    Each distinct (reader, files, language) is read once, under the name of the first spec (by
    corpus id) that lists it.  Returns the references and one message per reference skipped
    because its files are missing.
    """
    root = data_root(data_dir)
    if root is None:
        raise CorpusError(f"agreement compares analyzers with gold files and needs a data root: {DATA_ROOT_HINT}",
                          code="needs_data_root")
    references: dict[tuple[str, tuple[str, ...], str], MorphReference] = {}
    skipped = []
    for spec in list_corpora() if specs is None else specs:
        for reference in spec.references:
            key = (reference.reader or "", reference.files, spec.short_language)
            if reference.reader is None or key in references:
                continue
            try:
                paths = [item.path for item in path_files(Source(0, "path", "test", files=reference.files), root)]
            except CorpusError as exc:
                skipped.append(f"{spec.id}: reference {reference.name!r} skipped: {exc}")
                continue
            references[key] = read_reference(reference.reader, paths, reference.name, spec.short_language)
    return list(references.values()), skipped


def agreement_with_golds(analyzer: str, golds: Iterable[MorphReference]) -> list[Agreement]:
    """``analyzer``'s agreement with every gold reference (kind ``gold``) of its language among ``golds``:
    what a run prints beside a silver reference when the corpus also has gold."""
    return [agreement(analyze(analyzer, gold.analyses, gold.language), gold) for gold in golds_of(analyzer, golds)]


def golds_of(analyzer: str, references: Iterable[MorphReference]) -> list[MorphReference]:
    """The gold references (kind ``gold``) of ``analyzer``'s language among ``references``, in their order."""
    language = SILVER[analyzer].language
    return [reference for reference in references if reference.kind == "gold" and reference.language == language]


def agreement_table(golds: list[MorphReference]) -> list[tuple[Agreement, MorphReference, MorphReference]]:
    """(agreement, silver reference, gold reference) for every analyzer x gold of its language."""
    rows = []
    for name, spec in SILVER.items():
        for gold in golds:
            if gold.language == spec.language:
                silver = analyze(name, gold.analyses, gold.language)
                rows.append((agreement(silver, gold), silver, gold))
    return rows
