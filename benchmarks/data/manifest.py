"""The data root's manifest: the files tokbench fetches, where from, and how each is rebuilt and checked.

Every manifest row names a file of the data root, its sha256 and size, one raw URL at a pinned commit (two for
``concat:URL2``), the transform that rebuilds the file from the downloaded bytes, and its licence.  The shipped
manifest is ``benchmarks/data/manifest.tsv``; a data root's own ``LOCAL_MANIFEST.tsv`` records the files no
shipped row pins (read as untrusted input: every row is checked).

FLORES-200 languages beyond the manifest come from the same commit of Petrov et al.'s repository
(``flores200_dataset/{dev,devtest}/<lang>.{dev,devtest}``, dev then devtest); Universal Dependencies treebanks
from their own repositories at a release tag (``ud_entries``).  ``select`` plans which entries a fetch or verify
covers; ``write_sources`` keeps ``SOURCES.tsv`` (where each file came from, its licence) beside the files.
"""

from __future__ import annotations

import csv
import re
import urllib.parse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from benchmarks.errors import BenchmarkError

SHIPPED_MANIFEST = Path(__file__).resolve().parents[1] / "data" / "manifest.tsv"
LOCAL_MANIFEST = "LOCAL_MANIFEST.tsv"
SOURCES_FILE = "SOURCES.tsv"
COLUMNS = ("path", "sha256", "bytes", "url", "transform", "license", "note")
GROUPS = ("flores", "ud", "morph", "tokenizers", "published")
#: files of a data root that are its own bookkeeping, not data (never "extra" in verify)
BOOKKEEPING = {"MANIFEST.tsv", LOCAL_MANIFEST, SOURCES_FILE, "README.md"}
#: licence texts that restrict use (printed after every fetch that includes such a file)
RESTRICTIVE = re.compile(r"\bNC\b|non-?commercial|Llama 2|Tongyi Qianwen", re.IGNORECASE)
FLORES_CODE = re.compile(r"^[a-z]{3}_[A-Z][a-z]{3}$")
UD_NAME = re.compile(r"^UD_([A-Z][A-Za-z_]*)-([A-Za-z0-9]+)(?:@(.*))?$")
#: a release tag (r2.16) or a commit (7 to 40 hex digits): a name of the repository, never a path (``..``)
UD_TAG = re.compile(r"^(?:r[0-9]+\.[0-9]+|[0-9a-f]{7,40})$")
#: the UD release tag ``--ud`` reads when the name gives none (the manifest's UD files are at r2.11-r2.18)
UD_DEFAULT_TAG = "r2.16"
UD_RAW = "https://raw.githubusercontent.com/UniversalDependencies"


@dataclass(frozen=True)
class Entry:
    """One file of the data root; ``sha256``/``size`` are None for a file not yet recorded anywhere."""

    path: str
    sha256: str | None
    size: int | None
    urls: tuple[str, ...]
    transform: str = ""
    license: str = ""
    note: str = ""
    #: a file a treebank may lack (``--ud``: not every treebank has a train or dev split): a 404 is no failure
    optional: bool = False

    @property
    def group(self) -> str:
        return self.path.split("/", 1)[0]


def read_manifest(path: Path | None = None) -> list[Entry]:
    """The rows of a manifest TSV (default: the shipped one; ``#`` lines are comments); a bad row is a
    BenchmarkError naming the line."""
    path = path or SHIPPED_MANIFEST
    entries = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise BenchmarkError(f"{path}: not UTF-8 text (byte {exc.start}); expected a manifest TSV") from None
    header: list[str] | None = None
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if header is None:
            header = cells
            if header[:6] != list(COLUMNS[:6]):
                raise BenchmarkError(f"{path}:{number}: expected the columns {', '.join(COLUMNS)}, got {cells}")
            continue
        row = dict(zip(header, cells + [""] * (len(header) - len(cells)), strict=False))
        try:
            size = int(row["bytes"]) if row["bytes"] else None
        except ValueError:
            raise BenchmarkError(f"{path}:{number}: bytes {row['bytes']!r} is not a number") from None
        urls = (row["url"],) if row["url"] else ()
        transform = row["transform"]
        if transform.startswith("concat:"):
            urls += (transform[len("concat:"):],)
            transform = ""
        problem = _row_problem(row["path"], urls, transform)
        if problem:
            raise BenchmarkError(f"{path}:{number}: {problem}")
        entries.append(Entry(row["path"], row["sha256"] or None, size, urls, transform, row["license"],
                             row.get("note", "")))  # fmt: skip
    return entries


#: a data root file's path: relative, inside the root (no "..", no absolute path, no backslash)
_SAFE_PATH = re.compile(r"^(?!/)(?!.*(?:^|/)\.\.(?:/|$))[^\\\x00]+$")
_DROP_LINE = re.compile(r"^drop-line:[1-9][0-9]*$")


def _row_problem(path: str, urls: Sequence[str], transform: str) -> str:
    """What is wrong with a manifest row (a data root's own ``LOCAL_MANIFEST.tsv`` is untrusted input), or ""."""
    if not _SAFE_PATH.match(path) or PurePosixPath(path).is_absolute():
        return f"path {path!r} must be relative and stay inside the data root (no '..')"
    for url in urls:
        if urllib.parse.urlsplit(url).scheme != "https" or not urllib.parse.urlsplit(url).netloc:
            return f"url {url!r} must be an https:// address (a mirror is set with TOKBENCH_DATA_MIRROR)"
    if transform not in ("", "crlf-to-lf") and not _DROP_LINE.match(transform):
        return f"transform {transform!r}: expected concat:URL, crlf-to-lf or drop-line:N (N >= 1)"
    return ""


