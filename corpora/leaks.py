"""Leak check by content: no test or eval document may occur in the training text.

A path-level check (one file feeding two roles, ``reading.plan_sources``) misses the same text under two
paths, or inside a role-``all`` source whose lines also serve as ``eval``.  This check compares text:

* every test and eval document is reduced to a *key*: NFKC, case-folded, runs of whitespace made one
  space, stripped; keys of fewer than ``MIN_KEY_CHARS`` characters are ignored (a bare "1." or "OK");
* every training document offers its own key, the key of each of its lines and of each of its
  sentences (split after ``.!?…。！？`` followed by whitespace);
* a test or eval document *leaks* when its key is among the training keys.  A test document made of
  several sentences is found when it occurs as a whole document, line or sentence of the training
  text, not when its sentences are spread over several training lines.

What happens then is the spec's ``on_leak``: ``"fail"`` (default: a CorpusError naming an example),
``"drop"`` (the training documents holding leaked text are dropped, and a note says how many) or
``"keep"`` (nothing changes; the counts are reported by ``tokbench corpora stats`` and in a run's
manifest).  Published corpora repeat short sentences across their splits (UD's "Thank you."), so a
shipped spec may keep them, saying so.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import regex

SENTENCE_PUNCTUATION = ".!?…。！？"
#: shorter keys are too common to show a leak
MIN_KEY_CHARS = 4
EVALUATION_ROLES = ("test", "eval")

_SENTENCE_BREAK = regex.compile(rf"(?<=[{regex.escape(SENTENCE_PUNCTUATION)}])\s+")


class _Text(Protocol):
    id: str
    text: str


def leak_key(text: str) -> str:
    """The normalized form two texts are compared in."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def training_keys(text: str) -> Iterator[str]:
    """The keys a training document offers: its own, its lines' and its sentences'."""
    yield leak_key(text)
    for line in text.splitlines():
        yield leak_key(line)
        for sentence in _SENTENCE_BREAK.split(line):
            yield leak_key(sentence)


@dataclass(frozen=True)
class Leaks:
    """What the check found: leaked documents per evaluation role, the training documents holding them
    (their ids, in corpus order), and one example ``(evaluation id, training id, text)``."""

    documents: dict[str, int] = field(default_factory=dict)
    training_ids: tuple[str, ...] = ()
    example: tuple[str, str, str] | None = None

    @property
    def total(self) -> int:
        return sum(self.documents.values())

    def summary(self, policy: str) -> dict[str, Any]:
        """For statistics and manifests."""
        return {"policy": policy, "leaked_documents": dict(self.documents),
                "training_documents": len(self.training_ids)}  # fmt: skip


def find_leaks(documents: Mapping[str, Sequence[_Text]]) -> Leaks:
    """Test and eval documents whose text occurs in the training documents (module docstring)."""
    wanted: dict[str, list[tuple[str, str]]] = {}  # key -> [(role, evaluation document id)]
    for role in EVALUATION_ROLES:
        for document in documents.get(role, ()):
            key = leak_key(document.text)
            if len(key) >= MIN_KEY_CHARS:
                wanted.setdefault(key, []).append((role, document.id))
    found: dict[str, str] = {}  # key -> first training document id holding it
    training_ids: list[str] = []
    for document in documents.get("train", ()) if wanted else ():
        hits = [key for key in set(training_keys(document.text)) if key in wanted]
        if hits:
            training_ids.append(document.id)
            for key in hits:
                found.setdefault(key, document.id)
    counts: dict[str, int] = {}
    example = None
    for key in sorted(found, key=lambda k: wanted[k][0][1]):
        for role, document_id in wanted[key]:
            counts[role] = counts.get(role, 0) + 1
            if example is None:
                example = (document_id, found[key], key)
    return Leaks({role: counts[role] for role in EVALUATION_ROLES if role in counts}, tuple(training_ids), example)
