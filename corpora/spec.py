"""Corpus specs: one TOML file per corpus, validated on load (like mteb task metadata).

A spec says *what* text a corpus is made of and *where* it comes from; ``corpora.loader`` reads it.
The tables are declared by the models below (keys, types, choices, ranges, and the rules that join
several keys): an unknown, missing or mistyped key is a ``CorpusError`` naming the file, the table,
the key, the value and what is expected.  See ``corpora/README.md`` for the field reference and a
worked example.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, PrivateAttr, Strict, field_validator, model_validator

from bpe.validation import PositiveInt, Table, expecting, in_interval, table_rule, validate
from corpora.errors import CorpusError, spec_error

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: where the shipped specs live (installed as package data)
SPEC_DIR = Path(__file__).resolve().parent

ROLES = ("train", "test", "eval")
SOURCE_ROLES = (*ROLES, "all")  # "all" = split into train/test by a hash of the document id
SOURCE_KINDS = ("package", "path", "hf")
FILE_FORMATS = ("text", "conllu", "jsonl", "parquet", "csv", "tsv", "rl-wsd")  # read by corpora.sources.FILE_READERS
TABULAR_FORMATS = ("jsonl", "parquet", "csv", "tsv")
NORMALIZATIONS = ("NFC", "NFKC", "none")
#: what loading does when a test or eval document occurs in the training text (corpora.leaks)
LEAK_POLICIES = ("fail", "drop", "keep")
#: named clean-ups a source may list in ``transforms`` (applied by corpora.sources.TRANSFORMS)
TRANSFORM_NAMES = ("strip",)
#: how a parallel source names its sentences (``[sources.parallel] key``)
PARALLEL_KEYS = ("line", "sent_id", "column")
#: the formats whose records are numbered lines or rows (``key = "line"``)
NUMBERED_FORMATS = ("text", *TABULAR_FORMATS)

_LANGUAGE_PATTERN = re.compile(r"^([a-z]{3})_([A-Z][a-z]{3})$")
_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def _one_or_more(value: Any) -> Any:
    return [value] if isinstance(value, str) else value  # files = "a.txt" is short for files = ["a.txt"]


Files = Annotated[
    tuple[Annotated[str, Field(min_length=1)], ...],
    Strict(False),
    Field(min_length=1),
    BeforeValidator(_one_or_more),
    expecting("a non-empty string or a list of non-empty strings"),
]


class HubSource(Table):
    """A Hugging Face dataset split (or a local folder that ``datasets.load_dataset`` reads); also
    the declaration of a ``[[sources.hub]]`` table."""

    dataset: str
    split: str
    config: str | None = None
    revision: str | None = None
    column: str = "text"
    words_column: str | None = None

    def describe(self) -> str:
        parts = [self.dataset, self.config or "", self.split]
        return "/".join(p for p in parts if p) + (f"@{self.revision}" if self.revision else "")


KeyRange = Annotated[
    tuple[PositiveInt, PositiveInt], Strict(False), expecting("a list [first, last] of two integers >= 1")
]


class ParallelSpec(Table):
    """``[sources.parallel]``: the source's documents are the sentences of a parallel set (FLORES-200,
    UD PUD): a sentence has the same ``key`` in every corpus whose source names the same set, so
    cross-lingual metrics pair sentences by key, never by position.

    ``key = "line"``: the line number of a text file, the row number of a table or hub split; the
    numbers run on across the source's files or splits in order (FLORES dev rows 1-997, devtest
    998-2009), so a data-root file and its hub splits give the same keys.  ``key = "sent_id"``: a
    CoNLL-U sentence's ``# sent_id``.  ``key = "column"``: the value of the table's or hub split's
    column ``column`` (a partial or reordered set that carries its sentence ids).  ``dev``: the first
    and last key of the set's dev split (numeric keys); TokSuite's parity reads the dev split only,
    Petrov et al.'s joins the dev and the other sentences as two files."""

    name: Annotated[str, Field(min_length=1), expecting("a non-empty string")]
    key: Literal[PARALLEL_KEYS] = "line"  # type: ignore[valid-type]
    column: Annotated[str, Field(min_length=1), expecting("a non-empty string")] | None = None
    dev: KeyRange | None = None
    #: the key of the source's first line or row (``key = "line"``): a file holding FLORES devtest alone
    #: starts at 998, so its sentences pair with the same sentences of a dev+devtest file
    first_key: PositiveInt = 1
    #: what a run does when the paired sentences' character lengths do not correlate (Pearson r below
    #: ``benchmarks.run.parallel.MIN_LENGTH_CORRELATION``: the keys likely pair unrelated sentences):
    #: "warn" (say so with r and the first pairs, and go on) or "fail" (refuse the run)
    on_misaligned: Literal["warn", "fail"] = "warn"

    @model_validator(mode="after")
    def _column_and_dev(self) -> ParallelSpec:
        if (self.key == "column") != (self.column is not None):
            raise table_rule("key = 'column' needs 'column' (the column holding the key), and only it takes one",
                             value="column")  # fmt: skip
        if self.dev is not None:
            if self.key == "sent_id":
                raise table_rule("'dev' applies to numeric keys ('line' or a numeric 'column'), not to 'sent_id'",
                                 value="dev")  # fmt: skip
            if self.dev[0] > self.dev[1]:
                raise table_rule(f"'dev' must be [first, last] with first <= last, got {list(self.dev)}",
                                 value=list(self.dev))  # fmt: skip
        if "first_key" in self.model_fields_set and self.key != "line":
            raise table_rule(f"'first_key' applies to key = 'line' only, got key = {self.key!r}", value="first_key")
        return self

    def in_dev(self, key: str) -> bool:
        """Whether the sentence of ``key`` is in the declared dev split (False when none is declared)."""
        return self.dev is not None and self.dev[0] <= int(key) <= self.dev[1]


