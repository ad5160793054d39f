"""A loopback HTTP mirror for the data fetcher's tests: a real ``http.server`` on 127.0.0.1 in a thread, serving a
folder laid out as the manifest's URLs (``HOST/PATH``), with ``Range`` support and injectable faults.

``build_layout`` writes that folder from a data root by applying each manifest transform backwards: a
``concat:`` row is split after ``split_line`` lines (FLORES-200: 997 dev lines), ``crlf-to-lf`` turns every LF back
into CRLF, ``drop-line:N`` inserts a line N again.  The fetcher then has to undo them to get the sha256 right.
"""

from __future__ import annotations

import http.server
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from benchmarks.data.fetch import Entry


def url_path(url: str) -> str:
    return re.sub(r"^https?://", "", url)


def upstream_parts(data: bytes, entry: Entry, split_line: int) -> list[bytes]:
    """The bytes each URL of ``entry`` serves, given the data root's file ``data``."""
    if len(entry.urls) == 2:
        lines = data.splitlines(keepends=True)
        return [b"".join(lines[:split_line]), b"".join(lines[split_line:])]
    if entry.transform == "crlf-to-lf":
        return [data.replace(b"\n", b"\r\n")]
    if entry.transform.startswith("drop-line:"):
        number = int(entry.transform.split(":", 1)[1])
        lines = data.split(b"\n")
        lines.insert(number - 1, b"a line the data root leaves out")
        return [b"\n".join(lines)]
    return [data]


def build_layout(entries: Sequence[Entry], source_root: Path, dest: Path, split_line: int) -> int:
    """Write every URL of ``entries`` under ``dest``; the number of files written."""
    written = 0
    for entry in entries:
        if not entry.urls:
            continue
        data = (source_root / entry.path).read_bytes()
        for url, part in zip(entry.urls, upstream_parts(data, entry, split_line), strict=True):
            target = dest / url_path(url)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(part)
            written += 1
    return written


#: a fault: called with (handler, path, body); returns True when it answered the request itself
Fault = Callable[[http.server.BaseHTTPRequestHandler, str, bytes], bool]


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a hanging fault must not hold up the test's teardown

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hung up on a faulty response is expected; socketserver's default would print
        a traceback to stderr, into whichever test of the worker is capturing it."""


class MirrorServer:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.faults: dict[str, list[Fault]] = {}  # URL path suffix -> faults applied to successive requests
        self.requests: list[tuple[str, str | None]] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *_: object) -> None:
                pass

            def do_GET(self) -> None:
                path = self.path.lstrip("/")
                server.requests.append((path, self.headers.get("Range")))
                file = server.root / path
                body = file.read_bytes() if file.is_file() else None
                for suffix, queue in server.faults.items():
                    if path.endswith(suffix) and queue and queue.pop(0)(self, path, body or b""):
                        return
                if body is None:
                    self.send_error(404)
                    return
                start = 0
                match = re.match(r"bytes=(\d+)-$", self.headers.get("Range") or "")
                if match:
                    start = int(match.group(1))
                    if start >= len(body):
                        self.send_error(416)
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                self.wfile.write(body[start:])

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def fail(self, suffix: str, *faults: Fault) -> None:
        self.faults.setdefault(suffix, []).extend(faults)


def status(code: int) -> Fault:
    def answer(handler: http.server.BaseHTTPRequestHandler, _path: str, _body: bytes) -> bool:
        handler.send_error(code)
        return True

    return answer


def truncated(keep: int) -> Fault:
    """Announce the whole body, send ``keep`` bytes of it, close the connection."""

    def answer(handler: http.server.BaseHTTPRequestHandler, _path: str, body: bytes) -> bool:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body[:keep])
        handler.wfile.flush()
        handler.close_connection = True
        return True

    return answer


def hang_after(keep: int, seconds: float) -> Fault:
    """Announce the whole body, send ``keep`` bytes, then hang (a client killed meanwhile leaves a part file)."""

    def answer(handler: http.server.BaseHTTPRequestHandler, _path: str, body: bytes) -> bool:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body[:keep])
        handler.wfile.flush()
        time.sleep(seconds)
        handler.close_connection = True
        return True

    return answer


def wrong_byte(position: int) -> Fault:
    def answer(handler: http.server.BaseHTTPRequestHandler, _path: str, body: bytes) -> bool:
        bad = bytearray(body)
        bad[position] ^= 0x01
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(bad)))
        handler.end_headers()
        handler.wfile.write(bytes(bad))
        return True

    return answer


def stall(seconds: float) -> Fault:
    """Wait before answering (then let the normal answer follow)."""

    def answer(_handler: http.server.BaseHTTPRequestHandler, _path: str, _body: bytes) -> bool:
        time.sleep(seconds)
        return False

    return answer


@contextmanager
def serving(root: Path) -> Iterator[MirrorServer]:
    server = MirrorServer(root)
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join()
