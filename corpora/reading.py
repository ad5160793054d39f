"""Read a corpus's sources into documents per role: plan what each source reads, read its records,
apply the named transforms and the Unicode normalization, drop blank documents, assign a role and
cap each role's size (``corpora.loader`` caches the result and runs the leak check).

* Role ``all`` is split by a hash of the document id: a document goes to ``test`` when the first 8
  bytes of ``sha256(id)``, read as a big-endian integer and divided by 2**64, are below the spec's
  ``test_fraction`` (default 0.1), else to ``train``.  The split depends on nothing but the id.
* A path source with ``[[sources.hub]]`` alternatives reads the data root when one is given
  (``data_dir`` or ``$TOKBENCH_DATA``) and the hub alternatives otherwise.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpora.errors import CorpusError
from corpora.sources import FILE_READERS, TRANSFORMS, InputFile, Record, package_files, path_files, read_hub
from corpora.spec import ROLES, CorpusSpec, HubSource, Source

#: a longer document is refused: a text "line" this long is nearly always a wrong format
MAX_DOCUMENT_CHARS = 1_000_000


@dataclass(frozen=True)
class Document:
    """``id`` is stable: ``<input name>:<line number | sent_id | row number>``; ``words`` holds the
    gold word segmentation (UD FORMs) when the source has one; ``key`` names the sentence in its
    parallel set when the source declares one (``[sources.parallel]``), else None."""

    id: str
    text: str
    words: tuple[str, ...] | None = None
    key: str | None = None


@dataclass(frozen=True)
class SourcePlan:
    """What one source reads: its files, or the hub splits it reads instead."""

    source: Source
    files: tuple[InputFile, ...] = ()
    hub: tuple[HubSource, ...] = ()  # read instead of files when no data root is given


def plan_sources(spec: CorpusSpec, root: Path | None) -> list[SourcePlan]:
    """The plan of every source of ``spec``, in spec order (``root``: the data root, None without one);
    one file read by two sources is an error."""
    plans = []
    for source in spec.sources:
        if source.kind == "hf" or (source.kind == "path" and root is None and source.hub):
            plans.append(SourcePlan(source, hub=source.hub))
        elif source.kind == "package":
            plans.append(SourcePlan(source, files=tuple(package_files(source))))
        else:
            plans.append(SourcePlan(source, files=tuple(path_files(source, root))))
    readers: dict[str, list[Source]] = {}
    for plan in plans:  # one file feeding two sources (e.g. train and test) would leak test text...
        for item in plan.files:
            for other in readers.get(item.name, []):
                if not _disjoint_lines(other, plan.source):  # ...unless they read disjoint line ranges of it
                    raise CorpusError(f"{spec.id}: {item.name} is read by sources #{other.index} and "
                                      f"#{plan.source.index} (give both disjoint 'lines' ranges to split one file)",
                                      code="file_read_twice", value=item.name)  # fmt: skip
            readers.setdefault(item.name, []).append(plan.source)
    return plans


def _disjoint_lines(a: Source, b: Source) -> bool:
    return a.lines is not None and b.lines is not None and (a.lines[1] < b.lines[0] or b.lines[1] < a.lines[0])


class _Budget:
    """Per-role size cap: keeps documents in reading order while the role is under ``max_documents``
    and its character total stays within ``max_chars``; once one document is refused the role is full."""

    def __init__(self, max_documents: int | None, max_chars: int | None) -> None:
        self.max_documents, self.max_chars = max_documents, max_chars
        self.documents = dict.fromkeys(ROLES, 0)
        self.chars = dict.fromkeys(ROLES, 0)
        self.closed: set[str] = set()

    def admit(self, role: str, document: Document) -> bool:
        if role in self.closed:
            return False
        over_count = self.max_documents is not None and self.documents[role] >= self.max_documents
        over_chars = self.max_chars is not None and self.chars[role] + len(document.text) > self.max_chars
        if over_count or over_chars:
            self.closed.add(role)
            return False
        self.documents[role] += 1
        self.chars[role] += len(document.text)
        return True

    def full(self, roles: tuple[str, ...]) -> bool:
        return all(role in self.closed for role in roles)


def split_role(document_id: str, test_fraction: float) -> str:
    """``test`` or ``train`` for a document of a role-``all`` source (see the module docstring)."""
    position = int.from_bytes(hashlib.sha256(document_id.encode("utf-8")).digest()[:8], "big") / 2**64
    return "test" if position < test_fraction else "train"


def _records(plan: SourcePlan, warn: Any) -> Iterator[tuple[str, Record]]:
    """(input name, record) for every record of a planned source."""
    if plan.hub:
        parallel = plan.source.parallel
        for hub in plan.hub:
            for record in read_hub(hub, parallel.column if parallel is not None else None):
                yield hub.describe(), record
        return
    reader = FILE_READERS[plan.source.format or ""]
    for item in plan.files:
        for record in reader(item, plan.source, warn):
            yield item.name, record


def _normalize(text: str, form: str) -> str:
    return text if form == "none" else unicodedata.normalize(form, text)


class _LineNumbers:
    """The number of each record of a source: its line or row number, run on across the source's inputs
    in order (what ``lines`` selects and ``key = "line"`` pairs by)."""

    def __init__(self) -> None:
        self.input: str | None = None
        self.offset = self.last = 0  # lines of the inputs before the current one; last number seen

    def __call__(self, name: str, record: Record) -> int:
        if name != self.input:
            self.input, self.offset, self.last = name, self.offset + self.last, 0
        self.last = int(record.key)
        return self.offset + self.last


class _ParallelKeys:
    """The parallel key of each record of a source (``corpora.spec.ParallelSpec``): its line/row
    number (plus ``first_key - 1``), its sent_id, or its key column's value; a key seen twice is an error."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.seen: set[str] = set()

    def __call__(self, name: str, record: Record, number: int | None) -> str:
        if self.source.parallel is None:
            raise AssertionError("keys of a source without [sources.parallel]")
        parallel = self.source.parallel
        if parallel.key != "line":
            if record.given_key is None:
                what = "no '# sent_id'" if parallel.key == "sent_id" else f"no {parallel.column!r} value"
                raise CorpusError(f"{name}:{record.key}: {what} in {self.source.describe()}, whose parallel key is "
                                  f"{parallel.key!r}", code="missing_parallel_key", value=parallel.key)  # fmt: skip
            key = record.given_key
            if parallel.dev is not None and not key.isdigit():
                raise CorpusError(f"{name}:{record.key}: parallel key {key!r} is not a number, but "
                                  f"{self.source.describe()} declares a dev split by key range",
                                  code="bad_parallel_key", value=key)  # fmt: skip
        else:
            assert number is not None, "key = 'line' without line numbers"
            key = str(number + parallel.first_key - 1)
        if key in self.seen:
            raise CorpusError(f"{name}:{record.key}: parallel key {key!r} occurs twice in {self.source.describe()}",
                              code="duplicate_parallel_key", value=key)  # fmt: skip
        self.seen.add(key)
        return key


