"""The on-disk cache of loaded corpora.

A loaded corpus is cached under ``$TOKBENCH_CACHE`` (default ``~/.cache/tokbench``)``/corpora/``,
keyed by a hash of the spec's loading fields and every input's content (file sha256, or the hub
commit): a second load only hashes the inputs and memory-maps the Arrow files; a changed input is a
new key.  The entry is written to a temporary folder and renamed into place, so an error never leaves
a half-written cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from corpora.errors import CorpusError, CorpusWarning
from corpora.reading import Document, SourcePlan
from corpora.sources import cache_home, file_digest, hub_fingerprint
from corpora.spec import ROLES, CorpusSpec, HubSource

#: bump when the cached layout or the reading rules change, so old cache entries are not reused
CACHE_FORMAT = 2


def cache_root(cache_dir: str | Path | None = None) -> Path:
    """Where loaded corpora are cached: ``cache_dir`` if given, else ``cache_home()/corpora``."""
    if cache_dir is not None:
        return Path(cache_dir)
    return cache_home() / "corpora"


def _hub_fingerprint(spec: CorpusSpec, plan: SourcePlan, hub: HubSource) -> str:
    try:
        return hub_fingerprint(hub)
    except CorpusError as exc:
        if plan.source.kind != "path":
            raise
        raise CorpusError(
            f"{spec.id}: no data root given (--data-dir / TOKBENCH_DATA), so {plan.source.describe()} "
            f"reads its hub alternative instead: {exc}",
            code=exc.code,
            value=exc.value,
            field=exc.field,
        ) from None


def cache_key(spec: CorpusSpec, plans: list[SourcePlan]) -> str:
    """sha256 of the cache format, the spec's loading fields and the content of every planned input."""
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


_META = "tokbench-corpus.json"


def save_entry(entry: Path, documents: dict[str, list[Document]], meta: dict[str, Any]) -> None:
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


def load_entry(entry: Path) -> tuple[dict[str, Any], dict[str, list[Document]]] | None:
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
