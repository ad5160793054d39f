"""Download and verify the data root (FLORES-200, UD treebanks, morpheme gold, published tokenizer files and
tables) from the manifest shipped in ``benchmarks/data/manifest.tsv`` (``benchmarks.data.manifest``).

``fetch`` downloads every selected file that is not already there with its sha256 (present files whose sha256
matches are skipped, so re-running is cheap), one at a time (``benchmarks.data.download.fetch_entry``: resumed,
retried, checked, moved into place), holding the data root's lock.  A file that fails is reported and the others
are still fetched; a host that cannot be reached at all stops the fetch with one line naming the URL.  A file no
shipped row pins (``--languages``, ``--ud``) is recorded on first fetch in the data root's ``LOCAL_MANIFEST.tsv``,
so a later run detects a change.  ``verify`` checks every file against the manifests; ``provenance`` is its
summary for a run's manifest.

The names of ``benchmarks.data.manifest`` and ``benchmarks.data.download`` that callers use are importable from
here too.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from benchmarks.data.download import FLORES_DEV_LINES as FLORES_DEV_LINES  # re-exported: the callers' names
from benchmarks.data.download import FLORES_LINES as FLORES_LINES
from benchmarks.data.download import MIRROR_VARIABLE as MIRROR_VARIABLE
from benchmarks.data.download import FileFailure, fetch_entry
from benchmarks.data.download import mirror_url as mirror_url
from benchmarks.data.manifest import (
    BOOKKEEPING,
    LOCAL_MANIFEST,
    Entry,
    read_manifest,
    select,
    ud_entries,
    write_manifest,
    write_sources,
)
from benchmarks.data.manifest import COLUMNS as COLUMNS
from benchmarks.data.manifest import GROUPS as GROUPS
from benchmarks.data.manifest import UD_DEFAULT_TAG as UD_DEFAULT_TAG
from benchmarks.data.manifest import flores_entry as flores_entry
from benchmarks.data.manifest import restrictive_licenses as restrictive_licenses
from benchmarks.errors import BenchmarkError

#: retry policy and read timeout (seconds) of a fetch
ATTEMPTS, BACKOFF, TIMEOUT = 5, 1.0, 60.0


@dataclass
class FetchResult:
    fetched: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)


def default_data_dir() -> Path:
    from corpora.sources import fetched_data_root

    return fetched_data_root()


def sha256_file(path: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def is_verified(entry: Entry, root: Path) -> bool:
    target = root / entry.path
    if entry.sha256 is None or not target.is_file():
        return False
    return target.stat().st_size == entry.size and sha256_file(target) == (entry.sha256, entry.size)


@contextmanager
def data_root_lock(root: Path) -> Iterator[None]:
    """Hold ``root``'s fetch lock while fetching into it: a second fetch into the same root is refused while the
    first runs.  The lock is the operating system's (``filelock``: a killed fetch leaves none held) on a file
    in the cache (``$TOKBENCH_CACHE/locks``), named by the root's resolved path, so the root holds nothing but
    its files."""
    from filelock import FileLock, Timeout

    from corpora.loader import cache_home

    name = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    locks = cache_home() / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(locks / f"data-{name}.lock"), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise BenchmarkError(f"{root}: another `tokbench data fetch` is writing this data root; wait for it to "
                             "finish") from None  # fmt: skip
    try:
        yield
    finally:
        lock.release()


def fetch(root: Path, *, only: Sequence[str] | None = None, languages: Sequence[str] | None = None,
          treebanks: Sequence[str] | None = None, manifest: Sequence[Entry] | None = None,
          attempts: int | None = None, backoff: float | None = None, timeout: float | None = None,
          progress: bool = True) -> FetchResult:  # fmt: skip
    """Fetch the selected entries of ``manifest`` (default: the shipped one) into ``root``; the retry policy
    defaults to ``ATTEMPTS``, ``BACKOFF`` and ``TIMEOUT``."""
    from tqdm import tqdm

    attempts = ATTEMPTS if attempts is None else attempts
    backoff = BACKOFF if backoff is None else backoff
    timeout = TIMEOUT if timeout is None else timeout

    manifest = list(manifest) if manifest is not None else read_manifest()
    root.mkdir(parents=True, exist_ok=True)
    with data_root_lock(root):  # two fetches into one root would interleave their writes
        local_path = root / LOCAL_MANIFEST
        local = {e.path: e for e in read_manifest(local_path)} if local_path.is_file() else {}
        entries = select(manifest, only, languages, list(local.values()), treebanks)
        result = FetchResult()
        todo = []
        for entry in entries:
            if not entry.urls:
                if not is_verified(entry, root):
                    result.unavailable[entry.path] = entry.note or "no URL in the manifest"
                else:
                    result.present.append(entry.path)
            elif is_verified(entry, root):
                result.present.append(entry.path)
            else:
                todo.append(entry)
        total = sum(entry.size or 0 for entry in todo)
        with tqdm(total=total, unit="B", unit_scale=True, desc="fetching", disable=not progress,
                  file=sys.stderr) as bar:  # fmt: skip
            for entry in todo:
                try:
                    done = fetch_entry(entry, root, attempts=attempts, backoff=backoff, timeout=timeout,
                                       on_bytes=bar.update)  # fmt: skip
                except FileFailure as exc:
                    if entry.optional and exc.status == 404:
                        result.unavailable[entry.path] = f"not in this treebank ({exc})"
                    else:
                        result.failed[entry.path] = str(exc)
                    continue
                result.fetched.append(entry.path)
                if entry.sha256 is None:  # not in the shipped manifest: recorded now, checked from now on
                    local[entry.path] = done
                    write_manifest(local_path, local.values())
        for name in treebanks or ():
            _treebank_found(name, result, root)
        write_sources(root, [e for e in entries if (root / e.path).is_file()])
        return result


def _treebank_found(name: str, result: FetchResult, root: Path) -> None:
    """A treebank none of whose splits exists at its tag (all 404: misspelt, or not released there) is a
    failure, not three splits "not in this treebank"; the folder made for it is removed when left empty."""
    paths = [entry.path for entry in ud_entries(name)]
    if all(path in result.unavailable for path in paths):
        for path in paths:
            del result.unavailable[path]
        result.failed[name] = "treebank not found (no train, dev or test file at its tag)"
        folder = root / PurePosixPath(paths[0]).parent
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


@dataclass
class Verification:
    matching: list[str] = field(default_factory=list)
    mismatched: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    #: missing files the manifest has no URL for (to be copied by hand): listed, not a failure
    not_downloadable: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatched and not self.missing


def verify(root: Path, *, manifest: Sequence[Entry] | None = None, only: Sequence[str] | None = None) -> Verification:
    """Every manifest file (and every file recorded in ``LOCAL_MANIFEST.tsv``) present with its sha256 and size."""
    manifest = list(manifest) if manifest is not None else read_manifest()
    local_path = root / LOCAL_MANIFEST
    local = read_manifest(local_path) if local_path.is_file() else []
    groups = set(only or GROUPS)
    # a local row records a file the shipped manifest does not pin; it never overrides a shipped pin
    known = {e.path: e for e in [*local, *manifest]}
    result = Verification()
    for path, entry in sorted(known.items()):
        if entry.group not in groups:
            continue
        target = root / path
        if not target.is_file():
            (result.missing if entry.urls else result.not_downloadable).append(path)
            continue
        size = target.stat().st_size
        if entry.size is not None and size != entry.size:  # no need to hash it (a large stand-in costs seconds)
            result.mismatched[path] = f"{size} bytes, manifest {entry.sha256} ({entry.size} bytes)"
            continue
        digest, size = sha256_file(target)
        if (digest, size) == (entry.sha256, entry.size):
            result.matching.append(path)
        else:
            result.mismatched[path] = f"sha256 {digest} ({size} bytes), manifest {entry.sha256} ({entry.size} bytes)"
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = file.relative_to(root).as_posix()
        if relative in known or relative in BOOKKEEPING or any(part.startswith(".") for part in relative.split("/")):
            continue
        if relative.split("/", 1)[0] in groups:
            result.extra.append(relative)
    return result


def provenance(root: Path) -> dict[str, object]:
    """How a data root compares with the shipped manifest, for a run's manifest.json (never an error)."""
    check = verify(root)
    return {
        "matches_manifest": check.ok and not check.extra,
        "matching": len(check.matching),
        "differing": sorted(check.mismatched),
        "missing": check.missing,
        "extra": check.extra,
    }
