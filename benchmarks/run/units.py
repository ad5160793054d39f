"""A run's unit of work and what it produces.

A *unit* is one tokenizer row on one corpus: (corpus, tokenizer entry, vocab size)
for trained rows, (corpus, production tokenizer) for production rows.  Its result
(``UnitResult``: tidy rows, wall-clock costs, per-document token counts, the token counts of
joined parallel texts) is saved as
``RUN_DIR/units/<key>.json`` when the unit finishes, so an interrupted run resumes
where it stopped; ``write_unit_result`` and ``read_unit_result`` are the only code
that writes and reads that file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

import bpe
from benchmarks.errors import BenchmarkError
from benchmarks.files import OPTION_PREFIX, TRAIN_CHARS, atomic_write_text
from benchmarks.measure.registry import Capability, capabilities_of
from bpe.options import FamilyOptions


@dataclass(frozen=True)
class Unit:
    corpus: str  # corpus spec id
    language: str  # the corpus's language, e.g. tur_Latn
    tokenizer: str  # row label: the config entry's label, or the production name
    kind: str  # family or production name
    row_type: str  # family | reference | production
    vocab_size: int | None  # None for production rows
    options: tuple[tuple[str, Any], ...] = ()  # the entry's options as written, sorted by name
    train_chars: int | None = None  # its value of the config's train_chars axis (None: no axis)
    #: the options parsed by the family's options model (``bpe.options``), handed on from the config
    #: (``TokenizerEntry.settings``); None for a pretrained row, which takes none
    settings: FamilyOptions | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.settings is None and self.row_type != "production":  # a unit made from written options
            parsed = bpe.family_class(self.kind).options_model.parse(self.kind, dict(self.options))
            object.__setattr__(self, "settings", parsed)

    @property
    def key(self) -> str:
        """A file-name-safe id, unique within a run."""
        size = self.vocab_size if self.vocab_size is not None else "na"
        options = "".join(f",{k}={v}" for k, v in self.identity_options)
        return f"{self.corpus}__{self.tokenizer}__{size}{options}".replace("/", "_")

    @property
    def training_options(self) -> dict[str, Any]:
        """The options as the config gives them, without the encode-time ones (``ENCODE_TIME`` in
        ``bpe.options``: inference method, sampling, seed): what training takes and the tokenizer cache
        is keyed on, so rows that differ in encode-time options alone share one trained vocabulary."""
        encode_time = self._encode_time_names
        return {name: value for name, value in self.options if name not in encode_time}

    @property
    def encode_time_options(self) -> dict[str, Any]:
        """The encode-time options as the config gives them (``Tokenizer.with_encode_options`` takes them)."""
        encode_time = self._encode_time_names
        return {name: value for name, value in self.options if name in encode_time}

    @property
    def _encode_time_names(self) -> frozenset[str]:
        settings = self.settings
        return frozenset(settings.encode_option_names()) if settings is not None else frozenset()

    @property
    def identity_options(self) -> tuple[tuple[str, Any], ...]:
        """The options, then ``train_chars`` when the run has that axis."""
        return self.options + (((TRAIN_CHARS, self.train_chars),) if self.train_chars is not None else ())

    @property
    def capabilities(self) -> frozenset[Capability]:
        return capabilities_of(self.kind)

    def columns(self) -> dict[str, Any]:
        """The identity columns of this unit's result rows (``files.results_schema``) and costs: an option
        column for each option the config sets, holding its validated value (an earlier name of an encode
        mode reads as the current one), and ``train_chars`` on a run with that axis."""
        settings = self.settings
        typed = {OPTION_PREFIX + name: getattr(settings, name) for name, _ in self.options} if settings else {}
        return {"corpus": self.corpus, "language": self.language, "tokenizer": self.tokenizer, "kind": self.kind,
                "row_type": self.row_type, "vocab_size": self.vocab_size, **typed,
                TRAIN_CHARS: self.train_chars}  # fmt: skip


@dataclass(frozen=True)
class ResultRow:
    """One metric value of a unit; with the unit's columns it is one row of results.*."""

    eval_set: str  # test | eval | reference | train
    reference: str  # morpheme reference name, else ""
    metric: str
    value: float
    ci_low: float  # NaN where the metric has no interval
    ci_high: float
    n: int


@dataclass(frozen=True)
class DocumentCounts:
    """Per document of one evaluation set, in corpus order: what cross-unit metrics and paired tests need."""

    ids: list[str]
    tokens: list[int]
    chars: list[int]


@dataclass
class UnitResult:
    unit: Unit
    rows: list[ResultRow] = field(default_factory=list)
    costs: dict[str, float] = field(default_factory=dict)  # wall-clock metrics (not deterministic)
    counts: dict[str, DocumentCounts] = field(default_factory=dict)  # by evaluation set
    #: token counts of the joined parallel texts (``ParallelPlan.joined_texts``), by the paired corpus
    joined: dict[str, int] = field(default_factory=dict)


def tidy_rows(unit: Unit, rows: Iterable[ResultRow]) -> list[dict[str, Any]]:
    """Rows of results.* (``files.results_schema``): the unit's columns with each row's."""
    return [{**unit.columns(), **asdict(row)} for row in rows]


def write_unit_result(path: Path, result: UnitResult) -> None:
    document = {
        "unit": {**{name: getattr(result.unit, name) for name in _UNIT_FIELDS}, "options": dict(result.unit.options)},
        "rows": [asdict(row) for row in result.rows],
        "costs": result.costs,
        "counts": {role: asdict(counts) for role, counts in result.counts.items()},
        "joined": result.joined,
    }
    atomic_write_text(path, json.dumps(document, ensure_ascii=False) + "\n")


class UnitFileError(BenchmarkError):
    """A unit file that does not read back as the unit expected (truncated, edited, another unit's)."""


_UNIT = TypeAdapter(Unit)
#: what a unit file records of its unit (the parsed options are parsed again from the written ones)
_UNIT_FIELDS = tuple(unit_field.name for unit_field in fields(Unit) if unit_field.name != "settings")
_ROWS = TypeAdapter(list[ResultRow])
_COSTS = TypeAdapter(dict[str, float])
_COUNTS = TypeAdapter(dict[str, DocumentCounts])
_JOINED = TypeAdapter(dict[str, int])


def read_unit_result(path: Path, expected: Unit | None = None) -> UnitResult:
    """The unit result saved at ``path``, every field checked; a UnitFileError when the file is
    unreadable, malformed, or (given ``expected``) holds another unit."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        unit = _UNIT.validate_python(dict(document["unit"], options=tuple(document["unit"]["options"].items())))
        result = UnitResult(unit, _ROWS.validate_python(document["rows"]), _COSTS.validate_python(document["costs"]),
                            _COUNTS.validate_python(document["counts"]),
                            _JOINED.validate_python(document["joined"]))  # fmt: skip
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:  # JSON, pydantic: ValueErrors
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UnitFileError(f"{path}: damaged unit file ({type(exc).__name__}: {reason})") from None
    if expected is not None and unit != expected:
        raise UnitFileError(f"{path}: holds unit {unit.key!r}, expected {expected.key!r}")
    for role, counts in result.counts.items():
        if not len(counts.ids) == len(counts.tokens) == len(counts.chars):
            raise UnitFileError(f"{path}: damaged unit file (the document counts of {role!r} differ in length)")
    return result
