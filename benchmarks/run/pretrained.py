"""The pretrained rows of a run: resolved before any work, recorded in the manifest, re-loaded later.

A pretrained row (a ``production`` name or a ``[[pretrained]]`` table of the config) is evaluated as
is.  ``resolve_pretrained`` finds and loads every row once when a run starts, before any corpus is
loaded or tokenizer trained, so a missing file, a wrong format or a bad pattern is one error naming
the config and every place looked at: a relative path is looked up in the data root first, then in
the config file's folder; ``hf:ORG/NAME[@REVISION]`` is downloaded from the Hugging Face Hub into the cache
(``benchmarks.data.hub``).  Each row's file is hashed: its digest is part of the run's identity (a
changed file is a new run) and of the manifest's ``pretrained`` entry, from which the report
re-loads the row (``PretrainedRow.from_json``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bpe
from benchmarks.data.hub import hub_tokenizer_file, is_hub_source
from benchmarks.errors import BenchmarkError
from bpe.pretrained.formats import HF_FILE, detect_format
from bpe.pretrained.production import PRODUCTION
from bpe.pretrained.published import PretrainedSpec, find_file, load_pretrained, published_file
from corpora.sources import data_root, file_digest


@dataclass(frozen=True)
class PretrainedRow:
    """A row as the config gives it (``spec``), with what it was resolved to."""

    spec: PretrainedSpec
    kind: str  # the results' `kind`: its name, or the format of its file
    file: Path | None = None  # the file or folder found (absolute); None for a name
    sha256: str | None = None  # of the file (of a folder's tokenizer.json)

    def load(self) -> bpe.Tokenizer:
        """The row's tokenizer, loaded once per process while its file is unchanged: the units, side tables
        and report of a run share it, and worker processes forked after ``resolve_pretrained`` inherit it (a
        pretrained tokenizer keeps no state that changes an encoding, only lookups it has made)."""
        source = self.spec.source if self.file is None else str(self.file)
        spec = PretrainedSpec(self.spec.label, source, self.spec.format, self.spec.pattern, self.spec.normalizer)
        key = (spec, None if self.file is None else _file_state(self.file))
        if key not in _LOADED:
            _LOADED[key] = load_pretrained(spec)
        return _LOADED[key]

    def to_json(self) -> dict[str, Any]:
        """The manifest's entry: the name, or the path as written with the file found and its digest."""
        if self.file is None:
            return {"name": self.spec.source}
        entry = {"path": self.spec.source, "file": str(self.file), "format": self.kind, "sha256": self.sha256}
        if self.spec.pattern is not None:
            entry["pattern"] = self.spec.pattern
        return entry if self.spec.normalizer is None else {**entry, "normalizer": self.spec.normalizer}

    @classmethod
    def from_json(cls, label: str, entry: dict[str, Any]) -> PretrainedRow:
        """The row a manifest entry records; its file must be unchanged since the run."""
        if "name" in entry:
            return cls(PretrainedSpec(label, entry["name"]), entry["name"])
        file = Path(entry["file"])
        digest = _digest(file) if file.exists() else None
        if digest != entry["sha256"]:
            raise BenchmarkError(f"pretrained tokenizer {label!r}: {file} is {'changed' if digest else 'missing'} "
                                 "since the run", code="file_changed" if digest else "missing_file",
                                 value=file)  # fmt: skip
        spec = PretrainedSpec(label, entry["path"], entry["format"], entry.get("pattern"), entry.get("normalizer"))
        return cls(spec, entry["format"], file, digest)


#: the tokenizers ``PretrainedRow.load`` has loaded in this process, by what it loaded and its file's state
_LOADED: dict[tuple[PretrainedSpec, tuple[int, ...] | None], bpe.Tokenizer] = {}


def _file_state(file: Path) -> tuple[int, ...]:
    """What changes when a tokenizer file (a folder's tokenizer.json) is replaced or rewritten."""
    target = file / HF_FILE if (file / HF_FILE).is_file() else file
    stat = target.stat()
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def is_name(spec: PretrainedSpec) -> bool:
    """A registry name, loaded by name (as ``load_pretrained`` decides), rather than a path."""
    return spec.source in PRODUCTION and (spec.format, spec.pattern, spec.normalizer) == (None, None, None)


def _digest(file: Path) -> str:
    return file_digest(file / HF_FILE if file.is_dir() else file)


def resolve_pretrained(rows: tuple[PretrainedSpec, ...], config_source: str,
                       data_dir: Path | None) -> dict[str, PretrainedRow]:  # fmt: skip
    """Find and load every row (see the module docstring); by label, in config order."""
    root = data_root(data_dir)
    search = [("data root", root)] if root is not None else []
    config_file = Path(config_source)
    if config_file.is_file():
        search.append(("config folder", config_file.resolve().parent))
    resolved: dict[str, PretrainedRow] = {}
    for spec in map(published_file, rows):  # a published file by name: the data root's file, under its label
        try:
            if is_name(spec):
                file = None
            elif is_hub_source(spec.source):
                file = hub_tokenizer_file(spec.source)  # the cache's file of the commit the revision names
            else:
                file = find_file(spec.source, search).resolve()
        except (bpe.TokenizerError, BenchmarkError) as exc:
            hint = "" if root is not None else " (no data root was given: --data-dir DIR or TOKBENCH_DATA)"
            raise BenchmarkError(f"{config_source}: pretrained tokenizer {spec.label!r}: {exc}{hint}", code=exc.code,
                                 value=exc.value, field=exc.field) from None  # fmt: skip
        row = PretrainedRow(spec, spec.source, file)
        try:
            row.load()  # every error names the row's label
        except bpe.TokenizerError as exc:
            raise BenchmarkError(f"{config_source}: {exc}", code=exc.code, value=exc.value, field=exc.field) from None
        if file is not None:
            row = PretrainedRow(spec, detect_format(file), file, _digest(file))
        resolved[spec.label] = row
    return resolved
