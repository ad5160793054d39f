"""Morpheme references: word -> gold boundary offsets, and the readers of the gold files.

A *boundary* is an inner CHARACTER offset ``b`` of a word (``0 < b < len(word)``) in NFC: the word
``walked`` segmented ``walk|ed`` has the boundary set ``{4}``.  A word may have several alternative
analyses (Morpho Challenge lists them; a UD word type may carry different lemma splits in different
sentences); metrics score a tokenization against the best-matching alternative (``boundary_counts``).

Each reader parses one file format, keeps the entries whose morphemes concatenate exactly to the
word and reports what it dropped and why in a ``Coverage``.  Coverage counts input *entries* (file
lines, CSV rows, UD word tokens), not distinct words; ``len(reference.analyses)`` is the number of
distinct words.  Words whose analysis has a single morpheme are kept with an empty boundary set: they
are gold too (any split of them is a false positive).

MorphScore v1 (Arnett & Bergen) items ``(word, pt1, rest)`` are references of kind ``"morphscore"``
whose every analysis is the single boundary ``{len(pt1)}``: a word scores 1 when the tokenization
has a boundary exactly there, and words kept as one token are excluded from the mean.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from corpora.errors import CorpusError

#: reference kinds: hand-made gold, analyzer output, MorphScore v1 one-boundary items
KINDS = ("gold", "silver", "morphscore")


@dataclass(frozen=True)
class Coverage:
    """How many input entries a reference read, kept, and dropped (reason -> count)."""

    total: int
    kept: int
    dropped: dict[str, int]

    @property
    def share_kept(self) -> float:
        return self.kept / self.total if self.total else 0.0


@dataclass
class MorphReference:
    """Word (NFC) -> alternative boundary sets, with where it came from and what it covers."""

    name: str
    language: str
    kind: str
    analyses: dict[str, tuple[frozenset[int], ...]]
    coverage: Coverage
    source: str
    notes: str = ""  # a caveat a reader of any result on this reference must see (e.g. "unreliable: ...")
    citation: str = ""  # what the reference is, for headings: "Tikhonov 2002", "pymorphy3 stem|ending"
    #: MorphScore only: every row of the file as listed, (word, boundary or None when pt1 or rest is empty or
    #: they do not make the word); upstream MorphScore scores these rows, duplicates and all
    rows: tuple[tuple[str, int | None], ...] = ()

    @property
    def is_morphscore(self) -> bool:
        return self.kind == "morphscore"


# -- boundary arithmetic (shared with benchmarks.measure.metrics) ---------------------------------------


def boundaries_of(morphs: Sequence[str]) -> frozenset[int]:
    """Inner boundaries of a segmentation: the running lengths of all morphemes but the last."""
    offsets, position = set(), 0
    for morph in morphs[:-1]:
        position += len(morph)
        offsets.add(position)
    return frozenset(offsets)


def boundary_counts(
    predicted: set[int] | frozenset[int], gold_alternatives: Iterable[frozenset[int]]
) -> tuple[int, int, int]:
    """(TP, FP, FN) of predicted boundaries against the best-matching gold alternative of one word.

    Best match = fewest errors (FP + FN); ties go to more true positives, then to the earlier
    alternative (file order), so the choice is deterministic.
    """
    best: tuple[int, int, int] | None = None
    for gold in gold_alternatives:
        tp = len(predicted & gold)
        counts = (tp, len(predicted) - tp, len(gold) - tp)
        if best is None or (counts[1] + counts[2], -counts[0]) < (best[1] + best[2], -best[0]):
            best = counts
    if best is None:
        raise ValueError("boundary_counts needs at least one gold alternative")
    return best


def boundary_prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Micro precision, recall and F1 = TP / (TP + (FP + FN) / 2) (Uzan et al. 2024); NaN where undefined."""
    nan = float("nan")
    precision = tp / (tp + fp) if tp + fp else nan
    recall = tp / (tp + fn) if tp + fn else nan
    f1 = tp / (tp + 0.5 * (fp + fn)) if tp + fp + fn else nan
    return precision, recall, f1


