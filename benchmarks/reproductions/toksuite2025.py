"""TokSuite (2025): intrinsic tokenizer metrics on FLORES-200 dev, recomputed with their definition.

"TokSuite" (arXiv 2512.20757; repository r-three/TokSuite, ``results/intrinsic_metrics/``, MIT).
Their ``toksuite/scripts/calculate_intrinsic_tokenizer_metrics.py``: text = FLORES-200 **dev** (the
first 997 lines of ``flores/<lang>.txt``), each line stripped; words = the tokens of a blank spaCy
pipeline for the language (``spacy.blank(code)``), each token's text stripped, empty ones dropped;
each word is encoded on its own.

- fertility = Σ_words (tokens(word) − specials per call) / number of words
- pcw (proportion of continued words) = share of words with tokens(word) − specials ≥ 2
- parity (non-English languages only) = mean over the 997 sentence pairs of
  tokens(sentence in L) / tokens(same sentence in English), special tokens INCLUDED.

Rows: GPT-2 (``tokenizers/gpt2.tiktoken``), Phi-3 (the Llama 2 sentencepiece model, no BOS), GPT-4o
(``tokenizers/o200k_base.tiktoken``, tiktoken's o200k pattern), Tekken (mistral-common's tekken, no
BOS/EOS) and ByT5 (UTF-8 bytes plus the one ``</s>`` ByT5's encoder appends per call).  Values are
compared rounded to 3 decimals, as published.  Deliberate difference from tokbench's own
``parity_mean_ratio_vs_eng``: this parity counts ByT5's ``</s>`` (one per sentence); tokbench's does not.
"""

from __future__ import annotations

import csv
import importlib.resources
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import bpe
from benchmarks.errors import BenchmarkError
from benchmarks.reproductions import Reproduction, Row, UnreproducibleLanguages, load_column
from benchmarks.run.parallel import ENGLISH
from bpe.pretrained.published import PretrainedSpec

NAME = "toksuite2025"
CITATION = 'TokSuite (2025), "TokSuite", arXiv 2512.20757 (r-three/TokSuite, results/intrinsic_metrics/)'
PUBLISHED = "toksuite2025_{fertility,parity,pcw}.csv"
DEV_LINES = 997
METRICS = ("fertility", "pcw", "parity")
DEFINITION = (
    f"FLORES-200 dev only (the first {DEV_LINES} lines of DATA/flores/<lang>.txt), each line stripped; words = "
    "spacy.blank(code) tokens, stripped, empty ones dropped; each word encoded alone. fertility = "
    "sum(tokens(word) - specials per call) / words; pcw = share of words with >= 2 tokens after removing "
    "specials; parity = mean over sentence pairs of tokens(L) / tokens(English), specials included. Rows: "
    "GPT-2 (gpt2.tiktoken), Phi-3 (llama2-tokenizer.model, no BOS), GPT-4o (o200k_base.tiktoken, o200k "
    "pattern), Tekken (mistral-common tekken, no BOS/EOS), ByT5 (UTF-8 bytes + one </s> per call). "
    "Rounded to 3 decimals as published."
)
_FLORES_CODE = re.compile(r"[a-z]{3}_[A-Z][a-z]{3}")


@dataclass(frozen=True)
class TokSuiteRow:
    """A TokSuite row: how tokbench loads it and how many special tokens its encoder adds per call."""

    spec: PretrainedSpec
    specials_per_call: int = 0


TOKSUITE_TOKENIZERS: tuple[TokSuiteRow, ...] = (
    TokSuiteRow(PretrainedSpec("GPT-2", "tokenizers/gpt2.tiktoken", format="tiktoken", pattern="gpt2")),
    TokSuiteRow(PretrainedSpec("Phi-3", "tokenizers/llama2-tokenizer.model", format="sentencepiece")),
    TokSuiteRow(PretrainedSpec("GPT-4o", "tokenizers/o200k_base.tiktoken", format="tiktoken", pattern="o200k")),
    TokSuiteRow(PretrainedSpec("Tekken", "tekken-240718")),
    TokSuiteRow(PretrainedSpec("ByT5", "bytes"), specials_per_call=1),  # ByT5's encoder appends </s>
)


def published_toksuite2025() -> dict[tuple[str, str, str], float]:
    """``(row, language, metric) -> value`` for every published figure (all 14 rows)."""
    values: dict[tuple[str, str, str], float] = {}
    folder = importlib.resources.files("benchmarks") / "published"
    for metric in METRICS:
        text = (folder / f"toksuite2025_{metric}.csv").read_text(encoding="utf-8")
        for row in csv.DictReader(text.splitlines()):
            for column, value in row.items():
                if column and _FLORES_CODE.fullmatch(column) and value not in ("", None):
                    values[(row["model_name"], column, metric)] = float(value)
    return values


def spacy_code(flores_code: str) -> str:
    """spaCy's language code of a FLORES-200 code: ISO 639-1 where there is one (eng_Latn -> en), and the
    two macrolanguages FLORES names by a member (pes -> fa, zho -> zh)."""
    import pycountry

    iso3 = flores_code.split("_")[0]
    special = {"pes": "fa", "zho": "zh", "cmn": "zh"}
    if iso3 in special:
        return special[iso3]
    language = pycountry.languages.get(alpha_3=iso3)
    return getattr(language, "alpha_2", iso3) if language is not None else iso3