@dataclass(frozen=True)
class Source:
    """One ``[[sources]]`` entry as the loader reads it.  ``hub`` holds the hub split(s) to read: for
    ``kind = "hf"`` the source itself, for ``kind = "path"`` the alternatives used when no data root
    is given."""

    index: int  # 1-based position in the spec, for messages
    kind: str
    role: str
    format: str | None = None
    package: str | None = None
    files: tuple[str, ...] = ()
    column: str = "text"
    words_column: str | None = None
    words: bool = True  # conllu: FORM column is word gold
    transforms: tuple[str, ...] = ()
    hub: tuple[HubSource, ...] = ()
    parallel: ParallelSpec | None = None  # the documents are sentences of a parallel set
    #: keep lines (rows) first..last only, numbered on across the source's files or splits (as key = "line")
    lines: tuple[int, int] | None = None

    def describe(self) -> str:
        if self.kind == "package":
            return f"source #{self.index} (package {self.package!r}: {', '.join(self.files)})"
        if self.kind == "path":
            return f"source #{self.index} ({', '.join(self.files)})"
        return f"source #{self.index} (hub {self.hub[0].describe()})"


#: the keys each source kind takes beyond kind, role and transforms, and those it needs
_KIND_KEYS = {
    "package": {"format", "package", "files", "column", "words_column", "words", "parallel", "lines"},
    "path": {"format", "files", "column", "words_column", "words", "hub", "parallel", "lines"},
    "hf": {"dataset", "config", "split", "revision", "column", "words_column", "parallel", "lines"},
}
_KIND_REQUIRED = {"package": ("format", "package", "files"), "path": ("format", "files"), "hf": ("dataset", "split")}


