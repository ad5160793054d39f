"""The one engine behind every reproduction file: read it, load its columns' tokenizers, read each language's
FLORES-200 text, count tokens (languages in forked worker processes), measure and compare.

``reproduce(table, data_root, languages)`` returns a ``Reproduction``; ``needs(table, data_root)`` says what a
table needs and what the data root holds (`tokbench reproduce --list`); ``published(table)`` reads its
published figures.  Nothing here is specific to a paper: what a measurement computes is in
``benchmarks.reproductions.measures``, what a table recomputes in its file.
"""

from __future__ import annotations

import csv
import multiprocessing
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

import bpe
from benchmarks.errors import BenchmarkError
from benchmarks.reproductions import Reproduction, Row, UnreproducibleLanguages, compact_codes, load_column
from benchmarks.reproductions.measures import JOINS, MEASURES, WORDS, Counts, Unit, WordSplitter
from benchmarks.reproductions.model import PUBLISHED_DIR, ReproductionFile
from bpe.pretrained.published import PretrainedSpec
from corpora.errors import CorpusError
from corpora.flores import REFERENCE_LANGUAGE, read_flores
from corpora.spec import FLORES_CODE


@dataclass(frozen=True)
class Published:
    """A table's published figures: ``values[(column, FLORES code, metric)]``, and the English name of each
    code where a file gives names."""

    values: dict[tuple[str, str, str], int | float]
    names: dict[str, str] = field(default_factory=dict)

    @property
    def languages(self) -> list[str]:
        """The codes with a published figure, in the files' order."""
        return list(dict.fromkeys(code for _, code, _ in self.values))


def published(table: ReproductionFile) -> Published:
    """Every figure of the table's published files (all their rows, not only the columns tokbench loads)."""
    values: dict[tuple[str, str, str], int | float] = {}
    names: dict[str, str] = {}
    for entry in table.published:
        value_type = MEASURES[entry.metric].value_type
        with (PUBLISHED_DIR / entry.file).open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                if entry.languages == "rows":
                    code = row[entry.key]
                    if entry.names is not None:
                        names[code] = row[entry.names]
                    cells = [(column, code, value) for column, value in row.items()
                             if column not in (None, entry.key, entry.names)]  # fmt: skip
                else:  # one row per tokenizer, one column per language
                    cells = [(row[entry.key], column, value) for column, value in row.items()
                             if column and FLORES_CODE.match(column)]  # fmt: skip
                for column, code, value in cells:
                    if isinstance(value, str) and value != "":  # a blank cell: no figure
                        values[(column, code, entry.metric)] = value_type(value)
    return Published(values, names)


def published_label(table: ReproductionFile) -> str:
    """The published files as one name: ``petrov2023.csv``, ``toksuite2025_{fertility,parity,pcw}.csv``."""
    files = sorted(entry.file for entry in table.published)
    if len(files) == 1:
        return files[0]
    prefix = _shared_start(files)
    rests = [file[len(prefix) :] for file in files]
    suffix = _shared_start([rest[::-1] for rest in rests])[::-1]
    return f"{prefix}{{{','.join(rest[: len(rest) - len(suffix)] for rest in rests)}}}{suffix}"


def _shared_start(texts: list[str]) -> str:
    """The characters all of ``texts`` start with (the first and last in sorted order differ first)."""
    first, last = min(texts), max(texts)
    length = next((i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), min(len(first), len(last)))
    return first[:length]


def needs(table: ReproductionFile, data_root: Path | None) -> list[str]:
    """What the table needs, one line each, with what ``data_root`` holds."""
    lines = [f"languages: {table.languages.needs}"]
    if data_root is not None:
        held = sorted(path.stem for path in (data_root / "flores").glob("*.txt"))
        lines.append(f"  in the data root: {compact_codes(held) if held else 'none'}")
    for file in sorted({spec.source for spec in _specs(table) if "/" in spec.source}):
        state = "" if data_root is None else (" (present)" if (data_root / file).is_file() else " (missing)")
        lines.append(f"file: {file}{state}")
    if table.packages:
        lines.append(f"package: {', '.join(table.packages)}")
    return lines


def _specs(table: ReproductionFile) -> list[PretrainedSpec]:
    return [column.loading() for column in table.tokenizers]


@dataclass(frozen=True)
class _Language:
    """A language's text as the table reads it, and what is counted of it."""

    sentences: list[str]  # the lines of the table's splits, in order (stripped when the table says so)
    text: str | None  # the joined text, when the table joins
    pipeline: Any  # the word splitter's pipeline for the language; None without words
    units: frozenset[Unit]


