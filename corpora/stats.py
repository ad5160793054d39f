"""Descriptive statistics of a loaded corpus (what `tokbench corpora stats` prints).

Counting rules: words are the gold words where a document carries them (UD FORMs), else
whitespace-separated tokens; sentences are estimated as runs of . ! ? … (and their full-width
forms) before whitespace or the end, at least one per document; the script share is the share of
letters (\\p{L}) written in the spec's ISO 15924 script (composite codes such as Kore = Hangul + Han).
"""

from __future__ import annotations

from typing import Any

import regex

from corpora.loader import Corpus, Document

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


def reference_coverage(corpus: Corpus) -> dict[str, dict[str, Any]]:
    """Coverage of every morpheme reference the spec declares (builds them: silver analyzers take seconds)."""
    return {
        name: {
            "kind": reference.kind,
            "source": reference.source,
            "words": len(reference.analyses),
            "entries_read": reference.coverage.total,
            "entries_kept": reference.coverage.kept,
            "share_kept": round(reference.coverage.share_kept, 4),
            "dropped": dict(sorted(reference.coverage.dropped.items())),
        }
        for name, reference in sorted(corpus.references().items())
    }
