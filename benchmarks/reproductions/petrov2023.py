"""Petrov et al. 2023: token counts of FLORES-200 dev+devtest, recomputed with the paper's definition.

Petrov, La Malfa, Torr and Bibi, "Language Model Tokenizers Introduce Unfairness Between Languages"
(NeurIPS 2023).  Their count (``compute/compute_tokenizations.py`` of
AleksandarPetrov/tokenization-fairness), per language::

    s = " ".join(dev.split("\\n") + devtest.split("\\n"))
    count = len(tokenizer.encode(s))          # no special tokens

over the FLORES-200 dev (997 lines) and devtest (1,012 lines) files; each file ends with a
newline, whose empty string is kept, so ``s`` holds a double space between the two halves and ends
with a space.  A data root's ``flores/<lang>.txt`` is dev followed by devtest, one sentence per
line, so the two files are rebuilt from its first 997 and remaining 1,012 lines.  Their figures ship
in ``benchmarks/published/`` (source and license in the README there).

Columns (11 of their 27), loaded as a config's pretrained rows are (``bpe.pretrained.published.load_pretrained``):
GPT-2, r50k_base and RoBERTa from ``tokenizers/gpt2.tiktoken`` (same ranks and GPT-2 pattern;
RoBERTa's ``<s>``/``</s>`` are special tokens their count leaves out); p50k_base and p50k_edit from
``tokenizers/p50k_base.tiktoken`` with GPT-2's pattern (p50k_edit only adds fill-in-the-middle
specials); LLAMA from ``tokenizers/llama2-tokenizer.model``; cl100k_base by name; Qwen from
``tokenizers/qwen.tiktoken`` with Qwen's pattern after NFC normalization (as Qwen's tokenizer does);
ByT5 = UTF-8 bytes; CANINE and UTF-32 = Unicode code points.  The other 16 columns need tokenizers
tokbench cannot load offline (WordPiece and unigram models it has no file for).
"""

from __future__ import annotations

import csv
import importlib.resources
import multiprocessing
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

import bpe
from benchmarks.errors import BenchmarkError
from benchmarks.reproductions import Reproduction, Row, UnreproducibleLanguages, compact_codes, load_column
from bpe.pretrained.published import PretrainedSpec

NAME = "petrov2023"
CITATION = (
    'Petrov, La Malfa, Torr, Bibi (2023), "Language Model Tokenizers Introduce Unfairness Between Languages", '
    "NeurIPS 2023"
)

DEV_LINES, DEVTEST_LINES = 997, 1012
PUBLISHED_FILE = PUBLISHED = "petrov2023.csv"
DEFINITION = (
    'Per language, their one string: " ".join(dev.split("\\n") + devtest.split("\\n")) over FLORES-200 '
    f"dev ({DEV_LINES} lines) and devtest ({DEVTEST_LINES}), read from DATA/flores/<lang>.txt (dev then devtest); "
    "count = len(encode(s)), no special tokens. Columns: GPT-2, r50k_base, RoBERTa (gpt2.tiktoken, GPT-2 pattern), "
    "p50k_base, p50k_edit (p50k_base.tiktoken, GPT-2 pattern), LLAMA (llama2-tokenizer.model), cl100k_base, "
    "Qwen (qwen.tiktoken, Qwen pattern, NFC first), ByT5 (UTF-8 bytes), CANINE and UTF-32 (code points). "
    "Not loadable offline (no file): the other 16 of their 27 columns."
)

#: Petrov et al.'s column -> how tokbench loads that tokenizer (relative paths: in the data root)
PETROV_TOKENIZERS: tuple[PretrainedSpec, ...] = (
    PretrainedSpec("GPT-2", "tokenizers/gpt2.tiktoken", format="tiktoken", pattern="gpt2"),
    PretrainedSpec("r50k_base", "tokenizers/gpt2.tiktoken", format="tiktoken", pattern="gpt2"),
    PretrainedSpec("RoBERTa", "tokenizers/gpt2.tiktoken", format="tiktoken", pattern="gpt2"),
    PretrainedSpec("p50k_base", "tokenizers/p50k_base.tiktoken", format="tiktoken", pattern="gpt2"),
    PretrainedSpec("p50k_edit", "tokenizers/p50k_base.tiktoken", format="tiktoken", pattern="gpt2"),
    PretrainedSpec("LLAMA", "tokenizers/llama2-tokenizer.model", format="sentencepiece"),
    PretrainedSpec("cl100k_base", "cl100k"),
    PretrainedSpec("Qwen", "tokenizers/qwen.tiktoken", format="tiktoken", pattern="qwen", normalizer="nfc"),
    PretrainedSpec("ByT5", "bytes"),
    PretrainedSpec("CANINE", "chars"),
    PretrainedSpec("UTF-32", "chars"),
)
#: Petrov et al.'s columns tokbench has no file or loader for
NOT_LOADABLE = (
    "Glot500", "SeamlessM4T", "NLLB", "GottBERT", "CamemBERT", "PhoBERT", "RoCBert", "XLM-RoBERTa", "M2M100",
    "MBart50", "mT5", "FlanT5", "BLOOM", "ArabicBERT", "MuRIL", "BERT Japanese",
)