# -- building a reference -----------------------------------------------------------------------


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


class _Collector:
    """Accumulates one reference: deduplicated alternatives per word (first-seen order) and coverage."""

    def __init__(self) -> None:
        self.alternatives: dict[str, list[frozenset[int]]] = {}
        self.total = 0
        self.kept = 0
        self.dropped: Counter[str] = Counter()

    def keep(self, word: str, boundary_sets: Iterable[frozenset[int]]) -> None:
        self.total += 1
        self.kept += 1
        known = self.alternatives.setdefault(word, [])
        known.extend(b for b in boundary_sets if b not in known)

    def drop(self, reason: str) -> None:
        self.total += 1
        self.dropped[reason] += 1

    def reference(
        self, reader: str, language: str, kind: str, paths: Sequence[Path], notes: str = ""
    ) -> MorphReference:
        return MorphReference(
            name=reader,
            language=language,
            kind=kind,
            analyses={word: tuple(sets) for word, sets in self.alternatives.items()},
            coverage=Coverage(self.total, self.kept, dict(sorted(self.dropped.items()))),
            source=", ".join(str(p) for p in paths),
            notes=notes,
            citation=CITATIONS[reader],
        )


def _read_text(path: Path, reader: str) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CorpusError(f"{path}: no such file (needed by morpheme reader {reader!r})", code="missing_file",
                          value=path) from None  # fmt: skip
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})", code="not_utf8",
                          value=path) from None  # fmt: skip
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read ({exc.strerror})", code="unreadable_file", value=path) from None


def _lines(paths: Sequence[Path], reader: str) -> Iterator[tuple[str, str]]:
    """(``file:line`` location, line) for every non-blank line of every file."""
    if not paths:
        raise CorpusError(f"morpheme reader {reader!r} needs at least one file", code="no_files", value=reader)
    for path in paths:
        for number, line in enumerate(_read_text(path, reader).splitlines(), start=1):
            if line.strip():
                yield f"{path}:{number}", line


def _columns(location: str, line: str, counts: tuple[int, ...], expected: str) -> list[str]:
    columns = line.split("\t")
    if len(columns) not in counts:
        raise CorpusError(f"{location}: expected {expected}, got {len(columns)} tab-separated column(s): {line[:80]!r}",
                          code="bad_data_file", value=location)  # fmt: skip
    return columns


NOT_CONCATENATING = "morphemes do not concatenate to the word"


# -- readers ------------------------------------------------------------------------------------


def read_sigmorphon2022_word(paths: list[Path], language: str) -> MorphReference:
    """SIGMORPHON 2022 word-level segmentation: ``word<TAB>morph @@morph ...[<TAB>category]``.

    Morphemes are UNDERLYING forms (subsidised -> subside @@y @@ise @@ed); only words whose
    morphemes concatenate exactly to the word are kept (no alignment), about 70% for English.
    Entries containing whitespace (``mouth harpist``) are multi-word terms, not words: dropped.
    """
    collected = _Collector()
    for location, line in _lines(paths, "sigmorphon2022-word"):
        word, segmentation = _columns(location, line, (2, 3), "word<TAB>segmentation[<TAB>category]")[:2]
        word, morphs = nfc(word), [nfc(m) for m in segmentation.split(" @@")]
        if any(ch.isspace() for ch in word):
            collected.drop("multi-word entry (contains whitespace)")
        elif "".join(morphs) != word:
            collected.drop(f"underlying form: {NOT_CONCATENATING}")
        else:
            collected.keep(word, [boundaries_of(morphs)])
    return collected.reference("sigmorphon2022-word", language, "gold", paths)


#: Morpho Challenge writes Turkish in ASCII: capitals stand for the letters ASCII lacks.
_MORPHO_CHALLENGE_TURKISH = str.maketrans("CGIOSU", "çğıöşü")


