"""Load a corpus: read its sources, clean and normalize the text, split it, cache it as Arrow.

Pipeline per source, in spec order: resolve files (or hub splits) -> read records -> named
transforms -> Unicode normalization -> drop blank documents -> assign a role -> per-role size cap;
then, over the whole corpus, the leak check (``corpora.leaks``: test or eval text inside the
training text fails the load, or is dropped from training, per the spec's ``on_leak``).

* Role ``all`` is split by a hash of the document id: a document goes to ``test`` when the first 8
  bytes of ``sha256(id)``, read as a big-endian integer and divided by 2**64, are below the spec's
  ``test_fraction`` (default 0.1), else to ``train``.  The split depends on nothing but the id.
* A path source with ``[[sources.hub]]`` alternatives reads the data root when one is given
  (``data_dir`` or ``$TOKBENCH_DATA``) and the hub alternatives otherwise.
* The result is cached under ``$TOKBENCH_CACHE`` (default ``~/.cache/tokbench``)``/corpora/``, keyed by
  a hash of the spec's loading fields and every input's content (file sha256, or the hub commit):
  a second load only hashes the inputs and memory-maps the Arrow files; a changed input is a new
  key.  The entry is written to a temporary folder and renamed into place, so an error never leaves
  a half-written cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import unicodedata
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import regex

from corpora.errors import CorpusError, CorpusWarning
from corpora.leaks import Leaks, find_leaks
from corpora.morph import READERS, MorphReference, read_reference
from corpora.silver import SILVER, analyze
from corpora.sources import (
    DATA_ROOT_HINT,
    FILE_READERS,
    TRANSFORMS,
    InputFile,
    Record,
    data_root,
    file_digest,
    hub_fingerprint,
    package_files,
    path_files,
    read_hub,
)
from corpora.spec import ROLES, CorpusSpec, HubSource, ReferenceSpec, Source, load_spec

#: bump when the cached layout or the reading rules change, so old cache entries are not reused
CACHE_FORMAT = 2
#: a longer document is refused: a text "line" this long is nearly always a wrong format
MAX_DOCUMENT_CHARS = 1_000_000
#: a word where no gold words exist: letters with their combining marks
LETTER_RUN = regex.compile(r"\p{L}[\p{L}\p{M}]*")


@dataclass(frozen=True)
class Document:
    """``id`` is stable: ``<input name>:<line number | sent_id | row number>``; ``words`` holds the
    gold word segmentation (UD FORMs) when the source has one; ``key`` names the sentence in its
    parallel set when the source declares one (``[sources.parallel]``), else None."""

    id: str
    text: str
    words: tuple[str, ...] | None = None
    key: str | None = None


def cache_home() -> Path:
    """tokbench's cache folder: ``$TOKBENCH_CACHE``, default ``~/.cache/tokbench`` (loaded corpora
    live in its ``corpora/`` folder; the experiment layer keeps trained tokenizers and perf files beside)."""
    return Path(os.environ.get("TOKBENCH_CACHE") or Path.home() / ".cache" / "tokbench")


def cache_root(cache_dir: str | Path | None = None) -> Path:
    """Where loaded corpora are cached: ``cache_dir`` if given, else ``cache_home()/corpora``."""
    if cache_dir is not None:
        return Path(cache_dir)
    return cache_home() / "corpora"


# -- planning: what each source reads ------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    source: Source
    files: tuple[InputFile, ...] = ()
    hub: tuple[HubSource, ...] = ()  # read instead of files when no data root is given


def _plan(spec: CorpusSpec, root: Path | None) -> list[_Plan]:
    plans = []
    for source in spec.sources:
        if source.kind == "hf" or (source.kind == "path" and root is None and source.hub):
            plans.append(_Plan(source, hub=source.hub))
        elif source.kind == "package":
            plans.append(_Plan(source, files=tuple(package_files(source))))
        else:
            plans.append(_Plan(source, files=tuple(path_files(source, root))))
    readers: dict[str, int] = {}
    for plan in plans:  # one file feeding two sources (e.g. train and test) would leak test text
        for item in plan.files:
            if item.name in readers:
                raise CorpusError(
                    f"{spec.id}: {item.name} is read by sources #{readers[item.name]} and #{plan.source.index}"
                )
            readers[item.name] = plan.source.index
    return plans


def _hub_fingerprint(spec: CorpusSpec, plan: _Plan, hub: HubSource) -> str:
    try:
        return hub_fingerprint(hub)
    except CorpusError as exc:
        if plan.source.kind != "path":
            raise
        raise CorpusError(
            f"{spec.id}: no data root given (--data-dir / TOKBENCH_DATA), so {plan.source.describe()} "
            f"reads its hub alternative instead: {exc}"
        ) from None


def _cache_key(spec: CorpusSpec, plans: list[_Plan]) -> str:
    inputs = [
        [
            plan.source.index,
            [[item.name, file_digest(item.path)] for item in plan.files],
            [[hub.describe(), _hub_fingerprint(spec, plan, hub)] for hub in plan.hub],
        ]
        for plan in plans
    ]
    payload = {"cache_format": CACHE_FORMAT, "spec": spec.loading_fields(), "inputs": inputs}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


# -- reading -------------------------------------------------------------------------------------


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


def _records(plan: _Plan, warn: Any) -> Iterator[tuple[str, Record]]:
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


class _ParallelKeys:
    """The parallel key of each record of a source (``corpora.spec.ParallelSpec``): its line/row
    number run on across the source's inputs, its sent_id, or its key column's value; a key seen
    twice is an error."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.seen: set[str] = set()
        self.input: str | None = None
        self.offset = self.last = 0  # lines of the inputs before the current one; last number seen

    def __call__(self, name: str, record: Record) -> str:
        if self.source.parallel is None:
            raise AssertionError("keys of a source without [sources.parallel]")
        parallel = self.source.parallel
        if parallel.key != "line":
            if record.given_key is None:
                what = "no '# sent_id'" if parallel.key == "sent_id" else f"no {parallel.column!r} value"
                raise CorpusError(f"{name}:{record.key}: {what} in {self.source.describe()}, whose parallel key is "
                                  f"{parallel.key!r}")  # fmt: skip
            key = record.given_key
            if parallel.dev is not None and not key.isdigit():
                raise CorpusError(f"{name}:{record.key}: parallel key {key!r} is not a number, but "
                                  f"{self.source.describe()} declares a dev split by key range")  # fmt: skip
        else:
            if name != self.input:
                self.input, self.offset, self.last = name, self.offset + self.last, 0
            self.last = int(record.key)
            key = str(self.offset + self.last)
        if key in self.seen:
            raise CorpusError(f"{name}:{record.key}: parallel key {key!r} occurs twice in {self.source.describe()}")
        self.seen.add(key)
        return key


