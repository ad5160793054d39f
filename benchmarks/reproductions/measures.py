"""The kinds of measurement a reproduction file may name, and the texts and words they are taken over.

A measurement is code once per kind, registered by name in ``MEASURES``: what it encodes (a language's
joined text, each of its words, each of its sentences) and how it turns the token counts into the value
compared with the published figure.  ``JOINS`` holds the ways a language's lines become one text, ``WORDS``
the ways its sentences are cut into words.  A table whose measurements are here needs no code: one
reproduction file (``benchmarks/reproductions/<name>.toml``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from benchmarks.errors import BenchmarkError
from corpora.flores import petrov_join
from corpora.spec import short_language_code

#: what a measurement encodes: the language's joined text (once), each word alone, each sentence alone
Unit = Literal["text", "words", "sentences"]


@dataclass(frozen=True)
class Counts:
    """A language's token counts with one tokenizer, as its encoder returns them (tokbench's encoders add no
    special tokens): of its joined text, of each word, of each sentence; None where not counted."""

    text: int | None = None
    words: list[int] | None = None
    sentences: list[int] | None = None


@dataclass(frozen=True)
class Measure:
    name: str
    counts: Unit
    #: int: a count, compared as is; float: a ratio or mean (rounded as the file's ``compare.decimals`` says)
    value_type: type[int] | type[float]
    #: True: a ratio to the reference language's counts (``corpora.flores.REFERENCE_LANGUAGE``), not computed
    #: for the reference language itself
    reference: bool
    #: (the language's counts, the reference language's counts or None, special tokens per call) -> the value
    compute: Callable[[Counts, Counts | None, int], int | float]


def _tokens(counts: Counts, reference: Counts | None, specials: int) -> int:
    """Tokens of the joined text, without special tokens (Petrov et al. 2023)."""
    assert counts.text is not None
    return counts.text


def _fertility(counts: Counts, reference: Counts | None, specials: int) -> float:
    """Tokens per word, special tokens left out (TokSuite 2025)."""
    assert counts.words is not None
    return sum(counts.words) / len(counts.words)


def _pcw(counts: Counts, reference: Counts | None, specials: int) -> float:
    """Proportion of continued words: the share of words of 2 tokens or more, special tokens left out."""
    assert counts.words is not None
    return sum(1 for n in counts.words if n >= 2) / len(counts.words)


def _parity(counts: Counts, reference: Counts | None, specials: int) -> float:
    """Mean over sentence pairs of tokens(L) / tokens(reference), special tokens included (TokSuite 2025);
    a pair whose reference sentence has no token is left out."""
    assert counts.sentences is not None and reference is not None and reference.sentences is not None
    ratios = [(n + specials) / (e + specials) for n, e in zip(counts.sentences, reference.sentences, strict=True)
              if e + specials]  # fmt: skip
    return sum(ratios) / len(ratios)


MEASURES: dict[str, Measure] = {
    measure.name: measure
    for measure in (
        Measure("tokens", "text", int, False, _tokens),
        Measure("fertility", "words", float, False, _fertility),
        Measure("pcw", "words", float, False, _pcw),
        Measure("parity", "sentences", float, True, _parity),
    )
}

#: how a language's lines (one list per split) become one text
JOINS: dict[str, Callable[[Sequence[Sequence[str]]], str]] = {"petrov": petrov_join}


@dataclass(frozen=True)
class WordSplitter:
    """A way to cut sentences into words: ``pipeline(flores_code)`` (a BenchmarkError when the language has
    none) made once per language, then ``split(sentences, pipeline)``."""

    pipeline: Callable[[str], Any]
    split: Callable[[Sequence[str], Any], list[str]]


def _spacy_blank(flores_code: str) -> Any:
    import spacy

    code = short_language_code(flores_code)
    try:
        return spacy.blank(code)
    except (ImportError, KeyError, ValueError) as exc:
        raise BenchmarkError(f"no blank spaCy pipeline for {code!r} ({type(exc).__name__})") from None


def _spacy_words(sentences: Sequence[str], nlp: Any) -> list[str]:
    """Each token's text stripped, empty ones dropped (TokSuite 2025)."""
    return [word for doc in nlp.pipe(sentences) for token in doc if (word := token.text.strip())]


#: "none": no words; "spacy-blank": the tokens of ``spacy.blank(code)`` for the language
WORDS: dict[str, WordSplitter | None] = {"none": None, "spacy-blank": WordSplitter(_spacy_blank, _spacy_words)}