class _SourceTable(Table):
    """A ``[[sources]]`` table as written: the keys of every kind; ``to_source`` gives the loader's view."""

    kind: Literal[SOURCE_KINDS]  # type: ignore[valid-type]
    role: Literal[SOURCE_ROLES]  # type: ignore[valid-type]
    format: Literal[FILE_FORMATS] | None = None  # type: ignore[valid-type]
    package: str | None = None
    files: Files = ()
    column: str = "text"
    words_column: str | None = None
    words: bool = True
    transforms: Annotated[tuple[Literal[TRANSFORM_NAMES], ...], Strict(False)] = ()  # type: ignore[valid-type]
    dataset: str | None = None
    config: str | None = None
    split: str | None = None
    revision: str | None = None
    hub: Annotated[tuple[HubSource, ...], Strict(False)] = ()
    parallel: ParallelSpec | None = None
    lines: KeyRange | None = None

    @model_validator(mode="after")
    def _keys_fit_the_kind(self) -> _SourceTable:
        given = self.model_fields_set - {"kind", "role", "transforms"}
        extra = sorted(given - _KIND_KEYS[self.kind])
        if extra:
            allowed = ", ".join(["kind", "role", "transforms", *sorted(_KIND_KEYS[self.kind])])
            raise table_rule(f"key {extra[0]!r} does not apply to kind = {self.kind!r}; allowed keys: {allowed}",
                             value=extra[0])  # fmt: skip
        for key in _KIND_REQUIRED[self.kind]:
            if key not in given:
                raise table_rule(f"kind = {self.kind!r} needs key {key!r}", value=key)
        if given & {"column", "words_column"} and self.kind != "hf" and self.format not in TABULAR_FORMATS:
            raise table_rule(f"'column'/'words_column' apply to formats {', '.join(TABULAR_FORMATS)} only",
                             value=sorted(given & {"column", "words_column"})[0])  # fmt: skip
        if "words" in given and self.format != "conllu":
            raise table_rule("'words' applies to format 'conllu' only", value="words")
        if self.lines is not None:
            if self.kind != "hf" and self.format not in NUMBERED_FORMATS:
                raise table_rule(f"'lines' needs numbered lines or rows (formats {', '.join(NUMBERED_FORMATS)}, or a "
                                 f"hub source), got format {self.format!r}", value="lines")  # fmt: skip
            if self.lines[0] > self.lines[1]:
                raise table_rule(f"'lines' must be [first, last] with first <= last, got {list(self.lines)}",
                                 value=list(self.lines))  # fmt: skip
        if self.parallel is not None:
            if self.role != "eval":
                raise table_rule(f"'parallel' applies to role = 'eval' only (the evaluation set), got {self.role!r}",
                                 value="parallel")  # fmt: skip
            numbered = self.kind == "hf" or self.format in NUMBERED_FORMATS
            if self.parallel.key == "line" and not numbered:
                raise table_rule(
                    f"parallel key 'line' needs numbered lines or rows (formats {', '.join(NUMBERED_FORMATS)}, or a "
                    f"hub source), got format {self.format!r}; CoNLL-U sentences take key = 'sent_id'",
                    value="line",
                )
            if self.parallel.key == "sent_id" and self.format != "conllu":
                raise table_rule(f"parallel key 'sent_id' applies to format 'conllu' only, got {self.format!r}",
                                 value="sent_id")  # fmt: skip
            tabular = self.kind == "hf" or self.format in TABULAR_FORMATS
            if self.parallel.key == "column" and not tabular:
                raise table_rule(f"parallel key 'column' needs a table (formats {', '.join(TABULAR_FORMATS)}, or a "
                                 f"hub source), got format {self.format!r}", value="column")  # fmt: skip
        return self

    def to_source(self) -> Source:
        """The loader's view; ``index`` is set by the spec (the table's position)."""
        hub = self.hub
        if self.kind == "hf":
            hub = (HubSource(**self.model_dump(include=set(HubSource.model_fields))),)
        copied = {field.name for field in dataclasses.fields(Source)} - {"index", "hub"}
        return Source(index=0, hub=hub, **{name: getattr(self, name) for name in copied})


def _read_source(table: Any) -> Any:
    return _SourceTable.model_validate(table).to_source()


