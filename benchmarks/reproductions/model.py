"""What a reproduction file (``benchmarks/reproductions/<name>.toml``) declares, validated.

A file states the table's name, citation and definition, its published figures (CSV files in
``benchmarks/published/``), the tokenizer of each column (a config's ``[[pretrained]]`` table, with the
special tokens its encoder adds per call), the columns tokbench cannot load and why, the text (FLORES-200
splits and how they are joined), the words (none, or a blank spaCy pipeline's), the measurements (names of
``benchmarks.reproductions.measures.MEASURES``), the languages and the comparison.  A file that breaks a rule
is a ``ReproductionFileError`` naming the file, the field and the value given.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, BeforeValidator, Field, Strict, ValidationError

from benchmarks.errors import BenchmarkError
from benchmarks.reproductions.measures import JOINS, MEASURES, WORDS
from benchmarks.run.config import NonEmpty, PretrainedEntry
from bpe.pretrained.published import PretrainedSpec, published_file
from bpe.validation import NonNegativeInt, NonNegativeNumber, Table, distinct, first_problem
from corpora.flores import FloresSplit
from corpora.spec import FLORES_CODE

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

#: where the published figures are (shipped with the package)
PUBLISHED_DIR = Path(__file__).resolve().parents[1] / "published"
#: a table's name: also its file's name and the TABLE of `tokbench reproduce TABLE`
_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")

MeasureName = Literal[tuple(MEASURES)]  # type: ignore[valid-type]
WordsName = Literal[tuple(WORDS)]  # type: ignore[valid-type]
JoinName = Literal[("none", *JOINS)]  # type: ignore[valid-type]


class ReproductionFileError(BenchmarkError):
    """A reproduction file that cannot be used: ``file``, the ``field`` (``tokenizers[2].pattern``; None for
    the file as a whole), the ``value`` given there (None for a missing key) and the ``code`` of the problem
    (docs/errors.md: a validation kind, or ``table_rule`` for a rule joining several fields)."""

    def __init__(
        self, file: Path, field: str | None, message: str, value: Any = None, code: str = "table_rule"
    ) -> None:
        super().__init__(f"{file}: {field}: {message}" if field else f"{file}: {message}", code=code, value=value,
                         field=field)  # fmt: skip
        self.file = file


def _table_name(name: str) -> str:
    if not _NAME.match(name):
        raise ValueError(f"must be lower-case letters, digits, '_' or '-', starting with a letter, got {name!r}")
    return name


def _language_codes(value: Any) -> Any:
    """``"data-root"`` or a list of distinct FLORES-200 codes (one message for either, naming the entry)."""
    if value == "data-root":
        return value
    if not isinstance(value, list) or not value:
        raise ValueError(f'must be "data-root" or a list of FLORES-200 codes (e.g. ["tur_Latn"]), got {value!r}')
    for position, code in enumerate(value, start=1):
        if not isinstance(code, str) or not FLORES_CODE.match(code):
            raise ValueError(f"must list FLORES-200 codes (ISO 639-3 _ ISO 15924, e.g. tur_Latn): entry #{position} "
                             f"is {code!r}")  # fmt: skip
        if value.index(code) < position - 1:
            raise ValueError(f"must not repeat an entry: {code!r} is given twice")
    return tuple(value)


def _published_file(name: str) -> str:
    if not (PUBLISHED_DIR / name).is_file():
        shipped = ", ".join(sorted(path.name for path in PUBLISHED_DIR.glob("*.csv")))
        raise ValueError(f"must be a CSV file of benchmarks/published/ ({shipped}), got {name!r}")
    return name


class Column(PretrainedEntry):
    """One ``tokenizers`` entry: the tokenizer of a published column (``label``: the column's name, as in the
    published table), by name or as a data-root file, as a config's ``[[pretrained]]`` table."""

    label: NonEmpty
    #: special tokens the tokenizer's own encoder adds to every call (ByT5's ``</s>``): tokbench's encoders
    #: add none, so a measurement that counts them (TokSuite's parity) adds these
    specials_per_call: NonNegativeInt = 0

    def loading(self) -> PretrainedSpec:
        """The column as ``load_column`` takes it: a published file named by name (``gpt2``) as its path, so
        that the file's presence and pin are checked."""
        return published_file(self.spec())


