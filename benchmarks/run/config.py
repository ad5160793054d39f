"""Experiment configs: TOML files in ``benchmarks/`` describing a grid of
corpora × tokenizer kinds × vocabulary sizes × options, plus reference and
pretrained rows, bootstrap settings and the seed.

Format (declared by the models below: unknown keys, types and ranges are errors naming the key)::

    name = "quick"                      # run name (letters, digits, . _ -); default output dir is runs/<name>
    description = "..."
    seed = 0                            # bootstrap resampling seed (training is deterministic and takes no seed)
    seeds = [0, 1, 2, 3, 4]             # rows that sample (dropout > 0, alpha set) are encoded once per seed and
                                        # reported as the mean over seeds (default: these five); others encode once
    corpora = ["embedded-tur", ...]     # shipped corpus ids (corpora/*.toml) or spec files (see `corpus_source`)
    production = ["cl100k"]             # tokenizers known by name, evaluated as is (optional; = [[pretrained]] name)
    max_train_chars = 2000000           # optional cap on training text per corpus (first documents kept)
    train_chars = [100000, 1000000]     # optional axis instead of max_train_chars: every trained row at each of
                                        # these caps, nested prefixes of one training stream (see `train_chars`)
    metrics = ["bytes_per_token"]       # optional: report only these metrics (default: every metric not optional,
                                        # e.g. all three parity definitions: they cost one more encoding of eval);
                                        # each must be computable by this grid (checked before any training)
    extra_metrics = ["boundary_f1_in_vocab"]  # optional metrics (comparability modes) computed besides `metrics`

    [[tokenizers]]                      # one table per tokenizer family (or ablation)
    kind = "char-bpe"                   # a family of bpe.FAMILIES (docs/tokenizers.md; `tokbench train --help`)
    label = "char-bpe"                  # row name in tables (default: kind); must be unique
    vocab_sizes = [1000, 4000]          # distinct, each at least the family's minimum (bpe: Tokenizer.vocab_floor)
    options = { end_of_word = "separate", min_frequency = 2 }   # the family's options (bpe.options)
    corpora = ["ud-kor"]                # optional: only these corpora (spec ids) of the config (default: all)

    [[multilingual]]                    # one shared tokenizer trained on a sample of several corpora
    kind = "byte-bpe"                   # any family of [[tokenizers]] (those trained on gold morphemes excepted)
    label = "byte-bpe-multilingual"     # rows are named <label>-a<alpha> (default label: <kind>-multilingual)
    alpha = [1.0, 0.5, 0.3]             # sampling exponents: language i is sampled with probability ∝ size_i^alpha
    vocab_sizes = [8000]                # and options, as in [[tokenizers]]
    corpora = ["ud-tur", "ud-eng"]      # optional: these corpora of the config (default: all of them)
    train_chars = 2000000               # optional: characters of the sample (default: the corpora's training text)

    [[pretrained]]                      # a published tokenizer, evaluated as is (encode-only)
    path = "tokenizers/gpt2.tiktoken"   # a file or folder (relative: the data root, then this file's folder)
    pattern = "gpt2"                    # tiktoken rank files only: gpt2|r50k|cl100k|o200k|qwen or a regex
    normalizer = "nfc"                  # tiktoken rank files only, optional: bpe.pipeline.normalizers (Qwen: nfc)
    label = "gpt2"                      # row name (default: the name, or the file name without suffix)
    format = "tiktoken"                 # optional: tokbench|hf|sentencepiece|tiktoken|tekken (default: detected)

    [[pretrained]]
    name = "mistral-v3"                 # or a tokenizer tokbench knows by name (bpe.PRODUCTION)

    [bootstrap]
    resamples = 1000                    # scipy.stats.bootstrap n_resamples
    confidence = 0.95

    [downstream]                        # optional: a small causal LM per tokenizer row, scored in bits per byte
    vocab_sizes = [2000, 8000]          # trained rows at these sizes (default: report.vocab_size); pretrained: all
    seeds = [0, 1, 2]                   # one LM per seed (initialisation and batch order)
    train_bytes = 300000                # UTF-8 bytes of training text per language, the same for every tokenizer
    context_bytes = 512                 # context per sequence in bytes (each row's tokens: see benchmarks.downstream)
    (model and optimiser settings: ``benchmarks.downstream.settings.Downstream``)

    [report]
    vocab_size = 4000                   # the vocabulary size paper tables are drawn at: one of the vocab_sizes
    match = "requested"                 # or "reached": each cell is the size whose REACHED vocabulary is closest
    unk_threshold = 0.1                 # a row with a larger <unk> token share is marked and never ranked

Whatever ``metrics`` says, ``unk_token_rate`` and ``vocab_size_reached`` are computed (the report marks
cells with them) and boundary precision, recall and F1 come together (``metrics.select_metrics``).
Everything here is checked when the file is read; what needs the corpora' text (roles, vocabulary
sizes against each training text's alphabet) is checked by ``benchmarks.run.grid`` before any training.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, PrivateAttr, Strict, model_validator

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import bpe
from benchmarks.data.hub import hub_label, is_hub_source
from benchmarks.downstream.settings import Downstream
from benchmarks.errors import BenchmarkError
from benchmarks.measure.metrics import LANGUAGE_MODEL_METRICS, METRICS
from benchmarks.run.entries import MultilingualEntry, TokenizerEntry
from bpe.pipeline.normalizers import NORMALIZERS
from bpe.pretrained.formats import FORMATS, HF_FILE, format_descriptions, formats_taking
from bpe.pretrained.published import PUBLISHED_FILES, PretrainedSpec
from bpe.validation import (
    NonNegativeInt,
    PositiveInt,
    Problem,
    Table,
    distinct,
    expecting,
    in_interval,
    table_rule,
    validate,
)

CONFIG_DIR = Path(__file__).resolve().parents[1]
DEFAULT_CONFIG = "quick"
#: the sampling seeds of rows that sample, unless a config sets ``seeds``
DEFAULT_SEEDS = (0, 1, 2, 3, 4)

#: a tokenizer by name: shipped with a package (``bpe.PRODUCTION``) or a published file of the data root
#: (``PUBLISHED_FILES``: ``gpt2``, ``o200k``, ...)
ProductionName = Literal[tuple([*bpe.PRODUCTION, *PUBLISHED_FILES])]  # type: ignore[valid-type]
MetricName = Literal[tuple(METRICS)]  # type: ignore[valid-type]
FormatName = Literal[tuple(FORMATS)]  # type: ignore[valid-type]
NormalizerName = Literal[tuple(NORMALIZERS)]  # type: ignore[valid-type]
NonEmpty = Annotated[str, Field(min_length=1), expecting("a non-empty string")]

_RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _run_name(name: str) -> str:
    if not _RUN_NAME.match(name):
        raise ValueError(
            "must be a plain name (letters, digits, '.', '_', '-', starting with a letter or digit): "
            f"the default output folder is runs/<name>, got {name!r}"
        )
    return name


MetricSelection = Annotated[tuple[MetricName, ...], Strict(False), Field(min_length=1), AfterValidator(distinct)]


def _pretrained_label(validated: dict[str, Any]) -> str:
    """A row's default label: its name, a Hub repository's name, or its file's name without suffix (a
    tokenizer.json: its folder's)."""
    if validated.get("name") or is_hub_source(validated.get("path")):
        return validated.get("name") or hub_label(validated["path"])
    path = PurePath(validated.get("path") or "")
    return path.parent.name if path.name == HF_FILE and path.parent.name else path.stem