class ReferenceSpec(Table):
    """A morpheme reference: gold files read by a named reader, or a silver analyzer over test words."""

    name: str
    reader: str | None = None
    files: Files = ()
    analyzer: str | None = None
    #: "evaluation": scored by the morphology metrics; "training": gold that only trains tokenizers
    #: supervised by morphemes (bpe-knockout), never scored
    role: Literal["evaluation", "training"] = "evaluation"

    @model_validator(mode="after")
    def _gold_or_silver(self) -> ReferenceSpec:
        if (self.reader is None) == (self.analyzer is None):
            raise table_rule("give exactly one of 'reader' (gold files) or 'analyzer' (silver)", value="reader")
        if self.role == "training" and self.analyzer is not None:
            raise table_rule("role = \"training\" needs gold files ('reader'): an analyzer reads the test words",
                             value="training")  # fmt: skip
        if self.reader is not None and "files" not in self.model_fields_set:
            raise table_rule("'reader' needs 'files' (paths under the data root)", value="files")
        if self.analyzer is not None and "files" in self.model_fields_set:
            raise table_rule("'files' does not apply to an 'analyzer' reference", value="analyzer")
        return self


def _corpus_id(value: str) -> str:
    if not _ID_PATTERN.match(value):
        raise ValueError(
            f"must be lower-case letters, digits, '.', '_' or '-', starting with a letter or digit, got {value!r}"
        )
    return value


#: ISO 15924 scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Khmer, Burmese, Tibetan
#: and Dzongkha): a text's whitespace words are phrases or whole sentences there, not words
UNSPACED_SCRIPTS = frozenset({"Hans", "Hant", "Hani", "Jpan", "Thai", "Laoo", "Khmr", "Mymr", "Tibt"})

#: ISO 639-3 codes a published dataset still uses after ISO retired them (pycountry lists current codes only):
#: FLORES-200's ajp_Arab (South Levantine Arabic, merged into apc in 2023)
RETIRED_LANGUAGE_CODES = frozenset({"ajp"})


def _language(code: str) -> str:
    match = _LANGUAGE_PATTERN.match(code)
    if not match:
        raise ValueError(f"must be an ISO 639-3 code, '_', an ISO 15924 script (e.g. tur_Latn), got {code!r}")
    import pycountry  # imported here: only spec validation needs the code lists

    language, script = match.groups()
    if pycountry.languages.get(alpha_3=language) is None and language not in RETIRED_LANGUAGE_CODES:
        raise ValueError(f"must name a known language, got {code!r}: {language!r} is not an ISO 639-3 language code")
    if pycountry.scripts.get(alpha_4=script) is None:
        raise ValueError(f"must name a known script, got {code!r}: {script!r} is not an ISO 15924 script code")
    return code


Prose = Annotated[str, AfterValidator(str.strip)]


