"""The benchmark text: mixed Turkish / Russian / Korean / English, built from real sources, at any size.

Per language, the distinct source text is every UD ``# text =`` sentence of the data root (all
treebank files: train, dev and test; never FLORES, which is evaluation text) plus the language's
embedded package corpus (``corpora`` spec ``embedded-<lang>``, read from its pip package).  Each
language gets an equal share of the requested UTF-8 bytes; its lines are cycled in order until the
share is filled, and the four languages are interleaved line by line so that any prefix is mixed.

Repetition inflates pre-token counts but not pre-token types: the merge phase of a trainer depends
mostly on types, so on a repeated corpus it is relatively cheaper than on fresh text of the same
size, for every implementation alike.  ``describe`` reports the repetition factor per language.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from itertools import cycle
from pathlib import Path

from benchmarks.errors import BenchmarkError

#: FLORES code -> (UD folder, short code of the embedded corpus spec)
LANGUAGES = {"tur_Latn": ("tr", "tur"), "rus_Cyrl": ("ru", "rus"), "kor_Hang": ("ko", "kor"), "eng_Latn": ("en", "eng")}


@dataclass(frozen=True)
class SourceText:
    """The distinct lines of one language and their UTF-8 size."""

    language: str
    lines: list[str]
    n_bytes: int


def source_texts(data_root: Path) -> list[SourceText]:
    """Distinct source lines per language (UD sentences + embedded package corpus), in a fixed order."""
    from corpora.loader import load_corpus

    texts = []
    for language, (ud_folder, short) in LANGUAGES.items():
        files = sorted((data_root / "ud" / ud_folder).glob("*.conllu"))
        if not files:
            raise BenchmarkError(f"{data_root / 'ud' / ud_folder}: no UD .conllu files (is {data_root} a data root?)")
        lines = [
            line.removeprefix("# text = ")
            for path in files
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.startswith("# text = ")
        ]
        with warnings.catch_warnings():  # repairs of the embedded text are reported by `tokbench corpora`
            warnings.simplefilter("ignore")
            corpus = load_corpus(f"embedded-{short}", data_root)
        for role in corpus.roles():
            lines += [line for document in corpus.documents(role) for line in document.text.splitlines()]
        lines = [line for line in lines if line.strip()]
        texts.append(SourceText(language, lines, sum(len(line.encode("utf-8")) + 1 for line in lines)))
    return texts


def build_mixed(sources: list[SourceText], total_bytes: int) -> list[str]:
    """About ``total_bytes`` of text (counting one newline per line), an equal share per language."""
    share = total_bytes // len(sources)
    per_language = []
    for source in sources:
        lines, size = [], 0
        for line in cycle(source.lines):
            if size >= share:
                break
            lines.append(line)
            size += len(line.encode("utf-8")) + 1
        per_language.append(lines)
    mixed = []
    for i in range(max(map(len, per_language))):
        mixed += [lines[i] for lines in per_language if i < len(lines)]
    return mixed


def write_mixed(data_root: Path, total_bytes: int, path: Path) -> Path:
    """Write the mixed text (one line per text) to ``path`` unless it is already there."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text("\n".join(build_mixed(source_texts(data_root), total_bytes)) + "\n", encoding="utf-8")
        tmp.replace(path)
    return path


def describe(sources: list[SourceText], total_bytes: int) -> str:
    """A sentence per language: distinct bytes and the repetition factor to reach its share."""
    share = total_bytes / len(sources)
    return "; ".join(f"{s.language}: {s.n_bytes / 1e6:.2f} MB distinct, x{share / s.n_bytes:.2g}" for s in sources)


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()
