"""Corpus specs: one TOML file per corpus, validated on load (like mteb task metadata).

A spec says *what* text a corpus is made of and *where* it comes from; ``corpora.loader`` reads it.
Every table is checked against a fixed set of keys: an unknown, missing or mistyped key is a
``CorpusError`` naming the file, the table and the allowed keys.  See ``corpora/README.md`` for the
field reference and a worked example.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from corpora.errors import CorpusError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: where the shipped specs live (installed as package data)
SPEC_DIR = Path(__file__).resolve().parent

ROLES = ("train", "test", "eval")
SOURCE_ROLES = (*ROLES, "all")  # "all" = split into train/test by a hash of the document id
SOURCE_KINDS = ("package", "path", "hf")
FILE_FORMATS = ("text", "conllu", "jsonl", "parquet", "csv", "tsv", "rl-wsd")
TABULAR_FORMATS = ("jsonl", "parquet", "csv", "tsv")
NORMALIZATIONS = ("NFC", "NFKC", "none")

_LANGUAGE_PATTERN = re.compile(r"^([a-z]{3})_([A-Z][a-z]{3})$")
_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


@dataclass(frozen=True)
class HubSource:
    """A Hugging Face dataset split (or a local folder that ``datasets.load_dataset`` reads)."""

    dataset: str
    split: str
    config: str | None = None
    revision: str | None = None
    column: str = "text"
    words_column: str | None = None

    def describe(self) -> str:
        parts = [self.dataset, self.config or "", self.split]
        return "/".join(p for p in parts if p) + (f"@{self.revision}" if self.revision else "")


@dataclass(frozen=True)
class Source:
    """One ``[[sources]]`` entry.  ``hub`` holds the hub split(s) to read: for ``kind = "hf"`` the
    source itself, for ``kind = "path"`` the alternatives used when no data root is given."""

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

    def describe(self) -> str:
        if self.kind == "package":
            return f"source #{self.index} (package {self.package!r}: {', '.join(self.files)})"
        if self.kind == "path":
            return f"source #{self.index} ({', '.join(self.files)})"
        return f"source #{self.index} (hub {self.hub[0].describe()})"


@dataclass(frozen=True)
class ReferenceSpec:
    """A morpheme reference: gold files read by a named reader, or a silver analyzer over test words."""

    name: str
    reader: str | None = None
    files: tuple[str, ...] = ()
    analyzer: str | None = None


@dataclass(frozen=True)
class CorpusSpec:
    id: str
    language: str  # ISO 639-3 + "_" + ISO 15924, e.g. tur_Latn
    license: str
    description: str
    sources: tuple[Source, ...]
    provenance: str = ""
    normalization: str = "NFC"
    test_fraction: float = 0.1
    max_documents: int | None = None
    max_chars: int | None = None
    references: tuple[ReferenceSpec, ...] = ()
    path: Path | None = field(default=None, compare=False)

    @property
    def language_code(self) -> str:
        """ISO 639-3 part of ``language`` (``tur``)."""
        return self.language.split("_")[0]

    @property
    def script(self) -> str:
        """ISO 15924 part of ``language`` (``Latn``)."""
        return self.language.split("_")[1]

    @property
    def short_language(self) -> str:
        """ISO 639-1 code where one exists (``tr``), else ISO 639-3: what the morpheme readers take."""
        import pycountry

        record = pycountry.languages.get(alpha_3=self.language_code)
        return getattr(record, "alpha_2", None) or self.language_code

    def loading_fields(self) -> dict[str, Any]:
        """The fields that decide the loaded text (part of the cache key)."""
        fields = asdict(self)
        for prose in ("description", "license", "provenance", "references", "path"):
            fields.pop(prose)
        return fields


# -- schema checking --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Key:
    types: tuple[type, ...]
    required: bool = False
    choices: tuple[Any, ...] | None = None


_STR = (str,)
_STRS = (str, list)  # one string or a list of strings

TOP_KEYS: dict[str, _Key] = {
    "id": _Key(_STR, required=True),
    "language": _Key(_STR, required=True),
    "license": _Key(_STR, required=True),
    "description": _Key(_STR, required=True),
    "provenance": _Key(_STR),
    "normalization": _Key(_STR, choices=NORMALIZATIONS),
    "test_fraction": _Key((float,)),
    "max_documents": _Key((int,)),
    "max_chars": _Key((int,)),
    "sources": _Key((list,), required=True),
    "references": _Key((list,)),
}
SOURCE_KEYS: dict[str, _Key] = {
    "kind": _Key(_STR, required=True, choices=SOURCE_KINDS),
    "role": _Key(_STR, required=True, choices=SOURCE_ROLES),
    "format": _Key(_STR, choices=FILE_FORMATS),
    "package": _Key(_STR),
    "files": _Key(_STRS),
    "column": _Key(_STR),
    "words_column": _Key(_STR),
    "words": _Key((bool,)),
    "transforms": _Key((list,)),
    "dataset": _Key(_STR),
    "config": _Key(_STR),
    "split": _Key(_STR),
    "revision": _Key(_STR),
    "hub": _Key((list,)),
}
HUB_KEYS: dict[str, _Key] = {
    "dataset": _Key(_STR, required=True),
    "split": _Key(_STR, required=True),
    "config": _Key(_STR),
    "revision": _Key(_STR),
    "column": _Key(_STR),
    "words_column": _Key(_STR),
}
REFERENCE_KEYS: dict[str, _Key] = {
    "name": _Key(_STR, required=True),
    "reader": _Key(_STR),
    "files": _Key(_STRS),
    "analyzer": _Key(_STR),
}
#: which source keys each kind accepts (beyond kind/role/transforms)
_KIND_KEYS = {
    "package": {"format", "package", "files", "column", "words_column", "words"},
    "path": {"format", "files", "column", "words_column", "words", "hub"},
    "hf": {"dataset", "config", "split", "revision", "column", "words_column"},
}
_KIND_REQUIRED = {"package": ("format", "package", "files"), "path": ("format", "files"), "hf": ("dataset", "split")}


def _type_name(types: tuple[type, ...]) -> str:
    names = {str: "a string", list: "a list", int: "an integer", float: "a number", bool: "true or false"}
    if types == _STRS:
        return "a string or a list of strings"
    return " or ".join(names[t] for t in types)


def _check_table(table: Any, schema: Mapping[str, _Key], where: str) -> dict[str, Any]:
    """Check one TOML table against ``schema``; ``where`` names the file and table for messages."""
    if not isinstance(table, dict):
        raise CorpusError(f"{where}: expected a table, got {type(table).__name__}")
    unknown = sorted(set(table) - set(schema))
    if unknown:
        raise CorpusError(f"{where}: unknown key {unknown[0]!r}; allowed keys: {', '.join(schema)}")
    for key, spec in schema.items():
        if key not in table:
            if spec.required:
                raise CorpusError(f"{where}: missing required key {key!r}")
            continue
        value = table[key]
        # bool is an int subclass in Python: never accept true/false for a number
        wrong_type = not isinstance(value, spec.types) or (isinstance(value, bool) and bool not in spec.types)
        if float in spec.types and isinstance(value, int) and not isinstance(value, bool):
            wrong_type = False  # 1 is a fine number where 1.0 is expected
        if wrong_type:
            raise CorpusError(f"{where}: key {key!r} must be {_type_name(spec.types)}, got {value!r}")
        if spec.choices is not None and value not in spec.choices:
            raise CorpusError(f"{where}: key {key!r} = {value!r} is not one of: {', '.join(map(str, spec.choices))}")
    return dict(table)


def _string_list(value: str | list[Any], where: str, key: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not items or not all(isinstance(item, str) and item for item in items):
        raise CorpusError(f"{where}: key {key!r} must be a non-empty string or a list of non-empty strings")
    return tuple(items)


def _check_language(code: str, where: str) -> None:
    match = _LANGUAGE_PATTERN.match(code)
    if not match:
        raise CorpusError(
            f"{where}: language {code!r} must be an ISO 639-3 code, '_', an ISO 15924 script (e.g. tur_Latn)"
        )
    import pycountry  # imported here: only spec validation needs the code lists

    language, script = match.groups()
    if pycountry.languages.get(alpha_3=language) is None:
        raise CorpusError(f"{where}: language {code!r}: {language!r} is not an ISO 639-3 language code")
    if pycountry.scripts.get(alpha_4=script) is None:
        raise CorpusError(f"{where}: language {code!r}: {script!r} is not an ISO 15924 script code")


def _positive(value: int | None, where: str, key: str) -> None:
    if value is not None and value <= 0:
        raise CorpusError(f"{where}: key {key!r} must be a positive integer, got {value}")


def _source(table: Any, index: int, file_label: str) -> Source:
    where = f"{file_label}: [[sources]] #{index}"
    checked = _check_table(table, SOURCE_KEYS, where)
    kind = checked["kind"]
    extra = sorted(set(checked) - {"kind", "role", "transforms"} - _KIND_KEYS[kind])
    if extra:
        allowed = ", ".join(["kind", "role", "transforms", *sorted(_KIND_KEYS[kind])])
        raise CorpusError(f"{where}: key {extra[0]!r} does not apply to kind = {kind!r}; allowed keys: {allowed}")
    for key in _KIND_REQUIRED[kind]:
        if key not in checked:
            raise CorpusError(f"{where}: kind = {kind!r} needs key {key!r}")
    from corpora.sources import TRANSFORMS  # imported here: sources imports this module

    transforms = tuple(checked.get("transforms", ()))
    for name in transforms:
        if name not in TRANSFORMS:
            raise CorpusError(f"{where}: unknown transform {name!r}; choose from: {', '.join(TRANSFORMS)}")
    fmt = checked.get("format")
    if ("column" in checked or "words_column" in checked) and kind != "hf" and fmt not in TABULAR_FORMATS:
        raise CorpusError(f"{where}: 'column'/'words_column' apply to formats {', '.join(TABULAR_FORMATS)} only")
    if "words" in checked and fmt != "conllu":
        raise CorpusError(f"{where}: 'words' applies to format 'conllu' only")
    if kind == "hf":
        hub = (HubSource(**{k: checked[k] for k in HUB_KEYS if k in checked}),)
    else:
        hub = tuple(
            HubSource(**_check_table(alternative, HUB_KEYS, f"{where} [[sources.hub]] #{n}"))
            for n, alternative in enumerate(checked.get("hub", []), start=1)
        )
    return Source(
        index=index,
        kind=kind,
        role=checked["role"],
        format=fmt,
        package=checked.get("package"),
        files=_string_list(checked["files"], where, "files") if "files" in checked else (),
        column=checked.get("column", "text"),
        words_column=checked.get("words_column"),
        words=checked.get("words", True),
        transforms=transforms,
        hub=hub,
    )


def _reference(table: Any, index: int, file_label: str) -> ReferenceSpec:
    where = f"{file_label}: [[references]] #{index}"
    checked = _check_table(table, REFERENCE_KEYS, where)
    reader, analyzer = checked.get("reader"), checked.get("analyzer")
    if (reader is None) == (analyzer is None):
        raise CorpusError(f"{where}: give exactly one of 'reader' (gold files) or 'analyzer' (silver)")
    if reader is not None and "files" not in checked:
        raise CorpusError(f"{where}: 'reader' needs 'files' (paths under the data root)")
    if analyzer is not None and "files" in checked:
        raise CorpusError(f"{where}: 'files' does not apply to an 'analyzer' reference")
    files = _string_list(checked["files"], where, "files") if "files" in checked else ()
    return ReferenceSpec(name=checked["name"], reader=reader, files=files, analyzer=analyzer)


def parse_spec(data: dict[str, Any], path: Path | None = None) -> CorpusSpec:
    """Validate a parsed TOML document and build the spec (``path`` only names it in messages)."""
    label = str(path) if path else "<spec>"
    top = _check_table(data, TOP_KEYS, label)
    if not _ID_PATTERN.match(top["id"]):
        raise CorpusError(f"{label}: id {top['id']!r} must be lower-case letters, digits, '.', '_' or '-'")
    _check_language(top["language"], label)
    test_fraction = float(top.get("test_fraction", 0.1))
    if not 0.0 < test_fraction < 1.0:
        raise CorpusError(f"{label}: test_fraction must be between 0 and 1 (exclusive), got {test_fraction}")
    for key in ("max_documents", "max_chars"):
        _positive(top.get(key), label, key)
    if not top["sources"]:
        raise CorpusError(f"{label}: 'sources' is empty; give at least one [[sources]] table")
    sources = tuple(_source(table, n, label) for n, table in enumerate(top["sources"], start=1))
    references = tuple(_reference(table, n, label) for n, table in enumerate(top.get("references", []), start=1))
    names = [reference.name for reference in references]
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        raise CorpusError(f"{label}: reference name {duplicated[0]!r} is used twice")
    return CorpusSpec(
        id=top["id"],
        language=top["language"],
        license=top["license"],
        description=top["description"].strip(),
        provenance=top.get("provenance", "").strip(),
        normalization=top.get("normalization", "NFC"),
        test_fraction=test_fraction,
        max_documents=top.get("max_documents"),
        max_chars=top.get("max_chars"),
        sources=sources,
        references=references,
        path=path,
    )


def read_spec_file(path: Path) -> CorpusSpec:
    """Read and validate one spec file."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise CorpusError(f"{path}: no such corpus spec file") from None
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read corpus spec ({exc.strerror})") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}: not UTF-8 (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise CorpusError(f"{path}: not valid TOML ({exc})") from None
    return parse_spec(data, path)


def shipped_spec_paths() -> list[Path]:
    return sorted(SPEC_DIR.glob("*.toml"))


def list_corpora() -> list[CorpusSpec]:
    """The specs shipped in ``corpora/*.toml``, sorted by id."""
    return sorted((read_spec_file(path) for path in shipped_spec_paths()), key=lambda spec: spec.id)


def load_spec(id_or_path: str | Path) -> CorpusSpec:
    """A shipped spec by id (``embedded-tur``), or a spec file by path."""
    candidate = Path(id_or_path)
    if candidate.suffix == ".toml" or candidate.exists():
        return read_spec_file(candidate)
    shipped = {path.stem: path for path in shipped_spec_paths()}  # a shipped spec's file is named <id>.toml
    if str(id_or_path) not in shipped:
        known = ", ".join(shipped)
        raise CorpusError(f"unknown corpus {str(id_or_path)!r}; shipped corpora: {known} (or give a .toml path)")
    return read_spec_file(shipped[str(id_or_path)])