class PublishedTable(Table):
    """One CSV file of published figures, all of one measurement."""

    file: Annotated[str, AfterValidator(_published_file)]
    metric: MeasureName
    #: "rows": one row per language (its FLORES code in column ``key``), one column per tokenizer;
    #: "columns": one row per tokenizer (its name in column ``key``), one column per language (FLORES codes)
    languages: Literal["rows", "columns"]
    key: NonEmpty
    #: the column holding each language's English name ("rows" only)
    names: NonEmpty | None = None


class Text(Table):
    """The text of a language: FLORES-200 splits of ``DATA/flores/<lang>.txt`` (dev then devtest)."""

    splits: Annotated[tuple[FloresSplit, ...], Strict(False), Field(min_length=1), AfterValidator(distinct)]
    #: each line stripped of surrounding white space before anything else
    strip: bool = False
    #: "petrov": one string per language, Petrov et al.'s (``corpora.flores.petrov_join``); "none": no joined
    #: text (the sentences only)
    join: JoinName = "none"


class Languages(Table):
    #: "data-root": every flores/<lang>.txt of the data root; else these FLORES-200 codes
    codes: Annotated[str | tuple[str, ...], BeforeValidator(_language_codes)] = "data-root"
    #: what the table needs of a language, in words (`tokbench reproduce --list`)
    needs: NonEmpty


class Compare(Table):
    #: the largest difference from a published value that still counts as reproduced (0: exact)
    tolerance: NonNegativeNumber = 0
    #: reproduced values are rounded to this many decimals, as the published ones are (none: not rounded)
    decimals: NonNegativeInt | None = None


class ReproductionFile(Table):
    """A published table and how to recompute it (see the module docstring)."""

    name: Annotated[str, AfterValidator(_table_name)]
    citation: NonEmpty
    #: the definition in words: `tokbench reproduce --help` shows it after the citation
    definition: NonEmpty
    text: Text
    words: WordsName = "none"
    #: the measurements, in the order of a language's rows
    metrics: Annotated[tuple[MeasureName, ...], Strict(False), Field(min_length=1), AfterValidator(distinct)]
    tokenizers: Annotated[tuple[Column, ...], Strict(False), Field(min_length=1)]
    #: columns of the published table tokbench cannot load, each with the reason
    not_loadable: dict[str, NonEmpty] = Field(default_factory=dict)
    published: Annotated[tuple[PublishedTable, ...], Strict(False), Field(min_length=1)]
    languages: Languages
    compare: Compare = Field(default_factory=Compare)
    #: packages the table needs beyond loading its tokenizers, in words (`tokbench reproduce --list`)
    packages: Annotated[tuple[NonEmpty, ...], Strict(False)] = ()

    @property
    def needs_reference(self) -> str | None:
        """The first measurement that compares a language with the reference language (parity), if any."""
        return next((metric for metric in self.metrics if MEASURES[metric].reference), None)


