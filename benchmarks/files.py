"""Files of the experiment layer: atomic writes, the tokenizer cache, and the results table.

* Every file a run, report or baseline writes goes through ``atomic_path`` (a
  temporary file beside the target, renamed onto it at the end), so an error never
  leaves a half-written file; it is ``bpe``'s own (``bpe.atomic``), which saved
  tokenizers use too (the library stands alone; this layer builds on it).
* The cache root is ``corpora.loader.cache_home()`` (``$TOKBENCH_CACHE``, default
  ``~/.cache/tokbench``); trained tokenizers live in its ``tokenizers/`` folder.
* ``results.parquet`` / ``results.csv`` hold one tidy row per metric value
  (``results_schema``: typed columns, one per family option), unique by ``key_columns``; ``write_results`` and
  ``read_results`` are the only code that writes and reads them; ``read_run_manifest`` is the one reader of a run
  folder's ``manifest.json``.
"""

from __future__ import annotations

import csv
import json
import math
import os
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks.errors import BenchmarkError
from benchmarks.measure.metrics import METRICS
from bpe.atomic import atomic_path as atomic_path  # re-exported: the experiment layer writes through it
from bpe.atomic import atomic_write_text as atomic_write_text
from bpe.options import options_by_name
from corpora.loader import cache_home

#: The results schema, declared once (``results_schema``): the fixed columns below, with one typed column per
#: family option (``option_fields``) after ``vocab_size``.  A tidy row per metric value.
RESULTS_SCHEMA_VERSION = 2
#: Prefix of an option's column: ``opt_end_of_word`` holds a row's ``end_of_word`` (null: not set, the family default).
OPTION_PREFIX = "opt_"
#: the column of a row's value of the config's ``train_chars`` axis (null on a run without it)
TRAIN_CHARS = "train_chars"
_HEAD_FIELDS = [
    pa.field("corpus", pa.string(), nullable=False),  # corpus spec id, e.g. ud-tur
    pa.field("language", pa.string(), nullable=False),  # ISO 639-3 + script, e.g. tur_Latn
    pa.field("tokenizer", pa.string(), nullable=False),  # row label, e.g. char-bpe, spm-unigram, cl100k
    # family name (word, char, char-bpe, ...), pretrained name (cl100k) or pretrained file format (hf)
    pa.field("kind", pa.string(), nullable=False),
    pa.field("row_type", pa.string(), nullable=False),  # family | reference | production
    pa.field("vocab_size", pa.int64()),  # requested vocabulary size (null for production rows)
]
_TAIL_FIELDS = [
    pa.field(TRAIN_CHARS, pa.int64()),  # the row's value of the config's train_chars axis (null: no axis)
    # corpus role evaluated: test | eval, or reference (morphology) | train (vocab_size_reached, vocab_overlap)
    pa.field("eval_set", pa.string(), nullable=False),
    pa.field("reference", pa.string(), nullable=False),  # morpheme reference name for morphology rows, else ""
    pa.field("partner", pa.string(), nullable=False),  # the other tokenizer of a cross-unit metric, else ""
    pa.field("metric", pa.string(), nullable=False),  # a key of benchmarks.measure.metrics.METRICS
    pa.field("value", pa.float64()),  # NaN where undefined
    pa.field("ci_low", pa.float64()),  # 95% bootstrap CI (NaN where not applicable)
    pa.field("ci_high", pa.float64()),
    pa.field("n", pa.int64(), nullable=False),  # items aggregated (sentences, words or references items)
]
#: Text columns: read as text even when empty; only "" is missing, never "NA".
TEXT_COLUMNS = ["corpus", "language", "tokenizer", "kind", "row_type", "eval_set", "reference", "partner", "metric"]
ROW_TYPES = ("family", "reference", "production")
_ARROW_TYPES = {bool: pa.bool_(), int: pa.int64(), float: pa.float64(), str: pa.string()}
#: pandas dtypes of the typed columns: nullable, so an unset option is <NA>, not NaN or ""
_PANDAS_TYPES = {pa.bool_(): "boolean", pa.int64(): "Int64", pa.float64(): "Float64", pa.string(): "string"}