class CorpusSpec(Table):
    """A validated corpus spec; ``path`` is the file it came from (None for a spec built in memory)."""

    id: Annotated[str, AfterValidator(_corpus_id)]
    language: Annotated[str, AfterValidator(_language)]  # ISO 639-3 + "_" + ISO 15924, e.g. tur_Latn
    license: str
    description: Prose
    provenance: Prose = ""
    normalization: Literal[NORMALIZATIONS] = "NFC"  # type: ignore[valid-type]
    test_fraction: in_interval(0, 1) = 0.1  # type: ignore[valid-type]
    max_documents: PositiveInt | None = None
    max_chars: PositiveInt | None = None
    on_leak: Literal[LEAK_POLICIES] = "fail"  # type: ignore[valid-type]
    sources: Annotated[tuple[Annotated[Source, BeforeValidator(_read_source)], ...], Strict(False), Field(min_length=1)]
    references: Annotated[tuple[ReferenceSpec, ...], Strict(False)] = ()
    _path: Path | None = PrivateAttr(None)

    @field_validator("sources")
    @classmethod
    def _number_sources(cls, sources: tuple[Source, ...]) -> tuple[Source, ...]:
        """Messages and cache keys name a source by its 1-based position in the file."""
        return tuple(dataclasses.replace(source, index=n) for n, source in enumerate(sources, start=1))

    @field_validator("sources")
    @classmethod
    def _one_parallel_source(cls, sources: tuple[Source, ...]) -> tuple[Source, ...]:
        parallel = [source.index for source in sources if source.parallel is not None]
        if len(parallel) > 1:
            raise ValueError(
                f"may declare [sources.parallel] once, got it in sources #{parallel[0]} and #{parallel[1]}"
            )
        return sources

    @field_validator("references")
    @classmethod
    def _distinct_reference_names(cls, references: tuple[ReferenceSpec, ...]) -> tuple[ReferenceSpec, ...]:
        names = [reference.name for reference in references]
        duplicated = sorted({name for name in names if names.count(name) > 1})
        if duplicated:
            raise ValueError(f"must have distinct names: {duplicated[0]!r} is used twice")
        return references

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def parallel(self) -> ParallelSpec | None:
        """The parallel set the corpus's evaluation sentences belong to (declared by one eval source)."""
        return next((source.parallel for source in self.sources if source.parallel is not None), None)

    @property
    def silver_analyzers(self) -> list[str]:
        """The analyzers of the evaluated silver references (they always yield a reference, never MorphScore)."""
        return [reference.analyzer for reference in self.references
                if reference.role == "evaluation" and reference.analyzer is not None]  # fmt: skip

    @property
    def language_code(self) -> str:
        """ISO 639-3 part of ``language`` (``tur``)."""
        return self.language.split("_")[0]

    @property
    def script(self) -> str:
        """ISO 15924 part of ``language`` (``Latn``)."""
        return self.language.split("_")[1]

    @property
    def writes_word_spaces(self) -> bool:
        """Whether the script separates words by spaces (``UNSPACED_SCRIPTS``: it does not), so that the
        whitespace words of a text are its words."""
        return self.script not in UNSPACED_SCRIPTS

    @property
    def short_language(self) -> str:
        """ISO 639-1 code where one exists (``tr``), else ISO 639-3: what the morpheme readers take
        (``short_language_code``)."""
        return short_language_code(self.language)

    def loading_fields(self) -> dict[str, Any]:
        """The fields that decide the loaded text and its parallel keys (part of the cache key); a source
        without ``parallel`` or ``lines``, and a parallel set with the default ``first_key``, dump as they did
        before those keys existed (the cache keys of existing specs do not move)."""
        fields = self.model_dump(exclude={"description", "license", "provenance", "references"})
        for source in fields["sources"]:
            if source["lines"] is None:
                del source["lines"]
            if source["parallel"] is None:
                del source["parallel"]
            else:  # what a run does with a misaligned pairing changes no loaded text
                del source["parallel"]["on_misaligned"]
                if source["parallel"]["first_key"] == 1:
                    del source["parallel"]["first_key"]
        return fields


#: languages FLORES-200 names by a member of a macrolanguage, where only the macrolanguage has an ISO 639-1
#: code: Iranian Persian (Persian, fa) and Mandarin (Chinese, zh)
_MACROLANGUAGE_OF = {"pes": "fa", "cmn": "zh"}


def short_language_code(code: str) -> str:
    """The ISO 639-1 code of a language (``tur`` or ``tur_Latn`` -> ``tr``; ``pes_Arab`` -> ``fa``, its
    macrolanguage's) where one exists, else its ISO 639-3 code: what morpheme readers and spaCy take."""
    iso3 = code.split("_")[0]
    if iso3 in _MACROLANGUAGE_OF:
        return _MACROLANGUAGE_OF[iso3]
    import pycountry  # imported here: only some readers need the code lists

    record = pycountry.languages.get(alpha_3=iso3)
    return getattr(record, "alpha_2", None) or iso3


