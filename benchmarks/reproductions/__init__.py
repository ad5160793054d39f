"""Exact reproductions of published tables: one file per table, ``benchmarks/reproductions/<name>.toml``.

A reproduction file declares the table (name, citation, the definition ``tokbench reproduce --help`` and
docs/reproductions.md show, its figures in ``benchmarks/published/``), the tokenizer of each column, the text
and words, the measurements, the languages and the comparison (``benchmarks.reproductions.model``); one engine
recomputes every table (``benchmarks.reproductions.engine``), with one piece of code per kind of measurement
(``benchmarks.reproductions.measures``).  ``REPRODUCTIONS`` is every such file: adding a table whose
measurements exist is one file, and no code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import bpe
from benchmarks.errors import BenchmarkError
from benchmarks.reproductions.model import ReproductionFile, read_reproduction
from bpe.pretrained.published import PretrainedSpec, load_pretrained

#: table name -> its reproduction file: every ``*.toml`` beside this module
REPRODUCTIONS: dict[str, Path] = {path.stem: path for path in sorted(Path(__file__).parent.glob("*.toml"))}


@dataclass(frozen=True)
class Row:
    tokenizer: str
    language: str
    published: int | float | None  # None: the paper has no figure for this language
    reproduced: int | float
    metric: str = "tokens"

    @property
    def difference(self) -> int | float | None:
        if self.published is None:
            return None
        difference = self.reproduced - self.published
        return round(difference, 3) if isinstance(difference, float) else difference


@dataclass
class Reproduction:
    rows: list[Row] = field(default_factory=list)
    #: what was not reproduced or not compared, and why
    notes: list[str] = field(default_factory=list)
    #: the largest difference from a published value that still counts as reproduced (0: exact)
    tolerance: float = 0

    @property
    def compared(self) -> list[Row]:
        return [row for row in self.rows if row.published is not None]

    def differs(self, row: Row) -> bool:
        """Whether ``row`` has a published figure and is further from it than the tolerance."""
        return row.difference is not None and abs(row.difference) > self.tolerance

    @property
    def differing(self) -> list[Row]:
        return [row for row in self.compared if self.differs(row)]

    @property
    def unpublished(self) -> list[Row]:
        """Values computed that the paper has no figure for: counted, not compared."""
        return [row for row in self.rows if row.published is None]

    @property
    def unpublished_languages(self) -> list[str]:
        """Languages with no published figure at all, in row order."""
        published = {row.language for row in self.compared}
        return list(dict.fromkeys(row.language for row in self.rows if row.language not in published))


class UnreproducibleLanguages(BenchmarkError):
    """Requested languages that cannot be reproduced, one reason each (reported one per line)."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


def compact_codes(codes: Sequence[str], shown: int = 5) -> str:
    """``codes`` as one short line: the first ``shown`` and how many more (``ace_Arab, ace_Latn, acm_Arab,
    acq_Arab, aeb_Arab and 189 more``); a short list in full."""
    if len(codes) <= shown + 1:  # "and 1 more" would be no shorter than the code itself
        return ", ".join(codes)
    return f"{', '.join(codes[:shown])} and {len(codes) - shown} more"


def get_reproduction(name: str) -> ReproductionFile:
    """The reproduction file of the table called ``name``, validated; a BenchmarkError naming the choices
    for an unknown name, a ``ReproductionFileError`` naming file, field and value for an invalid file."""
    if name not in REPRODUCTIONS:
        raise BenchmarkError(f"unknown table {name!r}; choose one of: {', '.join(REPRODUCTIONS)}")
    return read_reproduction(REPRODUCTIONS[name])


def load_column(spec: PretrainedSpec, data_root: Path, notes: list[str]) -> bpe.Tokenizer | None:
    """A table column's tokenizer from the data root, or None with the reason in ``notes`` (its file
    missing, or a file that does not load): a column is reported as not available, never skipped silently.
    A file whose sha256 differs from the one tokbench's data manifest pins is a BenchmarkError: the
    published figures were computed with the published file, and an altered file that happens to give
    the same counts must not pass as a reproduction."""
    if "/" in spec.source:
        if not (data_root / spec.source).is_file():
            notes.append(f"{spec.label}: not available: {spec.source} missing")
            return None
        _check_pinned(data_root, spec.source)
    try:
        return load_pretrained(spec, [("data root", data_root)])
    except bpe.TokenizerError as exc:
        notes.append(f"{spec.label}: not available: {exc}")
        return None


def _check_pinned(data_root: Path, relative: str) -> None:
    from benchmarks.data.fetch import read_manifest, sha256_file

    pinned = {entry.path: entry.sha256 for entry in read_manifest()}.get(relative)
    if pinned is None:
        return
    sha256, _ = sha256_file(data_root / relative)
    if sha256 != pinned:
        raise BenchmarkError(
            f"{data_root / relative}: sha256 {sha256} differs from the published file's {pinned} (tokbench's data "
            "manifest); a reproduction needs the published file: fetch it again with `tokbench data fetch "
            f"{data_root} --only {relative.split('/', 1)[0]}`"
        )
