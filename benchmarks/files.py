"""Files of the experiment layer: atomic writes, the tokenizer cache, and the results table.

* Every file a run, report or baseline writes goes through ``atomic_path`` (a
  temporary file beside the target, renamed onto it at the end), so an error never
  leaves a half-written file; it is ``bpe``'s own (``bpe.base``), which saved
  tokenizers use too (the library stands alone; this layer builds on it).
* The cache root is ``corpora.loader.cache_home()`` (``$TOKBENCH_CACHE``, default
  ``~/.cache/tokbench``); trained tokenizers live in its ``tokenizers/`` folder.
* ``results.parquet`` / ``results.csv`` hold one tidy row per metric value
  (``RESULT_COLUMNS``), unique by ``KEY_COLUMNS``; ``write_results`` and
  ``read_results`` are the only code that writes and reads them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks.errors import BenchmarkError
from benchmarks.metrics import METRICS
from bpe.base import atomic_path as atomic_path  # re-exported: the experiment layer writes through it
from bpe.base import atomic_write_text as atomic_write_text
from corpora.loader import cache_home

#: Columns of results.parquet / results.csv, in order (one tidy row per metric value).
RESULT_COLUMNS = [
    "corpus",  # corpus spec id, e.g. ud-tur
    "language",  # ISO 639-3 + script, e.g. tur_Latn
    "tokenizer",  # row label, e.g. char-bpe, spm-unigram, cl100k
    "kind",  # family name (word, char, char-bpe, ...), pretrained name (cl100k) or pretrained file format (hf)
    "row_type",  # family | reference | production
    "vocab_size",  # requested vocabulary size (<NA> for production rows)
    "options",  # canonical option string, e.g. "end_of_word=separate,pretokenizer=unicode"
    "eval_set",  # corpus role evaluated: test | eval, or reference (morphology) | train (vocab_size_reached)
    "reference",  # morpheme reference name for morphology rows, else ""
    "metric",  # a key of benchmarks.metrics.METRICS
    "value",
    "ci_low",  # 95% bootstrap CI (NaN where not applicable)
    "ci_high",
    "n",  # items aggregated (sentences, words or references items)
]
#: The columns that identify a result row (and a baseline row of `tokbench check`); the table's sort order.
KEY_COLUMNS = ["corpus", "tokenizer", "vocab_size", "options", "eval_set", "reference", "metric"]
#: Text columns: read as text even when empty; only "" is missing, never "NA".
TEXT_COLUMNS = ["corpus", "language", "tokenizer", "kind", "row_type", "options", "eval_set", "reference", "metric"]
ROW_TYPES = ("family", "reference", "production")


#: the option name under which a row's value of the config's ``train_chars`` axis appears in ``options``
TRAIN_CHARS = "train_chars"


def parse_options(options: str) -> dict[str, str]:
    """A result row's ``options`` string (``"name=value,..."``, as ``units.Unit.options_string`` writes
    it) as name -> value text; the one reader of that string."""
    return dict(option.partition("=")[::2] for option in options.split(",")) if options else {}


def train_chars_of(options: str) -> int | None:
    """The ``train_chars`` value in a result row's options string (None when the run has no such axis)."""
    value = parse_options(options).get(TRAIN_CHARS)
    return None if value is None else int(value)


def without_train_chars(options: str) -> str:
    """A result row's options string without its ``train_chars`` entry: the options of its tokenizer."""
    return ",".join(option for option in options.split(",") if option.partition("=")[0] != TRAIN_CHARS)


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
                             "digits, '.', '_', '-')")  # fmt: skip
    return path