def write_manifest(path: Path, entries: Iterable[Entry]) -> None:
    from bpe.atomic import atomic_write_text

    lines = ["\t".join(COLUMNS)]
    for entry in sorted(entries, key=lambda e: e.path):
        url, transform = (entry.urls[0] if entry.urls else ""), entry.transform
        if len(entry.urls) == 2:
            transform = f"concat:{entry.urls[1]}"
        lines.append("\t".join([entry.path, entry.sha256 or "", "" if entry.size is None else str(entry.size), url,
                                transform, entry.license, entry.note]))  # fmt: skip
    atomic_write_text(path, "\n".join(lines) + "\n")


def flores_entry(language: str, manifest: Sequence[Entry]) -> Entry:
    """The FLORES-200 file of ``language``: the manifest's row, or one built from the same commit's layout."""
    if not FLORES_CODE.match(language):
        raise BenchmarkError(f"--languages {language}: expected a FLORES-200 code such as fin_Latn")
    path = f"flores/{language}.txt"
    for entry in manifest:
        if entry.path == path:
            return entry
    template = next((e for e in manifest if e.group == "flores" and len(e.urls) == 2), None)
    if template is None:
        raise BenchmarkError("the manifest has no FLORES-200 row to take the repository and commit from")
    known = template.path.removeprefix("flores/").removesuffix(".txt")
    urls = tuple(url.replace(f"/{known}.", f"/{language}.") for url in template.urls)
    return Entry(path, None, None, urls, "", template.license)


def ud_entries(name: str) -> list[Entry]:
    """The train/dev/test files of a Universal Dependencies treebank ``UD_<Language>-<Treebank>[@TAG]`` from its
    repository at a release tag (default ``UD_DEFAULT_TAG``), stored as ``ud/<code>/<code>_<treebank>-ud-<split>
    .conllu`` (UD's own file names: ISO 639-1 code where one exists, else ISO 639-3)."""
    import pycountry

    match = UD_NAME.match(name)
    if not match:
        raise BenchmarkError(f"--ud {name}: expected a treebank name such as UD_Finnish-TDT (optionally @r2.16)")
    language_name, treebank, tag = match.group(1), match.group(2), match.group(3)
    if tag is not None and not UD_TAG.match(tag):
        raise BenchmarkError(f"--ud {name}: bad tag {tag!r}: expected a UD release tag such as r2.16, or a commit")
    tag = tag or UD_DEFAULT_TAG
    language = pycountry.languages.get(name=language_name.replace("_", " "))
    if language is None:
        raise BenchmarkError(f"--ud {name}: {language_name.replace('_', ' ')!r} is not a language name pycountry knows")
    code = getattr(language, "alpha_2", None) or language.alpha_3
    stem = f"{code}_{treebank.lower()}"
    repository = f"UD_{language_name}-{treebank}"
    return [Entry(f"ud/{code}/{stem}-ud-{split}.conllu", None, None, (f"{UD_RAW}/{repository}/{tag}/{stem}-ud-{split}"
                  ".conllu",), "", f"see {repository}'s LICENSE.txt at {tag}", optional=True)
            for split in ("train", "dev", "test")]  # fmt: skip


def select(manifest: Sequence[Entry], only: Sequence[str] | None, languages: Sequence[str] | None,
           local: Sequence[Entry] = (), treebanks: Sequence[str] | None = None) -> list[Entry]:  # fmt: skip
    """The entries a fetch or verify covers: ``only`` groups, FLORES restricted to ``languages`` when given."""
    groups = list(only or GROUPS)
    for group in groups:
        if group not in GROUPS:
            raise BenchmarkError(f"--only {group}: expected some of {', '.join(GROUPS)}")
    recorded = {entry.path: entry for entry in local}
    chosen = [e for e in manifest if e.group in groups and not (languages and e.group == "flores")]
    if languages:
        for language in languages:
            entry = flores_entry(language, manifest)
            chosen.append(recorded.get(entry.path, entry) if entry.sha256 is None else entry)
    elif "flores" in groups:
        known = {e.path for e in chosen}
        chosen += [e for e in local if e.group == "flores" and e.path not in known]
    for name in treebanks or ():
        for entry in ud_entries(name):
            chosen.append(recorded.get(entry.path, entry))
    return chosen


def write_sources(root: Path, entries: Sequence[Entry]) -> None:
    """``SOURCES.tsv`` beside the files: where each came from, how it was rebuilt, its licence."""
    from bpe.atomic import atomic_write_text

    previous: dict[str, list[str]] = {}
    sources = root / SOURCES_FILE
    if sources.is_file():
        with sources.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle, delimiter="\t"))
        if rows and rows[0] == ["file", "url", "transform", "license"]:
            previous = {row[0]: row for row in rows[1:] if row}
    for entry in entries:
        transform = " + ".join(filter(None, [f"concat:{entry.urls[1]}" if len(entry.urls) == 2 else "",
                                             entry.transform]))  # fmt: skip
        previous[entry.path] = [entry.path, entry.urls[0] if entry.urls else "", transform, entry.license]
    lines = ["file\turl\ttransform\tlicense"] + ["\t".join(previous[key]) for key in sorted(previous)]
    atomic_write_text(sources, "\n".join(lines) + "\n")


def restrictive_licenses(entries: Iterable[Entry]) -> dict[str, list[str]]:
    """Licence -> the files under it, for licences that restrict use (non-commercial, Llama 2, Qwen)."""
    found: dict[str, list[str]] = {}
    for entry in entries:
        if RESTRICTIVE.search(entry.license):
            found.setdefault(entry.license, []).append(entry.path)
    return found
