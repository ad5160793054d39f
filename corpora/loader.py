"""Load a corpus: read its sources, clean and normalize the text, split it, cache it as Arrow.

Pipeline per source, in spec order: resolve files (or hub splits) -> read records -> named
transforms -> Unicode normalization -> drop blank documents -> assign a role -> per-role size cap;
then, over the whole corpus, the leak check (``corpora.leaks``: test or eval text inside the
training text fails the load, or is dropped from training, per the spec's ``on_leak``).

Reading (``corpora.reading``: planning, records, roles, the hash split of role ``all``) and the
on-disk cache (``corpora.cache``: key, entry, fingerprint) have their own modules; this one joins
them and holds the ``Corpus`` a load returns.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import regex

from corpora.cache import cache_home, cache_key, cache_root, fingerprint_of, load_entry, save_entry
from corpora.errors import CorpusError, CorpusWarning
from corpora.leaks import Leaks, find_leaks
from corpora.morph import READERS, MorphReference, read_reference
from corpora.reading import Document, plan_sources, read_documents, split_role
from corpora.silver import SILVER, analyze
from corpora.sources import DATA_ROOT_HINT, data_root, path_files
from corpora.spec import ROLES, CorpusSpec, ReferenceSpec, Source, load_spec

# the corpus-loading API, with the names of corpora.reading and corpora.cache its callers use
__all__ = ["Corpus", "Document", "cache_home", "cache_root", "fingerprint_of", "load_corpus", "split_role"]

#: a word where no gold words exist: letters with their combining marks
LETTER_RUN = regex.compile(r"\p{L}[\p{L}\p{M}]*")


class Corpus:
    """A loaded corpus: its spec, documents per role, a content fingerprint, and lazy references."""

    def __init__(
        self,
        spec: CorpusSpec,
        documents: dict[str, list[Document]],
        fingerprint: str,
        data_dir: Path | None,
        notes: tuple[str, ...] = (),
        cached: bool = False,
        leaks: dict[str, Any] | None = None,
    ) -> None:
        self.spec = spec
        self.fingerprint = fingerprint
        self.data_dir = data_dir
        #: what was repaired while reading (also emitted as CorpusWarning on every load)
        self.notes = notes
        #: True when this load came from the on-disk cache
        self.cached = cached
        #: what the leak check found and did (corpora.leaks.Leaks.summary)
        self.leaks = leaks if leaks is not None else Leaks().summary(spec.on_leak)
        self._documents = documents
        self._references: dict[str, MorphReference] | None = None
        self._gold_references: dict[str, MorphReference] | None = None
        self._training_references: dict[str, MorphReference] | None = None

    def __repr__(self) -> str:
        sizes = ", ".join(f"{role}={len(self._documents[role])}" for role in self.roles())
        return f"Corpus({self.spec.id!r}, {sizes}, fingerprint={self.fingerprint[:12]})"

    def documents(self, role: str) -> list[Document]:
        """Documents of ``role`` (train / test / eval) in reading order; [] if the corpus has none."""
        if role not in ROLES:
            raise CorpusError(f"unknown role {role!r}; roles are: {', '.join(ROLES)}", code="unknown_role", value=role)
        return list(self._documents.get(role, []))

    def parallel_fingerprint(self) -> str:
        """sha256 over the parallel set's declaration and every document's key (what pairs sentences
        across corpora); empty for a corpus without a parallel set."""
        if self.spec.parallel is None:
            return ""
        digest = hashlib.sha256(self.spec.parallel.model_dump_json().encode())
        for document in self.documents("eval"):
            digest.update(f"{document.id}\x00{document.key}\x01".encode())
        return digest.hexdigest()

    def roles(self) -> list[str]:
        """Roles that have documents, in the order train, test, eval."""
        return [role for role in ROLES if self._documents.get(role)]

    def word_types(self) -> list[str]:
        """Sorted word types of the test documents (eval if there is no test role): gold words where
        the documents carry them, else runs of letters and combining marks."""
        role = "test" if self._documents.get("test") else "eval"
        types: set[str] = set()
        for document in self._documents.get(role, []):
            types.update(document.words if document.words is not None else LETTER_RUN.findall(document.text))
        return sorted(types)

    def references(self) -> dict[str, MorphReference]:
        """Morpheme references by name, built on first use: gold files through ``corpora.morph``
        readers (skipped with a warning when no data root is given), silver analyzers through
        ``corpora.silver`` over ``word_types()``."""
        if self._references is None:
            gold = self.gold_references()
            self._references = {}
            for reference in self.spec.references:
                if reference.role != "evaluation":
                    continue
                built = gold.get(reference.name) if reference.analyzer is None else self._build_reference(reference)
                if built is not None:
                    self._references[reference.name] = built
        return dict(self._references)

    def gold_references(self) -> dict[str, MorphReference]:
        """The gold references among ``references()`` (file reads only: no analyzer runs), built once."""
        if self._gold_references is None:
            self._gold_references = {}
            for reference in self.spec.references:
                gold = reference.role == "evaluation" and reference.analyzer is None
                if gold and (built := self._build_reference(reference)) is not None:
                    self._gold_references[reference.name] = built
        return dict(self._gold_references)

    def silver_analyzers(self) -> list[str]:
        """The analyzers of the evaluated silver references (``CorpusSpec.silver_analyzers``)."""
        return self.spec.silver_analyzers

    def silver_words(self) -> dict[str, list[str]]:
        """The words each silver analyzer of the evaluated references will be asked for (analyzer name ->
        ``word_types()``), empty once the references are built: what ``silver.Prefetch`` can analyze
        ahead, in parallel."""
        analyzers = self.silver_analyzers() if self._references is None else []
        words = self.word_types() if analyzers else []
        return {analyzer: words for analyzer in analyzers}

    def training_references(self) -> dict[str, MorphReference]:
        """The gold references declared ``role = "training"`` (for tokenizers that train on morphemes;
        never scored), by name, built on first use; skipped with a warning without a data root."""
        if self._training_references is None:
            self._training_references = {}
            for reference in self.spec.references:
                if reference.role == "training" and (built := self._build_reference(reference)) is not None:
                    self._training_references[reference.name] = built
        return dict(self._training_references)

    def _build_reference(self, reference: ReferenceSpec) -> MorphReference | None:
        language = self.spec.short_language
        if reference.analyzer is not None:
            return replace(analyze(reference.analyzer, self.word_types(), language), name=reference.name)
        if self.data_dir is None:
            warnings.warn(
                f"{self.spec.id}: reference {reference.name!r} reads files from the data root and is skipped; "
                + DATA_ROOT_HINT,
                CorpusWarning,
                stacklevel=3,
            )
            return None
        source = Source(index=0, kind="path", role="test", files=reference.files)
        paths = [item.path for item in path_files(source, self.data_dir)]
        return read_reference(reference.reader, paths, reference.name, language)


def _check_reference_names(spec: CorpusSpec) -> None:
    """Every ``[[references]]`` names a known reader or analyzer, before any text is read (the spec
    module declares the table without importing the readers)."""
    for reference in spec.references:
        if reference.analyzer is not None and reference.analyzer not in SILVER:
            raise CorpusError(f"{spec.id}: [[references]] {reference.name!r}: unknown silver analyzer "
                              f"{reference.analyzer!r}; choose one of: {', '.join(SILVER)}", code="unknown_analyzer",
                              value=reference.analyzer)  # fmt: skip
        if reference.reader is not None and reference.reader not in READERS:
            raise CorpusError(f"{spec.id}: [[references]] {reference.name!r}: unknown morpheme reader "
                              f"{reference.reader!r}; choose one of: {', '.join(READERS)}", code="unknown_reader",
                              value=reference.reader)  # fmt: skip


def load_corpus(
    id_or_spec: str | Path | CorpusSpec, data_dir: str | Path | None = None, cache_dir: str | Path | None = None
) -> Corpus:
    """Load a corpus by shipped id, spec path or spec; ``data_dir`` falls back to ``$TOKBENCH_DATA``."""
    spec = id_or_spec if isinstance(id_or_spec, CorpusSpec) else load_spec(id_or_spec)
    _check_reference_names(spec)
    root = data_root(data_dir)
    plans = plan_sources(spec, root)
    key = cache_key(spec, plans)
    entry = cache_root(cache_dir) / f"{spec.id}-{key[:24]}"
    cached = load_entry(entry)
    if cached is not None:
        meta, documents = cached
        for note in meta["notes"]:
            warnings.warn(note, CorpusWarning, stacklevel=2)
        return Corpus(spec, documents, meta["fingerprint"], root, tuple(meta["notes"]), cached=True,
                      leaks=meta["leaks"])  # fmt: skip
    notes: list[str] = []

    def warn(message: str) -> None:
        notes.append(message)
        warnings.warn(message, CorpusWarning, stacklevel=4)

    documents = read_documents(spec, plans, warn)
    if not any(documents.values()):
        raise CorpusError(f"{spec.id}: the corpus is empty (no source produced a document)", code="empty_corpus",
                          value=spec.id)  # fmt: skip
    leaks = find_leaks(documents)
    documents = _apply_leak_policy(spec, documents, leaks, warn)
    fingerprint = fingerprint_of(documents)
    meta = {
        "id": spec.id,
        "key": key,
        "fingerprint": fingerprint,
        "notes": notes,
        "documents": {role: len(docs) for role, docs in documents.items()},
        "leaks": leaks.summary(spec.on_leak),
    }
    save_entry(entry, documents, meta)
    return Corpus(spec, documents, fingerprint, root, tuple(notes), leaks=meta["leaks"])


def _apply_leak_policy(
    spec: CorpusSpec, documents: dict[str, list[Document]], leaks: Leaks, warn: Any
) -> dict[str, list[Document]]:
    """Fail, drop the training documents holding leaked text, or keep them (``spec.on_leak``)."""
    if not leaks.total or spec.on_leak == "keep":
        return documents
    counts = " and ".join(f"{count:,} {role}" for role, count in leaks.documents.items())
    evaluation_id, training_id, text = leaks.example  # type: ignore[misc]
    found = (f"{spec.id}: {counts} document(s) also occur in the training text "
             f"(e.g. {evaluation_id} in {training_id}: {text[:60]!r})")  # fmt: skip
    dropped = set(leaks.training_ids)
    if spec.on_leak == "fail":
        raise CorpusError(
            f"{found}; remove them from the training sources, or set on_leak = \"drop\" in the spec "
            f"(drops the {len(dropped):,} training documents holding them) or on_leak = \"keep\"",
            code="leak",
        )
    warn(f"{found}; dropped the {len(dropped):,} training documents holding them (on_leak = \"drop\")")
    return dict(documents, train=[document for document in documents["train"] if document.id not in dropped])