def read_morphochallenge2010(paths: list[Path], language: str) -> MorphReference:
    """Morpho Challenge 2010 gold standard: ``word<TAB>m1:label m2:label, alternative ...``.

    A comma separates alternative analyses; ``~`` is an empty morpheme and is dropped.  For Turkish
    (``language == "tr"``) the ASCII capitals C G I O S U are converted to ç ğ ı ö ş ü in the word
    and the morphemes (CIkmazIna -> çıkmazına).  Alternatives that do not concatenate to the word are
    dropped; the entry counts as dropped only when none is left.
    """
    convert = (lambda text: text.translate(_MORPHO_CHALLENGE_TURKISH)) if language == "tr" else (lambda text: text)
    collected = _Collector()
    for location, line in _lines(paths, "morphochallenge2010"):
        word, analyses = _columns(location, line, (2,), "word<TAB>analyses")
        word = nfc(convert(word))
        kept = []
        for alternative in analyses.split(","):
            tokens = alternative.split()
            if not tokens or any(":" not in token for token in tokens):
                raise CorpusError(f"{location}: expected morphemes written surface:label, got {alternative.strip()!r}",
                                  code="bad_data_file", value=location)  # fmt: skip
            morphs = [nfc(convert(token.split(":", 1)[0])) for token in tokens]
            morphs = [m for m in morphs if m != "~"]
            if "".join(morphs) == word:
                kept.append(boundaries_of(morphs))
        if kept:
            collected.keep(word, kept)
        else:
            collected.drop(NOT_CONCATENATING)
    return collected.reference("morphochallenge2010", language, "gold", paths)


def read_tikhonov(paths: list[Path], language: str) -> MorphReference:
    """Tikhonov's Russian morpheme dictionary (word2morph extract): ``word<TAB>у:PREF/пас:ROOT/ти:SUFF``.

    Surface forms of dictionary (lemma) words; every entry concatenates in the mirrored files.
    """
    collected = _Collector()
    for location, line in _lines(paths, "tikhonov"):
        word, segmentation = _columns(location, line, (2,), "word<TAB>morph:LABEL/morph:LABEL...")
        parts = segmentation.split("/")
        if any(":" not in part for part in parts):
            raise CorpusError(f"{location}: expected morphemes written morph:LABEL joined by '/', got {segmentation!r}",
                              code="bad_data_file", value=location)  # fmt: skip
        word, morphs = nfc(word), [nfc(part.rsplit(":", 1)[0]) for part in parts]
        if "".join(morphs) == word:
            collected.keep(word, [boundaries_of(morphs)])
        else:
            collected.drop(NOT_CONCATENATING)
    return collected.reference("tikhonov", language, "gold", paths)


def read_ud_korean_lemma(paths: list[Path], language: str) -> MorphReference:
    """UD Korean (Kaist, GSD, PUD) LEMMA column: morphemes joined with ``+`` (서울+이+ㅂ니다).

    A word token (FORM) is kept only where its ``+`` parts concatenate exactly to FORM and their
    number equals the number of ``+``-joined XPOS tags (about 80% of Kaist tokens); underlying forms
    (입니다 = 이+ㅂ니다) are dropped.  Multiword ranges (``1-2``) and empty nodes (``1.1``) are skipped and
    not counted.  Coverage counts word tokens; a word type split differently in different sentences
    gets alternatives.  GSD lemmas are machine-made: treat them as silver.
    """
    collected = _Collector()
    for location, line in _lines(paths, "ud-korean-lemma"):
        if line.startswith("#"):
            continue
        columns = _columns(location, line, (10,), "a CoNLL-U word line with 10 columns")
        if not columns[0].isdigit():
            continue
        form, lemma, xpos = nfc(columns[1]), nfc(columns[2]), columns[4]
        parts = lemma.split("+")
        if "+" in form:
            collected.drop("form contains '+'")
        elif "".join(parts) != form or "" in parts:
            collected.drop(f"underlying form: {NOT_CONCATENATING}")
        elif len(parts) != len(xpos.split("+")):
            collected.drop("number of lemma parts differs from number of XPOS tags")
        else:
            collected.keep(form, [boundaries_of(parts)])
    return collected.reference("ud-korean-lemma", language, "gold", paths)