@dataclass(frozen=True)
class Published:
    """Petrov et al.'s counts: ``counts[(column, flores code)]`` and the English name of each code."""

    counts: dict[tuple[str, str], int]
    names: dict[str, str]


def published_petrov2023() -> Published:
    text = (importlib.resources.files("benchmarks") / "published" / PUBLISHED_FILE).read_text(encoding="utf-8")
    counts: dict[tuple[str, str], int] = {}
    names: dict[str, str] = {}
    for row in csv.DictReader(text.splitlines()):
        names[row["flores"]] = row["language"]
        for spec in PETROV_TOKENIZERS:
            counts[(spec.label, row["flores"])] = int(row[spec.label])
    return Published(counts, names)


def petrov_join(files: Sequence[Sequence[str]]) -> str:
    """Petrov et al.'s one string from the lines of several files (FLORES dev, then devtest):
    ``" ".join(dev.split("\\n") + devtest.split("\\n"))``, where each file's trailing newline adds an
    empty string, so every file's lines are followed by one empty string."""
    return " ".join(line for lines in files for line in [*lines, ""])


def petrov_text(flores_file: Path) -> str:
    """The one string Petrov et al. tokenize for a language, from a dev+devtest FLORES file."""
    lines = flores_file.read_text(encoding="utf-8").split("\n")
    if lines[-1] == "":  # the file's own trailing newline
        lines.pop()
    if len(lines) != DEV_LINES + DEVTEST_LINES:
        raise BenchmarkError(
            f"{flores_file}: {len(lines):,} lines, expected {DEV_LINES + DEVTEST_LINES:,} "
            f"(FLORES-200 dev, {DEV_LINES} lines, then devtest, {DEVTEST_LINES} lines)"
        )
    return petrov_join([lines[:DEV_LINES], lines[DEV_LINES:]])


def needs(data_root: Path | None) -> list[str]:
    """What this table needs, one line each, with what ``data_root`` holds."""
    files = sorted({spec.source for spec in PETROV_TOKENIZERS if "/" in spec.source})
    lines = [f"languages: any FLORES-200 code of the published table (flores/<lang>.txt, "
             f"{DEV_LINES + DEVTEST_LINES:,} lines)"]  # fmt: skip
    if data_root is not None:
        held = sorted(path.stem for path in (data_root / "flores").glob("*.txt"))
        lines.append(f"  in the data root: {compact_codes(held) if held else 'none'}")
    for file in files:
        state = "" if data_root is None else (" (present)" if (data_root / file).is_file() else " (missing)")
        lines.append(f"file: {file}{state}")
    return lines


def reproduce(
    data_root: Path, languages: Sequence[str] | None = None, *, progress: bool = False, jobs: int | None = None
) -> Reproduction:
    return reproduce_petrov2023(data_root, languages, progress=progress, jobs=jobs)