def reproduce(
    table: ReproductionFile,
    data_root: Path,
    languages: Sequence[str] | None = None,
    *,
    progress: bool = False,
    jobs: int | None = None,
) -> Reproduction:
    """Every (column, language, metric) of the table over the data root's FLORES files.

    ``languages`` (FLORES codes) defaults to the file's ``languages.codes``: every ``flores/*.txt`` of the data
    root, or its list.  A language that cannot be reproduced (no file, wrong number of lines, no word
    pipeline) is a BenchmarkError naming each such language on its own line: a partial reproduction is never
    a success.  Without ``languages``, a language of the data root with no word pipeline is left out and
    noted.  A tokenizer file missing from the data root is reported in ``notes`` ("not available:
    tokenizers/<file> missing").  ``progress`` shows a tqdm bar over languages on stderr.  ``jobs`` worker
    processes count the languages (default: the usable cores; forked, so the loaded tokenizers are
    inherited); the values do not depend on it.
    """
    flores = data_root / "flores"
    if not flores.is_dir():
        raise BenchmarkError(f"{data_root}: no flores/ folder (expected flores/<lang>.txt, FLORES-200 dev+devtest)")
    if languages is None and table.languages.codes != "data-root":
        languages = table.languages.codes
    codes = sorted(path.stem for path in flores.glob("*.txt")) if languages is None else list(dict.fromkeys(languages))
    texts, skipped, failures = _read_languages(table, flores, codes, requested=languages is not None)
    tasks = dict(texts)
    reference_metric = table.needs_reference
    if reference_metric is not None and REFERENCE_LANGUAGE not in texts \
            and any(code != REFERENCE_LANGUAGE for code in texts):  # fmt: skip
        try:
            tasks[REFERENCE_LANGUAGE] = _reference_text(table, flores)
        except CorpusError as exc:
            failures.append(f"{REFERENCE_LANGUAGE}: needed for {reference_metric}: {exc}")
    if failures:
        raise UnreproducibleLanguages(failures)
    if not texts:
        raise BenchmarkError(f"{data_root}: no FLORES language to reproduce (flores/ is empty)")
    figures = published(table)
    result = Reproduction(notes=skipped, tolerance=table.compare.tolerance)
    columns, tokenizers = _load_columns(table, data_root, result.notes)
    counts = _count_languages(tasks, tokenizers, WORDS[table.words], progress,
                              _usable_cores() if jobs is None else jobs)  # fmt: skip
    decimals = table.compare.decimals
    for label, (specials, key) in columns.items():
        for code in texts:
            for metric in table.metrics:
                measure = MEASURES[metric]
                if measure.reference and code == REFERENCE_LANGUAGE:
                    continue  # the reference language against itself is 1 by definition
                reference = counts[REFERENCE_LANGUAGE][key] if measure.reference else None
                value = measure.compute(counts[code][key], reference, specials)
                reproduced = value if decimals is None else round(value, decimals)
                result.rows.append(Row(label, code, figures.values.get((label, code, metric)), reproduced, metric))
    return result  # values without a published figure: counted by the command (``Reproduction.unpublished``)


def _read_languages(
    table: ReproductionFile, flores: Path, codes: list[str], *, requested: bool
) -> tuple[dict[str, _Language], list[str], list[str]]:
    """(the text of each language that can be reproduced, the languages left out with why, the languages that
    cannot be reproduced with why).  Every file is read before anything is counted, so a bad one fails fast;
    a language with no word pipeline fails when it was asked for, and is left out when it was merely found."""
    splitter = WORDS[table.words]
    units = frozenset(MEASURES[metric].counts for metric in table.metrics)
    texts: dict[str, _Language] = {}
    skipped: list[str] = []
    failures: list[str] = []
    for code in codes:
        path = flores / f"{code}.txt"
        if not path.is_file():
            failures.append(f"{code}: not reproducible: no {path}")
            continue
        try:
            sentences, text = _read(table, path)
        except CorpusError as exc:
            failures.append(f"{code}: not reproducible: {exc}")
            continue
        try:
            pipeline = splitter.pipeline(code) if splitter is not None else None
        except BenchmarkError as exc:
            (failures if requested else skipped).append(f"{code}: not reproducible: {exc}")
            continue
        texts[code] = _Language(sentences, text, pipeline, units)
    return texts, skipped, failures


def _reference_text(table: ReproductionFile, flores: Path) -> _Language:
    """The reference language's text, counted only for the measurements that compare with it; a CorpusError
    when its file is missing or is no FLORES file."""
    path = flores / f"{REFERENCE_LANGUAGE}.txt"
    if not path.is_file():
        raise CorpusError(f"no {path}")
    sentences, _ = _read(table, path)
    units = frozenset(MEASURES[metric].counts for metric in table.metrics if MEASURES[metric].reference)
    return _Language(sentences, None, None, units)


