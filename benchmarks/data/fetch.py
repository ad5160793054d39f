"""Download and verify the data root (FLORES-200, UD treebanks, morpheme gold, published tokenizer files and
tables) from the manifest shipped in ``benchmarks/data/manifest.tsv``.

Every manifest row names a file of the data root, its sha256 and size, one raw URL at a pinned commit (two for
``concat:URL2``), the transform that rebuilds the file from the downloaded bytes, and its licence.  A file is
downloaded to temporary names inside the target folder, transformed, checked against its sha256 and size and only
then renamed onto its path (``os.replace``), so an interruption or a bad download never leaves a half-written file.
Part files of an interrupted download are kept and resumed with an HTTP ``Range`` request; present files whose
sha256 matches are skipped, so re-running is cheap.

Transient failures (HTTP 5xx and 429, a connection reset, a truncated body, a read stalled longer than
``timeout``) are retried ``attempts`` times with exponential backoff (``backoff * 2**k`` seconds).  An HTTP 4xx or a
sha256 mismatch fails that file only (its part files are deleted; the other files are still fetched).  A host that
cannot be reached at all (DNS failure, connection refused, after the retries) stops the fetch with one line naming
the URL.

``TOKBENCH_DATA_MIRROR=http://127.0.0.1:PORT`` fetches every manifest URL ``https://HOST/PATH`` as
``http://127.0.0.1:PORT/HOST/PATH`` instead (a local mirror; the tests serve one from a thread).

FLORES-200 languages beyond the manifest come from the same commit of Petrov et al.'s repository
(``flores200_dataset/{dev,devtest}/<lang>.{dev,devtest}``, dev then devtest).  Their sha256 is not known in
advance: it is recorded on first fetch in the data root's ``LOCAL_MANIFEST.tsv``, so a later run detects a change.
"""

from __future__ import annotations

import csv
import hashlib
import http.client
import os
import re
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from benchmarks.errors import BenchmarkError

SHIPPED_MANIFEST = Path(__file__).resolve().parents[1] / "data" / "manifest.tsv"
LOCAL_MANIFEST = "LOCAL_MANIFEST.tsv"
SOURCES_FILE = "SOURCES.tsv"
MIRROR_VARIABLE = "TOKBENCH_DATA_MIRROR"
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
CHUNK = 1 << 16
#: retry policy and read timeout (seconds) of a fetch
ATTEMPTS, BACKOFF, TIMEOUT = 5, 1.0, 60.0


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


@dataclass
class FetchResult:
    fetched: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)


class NetworkUnreachable(BenchmarkError):
    """The host of a URL cannot be reached at all."""


class TransientError(Exception):
    """A failure worth retrying (5xx, reset, truncated body, timeout)."""


def default_data_dir() -> Path:
    from corpora.sources import fetched_data_root

    return fetched_data_root()


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
    from bpe.base import atomic_write_text

    lines = ["\t".join(COLUMNS)]
    for entry in sorted(entries, key=lambda e: e.path):
        url, transform = (entry.urls[0] if entry.urls else ""), entry.transform
        if len(entry.urls) == 2:
            transform = f"concat:{entry.urls[1]}"
        lines.append("\t".join([entry.path, entry.sha256 or "", "" if entry.size is None else str(entry.size), url,
                                transform, entry.license, entry.note]))  # fmt: skip
    atomic_write_text(path, "\n".join(lines) + "\n")


def mirror_url(url: str, mirror: str | None = None) -> str:
    """``url`` as fetched: through ``$TOKBENCH_DATA_MIRROR`` (``https://HOST/PATH`` -> ``MIRROR/HOST/PATH``)."""
    mirror = mirror if mirror is not None else os.environ.get(MIRROR_VARIABLE)
    if not mirror:
        return url
    parts = urllib.parse.urlsplit(mirror)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BenchmarkError(f"{MIRROR_VARIABLE}={mirror!r}: expected the address of a mirror, such as "
                             "http://127.0.0.1:8000 or https://mirror.example.org/data")  # fmt: skip
    match = re.match(r"^https?://(.+)$", url)
    if not match:
        return url
    return mirror.rstrip("/") + "/" + match.group(1)


def apply_transform(data: bytes, transform: str) -> bytes:
    if not transform:
        return data
    if transform == "crlf-to-lf":
        return data.replace(b"\r\n", b"\n")
    if transform.startswith("drop-line:"):
        number = int(transform.split(":", 1)[1])
        lines = data.split(b"\n")
        if not 1 <= number <= len(lines):
            raise BenchmarkError(f"drop-line:{number}: the download has only {len(lines)} lines")
        del lines[number - 1]
        return b"\n".join(lines)
    raise BenchmarkError(f"unknown transform {transform!r} (expected concat:URL, crlf-to-lf or drop-line:N)")