def read_reproduction(path: Path) -> ReproductionFile:
    """The reproduction file at ``path``, validated; a ReproductionFileError naming file, field and value."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReproductionFileError(path, None, "no such file", code="missing_file") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ReproductionFileError(path, None, f"not valid TOML ({exc})", code="not_toml") from None
    try:
        table = ReproductionFile.model_validate(data)
    except ValidationError as error:
        problem = first_problem(error)
        field, value = _located(error.errors(include_url=False)[0], data)
        raise ReproductionFileError(path, field, problem.message, value, code=problem.kind) from None
    _check_together(table, path)
    return table


def _check_together(table: ReproductionFile, path: Path) -> None:
    """The rules that join several fields, each reported at the field that breaks it."""
    if table.name != path.stem:
        raise ReproductionFileError(path, "name", f"must be the file's name ({path.stem!r}), got {table.name!r}",
                                    table.name)  # fmt: skip
    for position, metric in enumerate(table.metrics):
        measure = MEASURES[metric]
        if measure.counts == "text" and table.text.join == "none":
            raise ReproductionFileError(path, f"metrics[{position}]", f"{metric!r} counts one joined text per "
                                        "language: set text.join", metric)  # fmt: skip
        if measure.counts == "words" and table.words == "none":
            splitters = ", ".join(name for name in WORDS if name != "none")
            raise ReproductionFileError(path, f"metrics[{position}]", f"{metric!r} is measured over words: set "
                                        f"words (one of {splitters})", metric)  # fmt: skip
    labels: set[str] = set()
    for position, column in enumerate(table.tokenizers):
        if column.label in labels:
            raise ReproductionFileError(path, f"tokenizers[{position}].label", f"must name each column once, got "
                                        f"{column.label!r} a second time", column.label)  # fmt: skip
        labels.add(column.label)
    for label in table.not_loadable:
        if label in labels:
            raise ReproductionFileError(path, f"not_loadable.{label}", "names a column that tokenizers loads",
                                        label)  # fmt: skip
    for position, published in enumerate(table.published):
        where = f"published[{position}]"
        if published.metric not in table.metrics:
            raise ReproductionFileError(path, f"{where}.metric", f"must be one of metrics ({', '.join(table.metrics)}"
                                        f"), got {published.metric!r}", published.metric)  # fmt: skip
        header = published_header(published.file)
        for field in ("key", "names"):
            column = getattr(published, field)
            if column is not None and column not in header:
                raise ReproductionFileError(path, f"{where}.{field}", f"must be a column of {published.file} "
                                            f"({', '.join(header)}), got {column!r}", column)  # fmt: skip
        if published.names is not None and published.languages != "rows":
            raise ReproductionFileError(path, f"{where}.names", 'applies to languages = "rows" only',
                                        published.names)  # fmt: skip


def published_header(file: str) -> list[str]:
    """The column names of a published CSV file."""
    with (PUBLISHED_DIR / file).open(encoding="utf-8", newline="") as handle:
        return next(csv.reader(handle), [])


def _located(detail: Any, data: Any) -> tuple[str | None, Any]:
    """The field of a pydantic error as the file spells it (``tokenizers[2].pattern``) and the value given
    there (None when missing).  pydantic's location may end in a union member's tag or point at a table for
    a key the table does not know: the path stops at the last part the document holds, and an unknown key is
    found among the table's keys."""
    parts: list[str | int] = []
    value = data
    for part in detail["loc"]:
        if (isinstance(value, dict) and part in value) or (isinstance(value, list) and isinstance(part, int)):
            parts.append(part)
            value = value[part]  # type: ignore[index]
        elif detail["type"] == "missing" and isinstance(part, str):
            parts.append(part)
            value = None
            break
        else:
            break
    if detail["type"] == "unknown_key" and isinstance(value, dict):
        model = _model_at(ReproductionFile, parts)
        unknown = next((key for key in value if model is None or key not in model.model_fields), None)
        if unknown is not None:
            parts.append(unknown)
            value = value[unknown]
    field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in parts).lstrip(".")
    return field or None, value


def _model_at(model: type[BaseModel], parts: list[str | int]) -> type[BaseModel] | None:
    """The model class of the table at ``parts`` (list positions skipped), or None."""
    for part in parts:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        found = _first_model(field.annotation) if field is not None else None
        if found is None:
            return None
        model = found
    return model


def _first_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in get_args(annotation):
        found = _first_model(argument)
        if found is not None:
            return found
    return None