def _load_columns(
    table: ReproductionFile, data_root: Path, notes: list[str]
) -> tuple[dict[str, tuple[int, _Key]], dict[_Key, bpe.Tokenizer]]:
    """(column label -> (its special tokens per call, its tokenizer's key), key -> tokenizer) of the columns that
    load; why the others do not goes to ``notes``.  Columns of one tokenizer share it."""
    columns: dict[str, tuple[int, _Key]] = {}
    tokenizers: dict[_Key, bpe.Tokenizer] = {}
    for column in table.tokenizers:
        spec = column.loading()
        key = _key(spec)
        tokenizer = tokenizers[key] if key in tokenizers else load_column(spec, data_root, notes)
        if tokenizer is not None:
            tokenizers[key], columns[column.label] = tokenizer, (column.specials_per_call, key)
    return columns, tokenizers


def _read(table: ReproductionFile, path: Path) -> tuple[list[str], str | None]:
    """The sentences of the table's splits of one FLORES file, and their joined text (None: not joined)."""
    splits = read_flores(path)
    files = [[line.strip() for line in splits[split]] if table.text.strip else splits[split]
             for split in table.text.splits]  # fmt: skip
    text = None if table.text.join == "none" else JOINS[table.text.join](files)
    return [line for lines in files for line in lines], text


#: a tokenizer's identity apart from its column label: columns sharing one (Petrov et al.'s GPT-2, r50k_base
#: and RoBERTa) are the same tokenizer, so each text is encoded once for them
_Key = tuple[str, str | None, str | None, str | None]


def _key(spec: PretrainedSpec) -> _Key:
    return (spec.source, spec.format, spec.pattern, spec.normalizer)


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # respects taskset and container CPU sets
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def count_language(
    language: _Language, tokenizers: Mapping[_Key, bpe.Tokenizer], splitter: WordSplitter | None
) -> dict[_Key, Counts]:
    """One language's token counts with each tokenizer, of what its measurements encode (a normalizer such
    as Qwen's NFC applies inside the tokenizer's ``encode``)."""
    words = splitter.split(language.sentences, language.pipeline) if splitter and "words" in language.units else None
    counts: dict[_Key, Counts] = {}
    for key, tokenizer in tokenizers.items():
        counts[key] = Counts(
            text=len(tokenizer.encode(language.text)) if language.text is not None and "text" in language.units
            else None,
            words=None if words is None else [len(tokenizer.encode(word)) for word in words],
            sentences=[len(tokenizer.encode(sentence)) for sentence in language.sentences]
            if "sentences" in language.units else None,
        )  # fmt: skip
    return counts


#: what the workers count, set in the parent just before they fork (inherited, never pickled)
_worker_state: tuple[Mapping[str, _Language], Mapping[_Key, bpe.Tokenizer], WordSplitter | None] | None = None


def _count_in_worker(code: str) -> tuple[str, dict[_Key, Counts]]:
    assert _worker_state is not None, "worker forked without its languages and tokenizers"
    languages, tokenizers, splitter = _worker_state
    return code, count_language(languages[code], tokenizers, splitter)


def _count_languages(
    languages: Mapping[str, _Language],
    tokenizers: Mapping[_Key, bpe.Tokenizer],
    splitter: WordSplitter | None,
    progress: bool,
    jobs: int,
) -> dict[str, dict[_Key, Counts]]:
    """``count_language`` of every language, on ``jobs`` forked workers when there is more than one language
    and the platform can fork, else in this process."""
    global _worker_state
    counts: dict[str, dict[_Key, Counts]] = {}
    workers = min(jobs, len(languages))
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        bar = tqdm(languages.items(), desc="languages", unit=" lang", disable=not progress, file=sys.stderr)
        for code, language in bar:
            counts[code] = count_language(language, tokenizers, splitter)
        return counts
    _worker_state = (languages, tokenizers, splitter)
    try:
        # the workers fork before the bar exists: tqdm's monitor thread must not be running at fork time
        with (
            multiprocessing.get_context("fork").Pool(workers) as pool,
            tqdm(total=len(languages), desc="languages", unit=" lang", disable=not progress, file=sys.stderr) as bar,
        ):
            for code, language_counts in pool.imap_unordered(_count_in_worker, languages):
                counts[code] = language_counts
                bar.update()
    finally:
        _worker_state = None
    return counts