def _read_documents(spec: CorpusSpec, plans: list[_Plan], warn: Any) -> dict[str, list[Document]]:
    documents: dict[str, list[Document]] = {role: [] for role in ROLES}
    budget = _Budget(spec.max_documents, spec.max_chars)
    seen_ids: set[str] = set()
    for plan in plans:
        source = plan.source
        roles = ("train", "test") if source.role == "all" else (source.role,)
        produced = 0
        parallel_key = _ParallelKeys(source) if source.parallel is not None else None
        for name, record in _records(plan, warn):
            if budget.full(roles):
                break  # streaming: stop reading once every role this source feeds is full
            key = parallel_key(name, record) if parallel_key is not None else None
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
                    "is the file missing its line breaks, or in the wrong format?"
                )
            if doc_id in seen_ids:
                raise CorpusError(f"{doc_id}: duplicate document id (is a sent_id repeated in {name}?)")
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
            raise CorpusError(f"{spec.id}: {source.describe()} holds no text (every document is empty)")
    return documents


def fingerprint_of(documents: dict[str, list[Document]]) -> str:
    """sha256 over every role's documents (ids, texts, words) in order.  Parallel keys are left out:
    they do not change what a tokenizer is trained on (the fingerprint keys the tokenizer cache);
    ``parallel_fingerprint`` covers them."""
    digest = hashlib.sha256()
    for role in ROLES:
        digest.update(f"\x02{role}\x02".encode())
        for document in documents.get(role, []):
            words = "\x1f".join(document.words) if document.words is not None else "\x03"
            digest.update(f"{document.id}\x00{document.text}\x00{words}\x01".encode())
    return digest.hexdigest()


# -- the cache -----------------------------------------------------------------------------------

_META = "tokbench-corpus.json"


