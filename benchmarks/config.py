"""Experiment configs: TOML files in ``benchmarks/`` describing a grid of
corpora × tokenizer kinds × vocabulary sizes × options, plus reference and
production rows, bootstrap settings and the seed.

Format (every key is checked; unknown keys are errors)::

    name = "quick"                      # run name; default output dir is runs/<name>
    description = "..."
    seed = 0                            # bootstrap and sentencepiece seed
    corpora = ["embedded-tur", ...]     # corpus spec ids (corpora/*.toml) or paths to spec files
    production = ["cl100k"]             # encode-only production rows (optional)
    max_train_chars = 2000000           # optional cap on training text per corpus (first documents kept)
    metrics = ["bytes_per_token"]       # optional: report only these metrics (default: all of metrics.METRICS)

    [[tokenizers]]                      # one table per tokenizer family (or ablation)
    kind = "char-bpe"                   # word | char | char-bpe | byte-bpe | spm-bpe | spm-unigram
    label = "char-bpe"                  # row name in tables (default: kind); must be unique
    vocab_sizes = [1000, 4000]
    options = { end_of_word = "separate", min_frequency = 2 }   # passed to bpe.train / encode

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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from benchmarks.errors import BenchmarkError
from benchmarks.metrics import METRICS

CONFIG_DIR = Path(__file__).resolve().parent
DEFAULT_CONFIG = "quick"

#: kinds trained through sentencepiece (reference rows); the others are tokbench's own families
REFERENCE_KINDS = ("spm-bpe", "spm-unigram")


@dataclass(frozen=True)
class TokenizerEntry:
    kind: str
    label: str
    vocab_sizes: tuple[int, ...]
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def row_type(self) -> str:
        return "reference" if self.kind in REFERENCE_KINDS else "family"


@dataclass(frozen=True)
class ExperimentConfig:
    name: str
    description: str
    seed: int
    corpora: tuple[str, ...]
    tokenizers: tuple[TokenizerEntry, ...]
    production: tuple[str, ...]
    max_train_chars: int | None
    metrics: tuple[str, ...] | None  # None: every metric
    bootstrap_resamples: int
    confidence: float
    report_vocab_size: int
    source: str  # file the config came from

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("source")
        return data

    def fingerprint(self) -> str:
        """Hash of everything that determines the results (not where the file lives)."""
        blob = json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


_TOP_KEYS = {
    "name", "description", "seed", "corpora", "tokenizers", "production",
    "max_train_chars", "metrics", "bootstrap", "report",
}  # fmt: skip
_ENTRY_KEYS = {"kind", "label", "vocab_sizes", "options"}
_BOOTSTRAP_KEYS = {"resamples", "confidence"}
_REPORT_KEYS = {"vocab_size"}


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
    import bpe

    def fail(where: str, message: str) -> BenchmarkError:
        return BenchmarkError(f"{source}: {where}: {message}")

    def check_keys(table: dict[str, Any], allowed: set[str], where: str) -> None:
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise fail(where, f"unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})")

    def typed(table: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str, default: Any = ...) -> Any:
        if key not in table:
            if default is ...:
                raise fail(where, f"missing required key {key!r}")
            return default
        value = table[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise fail(f"{where}.{key}" if where != "top level" else key, f"expected {names}, got {value!r}")
        return value

    def positive_int(value: Any, where: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise fail(where, f"expected a positive integer, got {value!r}")
        return value

    check_keys(raw, _TOP_KEYS, "top level")
    name = typed(raw, "name", str, "top level")
    corpora = typed(raw, "corpora", list, "top level")
    if not corpora or not all(isinstance(c, str) for c in corpora):
        raise fail("corpora", "expected a non-empty list of corpus ids or spec paths")
    production = typed(raw, "production", list, "top level", [])
    for item in production:
        if item not in bpe.PRODUCTION:
            raise fail("production", f"unknown production tokenizer {item!r} (known: {', '.join(bpe.PRODUCTION)})")

    entries: list[TokenizerEntry] = []
    for index, table in enumerate(typed(raw, "tokenizers", list, "top level")):
        where = f"tokenizers[{index}]"
        if not isinstance(table, dict):
            raise fail(where, "expected a table")
        check_keys(table, _ENTRY_KEYS, where)
        kind = typed(table, "kind", str, where)
        if kind not in bpe.FAMILIES:
            raise fail(f"{where}.kind", f"unknown tokenizer kind {kind!r} (known: {', '.join(bpe.FAMILIES)})")
        sizes = typed(table, "vocab_sizes", list, where)
        if not sizes:
            raise fail(f"{where}.vocab_sizes", "expected at least one vocabulary size")
        sizes = tuple(positive_int(size, f"{where}.vocab_sizes") for size in sizes)
        options = typed(table, "options", dict, where, {})
        entries.append(TokenizerEntry(kind, typed(table, "label", str, where, kind), sizes, dict(options)))
    if not entries and not production:
        raise fail("tokenizers", "expected at least one tokenizer or production row")
    labels = [entry.label for entry in entries] + list(production)
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise fail("tokenizers", f"label {duplicates[0]!r} is used twice: give each entry a distinct `label`")

    bootstrap = typed(raw, "bootstrap", dict, "top level", {})
    check_keys(bootstrap, _BOOTSTRAP_KEYS, "bootstrap")
    confidence = typed(bootstrap, "confidence", float, "bootstrap", 0.95)
    if not 0.5 < confidence < 1:
        raise fail("bootstrap.confidence", f"expected a level between 0.5 and 1, got {confidence}")
    report = typed(raw, "report", dict, "top level", {})
    check_keys(report, _REPORT_KEYS, "report")
    all_sizes = sorted({size for entry in entries for size in entry.vocab_sizes})
    report_size = positive_int(report.get("vocab_size", all_sizes[len(all_sizes) // 2] if all_sizes else 1),
                               "report.vocab_size")  # fmt: skip
    metric_names = typed(raw, "metrics", list, "top level", None)
    if metric_names is not None:
        for metric in metric_names:
            if metric not in METRICS:
                raise fail("metrics", f"unknown metric {metric!r} (known: {', '.join(METRICS)})")
        metric_names = tuple(metric_names)
    max_chars = raw.get("max_train_chars")
    if max_chars is not None:
        positive_int(max_chars, "max_train_chars")

    return ExperimentConfig(
        name=name,
        description=typed(raw, "description", str, "top level", ""),
        seed=typed(raw, "seed", int, "top level", 0),
        corpora=tuple(corpora),
        tokenizers=tuple(entries),
        production=tuple(production),
        max_train_chars=max_chars,
        metrics=metric_names,
        bootstrap_resamples=positive_int(bootstrap.get("resamples", 1000), "bootstrap.resamples"),
        confidence=confidence,
        report_vocab_size=report_size,
        source=source,
    )