MORPHSCORE_KOREAN_NOTE = (
    "unreliable: the MorphScore v1 Korean file splits every word after its first syllable, which disagrees "
    "with morphological analyzers; do not read Korean MorphScore as morpheme alignment"
)


def read_morphscore(paths: list[Path], language: str) -> MorphReference:
    """MorphScore v1 CSV (Arnett & Bergen): ``,full_word,pt1,rest`` -> one boundary at ``len(pt1)``.

    Items with an empty ``pt1`` or ``rest`` have no inner boundary and are dropped from ``analyses`` (7
    Turkish items; upstream they can never score 1); ``rows`` keeps every row as listed, for the
    upstream-compatible score.  The Korean file is flagged unreliable in ``notes``.
    """
    if not paths:
        raise CorpusError("morpheme reader 'morphscore' needs at least one file", code="no_files", value="morphscore")
    collected = _Collector()
    listed: list[tuple[str, int | None]] = []
    for path in paths:
        rows = csv.DictReader(io.StringIO(_read_text(path, "morphscore"), newline=""))
        missing = {"full_word", "pt1", "rest"} - set(rows.fieldnames or ())
        if missing:
            raise CorpusError(
                f"{path}: MorphScore CSV lacks column(s) {', '.join(sorted(missing))}; header: {rows.fieldnames}",
                code="missing_column",
                value=sorted(missing)[0],
            )
        for row in rows:
            if None in (row["full_word"], row["pt1"], row["rest"]):
                raise CorpusError(f"{path}:{rows.line_num}: row has fewer fields than the header: {row}",
                                  code="bad_data_file", value=f"{path}:{rows.line_num}")  # fmt: skip
            word, pt1, rest = nfc(row["full_word"]), nfc(row["pt1"]), nfc(row["rest"])
            if not pt1 or not rest:
                collected.drop("no inner boundary (empty pt1 or rest)")
                listed.append((word, None))
            elif pt1 + rest != word:
                collected.drop("pt1 + rest differ from the word")
                listed.append((word, None))
            else:
                collected.keep(word, [frozenset({len(pt1)})])
                listed.append((word, len(pt1)))
    notes = MORPHSCORE_KOREAN_NOTE if language == "ko" else ""
    reference = collected.reference("morphscore", language, "morphscore", paths, notes)
    return dataclasses.replace(reference, rows=tuple(listed))


Reader = Callable[[list[Path], str], MorphReference]

#: reader name (as used in corpus specs) -> function(paths, language); the language matters to
#: Morpho Challenge (Turkish transliteration) and MorphScore (Korean reliability note).
READERS: dict[str, Reader] = {
    "sigmorphon2022-word": read_sigmorphon2022_word,
    "morphochallenge2010": read_morphochallenge2010,
    "tikhonov": read_tikhonov,
    "ud-korean-lemma": read_ud_korean_lemma,
    "morphscore": read_morphscore,
}


#: reader name -> what its reference is, as headings and captions cite it
CITATIONS: dict[str, str] = {
    "sigmorphon2022-word": "SIGMORPHON 2022 word segmentation (Batsuren et al. 2022)",
    "morphochallenge2010": "Morpho Challenge 2010 (Kurimo et al. 2010)",
    "tikhonov": "Tikhonov 2002",
    "ud-korean-lemma": "UD Korean-Kaist lemmas",
    "morphscore": "MorphScore v1 (Arnett & Bergen 2025)",
}


def read_reference(reader: str, paths: list[Path], name: str, language: str) -> MorphReference:
    """Read the morpheme reference files ``paths`` with the reader named ``reader``."""
    if reader not in READERS:
        raise CorpusError(f"unknown morpheme reader {reader!r}; choose one of: {', '.join(READERS)}",
                          code="unknown_reader", value=reader)  # fmt: skip
    reference = READERS[reader]([Path(p) for p in paths], language)
    return dataclasses.replace(reference, name=name)