def parse_spec(data: dict[str, Any], path: Path | None = None) -> CorpusSpec:
    """Validate a parsed TOML document and build the spec (``path`` names it in messages)."""
    label = str(path) if path else "<spec>"
    spec = validate(CorpusSpec, data, lambda problem: spec_error(label, problem))
    spec._path = path
    return spec


def read_spec_file(path: Path) -> CorpusSpec:
    """Read and validate one spec file."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise CorpusError(f"{path}: no such corpus spec file", code="missing_file", value=path) from None
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read corpus spec ({exc.strerror})", code="unreadable_file",
                          value=path) from None  # fmt: skip
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}: not UTF-8 (byte {exc.start})", code="not_utf8", value=path) from None
    except tomllib.TOMLDecodeError as exc:
        raise CorpusError(f"{path}: not valid TOML ({exc})", code="not_toml", value=path) from None
    return parse_spec(data, path)


def shipped_spec_paths() -> list[Path]:
    return sorted(SPEC_DIR.glob("*.toml"))


def list_corpora() -> list[CorpusSpec]:
    """The specs shipped in ``corpora/*.toml``, sorted by id."""
    return sorted((read_spec_file(path) for path in shipped_spec_paths()), key=lambda spec: spec.id)


#: ``flores-200:<code>``: a FLORES-200 language as a corpus without a spec file (``flores_spec``)
FLORES_PREFIX = "flores-200:"
FLORES_CODE = re.compile(r"^[a-z]{3}_[A-Z][a-z]{3}$")


def flores_spec(entry: str) -> CorpusSpec:
    """The spec of ``flores-200:<code>``: id ``flores-<code>`` in lower case with ``-`` (``flores-ces-latn``), its
    eval set the data root's ``flores/<code>.txt`` (dev then devtest, 2,009 lines; the parallel set
    ``flores-200`` keyed by line, dev = lines 1-997); no training text (it is for published tokenizers)."""
    code = entry.removeprefix(FLORES_PREFIX)
    if not FLORES_CODE.match(code):
        raise CorpusError(f"{entry!r}: expected flores-200:<FLORES-200 code>, such as flores-200:ces_Latn, or "
                          "flores-200:all", code="unknown_corpus", value=entry)  # fmt: skip
    return parse_spec({
        "id": f"flores-{code.lower().replace('_', '-')}",
        "language": code,
        "license": "CC BY-SA 4.0 (FLORES-200, NLLB Team et al. 2022)",
        "description": f"FLORES-200 dev+devtest of {code} (2,009 sentences; line i is the same sentence in every "
        "language), evaluation only.",
        "provenance": "data root flores/ (tokbench data fetch --languages; see SOURCES.tsv)",
        "sources": [{"kind": "path", "role": "eval", "format": "text", "files": f"flores/{code}.txt",
                     "parallel": {"name": "flores-200", "key": "line", "dev": [1, 997]}}],
    }, Path(f"<{entry}>"))  # fmt: skip


def load_spec(id_or_path: str | Path) -> CorpusSpec:
    """A shipped spec by id (``embedded-tur``), a FLORES-200 language (``flores-200:ces_Latn``), or a spec file
    by path."""
    if isinstance(id_or_path, str) and id_or_path.startswith(FLORES_PREFIX):
        return flores_spec(id_or_path)
    candidate = Path(id_or_path)
    if candidate.suffix == ".toml" or candidate.exists():
        return read_spec_file(candidate)
    shipped = {path.stem: path for path in shipped_spec_paths()}  # a shipped spec's file is named <id>.toml
    if str(id_or_path) not in shipped:
        known = ", ".join(shipped)
        raise CorpusError(f"unknown corpus {str(id_or_path)!r}; shipped corpora: {known} (or give a .toml path)",
                          code="unknown_corpus", value=str(id_or_path))  # fmt: skip
    return read_spec_file(shipped[str(id_or_path)])