def check_writable_dir(path: Path, what: str) -> None:
    """Fail, before any work, when ``path`` cannot be or become a directory this process writes to
    (``what`` names it in the message: "run directory (--out)")."""
    if path.exists() and not path.is_dir():
        raise BenchmarkError(f"{path}: the {what} exists and is not a directory")
    existing = next((parent for parent in (path.absolute(), *path.absolute().parents) if parent.exists()), None)
    if existing is None or not existing.is_dir():
        raise BenchmarkError(f"{path}: the {what} cannot be created: {existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise BenchmarkError(f"{path}: the {what} is not writable ({existing}: permission denied or read-only)")


def tokenizer_cache_dir() -> Path:
    """Where trained tokenizers are cached across runs."""
    return cache_home() / "tokenizers"


def write_results(out_dir: Path, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Write tidy rows as results.parquet and results.csv, sorted by ``KEY_COLUMNS``."""
    frame = pd.DataFrame(rows, columns=RESULT_COLUMNS)
    frame["vocab_size"] = frame["vocab_size"].astype("Int64")
    frame["n"] = frame["n"].astype("int64")
    frame["reference"] = frame["reference"].fillna("")
    frame = frame.sort_values(KEY_COLUMNS, na_position="first", kind="stable").reset_index(drop=True)
    duplicated = frame.duplicated(KEY_COLUMNS)
    if duplicated.any():
        raise BenchmarkError(f"internal error: duplicate result rows for {frame[duplicated].iloc[0].to_dict()}")
    with atomic_path(out_dir / "results.parquet") as tmp:
        frame.to_parquet(tmp, index=False)
    atomic_write_text(out_dir / "results.csv", frame.to_csv(index=False))
    return frame


def read_results(run_dir: Path) -> pd.DataFrame:
    """results.parquet (or results.csv when the parquet is absent), checked: every column of
    ``RESULT_COLUMNS`` with its dtype, known metrics and row types, each key (``KEY_COLUMNS``) once,
    one kind and options per label."""
    parquet, csv = run_dir / "results.parquet", run_dir / "results.csv"
    path = parquet if parquet.is_file() else csv
    if not path.is_file():
        raise BenchmarkError(f"{run_dir}: no results.parquet or results.csv: not a finished `tokbench run` directory")
    try:
        if path == parquet:
            if "schema_version" in pq.read_schema(path).names:  # an exported dataset: its schema is declared
                check_exported_schema(path)
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_csv(path, dtype=dict.fromkeys(TEXT_COLUMNS, str), keep_default_na=False, na_values=[""])
    except (OSError, ValueError) as exc:  # pyarrow's errors derive from these
        raise BenchmarkError(f"{path}: cannot read results ({exc})") from None
    missing = [column for column in RESULT_COLUMNS if column not in frame.columns]
    if missing:
        raise BenchmarkError(f"{path}: missing column(s) {', '.join(missing)} (expected {', '.join(RESULT_COLUMNS)})")
    if frame.empty:
        raise BenchmarkError(f"{path}: no result rows")
    frame = frame[RESULT_COLUMNS].copy()
    for column in TEXT_COLUMNS:
        frame[column] = frame[column].fillna("").astype(str)
    try:
        for column in ("value", "ci_low", "ci_high"):
            frame[column] = pd.to_numeric(frame[column]).astype("float64")
        frame["vocab_size"] = pd.to_numeric(frame["vocab_size"]).astype("Int64")
        frame["n"] = pd.to_numeric(frame["n"]).astype("Int64")
    except (ValueError, TypeError) as exc:
        raise BenchmarkError(f"{path}: a numeric column holds a non-number ({exc})") from None
    unknown = sorted(set(frame["metric"]) - set(METRICS))
    if unknown:
        raise BenchmarkError(f"{path}: unknown metric {unknown[0]!r} (known: see METRICS in benchmarks/metrics.py)")
    bad_types = sorted(set(frame["row_type"]) - set(ROW_TYPES))
    if bad_types:
        raise BenchmarkError(f"{path}: row_type {bad_types[0]!r} is not one of {', '.join(ROW_TYPES)}")
    repeated = frame[frame.duplicated(KEY_COLUMNS, keep=False)]
    if not repeated.empty:
        named = ", ".join(f"{column}={repeated.iloc[0][column]!r}" for column in KEY_COLUMNS)
        raise BenchmarkError(f"{path}: {len(repeated)} rows share one key ({named}); each key must appear once")
    tokenizer_options = frame["options"].map(without_train_chars)  # one label, several train_chars values
    identities = frame.assign(options=tokenizer_options).groupby("tokenizer")[["kind", "row_type", "options"]].nunique()
    ambiguous = identities[(identities > 1).any(axis=1)].index.tolist()
    if ambiguous:
        raise BenchmarkError(
            f"{path}: tokenizer label {ambiguous[0]!r} names several kinds/options; each label must be one tokenizer"
        )
    return frame


#: The results schema, declared once as an Arrow schema: the columns of ``RESULT_COLUMNS`` with their types.
#: ``tokbench export-results`` writes exactly this schema plus ``schema_version``; ``read_results`` checks a
#: folder that carries ``schema_version`` against it (a published dataset), field by field.
RESULTS_SCHEMA_VERSION = 1
RESULTS_SCHEMA = pa.schema(
    [pa.field(column, pa.string(), nullable=False) for column in RESULT_COLUMNS[:5]]
    + [pa.field("vocab_size", pa.int64())]  # null for production rows
    + [pa.field(column, pa.string(), nullable=False) for column in ("options", "eval_set", "reference", "metric")]
    + [pa.field(column, pa.float64()) for column in ("value", "ci_low", "ci_high")]  # NaN where undefined
    + [pa.field("n", pa.int64(), nullable=False)]
)
EXPORTED_SCHEMA = RESULTS_SCHEMA.append(pa.field("schema_version", pa.int32(), nullable=False))
assert RESULTS_SCHEMA.names == RESULT_COLUMNS


def results_table(frame: pd.DataFrame) -> pa.Table:
    """Checked results (``read_results``) as an Arrow table of ``EXPORTED_SCHEMA``."""
    frame = frame[RESULT_COLUMNS].assign(schema_version=RESULTS_SCHEMA_VERSION)
    return pa.Table.from_pandas(frame, schema=EXPORTED_SCHEMA, preserve_index=False)


def check_exported_schema(path: Path) -> None:
    """Fail, naming the field, when a parquet file with a ``schema_version`` column is not ``EXPORTED_SCHEMA``."""
    try:
        schema = pq.read_schema(path)
        versions = set(pq.read_table(path, columns=["schema_version"]).column(0).to_pylist())
    except (OSError, ValueError) as exc:
        raise BenchmarkError(f"{path}: cannot read results ({exc})") from None
    if versions != {RESULTS_SCHEMA_VERSION}:
        raise BenchmarkError(f"{path}: schema_version {sorted(versions, key=str)} is not supported "
                             f"(this tokbench reads version {RESULTS_SCHEMA_VERSION})")  # fmt: skip
    for expected in EXPORTED_SCHEMA:
        if expected.name not in schema.names:
            raise BenchmarkError(f"{path}: missing field {expected.name!r} ({expected.type})")
        found = schema.field(expected.name)
        if not found.type.equals(expected.type):
            raise BenchmarkError(f"{path}: field {expected.name!r} is {found.type}, expected {expected.type}")
    extra = [name for name in schema.names if name not in EXPORTED_SCHEMA.names]
    if extra:
        raise BenchmarkError(f"{path}: unknown field {extra[0]!r} (schema version {RESULTS_SCHEMA_VERSION})")