class PretrainedEntry(Table):
    """One ``[[pretrained]]`` table: a published tokenizer evaluated as is, by name or from a file."""

    name: ProductionName | None = None
    path: NonEmpty | None = None
    label: NonEmpty = Field(default_factory=_pretrained_label)  # a row name only: it names no file
    format: FormatName | None = None
    pattern: NonEmpty | None = None
    normalizer: NormalizerName | None = None

    @model_validator(mode="after")
    def _name_or_path(self) -> PretrainedEntry:
        if (self.name is None) == (self.path is None):
            raise table_rule("give exactly one of 'name' (a tokenizer tokbench knows by name) or 'path' (a file)",
                             value="name")  # fmt: skip
        if self.name is not None and (self.format, self.pattern, self.normalizer) != (None, None, None):
            raise table_rule(f"'format', 'pattern' and 'normalizer' apply to a 'path'; {self.name!r} carries its own",
                             value=self.name)  # fmt: skip
        for field in ("pattern", "normalizer"):
            takers = formats_taking(field)
            if getattr(self, field) is not None and self.format is not None and self.format not in takers:
                files = " or ".join(format_descriptions()[name] for name in takers)
                raise table_rule(f"{field!r} applies to {files} only (format {' or '.join(map(repr, takers))}), "
                                 f"not to format {self.format!r}", value=field)  # fmt: skip
        return self

    def spec(self) -> PretrainedSpec:
        """The row as ``bpe.pretrained.published.load_pretrained`` takes it."""
        return PretrainedSpec(self.label, self.name or self.path or "", self.format, self.pattern, self.normalizer)