def reproduce_petrov2023(
    data_root: Path, languages: Sequence[str] | None = None, *, progress: bool = False, jobs: int | None = None
) -> Reproduction:
    """Count every (tokenizer, language) pair of the data root's FLORES files.

    ``languages`` (FLORES codes) defaults to every ``flores/*.txt`` of the data root.  A language that
    cannot be reproduced (no file, wrong number of lines) is a BenchmarkError naming each such language
    on its own line: a partial reproduction is never a success.  A tokenizer file missing from the data
    root is reported in ``notes`` ("not available: tokenizers/<file> missing").  ``progress`` shows a
    tqdm bar over languages on stderr.  ``jobs`` worker processes count the languages (default: the
    usable cores; forked, so the loaded tokenizers are inherited); the counts do not depend on it.
    """
    flores = data_root / "flores"
    if not flores.is_dir():
        raise BenchmarkError(f"{data_root}: no flores/ folder (expected flores/<lang>.txt, FLORES-200 dev+devtest)")
    published = published_petrov2023()
    codes = sorted(path.stem for path in flores.glob("*.txt")) if languages is None else list(dict.fromkeys(languages))
    paths: dict[str, Path] = {}
    failures: list[str] = []
    for code in codes:  # every file checked before anything is counted: a bad one fails fast
        path = flores / f"{code}.txt"
        if not path.is_file():
            failures.append(f"{code}: not reproducible: no {path}")
            continue
        try:
            petrov_text(path)
        except BenchmarkError as exc:
            failures.append(f"{code}: not reproducible: {exc}")
        else:
            paths[code] = path
    if failures:
        raise UnreproducibleLanguages(failures)
    if not paths:
        raise BenchmarkError(f"{data_root}: no FLORES language to reproduce (flores/ is empty)")
    result = Reproduction()
    columns: dict[str, _Key] = {}  # column label -> its tokenizer's key
    tokenizers: dict[_Key, bpe.Tokenizer] = {}
    for spec in PETROV_TOKENIZERS:
        key = _key(spec)
        tokenizer = tokenizers[key] if key in tokenizers else load_column(spec, data_root, result.notes)
        if tokenizer is not None:
            tokenizers[key], columns[spec.label] = tokenizer, key
    counts = _count_languages(paths, tokenizers, progress, _usable_cores() if jobs is None else jobs)
    for label, key in columns.items():
        for code in paths:
            result.rows.append(Row(label, code, published.counts.get((label, code)), counts[code][key]))
    return result


#: a tokenizer's identity apart from its column label: columns sharing one (GPT-2, r50k_base and RoBERTa;
#: p50k_base and p50k_edit; CANINE and UTF-32) are the same tokenizer, so each text is encoded once for them
_Key = tuple[str, str | None, str | None, str | None]


def _key(spec: PretrainedSpec) -> _Key:
    return (spec.source, spec.format, spec.pattern, spec.normalizer)


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # respects taskset and container CPU sets
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def count_language(path: Path, tokenizers: Mapping[_Key, bpe.Tokenizer]) -> dict[_Key, int]:
    """Their count, ``len(encode(s))``, of one language's joined string with each tokenizer
    (Qwen's normalizer composes the text to NFC first, inside its ``encode``)."""
    text = petrov_text(path)
    return {key: len(tokenizer.encode(text)) for key, tokenizer in tokenizers.items()}


#: the loaded tokenizers, set in the parent just before the workers fork (inherited, never pickled)
_worker_tokenizers: Mapping[_Key, bpe.Tokenizer] | None = None


def _count_in_worker(item: tuple[str, Path]) -> tuple[str, dict[_Key, int]]:
    assert _worker_tokenizers is not None, "worker forked without its tokenizers"
    code, path = item
    return code, count_language(path, _worker_tokenizers)


def _count_languages(
    paths: Mapping[str, Path], tokenizers: Mapping[_Key, bpe.Tokenizer], progress: bool, jobs: int
) -> dict[str, dict[_Key, int]]:
    """``count_language`` of every language, on ``jobs`` forked workers when there is more than one
    language and the platform can fork, else in this process."""
    global _worker_tokenizers
    counts: dict[str, dict[_Key, int]] = {}
    workers = min(jobs, len(paths))
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        for code, path in tqdm(paths.items(), desc="languages", unit=" lang", disable=not progress, file=sys.stderr):
            counts[code] = count_language(path, tokenizers)
        return counts
    _worker_tokenizers = tokenizers
    try:
        # the workers fork before the bar exists: tqdm's monitor thread must not be running at fork time
        with (
            multiprocessing.get_context("fork").Pool(workers) as pool,
            tqdm(total=len(paths), desc="languages", unit=" lang", disable=not progress, file=sys.stderr) as bar,
        ):
            for code, language_counts in pool.imap_unordered(_count_in_worker, paths.items()):
                counts[code] = language_counts
                bar.update()
    finally:
        _worker_tokenizers = None
    return counts