def _save(entry: Path, documents: dict[str, list[Document]], meta: dict[str, Any]) -> None:
    """Write the entry to a temporary folder beside it, then rename it into place."""
    import datasets

    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "text": datasets.Value("string"),
            "words": datasets.Sequence(datasets.Value("string")),
            "key": datasets.Value("string"),
        }
    )
    splits = {
        role: datasets.Dataset.from_dict(
            {
                "id": [d.id for d in docs],
                "text": [d.text for d in docs],
                "words": [list(d.words) if d.words is not None else None for d in docs],
                "key": [d.key for d in docs],
            },
            features=features,
        )
        for role, docs in documents.items()
        if docs
    }
    entry.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=entry.parent, prefix=f".{entry.name}.", suffix=".tmp"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            datasets.disable_progress_bars()
            datasets.DatasetDict(splits).save_to_disk(str(staging / "arrow"))
        (staging / _META).write_text(json.dumps(meta, ensure_ascii=False, indent=1), encoding="utf-8")
        try:
            os.replace(staging, entry)
        except OSError:  # another process cached the same entry first: keep theirs
            if not (entry / _META).is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _load_cached(entry: Path) -> tuple[dict[str, Any], dict[str, list[Document]]] | None:
    """The cached entry, None if there is none.  An entry that does not read back to its recorded
    fingerprint (truncated, edited) is removed, with a warning, and the corpus is read again."""
    if not (entry / _META).is_file():
        return None
    import datasets

    try:
        meta = json.loads((entry / _META).read_text(encoding="utf-8"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            splits = datasets.load_from_disk(str(entry / "arrow"))
        documents: dict[str, list[Document]] = {role: [] for role in ROLES}
        for role in splits:
            columns = splits[role].data.table.to_pydict()
            documents[role] = [
                Document(i, t, tuple(w) if w is not None else None, k)
                for i, t, w, k in zip(columns["id"], columns["text"], columns["words"], columns["key"], strict=True)
            ]
        intact = fingerprint_of(documents) == meta["fingerprint"] and isinstance(meta["notes"], list)
        intact = intact and isinstance(meta["leaks"], dict)
    except Exception as exc:  # a damaged entry fails in json, pyarrow or datasets, each with its own errors
        intact, reason = False, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    else:
        reason = "its documents do not match its recorded fingerprint"
    if not intact:
        warnings.warn(f"corpus cache entry {entry} is damaged ({reason}); reading the corpus again",
                      CorpusWarning, stacklevel=3)  # fmt: skip
        shutil.rmtree(entry, ignore_errors=True)
        return None
    return meta, documents


# -- the corpus ----------------------------------------------------------------------------------


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
            raise CorpusError(f"unknown role {role!r}; roles are: {', '.join(ROLES)}")
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
        """The analyzers of the evaluated silver references (they always yield a reference, never MorphScore)."""
        return [reference.analyzer for reference in self.spec.references
                if reference.role == "evaluation" and reference.analyzer is not None]  # fmt: skip

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
                              f"{reference.analyzer!r}; choose one of: {', '.join(SILVER)}")  # fmt: skip
        if reference.reader is not None and reference.reader not in READERS:
            raise CorpusError(f"{spec.id}: [[references]] {reference.name!r}: unknown morpheme reader "
                              f"{reference.reader!r}; choose one of: {', '.join(READERS)}")  # fmt: skip


def load_corpus(
    id_or_spec: str | Path | CorpusSpec, data_dir: str | Path | None = None, cache_dir: str | Path | None = None
) -> Corpus:
    """Load a corpus by shipped id, spec path or spec; ``data_dir`` falls back to ``$TOKBENCH_DATA``."""
    spec = id_or_spec if isinstance(id_or_spec, CorpusSpec) else load_spec(id_or_spec)
    _check_reference_names(spec)
    root = data_root(data_dir)
    plans = _plan(spec, root)
    key = _cache_key(spec, plans)
    entry = cache_root(cache_dir) / f"{spec.id}-{key[:24]}"
    cached = _load_cached(entry)
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

    documents = _read_documents(spec, plans, warn)
    if not any(documents.values()):
        raise CorpusError(f"{spec.id}: the corpus is empty (no source produced a document)")
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
    _save(entry, documents, meta)
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
            f"(drops the {len(dropped):,} training documents holding them) or on_leak = \"keep\""
        )
    warn(f"{found}; dropped the {len(dropped):,} training documents holding them (on_leak = \"drop\")")
    return dict(documents, train=[document for document in documents["train"] if document.id not in dropped])
