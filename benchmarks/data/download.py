"""Downloading one file of the data root (``fetch_entry``): resumed, capped, retried, checked, then moved into place.

A file is downloaded to temporary names inside the target folder, transformed, checked against its sha256 and
size (a file no manifest pins yet: against what its folder holds, ``content_problem``) and only then renamed onto
its path (``os.replace``), so an interruption or a bad download never leaves a half-written file.  Part files of an
interrupted download are kept and resumed with an HTTP ``Range`` request.  A body is capped at about twice the
file's size (``MAX_UNKNOWN_BYTES`` when no size is known), and one sent encoded is refused.

Transient failures (HTTP 5xx and 429, a connection reset, a truncated body, a read stalled longer than
``timeout``) are retried ``attempts`` times with exponential backoff (``backoff * 2**k`` seconds).  An HTTP 4xx or a
sha256 mismatch fails that file only (a ``FileFailure``; its part files are deleted).  A host that cannot be reached
at all (DNS failure, connection refused) is a ``NetworkUnreachable`` naming the URL.

``TOKBENCH_DATA_MIRROR=http://127.0.0.1:PORT`` fetches every manifest URL ``https://HOST/PATH`` as
``http://127.0.0.1:PORT/HOST/PATH`` instead (a local mirror; the tests serve one from a thread).
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.data.manifest import Entry
from benchmarks.errors import BenchmarkError
from corpora.flores import DEV_LINES, DEVTEST_LINES

MIRROR_VARIABLE = "TOKBENCH_DATA_MIRROR"
CHUNK = 1 << 16


class NetworkUnreachable(BenchmarkError):
    """The host of a URL cannot be reached at all."""


class TransientError(Exception):
    """A failure worth retrying (5xx, reset, truncated body, timeout)."""


class RangeComplete(Exception):
    pass


class FileFailure(Exception):
    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


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
    from bpe.atomic import atomic_write_bytes

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


#: FLORES-200 dev then devtest: the line count of every flores/<lang>.txt (``corpora.flores``)
FLORES_DEV_LINES, FLORES_DEVTEST_LINES = DEV_LINES, DEVTEST_LINES
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
