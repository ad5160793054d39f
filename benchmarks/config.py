"""Experiment configs: TOML files in ``benchmarks/`` describing a grid of
corpora × tokenizer kinds × vocabulary sizes × options, plus reference and
production rows, bootstrap settings and the seed.

Format (declared by the models below: unknown keys, types and ranges are errors naming the key)::

    name = "quick"                      # run name; default output dir is runs/<name>
    description = "..."
    seed = 0                            # bootstrap resampling seed (training is deterministic and takes no seed)
    corpora = ["embedded-tur", ...]     # corpus spec ids (corpora/*.toml) or paths to spec files
    production = ["cl100k"]             # encode-only production rows (optional)
    max_train_chars = 2000000           # optional cap on training text per corpus (first documents kept)
    metrics = ["bytes_per_token"]       # optional: report only these metrics (default: all of metrics.METRICS)

    [[tokenizers]]                      # one table per tokenizer family (or ablation)
    kind = "char-bpe"                   # word | char | char-bpe | byte-bpe | spm-bpe | spm-unigram
    label = "char-bpe"                  # row name in tables (default: kind); must be unique
    vocab_sizes = [1000, 4000]
    options = { end_of_word = "separate", min_frequency = 2 }   # the family's options (bpe.options)

    [bootstrap]
    resamples = 1000                    # scipy.stats.bootstrap n_resamples
    confidence = 0.95

    [report]
    vocab_size = 4000                   # the vocabulary size paper tables are drawn at
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, PrivateAttr, Strict, ValidationInfo, field_validator, model_validator

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import bpe
from benchmarks.errors import BenchmarkError
from benchmarks.metrics import METRICS
from bpe.options import FAMILY_OPTIONS
from bpe.validation import PositiveInt, Problem, Table, in_interval, table_rule, validate

CONFIG_DIR = Path(__file__).resolve().parent
DEFAULT_CONFIG = "quick"

#: kinds trained through sentencepiece: reference rows rather than tokbench's own families
REFERENCE_KINDS = ("spm-bpe", "spm-unigram")

Kind = Literal[tuple(bpe.FAMILIES)]  # type: ignore[valid-type]
ProductionName = Literal[tuple(bpe.PRODUCTION)]  # type: ignore[valid-type]
MetricName = Literal[tuple(METRICS)]  # type: ignore[valid-type]


class TokenizerEntry(Table):
    """One ``[[tokenizers]]`` table: a family trained at each vocabulary size with the same options."""

    kind: Kind
    label: str = Field(default_factory=lambda validated: validated.get("kind", ""))
    vocab_sizes: Annotated[tuple[PositiveInt, ...], Strict(False), Field(min_length=1)]
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("options")
    @classmethod
    def _options_of_the_family(cls, options: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        """Checked against the family's declaration, before any training; kept as written (they are
        part of the config fingerprint and of each row's identity)."""
        if "kind" in info.data:
            FAMILY_OPTIONS[info.data["kind"]].parse(info.data["kind"], options)
        return options

    @property
    def row_type(self) -> str:
        return "reference" if self.kind in REFERENCE_KINDS else "family"


class Bootstrap(Table):
    resamples: PositiveInt = 1000
    confidence: in_interval(0.5, 1) = 0.95  # type: ignore[valid-type]


class Report(Table):
    vocab_size: PositiveInt | None = None  # default: the middle one of all vocabulary sizes


class ExperimentConfig(Table):
    """A validated experiment config; ``source`` is the file it came from."""

    name: str
    description: str = ""
    seed: int = 0
    corpora: Annotated[tuple[str, ...], Strict(False), Field(min_length=1)]
    tokenizers: Annotated[tuple[TokenizerEntry, ...], Strict(False)]
    production: Annotated[tuple[ProductionName, ...], Strict(False)] = ()
    max_train_chars: PositiveInt | None = None
    metrics: Annotated[tuple[MetricName, ...], Strict(False)] | None = None  # None: every metric
    bootstrap: Bootstrap = Bootstrap()
    report: Report = Report()
    _source: str = PrivateAttr("<config>")

    @model_validator(mode="after")
    def _rows_with_distinct_labels(self) -> ExperimentConfig:
        if not self.tokenizers and not self.production:
            raise table_rule("tokenizers: expected at least one tokenizer or production row")
        labels = [entry.label for entry in self.tokenizers] + list(self.production)
        duplicates = sorted({label for label in labels if labels.count(label) > 1})
        if duplicates:
            raise table_rule(f"tokenizers: label {duplicates[0]!r} is used twice: give each entry a distinct `label`")
        return self

    @property
    def source(self) -> str:
        return self._source

    @property
    def bootstrap_resamples(self) -> int:
        return self.bootstrap.resamples

    @property
    def confidence(self) -> float:
        return self.bootstrap.confidence

    @property
    def report_vocab_size(self) -> int:
        if self.report.vocab_size is not None:
            return self.report.vocab_size
        sizes = sorted({size for entry in self.tokenizers for size in entry.vocab_sizes})
        return sizes[len(sizes) // 2] if sizes else 1

    def to_json(self) -> dict[str, Any]:
        """Everything that determines the results, as one flat object: the input of ``fingerprint``
        and the manifest's ``config``.  Its shape is fixed: changing it changes every run identity."""
        return {
            "name": self.name,
            "description": self.description,
            "seed": self.seed,
            "corpora": self.corpora,
            "tokenizers": [entry.model_dump() for entry in self.tokenizers],
            "production": self.production,
            "max_train_chars": self.max_train_chars,
            "metrics": self.metrics,
            "bootstrap_resamples": self.bootstrap_resamples,
            "confidence": self.confidence,
            "report_vocab_size": self.report_vocab_size,
        }

    def fingerprint(self) -> str:
        """Hash of everything that determines the results (not where the file lives)."""
        blob = json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


def resolve_config_path(name_or_path: str | None) -> Path:
    """A config name shipped in benchmarks/ (``quick``, ``paper``) or a path to a TOML file."""
    target = name_or_path or DEFAULT_CONFIG
    path = Path(target)
    if path.suffix == ".toml" or path.exists():
        if not path.is_file():
            raise BenchmarkError(f"{path}: no such config file")
        return path
    shipped = CONFIG_DIR / f"{target}.toml"
    if not shipped.is_file():
        names = ", ".join(sorted(p.stem for p in CONFIG_DIR.glob("*.toml")))
        raise BenchmarkError(f"unknown config {target!r}: give a path to a TOML file or one of: {names}")
    return shipped


def load_config(name_or_path: str | None = None) -> ExperimentConfig:
    path = resolve_config_path(name_or_path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"{path}: cannot read config ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise BenchmarkError(f"{path}: not valid TOML ({exc})") from None
    return parse_config(raw, source=str(path))


def parse_config(raw: dict[str, Any], source: str = "<config>") -> ExperimentConfig:
    """Validate a parsed TOML document; ``source`` names it in messages."""

    def fail(problem: Problem) -> BenchmarkError:
        return BenchmarkError(
            f"{source}: {problem.path}: {problem.message}" if problem.path else f"{source}: {problem.message}"
        )

    config = validate(ExperimentConfig, raw, fail)
    config._source = source
    return config