def read_documents(spec: CorpusSpec, plans: list[SourcePlan], warn: Any) -> dict[str, list[Document]]:
    """Every role's documents, in reading order (the pipeline of the module docstring); ``warn`` receives
    what the readers repair."""
    documents: dict[str, list[Document]] = {role: [] for role in ROLES}
    budget = _Budget(spec.max_documents, spec.max_chars)
    seen_ids: set[str] = set()
    for plan in plans:
        source = plan.source
        roles = ("train", "test") if source.role == "all" else (source.role,)
        produced = 0
        parallel_key = _ParallelKeys(source) if source.parallel is not None else None
        numbered = source.lines is not None or (source.parallel is not None and source.parallel.key == "line")
        line_number = _LineNumbers() if numbered else None
        for name, record in _records(plan, warn):
            if budget.full(roles):
                break  # streaming: stop reading once every role this source feeds is full
            number = line_number(name, record) if line_number is not None else None
            if source.lines is not None and not source.lines[0] <= number <= source.lines[1]:
                continue
            key = parallel_key(name, record, number) if parallel_key is not None else None
            text = record.text
            for transform in source.transforms:
                text = TRANSFORMS[transform](text)
            text = _normalize(text, spec.normalization)
            if not text.strip():
                continue
            doc_id = f"{name}:{record.key}"
            if len(text) > MAX_DOCUMENT_CHARS:
                raise CorpusError(
                    f"{doc_id}: one document of {len(text):,} characters (limit {MAX_DOCUMENT_CHARS:,}); "
                    "is the file missing its line breaks, or in the wrong format?",
                    code="document_too_long",
                    value=len(text),
                )
            if doc_id in seen_ids:
                raise CorpusError(f"{doc_id}: duplicate document id (is a sent_id repeated in {name}?)",
                                  code="duplicate_document_id", value=doc_id)  # fmt: skip
            seen_ids.add(doc_id)
            words = (
                tuple(_normalize(word, spec.normalization) for word in record.words)
                if record.words is not None
                else None
            )
            document = Document(doc_id, text, words, key)
            role = split_role(doc_id, spec.test_fraction) if source.role == "all" else source.role
            produced += 1
            if budget.admit(role, document):
                documents[role].append(document)
        if produced == 0 and not budget.full(roles):
            raise CorpusError(f"{spec.id}: {source.describe()} holds no text (every document is empty)",
                              code="empty_source", value=source.index)  # fmt: skip
    return documents
