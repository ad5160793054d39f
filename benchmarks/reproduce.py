"""Reproduce published token counts exactly, with the paper's own definition.

``petrov2023``: Petrov et al. 2023, "Language Model Tokenizers Introduce Unfairness Between
Languages" (NeurIPS 2023).  Their count (``compute/compute_tokenizations.py`` of
AleksandarPetrov/tokenization-fairness), per language::

    s = " ".join(dev.split("\\n") + devtest.split("\\n"))
    count = len(tokenizer.encode(s))          # no special tokens

over the FLORES-200 dev (997 lines) and devtest (1,012 lines) files; each file ends with a
newline, whose empty string is kept, so ``s`` holds a double space between the two halves and ends
with a space.  A data root's ``flores/<lang>.txt`` is dev followed by devtest, one sentence per
line, so the two files are rebuilt from its first 997 and remaining 1,012 lines.  The premium of a
language is its count divided by English's.  Their figures ship in ``benchmarks/published/``
(source and license in the README there).

The tokenizers are loaded as a config's pretrained rows are (``bpe.pretrained.load_pretrained``):
GPT-2 and Llama 2 from the data root's ``tokenizers/`` folder, ``cl100k`` by name, and the
``bytes`` (ByT5) and ``chars`` (UTF-32) baselines.
"""

from __future__ import annotations

import csv
import importlib.resources
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import bpe
from benchmarks.errors import BenchmarkError
from bpe.pretrained import PretrainedSpec, load_pretrained

DEV_LINES, DEVTEST_LINES = 997, 1012
PUBLISHED_FILE = "petrov2023.csv"

#: Petrov et al.'s column -> how tokbench loads that tokenizer (relative paths: in the data root)
PETROV_TOKENIZERS: tuple[PretrainedSpec, ...] = (
    PretrainedSpec("GPT-2", "tokenizers/gpt2.tiktoken", format="tiktoken", pattern="gpt2"),
    PretrainedSpec("LLAMA", "tokenizers/llama2-tokenizer.model", format="sentencepiece"),
    PretrainedSpec("cl100k_base", "cl100k"),
    PretrainedSpec("ByT5", "bytes"),
    PretrainedSpec("UTF-32", "chars"),
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


@dataclass(frozen=True)
class Row:
    tokenizer: str
    language: str
    published: int | None  # None: the paper has no figure for this language
    reproduced: int

    @property
    def difference(self) -> int | None:
        return None if self.published is None else self.reproduced - self.published


@dataclass
class Reproduction:
    rows: list[Row] = field(default_factory=list)
    #: what was not reproduced or not compared, and why
    notes: list[str] = field(default_factory=list)

    @property
    def compared(self) -> list[Row]:
        return [row for row in self.rows if row.published is not None]

    @property
    def differing(self) -> list[Row]:
        return [row for row in self.compared if row.difference != 0]


def reproduce_petrov2023(data_root: Path, languages: Sequence[str] | None = None) -> Reproduction:
    """Count every (tokenizer, language) pair of the data root's FLORES files.

    ``languages`` (FLORES codes) defaults to every ``flores/*.txt`` of the data root; a requested
    language without a file or a malformed file is an error when ``languages`` asked for it, a note
    otherwise; a tokenizer file missing from the data root is reported in ``notes``.
    """
    flores = data_root / "flores"
    if not flores.is_dir():
        raise BenchmarkError(f"{data_root}: no flores/ folder (expected flores/<lang>.txt, FLORES-200 dev+devtest)")
    published = published_petrov2023()
    codes = sorted(path.stem for path in flores.glob("*.txt")) if languages is None else list(dict.fromkeys(languages))
    result = Reproduction()
    texts: dict[str, str] = {}
    for code in codes:
        path = flores / f"{code}.txt"
        if not path.is_file():
            if languages is not None:  # asked for: never skipped
                raise BenchmarkError(f"{code}: requested with --languages, but not in the data root (no {path})")
            result.notes.append(f"{code}: not in the data root (no {path})")
            continue
        try:
            texts[code] = petrov_text(path)
        except BenchmarkError as exc:
            if languages is not None:
                raise BenchmarkError(f"{code} (requested with --languages): {exc}") from None
            result.notes.append(str(exc))
    if not texts:
        raise BenchmarkError(f"{data_root}: no FLORES language to reproduce ({'; '.join(result.notes) or 'none'})")
    for spec in PETROV_TOKENIZERS:
        try:
            tokenizer = load_pretrained(spec, [("data root", data_root)])
        except bpe.TokenizerError as exc:
            result.notes.append(str(exc))
            continue
        for code, text in texts.items():
            count = len(tokenizer.encode(text))
            result.rows.append(Row(spec.label, code, published.counts.get((spec.label, code)), count))
    unpublished = sorted({row.language for row in result.rows if row.published is None})
    if unpublished:
        result.notes.append(f"no published figure for {', '.join(unpublished)}: counted, not compared")
    return result