def dev_sentences(flores_file: Path) -> list[str]:
    """The stripped FLORES-200 dev lines of a dev+devtest file (2,009 lines)."""
    lines = flores_file.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != 2009:
        raise BenchmarkError(f"{flores_file}: {len(lines):,} lines, expected 2,009 (FLORES-200 dev, then devtest)")
    return [line.strip() for line in lines[:DEV_LINES]]


def blank_pipeline(flores_code: str):
    import spacy

    code = spacy_code(flores_code)
    try:
        return spacy.blank(code)
    except (ImportError, KeyError, ValueError) as exc:
        raise BenchmarkError(f"no blank spaCy pipeline for {code!r} ({type(exc).__name__})") from None


def words_of(sentences: Sequence[str], nlp) -> list[str]:
    return [word for doc in nlp.pipe(sentences) for token in doc if (word := token.text.strip())]


def needs(data_root: Path | None) -> list[str]:
    lines = [f"languages: FLORES-200 codes with a blank spaCy pipeline (flores/<lang>.txt, first {DEV_LINES} "
             "lines = dev); published: eng_Latn, tur_Latn, ita_Latn, pes_Arab, zho_Hans"]  # fmt: skip
    if data_root is not None:
        held = sorted(path.stem for path in (data_root / "flores").glob("*.txt"))
        lines.append(f"  in the data root: {', '.join(held) or 'none'}")
    for file in sorted({row.spec.source for row in TOKSUITE_TOKENIZERS if "/" in row.spec.source}):
        state = "" if data_root is None else (" (present)" if (data_root / file).is_file() else " (missing)")
        lines.append(f"file: {file}{state}")
    lines.append("package: spacy (blank pipelines), mistral-common (tekken)")
    return lines


def reproduce(data_root: Path, languages: Sequence[str] | None = None, progress: bool = False) -> Reproduction:
    """Every (row, language, metric) of the data root's FLORES languages; parity needs English too.

    A language that cannot be reproduced (no file, wrong line count, no spaCy pipeline) is a
    BenchmarkError naming each one on its own line.  Four languages take seconds: no progress bar."""
    flores = data_root / "flores"
    if not flores.is_dir():
        raise BenchmarkError(f"{data_root}: no flores/ folder (expected flores/<lang>.txt, FLORES-200 dev+devtest)")
    codes = sorted(path.stem for path in flores.glob("*.txt")) if languages is None else list(dict.fromkeys(languages))
    sentences: dict[str, list[str]] = {}
    words: dict[str, list[str]] = {}
    failures: list[str] = []
    skipped: list[str] = []  # languages of the data root (none requested) spaCy has no blank pipeline for
    for code in codes:
        path = flores / f"{code}.txt"
        if not path.is_file():
            failures.append(f"{code}: not reproducible: no {path}")
            continue
        try:
            lines = dev_sentences(path)
        except BenchmarkError as exc:
            failures.append(f"{code}: not reproducible: {exc}")
            continue
        try:
            nlp = blank_pipeline(code)
        except BenchmarkError as exc:
            (failures if languages is not None else skipped).append(f"{code}: not reproducible: {exc}")
            continue
        sentences[code], words[code] = lines, words_of(lines, nlp)
    english_needed = any(code != ENGLISH for code in sentences)
    if english_needed and ENGLISH not in sentences:
        english = flores / f"{ENGLISH}.txt"
        if not english.is_file():
            failures.append(f"{ENGLISH}: needed for parity: no {english}")
        else:
            try:
                sentences[ENGLISH] = dev_sentences(english)
            except BenchmarkError as exc:
                failures.append(f"{ENGLISH}: needed for parity: {exc}")
    if failures:
        raise UnreproducibleLanguages(failures)
    if not sentences:
        raise BenchmarkError(f"{data_root}: no FLORES language to reproduce (flores/ is empty)")
    published = published_toksuite2025()
    result = Reproduction(notes=skipped)
    for row in TOKSUITE_TOKENIZERS:
        spec = row.spec
        tokenizer = load_column(spec, data_root, result.notes)
        if tokenizer is None:
            continue

        def count(text: str, tokenizer: bpe.Tokenizer = tokenizer, specials: int = row.specials_per_call) -> int:
            return len(tokenizer.encode(text)) + specials

        english_counts = [count(s) for s in sentences[ENGLISH]] if english_needed else []
        for code in codes:
            if code not in words:
                continue
            word_counts = [count(word) - row.specials_per_call for word in words[code]]
            values = {
                "fertility": sum(word_counts) / len(word_counts),
                "pcw": sum(1 for n in word_counts if n >= 2) / len(word_counts),
            }
            if code != ENGLISH:
                ratios = [count(s) / e for s, e in zip(sentences[code], english_counts, strict=True) if e]
                values["parity"] = sum(ratios) / len(ratios)
            for metric, value in values.items():
                reproduced = round(value, 3)
                result.rows.append(Row(spec.label, code, published.get((spec.label, code, metric)), reproduced, metric))
    return result  # values without a published figure: counted by the command (``Reproduction.unpublished``)