class Bootstrap(Table):
    resamples: PositiveInt = 1000
    confidence: in_interval(0.5, 1) = 0.95  # type: ignore[valid-type]


class Report(Table):
    """How the report draws its tables; nothing here changes a result."""

    vocab_size: PositiveInt | None = None  # default: the middle one of all vocabulary sizes
    #: which run size stands for ``vocab_size`` in a cell: the requested size closest to it, or the size
    #: whose reached vocabulary (``vocab_size_reached``) is closest to it
    match: Literal["requested", "reached"] = "requested"
    #: Petrov et al. 2023 mask tokenizer/language pairs with more than 10% <unk> tokens
    unk_threshold: in_interval(0, 1, closed_high=True) = 0.1  # type: ignore[valid-type]


class ExperimentConfig(Table):
    """A validated experiment config; ``source`` is the file it came from."""

    name: Annotated[str, AfterValidator(_run_name)]
    description: str = ""
    seed: NonNegativeInt = 0  # numpy's generators take seeds >= 0
    seeds: Annotated[tuple[NonNegativeInt, ...], Strict(False), Field(min_length=1), AfterValidator(distinct)] = (
        DEFAULT_SEEDS
    )
    corpora: Annotated[tuple[Annotated[str, Field(min_length=1)], ...], Strict(False), Field(min_length=1),
                       AfterValidator(distinct)]  # fmt: skip
    tokenizers: Annotated[tuple[TokenizerEntry, ...], Strict(False)] = ()
    multilingual: Annotated[tuple[MultilingualEntry, ...], Strict(False)] = ()
    production: Annotated[tuple[ProductionName, ...], Strict(False)] = ()
    pretrained: Annotated[tuple[PretrainedEntry, ...], Strict(False)] = ()
    max_train_chars: PositiveInt | None = None
    #: a training-data axis: every [[tokenizers]] row is trained on the first documents of the corpus's
    #: training text up to each of these many characters (as ``max_train_chars`` caps it), so the prefixes
    #: are nested.  A row's ``options`` string then ends in ``train_chars=N``.
    train_chars: Annotated[tuple[PositiveInt, ...], Strict(False), Field(min_length=1),
                           AfterValidator(distinct)] | None = None  # fmt: skip
    metrics: MetricSelection | None = None  # None: every metric not optional
    extra_metrics: Annotated[tuple[MetricName, ...], Strict(False), AfterValidator(distinct)] = ()  # optional ones
    bootstrap: Bootstrap = Bootstrap()
    report: Report = Report()
    downstream: Downstream | None = None
    _source: str = PrivateAttr("<config>")

    @model_validator(mode="after")
    def _rows_with_distinct_labels(self) -> ExperimentConfig:
        if not self.trained_entries and not self.pretrained_rows:
            raise table_rule("expected at least one tokenizer: [[tokenizers]], [[multilingual]] or [[pretrained]] "
                             "tables, or production", value="tokenizers")  # fmt: skip
        labels = [entry.label for entry in self.trained_entries] + [row.label for row in self.pretrained_rows]
        duplicates = sorted({label for label in labels if labels.count(label) > 1})
        if duplicates:
            raise table_rule(f"tokenizers: label {duplicates[0]!r} is used twice: give each entry a distinct `label`",
                             value=duplicates[0])  # fmt: skip
        if self.metrics is not None and not any(METRICS[name].deterministic for name in self.metrics):
            measured = ", ".join(name for name in METRICS if not METRICS[name].deterministic)
            raise table_rule(f"metrics: select at least one metric of results.* ({measured} are wall-clock "
                             "figures, written to costs.csv only)", value="metrics")  # fmt: skip
        if self.train_chars is not None and self.max_train_chars is not None:
            raise table_rule("give max_train_chars or train_chars, not both: each train_chars value is the "
                             "max_train_chars of its rows", value="max_train_chars")  # fmt: skip
        if self.train_chars is not None and not self.tokenizers:
            raise table_rule("train_chars: the axis applies to [[tokenizers]] rows, and the config has none",
                             value="train_chars")  # fmt: skip
        for position, entry in enumerate(self.tokenizers):
            if bpe.family_class(entry.kind).facts.training_input == "parallel":
                raise table_rule(f"tokenizers[{position}]: {entry.kind} trains on several languages at once, with "
                                 "their parallel dev sentences: put it in a [[multilingual]] table",
                                 value=entry.kind)  # fmt: skip
        if self.train_chars is not None and self.multilingual:
            raise table_rule("train_chars: the axis applies to [[tokenizers]] rows; a [[multilingual]] table sets "
                             "the size of its sample with its own train_chars", value="train_chars")  # fmt: skip
        named = [name for name in (*(self.metrics or ()), *self.extra_metrics) if name in LANGUAGE_MODEL_METRICS]
        if named:
            raise table_rule(f"metrics: {named[0]!r} comes from the language models of a [downstream] table, "
                             "not from the metric selection: remove it here and add [downstream]",
                             value=named[0])  # fmt: skip
        sizes = sorted({size for entry in self.trained_entries for size in entry.vocab_sizes})
        if self.downstream is not None:
            missing = [size for size in self.downstream.vocab_sizes or () if size not in sizes]
            if missing:
                raise table_rule(f"downstream.vocab_sizes: {missing[0]} is not a vocabulary size of any "
                                 f"[[tokenizers]] entry (they have: {', '.join(map(str, sizes)) or 'none'})",
                                 value=missing[0])  # fmt: skip
        if self.report.vocab_size is not None and sizes and self.report.vocab_size not in sizes:
            raise table_rule(f"report.vocab_size = {self.report.vocab_size} is not a vocabulary size of any "
                             f"[[tokenizers]] entry (they have: {', '.join(map(str, sizes))})",
                             value=self.report.vocab_size)  # fmt: skip
        return self

    @property
    def source(self) -> str:
        return self._source

    @property
    def trained_entries(self) -> tuple[TokenizerEntry, ...]:
        """Every trained row: the ``[[tokenizers]]`` tables, then one per sampling exponent of each
        ``[[multilingual]]`` table (``MultilingualEntry.rows``)."""
        return self.tokenizers + tuple(row for entry in self.multilingual for row in entry.rows())

    def mixture_of(self, label: str) -> MultilingualEntry | None:
        """The multilingual row labelled ``label`` (one ``alpha``), None for any other row."""
        return next((row for entry in self.multilingual for row in entry.rows() if row.label == label), None)

    def with_data_root_corpora(self, data_root: Path | None) -> ExperimentConfig:
        """This config with ``flores-200:all`` in ``corpora`` replaced by one ``flores-200:<code>`` per FLORES-200
        file of ``data_root`` (``corpora.flores``); the config itself when it names none."""
        from corpora.flores import expand_entries

        corpora = expand_entries(self.corpora, data_root)
        if corpora == self.corpora:
            return self
        expanded = self.model_copy(update={"corpora": corpora})
        expanded._source = self._source
        return expanded

    def corpus_source(self, entry: str) -> str | Path:
        """A ``corpora`` entry as ``corpora.load_corpus`` takes it: a shipped spec id, or the spec file
        it names.  An entry is a file when it ends in ``.toml`` or holds a ``/``; a relative path is
        looked up in the config file's folder, then in the current directory."""
        if not entry.endswith(".toml") and "/" not in entry:
            return entry
        path = Path(entry).expanduser()
        if path.is_absolute():
            return path
        folder = Path(self._source).parent if Path(self._source).is_file() else None
        places = ([("the config folder", folder / path)] if folder is not None else []) + [
            ("the current directory", Path.cwd() / path)
        ]
        for _where, candidate in places:
            if candidate.is_file():
                return candidate
        looked = ", then ".join(f"{where} ({candidate})" for where, candidate in places)
        raise BenchmarkError(f"{self._source}: corpora: spec file {entry!r} not found; looked in {looked}",
                             code="missing_file", value=entry, field="corpora")  # fmt: skip

    @property
    def pretrained_rows(self) -> tuple[PretrainedSpec, ...]:
        """Every tokenizer evaluated as is: the ``production`` names, then the ``[[pretrained]]`` tables."""
        return tuple(PretrainedSpec(name, name) for name in self.production) + tuple(
            entry.spec() for entry in self.pretrained
        )

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
        sizes = sorted({size for entry in self.trained_entries for size in entry.vocab_sizes})
        return sizes[len(sizes) // 2] if sizes else 1

    def to_json(self) -> dict[str, Any]:
        """Everything that determines the results, as one flat object: the input of ``fingerprint``
        and the manifest's ``config``.  Its shape is fixed: changing it changes every run identity, so
        ``pretrained`` and ``train_chars`` appear only in configs that have them, and ``seeds`` only in
        configs with a row that samples (the only rows it changes)."""
        identity = {
            "name": self.name,
            "description": self.description,
            "seed": self.seed,
            "corpora": self.corpora,
            "tokenizers": [entry.identity() for entry in self.tokenizers],
            "production": self.production,
            "max_train_chars": self.max_train_chars,
            "metrics": self.metrics,
            # present only when set, so that a config without it keeps its identity
            **({"extra_metrics": self.extra_metrics} if self.extra_metrics else {}),
            "bootstrap_resamples": self.bootstrap_resamples,
            "confidence": self.confidence,
            "report_vocab_size": self.report_vocab_size,
        }
        if self.train_chars is not None:
            identity["train_chars"] = self.train_chars
        if self.multilingual:
            identity["multilingual"] = [entry.identity() for entry in self.multilingual]
        if self.pretrained:
            identity["pretrained"] = [entry.model_dump(exclude_none=True) for entry in self.pretrained]
        if any(entry.samples for entry in self.trained_entries):
            identity["seeds"] = self.seeds
        if self.downstream is not None:
            identity["downstream"] = self.downstream.model_dump(mode="json")
        return identity

    @property
    def language_model_sizes(self) -> tuple[int, ...]:
        """The vocabulary sizes of the trained rows that get a language model (``[downstream]``)."""
        if self.downstream is None:
            return ()
        return self.downstream.vocab_sizes or (self.report_vocab_size,)

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
            raise BenchmarkError(f"{path}: no such config file", code="missing_file", value=path)
        return path
    shipped = CONFIG_DIR / f"{target}.toml"
    if not shipped.is_file():
        names = ", ".join(sorted(p.stem for p in CONFIG_DIR.glob("*.toml")))
        raise BenchmarkError(f"unknown config {target!r}: give a path to a TOML file or one of: {names}",
                             code="unknown_config", value=target)  # fmt: skip
    return shipped


def load_config(name_or_path: str | None = None, tokenizers: Sequence[str] = ()) -> ExperimentConfig:
    """The config ``name_or_path`` (a shipped name or a TOML file), with one more ``[[pretrained]]`` row per
    ``tokenizers`` entry (``tokbench run --tokenizer``: ``tokenizer_option``), validated as the file's own."""
    path = resolve_config_path(name_or_path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"{path}: cannot read config ({exc})", code="unreadable_file", value=path) from None
    except tomllib.TOMLDecodeError as exc:
        raise BenchmarkError(f"{path}: not valid TOML ({exc})", code="not_toml", value=path) from None
    if tokenizers:
        given = raw.get("pretrained", [])
        raw["pretrained"] = [*(given if isinstance(given, list) else [given]), *map(tokenizer_option, tokenizers)]
    return parse_config(raw, source=str(path))


def tokenizer_option(value: str) -> dict[str, str]:
    """A ``--tokenizer`` value as a ``[[pretrained]]`` table: ``NAME`` (one tokbench knows: ``cl100k``) or
    ``PATH``, then optional ``,key=value`` settings of the table (``label``, ``format``, ``pattern``,
    ``normalizer``): ``tokenizers/gpt2.tiktoken,pattern=gpt2,label=gpt2``."""
    target, *settings = value.split(",")
    table = {"name": target} if target in bpe.PRODUCTION or target in PUBLISHED_FILES else {"path": target}
    for setting in settings:
        key, equals, given = setting.partition("=")
        if not equals or key not in ("label", "format", "pattern", "normalizer"):
            raise BenchmarkError(f"--tokenizer {value}: expected NAME or PATH, then ,key=value settings with key "
                                 f"label, format, pattern or normalizer; got {setting!r}", code="bad_tokenizer_option",
                                 value=setting)  # fmt: skip
        table[key] = given
    return table


def parse_config(raw: dict[str, Any], source: str = "<config>") -> ExperimentConfig:
    """Validate a parsed TOML document; ``source`` names it in messages."""

    def fail(problem: Problem) -> BenchmarkError:
        message = f"{source}: {problem.path}: {problem.message}" if problem.path else f"{source}: {problem.message}"
        return BenchmarkError(message, code=problem.kind, value=problem.value, field=problem.path)

    config = validate(ExperimentConfig, raw, fail)
    config._source = source
    return config