def sha256_file(path: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


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


def _open(url: str, offset: int, timeout: float) -> http.client.HTTPResponse:
    request = urllib.request.Request(url, headers={"User-Agent": "tokbench-data-fetch"})
    if offset:
        request.add_header("Range", f"bytes={offset}-")
    try:
        return urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:  # the part file is already complete
            raise RangeComplete() from None
        if exc.code >= 500 or exc.code == 429:
            raise TransientError(f"HTTP {exc.code}") from None
        raise
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, (TimeoutError, socket.timeout, ConnectionResetError)):
            raise TransientError(str(reason)) from None
        raise NetworkUnreachable(f"cannot reach {url} ({reason}); no network? Fetch where the host is "
                                 "reachable, or pass --data-dir DIR to an existing data root") from None  # fmt: skip
    except (TimeoutError, ConnectionResetError, http.client.HTTPException) as exc:
        raise TransientError(f"{type(exc).__name__}: {exc}") from None


class RangeComplete(Exception):
    pass


#: the largest file a fetch accepts when the manifest gives no size (a UD treebank's train file is tens of MB):
#: an endless body is cut off here, not read to the end of the disk
MAX_UNKNOWN_BYTES = 1 << 30


def _range_start(response: Any) -> int | None:
    """The first byte of a 206 response's ``Content-Range`` (``bytes START-END/TOTAL``), or None."""
    match = re.match(r"^\s*bytes\s+(\d+)-\d+/(?:\d+|\*)\s*$", response.headers.get("Content-Range") or "")
    return int(match.group(1)) if match else None