def _python_type(annotation: Any) -> type | None:
    """The scalar type an option declaration holds (``Annotated``, ``Optional`` and ``Literal`` unwrapped)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _python_type(typing.get_args(annotation)[0])
    if origin is typing.Literal:
        kinds = {type(value) for value in typing.get_args(annotation)}
        return kinds.pop() if len(kinds) == 1 else None
    if origin in (typing.Union, types.UnionType):
        kinds = {_python_type(arg) for arg in typing.get_args(annotation) if arg is not type(None)}
        return kinds.pop() if len(kinds) == 1 else None
    return annotation if annotation in _ARROW_TYPES else None


def option_fields() -> list[pa.Field]:
    """One nullable column per option of any family (``bpe.options``), sorted by name, typed from its
    declaration: a new family's new option is a new column.  An option declared with two types is an error."""
    fields = []
    for name, declarations in sorted(options_by_name().items()):
        kinds = {family: _python_type(declaration.annotation) for family, declaration in declarations.items()}
        if None in kinds.values() or len(set(kinds.values())) != 1:
            raise BenchmarkError(f"option {name!r}: declared as {kinds} by its families; a results column needs one "
                                 "of bool, int, float, str", code="internal_error", value=name)  # fmt: skip
        fields.append(pa.field(OPTION_PREFIX + name, _ARROW_TYPES[next(iter(kinds.values()))]))
    return fields


def results_schema() -> pa.Schema:
    """The Arrow schema of the results: fixed columns, one per family option, ``train_chars``, the rest."""
    return pa.schema(_HEAD_FIELDS + option_fields() + _TAIL_FIELDS)


def exported_schema() -> pa.Schema:
    """What ``tokbench export-results`` writes: ``results_schema`` plus ``schema_version``."""
    return results_schema().append(pa.field("schema_version", pa.int32(), nullable=False))


def option_columns() -> list[str]:
    return [field.name for field in option_fields()]


def result_columns() -> list[str]:
    """Columns of the results, in order."""
    return results_schema().names


def key_columns() -> list[str]:
    """The columns that identify a result row (and a baseline row of `tokbench check`); the table's sort order."""
    return ["corpus", "tokenizer", "vocab_size", *option_columns(), TRAIN_CHARS, "eval_set", "reference", "partner",
            "metric"]  # fmt: skip


def is_missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def option_values(row: Mapping[str, Any]) -> dict[str, Any]:
    """The options a result row sets (name without prefix -> typed value), sorted by name."""
    return {column[len(OPTION_PREFIX):]: _plain(row[column]) for column in sorted(row)
            if column.startswith(OPTION_PREFIX) and not is_missing(row[column])}  # fmt: skip


def _plain(value: Any) -> Any:
    """A numpy scalar (what a pandas column yields) as the Python value it holds."""
    return value.item() if hasattr(value, "item") else value


def options_label(row: Mapping[str, Any], *, train_chars: bool = True) -> str:
    """A row's options for a human (``"end_of_word=separate,train_chars=100000"``: by name, ``train_chars``
    last), from its typed columns; "" when it sets none."""
    parts = [f"{name}={value}" for name, value in option_values(row).items()]
    if train_chars and not is_missing(row.get(TRAIN_CHARS)):
        parts.append(f"{TRAIN_CHARS}={int(row[TRAIN_CHARS])}")
    return ",".join(parts)


def train_chars_of(row: Mapping[str, Any]) -> int | None:
    """A result row's ``train_chars`` (None on a run without that axis)."""
    value = row.get(TRAIN_CHARS)
    return None if is_missing(value) else int(value)


