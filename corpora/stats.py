"""Descriptive statistics of a loaded corpus (what `tokbench corpora stats` prints).

Counting rules: words are the gold words where a document carries them (UD FORMs), else
whitespace-separated tokens; sentences are estimated as runs of . ! ? … (and their full-width
forms) before whitespace or the end, at least one per document; the script share is the share of
letters (\\p{L}) written in the spec's ISO 15924 script (composite codes such as Kore = Hangul + Han).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import regex

from corpora.loader import Corpus, Document
from corpora.morph import CITATIONS, MorphReference
from corpora.silver import SILVER, agreement_with_golds, golds_of

_SENTENCE_END = regex.compile(r"[.!?…。！？]+(?=\s|$)")
_LETTER = regex.compile(r"\p{L}")
#: ISO 15924 codes that name a combination of Unicode scripts
COMPOSITE_SCRIPTS = {
    "Jpan": ("Hani", "Hira", "Kana"),
    "Kore": ("Hang", "Hani"),
    "Hanb": ("Hani", "Bopo"),
    "Hrkt": ("Hira", "Kana"),
    "Hans": ("Hani",),
    "Hant": ("Hani",),
}


def script_pattern(script: str) -> regex.Pattern[str] | None:
    """A pattern matching one letter of ``script``, or None when Unicode has no such script."""
    parts = COMPOSITE_SCRIPTS.get(script, (script,))
    try:
        return regex.compile("[" + "".join(rf"\p{{Script={part}}}" for part in parts) + "]")
    except regex.error:
        return None


def role_stats(documents: list[Document], script: str) -> dict[str, Any]:
    text = "\n".join(document.text for document in documents)
    words: list[str] = []
    for document in documents:
        words.extend(document.words if document.words is not None else document.text.split())
    letters = len(_LETTER.findall(text))
    pattern = script_pattern(script)
    in_script = len(pattern.findall(text)) if pattern is not None else None
    return {
        "documents": len(documents),
        "sentences": sum(max(1, len(_SENTENCE_END.findall(d.text))) for d in documents),
        "words": len(words),
        "word_types": len(set(words)),
        "characters": sum(len(d.text) for d in documents),
        "utf8_bytes": sum(len(d.text.encode("utf-8")) for d in documents),
        "script_share": round(in_script / letters, 4) if in_script is not None and letters else None,
    }


def corpus_stats(corpus: Corpus) -> dict[str, Any]:
    """Per-role statistics plus identity; every number is computed from the loaded documents."""
    spec = corpus.spec
    return {
        "id": spec.id,
        "language": spec.language,
        "license": spec.license,
        "fingerprint": corpus.fingerprint,
        "roles": {role: role_stats(corpus.documents(role), spec.script) for role in corpus.roles()},
        "leaks": corpus.leaks,
        "notes": list(corpus.notes),
    }


def role_sources(corpus: Corpus) -> dict[str, list[str]]:
    """What each role's documents were read from: files under the data root or in a package, or a hub split
    (a ``path`` source read from the hub when there is no data root).  Role ``all`` feeds train and test."""
    sources: dict[str, list[str]] = {}
    for source in corpus.spec.sources:
        if source.kind == "package":
            text = f"package {source.package}: {', '.join(source.files)}"
        elif source.kind == "path" and (corpus.data_dir is not None or not source.hub):
            text = ", ".join(source.files)
        else:
            text = "hub " + ", ".join(hub.describe() for hub in source.hub)
        roles = ("train", "test") if source.role == "all" else (source.role,)
        for role in roles:
            sources.setdefault(role, []).append(text + (" (hash split)" if source.role == "all" else ""))
    return sources


def reference_coverage(corpus: Corpus, agreement: bool = False) -> dict[str, dict[str, Any]]:
    """Coverage of every morpheme reference the spec declares (builds them: silver analyzers take seconds),
    with what a reader must know to weigh results on it: ``citation``, ``caveat`` (a warning such as the
    Korean MorphScore file's) and, for a silver reference, its agreement with gold.

    ``agreement``: score each silver analyzer against the corpus's own gold references of its language
    (``agreement_measured``, a few seconds per reference).  Without such gold the analyzer's documented
    figures are given instead (``agreement_documented``, measured once with ``tokbench corpora agreement``).
    Gold file paths are given relative to the data root, so a report never names a machine's folders.
    """
    built = corpus.references()
    golds = [reference for reference in built.values() if reference.kind == "gold"]
    analyzers = _analyzers(corpus)
    coverage = {}
    for name, reference in sorted(built.items()):
        entry = {
            "kind": reference.kind,
            "citation": reference.citation,
            "source": _relative_source(reference.source, corpus.data_dir),
            "words": len(reference.analyses),
            "entries_read": reference.coverage.total,
            "entries_kept": reference.coverage.kept,
            "share_kept": round(reference.coverage.share_kept, 4),
            "dropped": dict(sorted(reference.coverage.dropped.items())),
        }
        if reference.notes:
            entry["caveat"] = reference.notes
        if name in analyzers:
            entry.update(_silver_agreement(analyzers[name], golds if agreement else []))
        coverage[name] = entry
    return coverage


def _analyzers(corpus: Corpus) -> dict[str, str]:
    """Reference name -> silver analyzer, for the references a silver analyzer builds."""
    return {spec.name: spec.analyzer for spec in corpus.spec.references if spec.analyzer is not None}


def agreement_words(corpora: Iterable[Corpus]) -> dict[str, list[str]]:
    """The gold words each silver analyzer is asked for by ``reference_coverage(corpus, agreement=True)`` of
    every corpus of ``corpora`` in turn, in the order it asks for them (duplicates kept), so that they can be
    analyzed ahead (``silver.Prefetch``'s ``afterwards``).  Reads the gold references only: no analyzer runs."""
    words: dict[str, list[str]] = {}
    for corpus in corpora:
        evaluated = {spec.name for spec in corpus.spec.references if spec.role == "evaluation"}
        golds = list(corpus.gold_references().values())
        for name, analyzer in sorted(_analyzers(corpus).items()):  # the order of reference_coverage's loop
            if name in evaluated:
                for gold in golds_of(analyzer, golds):
                    words.setdefault(analyzer, []).extend(gold.analyses)
    return words


def _relative_source(source: str, data_dir: Path | None) -> str:
    if data_dir is None:
        return source
    root = str(Path(data_dir).resolve())
    parts = []
    for part in source.split(", "):
        path = str(Path(part).resolve()) if part.startswith(("/", ".")) else part
        parts.append("data root: " + path[len(root) + 1 :] if path.startswith(root + "/") else part)
    return ", ".join(parts)


def _silver_agreement(analyzer: str, golds: list[MorphReference]) -> dict[str, Any]:
    measured = agreement_with_golds(analyzer, golds)
    if measured:
        return {"agreement_measured": [
            {"gold": next(g.citation for g in golds if g.name == a.gold), "words": a.words, "gold_words": a.gold_words,
             "precision": round(a.precision, 4), "recall": round(a.recall, 4), "f1": round(a.f1, 4)}
            for a in measured
        ]}  # fmt: skip
    spec = SILVER[analyzer]
    return {"agreement_documented": [
        {"gold": CITATIONS[m.gold], "words": m.words, "gold_words": m.gold_words, "precision": m.precision,
         "recall": m.recall, "f1": m.f1, "measured_with": spec.measured_with}
        for m in spec.measured
    ]}  # fmt: skip
