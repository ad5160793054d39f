"""Silver analyses kept in tokbench's cache (``$TOKBENCH_CACHE/silver``) across runs and corpora.

An entry holds one analyzer's answers (at one version) to one word sequence, in that order: the key is
the whole sequence, not each word, because an analyzer may keep state between words (zemberek), so the
answers are those of a fresh analyzer given exactly these words.  Answers are a frozenset of boundary
offsets or the reason a word has none (``Segmentation``)."""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path

from corpora.cache import cache_home
from corpora.errors import CorpusWarning

#: what an analyzer returns per word: its boundary set, or the reason it could not analyze it
Segmentation = frozenset[int] | str


def stored_path(analyzer: str, version: str, words: list[str]) -> Path:
    """Where the answers of ``analyzer`` (at ``version``, the installed one) to ``words``, in that order, are kept in
    tokbench's cache.  The key is the whole sequence, not each word, because an analyzer may keep state
    between words (zemberek): the answers are those of a fresh analyzer given exactly these words."""
    digest = hashlib.sha256("\n".join(words).encode("utf-8")).hexdigest()[:32]  # words hold no whitespace
    return cache_home() / "silver" / f"{analyzer}-{version}-{digest}.json"


def stored_answers(analyzer: str, version: str, words: list[str]) -> list[Segmentation] | None:
    """The answers ``store_answers`` kept for these words, None when there are none; a damaged entry is
    said (a ``CorpusWarning``) and analyzed again."""
    path = stored_path(analyzer, version, words)
    if not path.is_file():
        return None
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored.get("analyzer") != analyzer or stored.get("words") != len(words):
            raise ValueError(f"it holds {stored.get('words')} answers of {stored.get('analyzer')!r}")
        answers = [frozenset(answer) if isinstance(answer, list) else answer for answer in stored["answers"]]
        if len(answers) != len(words) or not all(isinstance(answer, (frozenset, str)) for answer in answers):
            raise ValueError("its answers are not one boundary list or reason per word")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:  # JSONDecodeError is a ValueError
        warnings.warn(CorpusWarning(f"{path}: damaged silver analysis cache entry ({exc}); analyzing again"),
                      stacklevel=2)  # fmt: skip
        return None
    return answers


def store_answers(analyzer: str, version: str, words: list[str], answers: list[Segmentation]) -> None:
    """Keep ``answers`` for ``stored_answers`` (written atomically); a cache that cannot be written is said
    and skipped: the run goes on with the answers it has."""
    path = stored_path(analyzer, version, words)
    data = {"analyzer": analyzer, "version": version, "words": len(words),
            "answers": [sorted(answer) if isinstance(answer, frozenset) else answer for answer in answers]}  # fmt: skip
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        warnings.warn(CorpusWarning(f"{path}: cannot keep the silver analyses in the cache ({exc})"), stacklevel=2)