def typed_frame(rows: list[dict[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """Rows (dicts or a frame) as a frame of every column of ``results_schema``, each with its dtype."""
    frame = pd.DataFrame(rows)
    for schema_field in results_schema():
        name = schema_field.name
        if name not in frame.columns:
            frame[name] = "" if name in TEXT_COLUMNS else None
        if name in TEXT_COLUMNS:
            frame[name] = frame[name].fillna("").astype(str)
        elif schema_field.type == pa.float64() and name in ("value", "ci_low", "ci_high"):
            frame[name] = pd.to_numeric(frame[name]).astype("float64")
        elif name == "n":
            frame[name] = pd.to_numeric(frame[name]).astype("int64")
        else:
            frame[name] = frame[name].astype(object).where(frame[name].notna(), None).astype(
                _PANDAS_TYPES[schema_field.type])
    return frame[results_schema().names]


def trained_tokenizer_path(run_dir: Path, corpus: str, label: str, vocab_size: int,
                           train_chars: int | None = None) -> Path:  # fmt: skip
    """Where a run keeps the tokenizer of a trained row (``RUN_DIR/tokenizers/<corpus>/<label>-<size>.json``;
    on a run with a ``train_chars`` axis, ``<label>-<size>-<train_chars>chars.json``)."""
    suffix = f"-{train_chars}chars" if train_chars is not None else ""
    return inside(run_dir, "tokenizers", corpus, f"{label}-{vocab_size}{suffix}.json")


def inside(root: Path, *parts: str) -> Path:
    """``root`` joined with ``parts`` (names built from user strings: labels, corpus ids, cache keys),
    refused unless it resolves inside ``root``: a run writes nothing outside its folder and the cache."""
    path = root.joinpath(*parts)
    if not path.resolve().is_relative_to(root.resolve()):
        raise BenchmarkError(f"{'/'.join(parts)}: a name that leads outside {root} (names must be plain: letters, "
                             "digits, '.', '_', '-')", code="unsafe_name", value="/".join(parts))  # fmt: skip
    return path


def check_writable_dir(path: Path, what: str) -> None:
    """Fail, before any work, when ``path`` cannot be or become a directory this process writes to
    (``what`` names it in the message: "run directory (--out)")."""
    if path.exists() and not path.is_dir():
        raise BenchmarkError(f"{path}: the {what} exists and is not a directory", code="not_a_directory", value=path)
    existing = next((parent for parent in (path.absolute(), *path.absolute().parents) if parent.exists()), None)
    if existing is None or not existing.is_dir():
        raise BenchmarkError(f"{path}: the {what} cannot be created: {existing} is not a directory",
                             code="unwritable_folder", value=path)  # fmt: skip
    if not os.access(existing, os.W_OK | os.X_OK):
        raise BenchmarkError(f"{path}: the {what} is not writable ({existing}: permission denied or read-only)",
                             code="unwritable_folder", value=path)  # fmt: skip


def tokenizer_cache_dir() -> Path:
    """Where trained tokenizers are cached across runs."""
    return cache_home() / "tokenizers"


def write_results(out_dir: Path, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Write tidy rows as results.parquet and results.csv, sorted by ``key_columns``; both hold the option
    columns some row sets (``read_results`` restores the others as null), so a run without options stays narrow."""
    frame = typed_frame(rows)
    keys = key_columns()
    frame = frame.sort_values(keys, na_position="first", kind="stable").reset_index(drop=True)
    duplicated = frame.duplicated(keys)
    if duplicated.any():
        raise BenchmarkError(f"internal error: duplicate result rows for {frame[duplicated].iloc[0].to_dict()}",
                             code="internal_error")  # fmt: skip
    unset = [column for column in option_columns() if frame[column].isna().all()]
    frame = frame.drop(columns=unset)
    schema = pa.schema([field for field in results_schema() if field.name not in unset])
    with atomic_path(out_dir / "results.parquet") as tmp:
        pq.write_table(pa.Table.from_pandas(frame, schema=schema, preserve_index=False), tmp)
    atomic_write_text(out_dir / "results.csv", frame.to_csv(index=False))
    return frame


def read_results(run_dir: Path) -> pd.DataFrame:
    """results.parquet (or results.csv when the parquet is absent), checked: every column of
    ``result_columns`` with its dtype (an option column a file lacks is null), known metrics and row types,
    each key (``key_columns``) once, one kind and options per label."""
    parquet, csv = run_dir / "results.parquet", run_dir / "results.csv"
    path = parquet if parquet.is_file() else csv
    if not path.is_file():
        raise BenchmarkError(f"{run_dir}: no results.parquet or results.csv: not a finished `tokbench run` directory",
                             code="not_a_run_folder", value=run_dir)  # fmt: skip
    schema = results_schema()
    try:
        if path == parquet:
            if "schema_version" in pq.read_schema(path).names:  # an exported dataset: its schema is declared
                check_exported_schema(path)
            frame = pd.read_parquet(path)
        else:
            header = pd.read_csv(path, nrows=0).columns
            dtypes = {field.name: "string" if field.name in TEXT_COLUMNS else _PANDAS_TYPES[field.type]
                      for field in schema if field.name in header and field.name not in ("value", "ci_low", "ci_high")}
            frame = pd.read_csv(path, dtype=dtypes, keep_default_na=False, na_values=[""])
    except (OSError, ValueError, TypeError) as exc:  # pyarrow's errors derive from these
        # the schema check's own error keeps its code (an unsupported version, a missing field)
        kind = (exc.code, exc.value, exc.field) if isinstance(exc, BenchmarkError) else ("unreadable_file", path, None)
        raise BenchmarkError(f"{path}: cannot read results ({exc})", code=kind[0], value=kind[1],
                             field=kind[2]) from None  # fmt: skip
    if "options" in frame.columns:
        raise BenchmarkError(f"{path}: results of schema version 1 (one 'options' text column); this tokbench reads "
                             f"version {RESULTS_SCHEMA_VERSION} (one typed column per option): run again or "
                             "export with a tokbench of version 1", code="unsupported_version", value=1)  # fmt: skip
    required = [name for name in schema.names if name not in option_columns()]
    missing = [column for column in required if column not in frame.columns]
    if missing:
        raise BenchmarkError(f"{path}: missing column(s) {', '.join(missing)} (expected {', '.join(required)})",
                             code="missing_column", value=missing[0])  # fmt: skip
    unknown_columns = [column for column in frame.columns if column not in schema.names and column != "schema_version"]
    if unknown_columns:
        raise BenchmarkError(f"{path}: unknown column {unknown_columns[0]!r} (not an option of any family: "
                             f"expected {', '.join(schema.names)})", code="unknown_column",
                             value=unknown_columns[0])  # fmt: skip
    if frame.empty:
        raise BenchmarkError(f"{path}: no result rows", code="empty_results", value=path)
    try:
        frame = typed_frame(frame)
    except (ValueError, TypeError) as exc:
        raise BenchmarkError(f"{path}: a column holds a value of the wrong type ({exc})", code="wrong_type",
                             value=path) from None  # fmt: skip
    frame["n"] = frame["n"].astype("Int64")
    unknown = sorted(set(frame["metric"]) - set(METRICS))
    if unknown:
        raise BenchmarkError(f"{path}: unknown metric {unknown[0]!r} (known: see METRICS in "
                             "benchmarks/measure/metrics/)", code="unknown_metric", value=unknown[0])  # fmt: skip
    bad_types = sorted(set(frame["row_type"]) - set(ROW_TYPES))
    if bad_types:
        raise BenchmarkError(f"{path}: row_type {bad_types[0]!r} is not one of {', '.join(ROW_TYPES)}",
                             code="not_allowed", value=bad_types[0], field="row_type")  # fmt: skip
    keys = key_columns()
    repeated = frame[frame.duplicated(keys, keep=False)]
    if not repeated.empty:
        named = ", ".join(f"{column}={repeated.iloc[0][column]!r}" for column in keys
                          if not is_missing(repeated.iloc[0][column]))  # fmt: skip
        raise BenchmarkError(f"{path}: {len(repeated)} rows share one key ({named}); each key must appear once",
                             code="duplicate_rows", value=len(repeated))  # fmt: skip
    identity = ["kind", "row_type", *option_columns()]  # one label, several train_chars values
    identities = frame.groupby("tokenizer")[identity].nunique(dropna=False)
    ambiguous = identities[(identities > 1).any(axis=1)].index.tolist()
    if ambiguous:
        raise BenchmarkError(
            f"{path}: tokenizer label {ambiguous[0]!r} names several kinds/options; each label must be one tokenizer",
            code="ambiguous_label",
            value=ambiguous[0],
        )
    return frame


def read_run_manifest(run_dir: Path) -> dict[str, Any]:
    """A run folder's ``manifest.json``, checked: a JSON object with a ``config`` object, each part the report,
    ``compare`` and ``export-results`` read of the shape they expect (a run folder is input: it may have been
    edited).  The one reader of it."""
    path = run_dir / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchmarkError(f"{path}: missing: not a finished `tokbench run` directory", code="missing_file",
                             value=path) from None  # fmt: skip
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"{path}: cannot read ({exc})", code="unreadable_file", value=path) from None
    except json.JSONDecodeError as exc:
        raise BenchmarkError(f"{path}: not JSON (line {exc.lineno}: {exc.msg})", code="not_json", value=path) from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("config"), dict):
        raise BenchmarkError(f'{path}: expected a JSON object with a "config" object', code="wrong_type",
                             field="config")  # fmt: skip
    for name in ("corpora", "pretrained", "parallel", "packages", "timings"):
        if name in manifest and not isinstance(manifest[name], dict | None):
            raise BenchmarkError(f"{path}: field {name} must be a JSON object, got {type(manifest[name]).__name__}",
                                 code="wrong_type", value=manifest[name], field=name)  # fmt: skip
    for corpus, facts in (manifest.get("corpora") or {}).items():
        if not isinstance(facts, dict):
            raise BenchmarkError(f"{path}: field corpora.{corpus} must be a JSON object, got {type(facts).__name__}",
                                 code="wrong_type", value=facts, field=f"corpora.{corpus}")  # fmt: skip
    return manifest


def results_table(frame: pd.DataFrame) -> pa.Table:
    """Checked results (``read_results``) as an Arrow table of ``exported_schema`` (every option column)."""
    frame = typed_frame(frame).assign(schema_version=RESULTS_SCHEMA_VERSION)
    return pa.Table.from_pandas(frame, schema=exported_schema(), preserve_index=False)


def check_exported_schema(path: Path) -> None:
    """Fail, naming the field, when a parquet file with a ``schema_version`` column is not ``exported_schema``
    (an option column it lacks is allowed: a dataset exported before a family's new option reads it as null)."""
    try:
        schema = pq.read_schema(path)
        versions = set(pq.read_table(path, columns=["schema_version"]).column(0).to_pylist())
    except (OSError, ValueError) as exc:
        raise BenchmarkError(f"{path}: cannot read results ({exc})", code="unreadable_file", value=path) from None
    if versions != {RESULTS_SCHEMA_VERSION}:
        raise BenchmarkError(f"{path}: schema_version {sorted(versions, key=str)} is not supported "
                             f"(this tokbench reads version {RESULTS_SCHEMA_VERSION})", code="unsupported_version",
                             value=sorted(versions, key=str))  # fmt: skip
    expected_schema = exported_schema()
    for expected in expected_schema:
        if expected.name not in schema.names:
            if expected.name.startswith(OPTION_PREFIX):
                continue
            raise BenchmarkError(f"{path}: missing field {expected.name!r} ({expected.type})", code="missing_column",
                                 value=expected.name)  # fmt: skip
        found = schema.field(expected.name)
        if not found.type.equals(expected.type):
            raise BenchmarkError(f"{path}: field {expected.name!r} is {found.type}, expected {expected.type}",
                                 code="wrong_type", value=str(found.type), field=expected.name)  # fmt: skip
    extra = [name for name in schema.names if name not in expected_schema.names]
    if extra:
        raise BenchmarkError(f"{path}: unknown field {extra[0]!r} (schema version {RESULTS_SCHEMA_VERSION})",
                             code="unknown_column", value=extra[0])  # fmt: skip


def csv_quoting(fields: Any) -> int:
    """The ``csv`` quoting for a table whose text cells are ``fields``: the default (quote only what needs it),
    or every text cell when one holds a carriage return, which the ``csv`` module and pandas leave unquoted
    and readers then take for the end of a line (a vocabulary entry ``\r``)."""
    carriage_return = any("\r" in field for field in fields if isinstance(field, str))
    return csv.QUOTE_NONNUMERIC if carriage_return else csv.QUOTE_MINIMAL


def frame_csv(frame: pd.DataFrame) -> str:
    """``frame`` as CSV text (pandas' ``to_csv``), every text cell quoted when one holds a carriage return."""
    text = frame.select_dtypes(exclude=["number", "bool"])
    return frame.to_csv(index=False, quoting=csv_quoting(text.to_numpy().ravel()))