def download(url: str, part: Path, timeout: float, on_bytes: Callable[[int], None],
             limit: int = MAX_UNKNOWN_BYTES) -> None:  # fmt: skip
    """Download ``url`` into ``part``, resuming from its current length (one attempt; TransientError to retry);
    a body beyond ``limit`` bytes (or beyond its own Content-Length), or one sent encoded, is a FileFailure."""
    offset = part.stat().st_size if part.exists() else 0
    try:
        response = _open(url, offset, timeout)
    except RangeComplete:
        return
    with response:
        if offset and (response.status != 206 or _range_start(response) != offset):
            offset = 0  # the server ignored the range, or sent another one (a 206 from byte 0 is no resume)
        encoding = (response.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding != "identity":  # tokbench asks for none; a body it cannot read as sent is no file
            raise FileFailure(f"the server sent the body with Content-Encoding {encoding!r}, which is not the file")
        declared = response.headers.get("Content-Length")
        expected = int(declared) if declared is not None and declared.strip().isdigit() else None
        received = 0
        with part.open("ab" if offset else "wb") as handle:
            try:
                while chunk := response.read1(CHUNK):  # what has arrived, not a full CHUNK: saved as it comes
                    if offset + received + len(chunk) > limit:
                        raise FileFailure(f"the body is larger than {limit:,} bytes, more than the file can be")
                    handle.write(chunk)
                    handle.flush()  # what arrived survives a killed process, for the next run to resume from
                    received += len(chunk)
                    on_bytes(len(chunk))
            except (TimeoutError, ConnectionResetError, http.client.HTTPException) as exc:
                raise TransientError(f"{type(exc).__name__} after {offset + received} bytes") from None
        if expected is not None and received < expected:
            raise TransientError(f"truncated body: {received} of {expected} bytes")


def with_retries(action: Callable[[], None], attempts: int, backoff: float) -> None:
    for attempt in range(attempts):
        try:
            action()
            return
        except TransientError:
            if attempt == attempts - 1:
                raise
            time.sleep(backoff * 2**attempt)


def part_paths(target: Path, entry: Entry) -> list[Path]:
    return [target.with_name(f".{target.name}.part{index}") for index in range(len(entry.urls))]


def fetch_entry(entry: Entry, root: Path, *, attempts: int, backoff: float, timeout: float,
                on_bytes: Callable[[int], None]) -> Entry:  # fmt: skip
    """Download, transform, check and move one file into place; the entry with its sha256/size filled in."""
    from bpe.base import atomic_write_bytes

    target = root / entry.path
    target.parent.mkdir(parents=True, exist_ok=True)
    parts = part_paths(target, entry)
    # a download (before its transform) is at most about twice the file (CRLF to LF); without a size, a large cap
    limit = 2 * entry.size + (1 << 20) if entry.size is not None else MAX_UNKNOWN_BYTES
    for url, part in zip(entry.urls, parts, strict=True):
        fetched_url = mirror_url(url)
        try:
            with_retries(lambda u=fetched_url, p=part: download(u, p, timeout, on_bytes, limit), attempts, backoff)
        except TransientError as exc:
            raise FileFailure(f"{fetched_url}: {exc} (after {attempts} attempts; run again to resume)") from None
        except urllib.error.HTTPError as exc:
            for stale in parts:
                stale.unlink(missing_ok=True)
            raise FileFailure(f"{fetched_url}: HTTP {exc.code} {exc.reason}", exc.code) from None
        except FileFailure as exc:  # not the file (too large, encoded): nothing of it is kept
            for stale in parts:
                stale.unlink(missing_ok=True)
            raise FileFailure(f"{fetched_url}: {exc}") from None
    data = apply_transform(b"".join(part.read_bytes() for part in parts), entry.transform)
    digest = hashlib.sha256(data).hexdigest()
    if entry.sha256 is not None and (digest != entry.sha256 or len(data) != entry.size):
        problem = (f"sha256 {digest} ({len(data)} bytes) differs from the manifest's {entry.sha256} "
                   f"({entry.size} bytes)")  # fmt: skip
    else:  # a file no manifest pins yet is recorded only if it is what its folder holds
        problem = content_problem(entry.path, data) if entry.sha256 is None else None
    if problem:
        for part in parts:
            part.unlink(missing_ok=True)
        raise FileFailure(f"{problem}; nothing written")
    atomic_write_bytes(target, data)
    for part in parts:
        part.unlink(missing_ok=True)
    return Entry(entry.path, digest, len(data), entry.urls, entry.transform, entry.license, entry.note)


#: FLORES-200 dev then devtest: the line count of every flores/<lang>.txt
FLORES_DEV_LINES, FLORES_DEVTEST_LINES = 997, 1012
FLORES_LINES = FLORES_DEV_LINES + FLORES_DEVTEST_LINES
_MARKUP = re.compile(rb"<(?:!doctype|html|head|body)\b", re.IGNORECASE)
_CONLLU_ID = re.compile(r"^[0-9]+(?:-[0-9]+|\.[0-9]+)?$")


def content_problem(path: str, data: bytes) -> str | None:
    """What is wrong with a downloaded file that no sha256 pins (``--languages``, ``--ud``), or None: a
    server may answer 200 with an error page, a compressed body or nothing.  A FLORES-200 file is UTF-8
    text of ``FLORES_LINES`` non-empty lines without NUL or HTML markup; a UD file is UTF-8 CoNLL-U (every
    line blank, a ``#`` comment or 10 tab-separated fields starting with a word id; one word at least)."""
    group = path.split("/", 1)[0]
    if group not in ("flores", "ud"):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text (byte {exc.start})"
    if "\x00" in text or _MARKUP.search(data):
        return "holds NUL bytes or HTML markup, not " + ("FLORES-200 text" if group == "flores" else "CoNLL-U")
    lines = text.splitlines()
    if group == "flores":
        empty = next((number for number, line in enumerate(lines, 1) if not line.strip()), None)
        if len(lines) != FLORES_LINES or empty is not None:
            found = f"line {empty} is empty" if empty is not None else f"{len(lines):,} lines"
            return f"not a FLORES-200 file ({found}; expected {FLORES_LINES:,} non-empty lines, dev then devtest)"
        return None
    words = 0
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 10 or not _CONLLU_ID.match(fields[0]):
            return f"not CoNLL-U (line {number}: expected 10 tab-separated fields starting with a word id)"
        words += 1
    return None if words else "not CoNLL-U (no word line)"


class FileFailure(Exception):
    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def is_verified(entry: Entry, root: Path) -> bool:
    target = root / entry.path
    if entry.sha256 is None or not target.is_file():
        return False
    return target.stat().st_size == entry.size and sha256_file(target) == (entry.sha256, entry.size)


@contextmanager
def data_root_lock(root: Path) -> Iterator[None]:
    """Hold ``root``'s fetch lock while fetching into it: a second fetch into the same root is refused while the
    first runs.  The lock is the operating system's (``filelock``: a killed fetch leaves none held) on a file
    in the cache (``$TOKBENCH_CACHE/locks``), named by the root's resolved path, so the root holds nothing but
    its files."""
    from filelock import FileLock, Timeout

    from corpora.loader import cache_home

    name = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    locks = cache_home() / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(locks / f"data-{name}.lock"), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise BenchmarkError(f"{root}: another `tokbench data fetch` is writing this data root; wait for it to "
                             "finish") from None  # fmt: skip
    try:
        yield
    finally:
        lock.release()


def fetch(root: Path, *, only: Sequence[str] | None = None, languages: Sequence[str] | None = None,
          treebanks: Sequence[str] | None = None, manifest: Sequence[Entry] | None = None,
          attempts: int | None = None, backoff: float | None = None, timeout: float | None = None,
          progress: bool = True) -> FetchResult:  # fmt: skip
    """Fetch the selected entries of ``manifest`` (default: the shipped one) into ``root``; the retry policy
    defaults to ``ATTEMPTS``, ``BACKOFF`` and ``TIMEOUT``."""
    from tqdm import tqdm

    attempts = ATTEMPTS if attempts is None else attempts
    backoff = BACKOFF if backoff is None else backoff
    timeout = TIMEOUT if timeout is None else timeout

    manifest = list(manifest) if manifest is not None else read_manifest()
    root.mkdir(parents=True, exist_ok=True)
    with data_root_lock(root):  # two fetches into one root would interleave their writes
        local_path = root / LOCAL_MANIFEST
        local = {e.path: e for e in read_manifest(local_path)} if local_path.is_file() else {}
        entries = select(manifest, only, languages, list(local.values()), treebanks)
        result = FetchResult()
        todo = []
        for entry in entries:
            if not entry.urls:
                if not is_verified(entry, root):
                    result.unavailable[entry.path] = entry.note or "no URL in the manifest"
                else:
                    result.present.append(entry.path)
            elif is_verified(entry, root):
                result.present.append(entry.path)
            else:
                todo.append(entry)
        total = sum(entry.size or 0 for entry in todo)
        with tqdm(total=total, unit="B", unit_scale=True, desc="fetching", disable=not progress,
                  file=sys.stderr) as bar:  # fmt: skip
            for entry in todo:
                try:
                    done = fetch_entry(entry, root, attempts=attempts, backoff=backoff, timeout=timeout,
                                       on_bytes=bar.update)  # fmt: skip
                except FileFailure as exc:
                    if entry.optional and exc.status == 404:
                        result.unavailable[entry.path] = f"not in this treebank ({exc})"
                    else:
                        result.failed[entry.path] = str(exc)
                    continue
                result.fetched.append(entry.path)
                if entry.sha256 is None:  # not in the shipped manifest: recorded now, checked from now on
                    local[entry.path] = done
                    write_manifest(local_path, local.values())
        for name in treebanks or ():
            _treebank_found(name, result, root)
        write_sources(root, [e for e in entries if (root / e.path).is_file()])
        return result


def _treebank_found(name: str, result: FetchResult, root: Path) -> None:
    """A treebank none of whose splits exists at its tag (all 404: misspelt, or not released there) is a
    failure, not three splits "not in this treebank"; the folder made for it is removed when left empty."""
    paths = [entry.path for entry in ud_entries(name)]
    if all(path in result.unavailable for path in paths):
        for path in paths:
            del result.unavailable[path]
        result.failed[name] = "treebank not found (no train, dev or test file at its tag)"
        folder = root / PurePosixPath(paths[0]).parent
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def write_sources(root: Path, entries: Sequence[Entry]) -> None:
    """``SOURCES.tsv`` beside the files: where each came from, how it was rebuilt, its licence."""
    from bpe.base import atomic_write_text

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


@dataclass
class Verification:
    matching: list[str] = field(default_factory=list)
    mismatched: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    #: missing files the manifest has no URL for (to be copied by hand): listed, not a failure
    not_downloadable: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatched and not self.missing


def verify(root: Path, *, manifest: Sequence[Entry] | None = None, only: Sequence[str] | None = None) -> Verification:
    """Every manifest file (and every file recorded in ``LOCAL_MANIFEST.tsv``) present with its sha256 and size."""
    manifest = list(manifest) if manifest is not None else read_manifest()
    local_path = root / LOCAL_MANIFEST
    local = read_manifest(local_path) if local_path.is_file() else []
    groups = set(only or GROUPS)
    # a local row records a file the shipped manifest does not pin; it never overrides a shipped pin
    known = {e.path: e for e in [*local, *manifest]}
    result = Verification()
    for path, entry in sorted(known.items()):
        if entry.group not in groups:
            continue
        target = root / path
        if not target.is_file():
            (result.missing if entry.urls else result.not_downloadable).append(path)
            continue
        size = target.stat().st_size
        if entry.size is not None and size != entry.size:  # no need to hash it (a large stand-in costs seconds)
            result.mismatched[path] = f"{size} bytes, manifest {entry.sha256} ({entry.size} bytes)"
            continue
        digest, size = sha256_file(target)
        if (digest, size) == (entry.sha256, entry.size):
            result.matching.append(path)
        else:
            result.mismatched[path] = f"sha256 {digest} ({size} bytes), manifest {entry.sha256} ({entry.size} bytes)"
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = file.relative_to(root).as_posix()
        if relative in known or relative in BOOKKEEPING or any(part.startswith(".") for part in relative.split("/")):
            continue
        if relative.split("/", 1)[0] in groups:
            result.extra.append(relative)
    return result


def provenance(root: Path) -> dict[str, object]:
    """How a data root compares with the shipped manifest, for a run's manifest.json (never an error)."""
    check = verify(root)
    return {
        "matches_manifest": check.ok and not check.extra,
        "matching": len(check.matching),
        "differing": sorted(check.mismatched),
        "missing": check.missing,
        "extra": check.extra,
    }
