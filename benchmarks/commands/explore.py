"""`tokbench explore`: a run's tokenizers on any text, in a page served on this machine.

The server is the standard library's ``http.server.ThreadingHTTPServer`` bound to the host given (default
127.0.0.1: only this machine can connect).  It answers

* ``GET /``: the page (``benchmarks.report.explore_page``, self-contained: nothing is fetched from elsewhere);
* ``GET /api/tokenizers``, ``POST /api/encode``, ``POST /api/diff``: JSON (``benchmarks.report.explore_api``);
  a POST must say ``Content-Type: application/json`` (a page of another site cannot send that without the
  browser asking first, and the server never allows it).

A body over ``MAX_REQUEST_BYTES`` is refused with HTTP 413 before it is read; a bad request gets 400 with
``{"error", "code"}`` (the code as ``docs/errors.md`` lists it), a request naming another host than the one
served (DNS rebinding) 403, an unknown path 404.  Ctrl-C stops the server: exit status 0.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import socket
import sys
import textwrap
import webbrowser
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from benchmarks.errors import BenchmarkError
from bpe.base import TokenizerError

DEFAULT_HOST = "127.0.0.1"
API_PATHS = ("/api/encode", "/api/diff")
#: the largest request body the server reads (bytes); a larger one is answered with HTTP 413 unread
MAX_REQUEST_BYTES = 1_000_000


def register(subparsers: argparse._SubParsersAction) -> None:
    summary = "Serve a page on this machine that splits any text with every tokenizer of a run, and compares two."
    parser = subparsers.add_parser(
        "explore",
        help=summary,
        description=textwrap.fill(summary, width=100),
        epilog=textwrap.fill(
            "Loads every tokenizer of RUN_DIR once: each trained row at the report vocabulary size (the size "
            "closest to it when the row has none at it), one per corpus it was trained on "
            "(RUN_DIR/tokenizers/<corpus>/<label>-<size>.json, named corpus/label), and every pretrained row of "
            "the manifest (production names such as cl100k, and pretrained files, re-loaded only if unchanged "
            "since the run). A row that cannot be loaded is named on stderr and left out. The page shows, for "
            "the text typed, each chosen tokenizer's pieces with their ids, its token, character and byte counts "
            "and bytes per token, and for two tokenizers the boundaries only one has and the words they split "
            "differently (as tokbench diff). The JSON API (GET /api/tokenizers, POST /api/encode, POST "
            f"/api/diff) is in docs/inspect.md; a request body over {MAX_REQUEST_BYTES:,} bytes is refused "
            "(HTTP 413). Ctrl-C stops the server.",
            width=100,
        )
        + "\n\nexamples:\n  tokbench explore runs/quick\n  tokbench explore runs/quick --port 8765 --open",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run directory tokbench run wrote")
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help=f"address to listen on (default {DEFAULT_HOST}: this machine only)")  # fmt: skip
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default 0: a free one)")
    parser.add_argument("--open", action="store_true", help="open the page in the default web browser")
    parser.set_defaults(handler=run_explore)


class ExploreServer(ThreadingHTTPServer):
    """The HTTP server of one run's explorer (module docstring)."""

    daemon_threads = True  # a request in progress does not keep Ctrl-C from ending the process

    def __init__(self, address: tuple[str, int], explorer: Any, page: str) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.explorer = explorer
        self.page = page.encode("utf-8")
        super().__init__(address, ExploreHandler)
        host, port = address[0], self.server_address[1]
        names = {host}
        if _is_loopback(host):
            names |= {"localhost", "127.0.0.1", "[::1]"}
        self.hosts = {f"[{name}]" if ":" in name and not name.startswith("[") else name for name in names}
        self.hosts |= {f"{name}:{port}" for name in self.hosts}

    @property
    def url(self) -> str:
        host = str(self.server_address[0])
        return f"http://{f'[{host}]' if ':' in host else host}:{self.server_address[1]}/"


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


class ExploreHandler(BaseHTTPRequestHandler):
    server: ExploreServer
    server_version = "tokbench-explore"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: requests are not logged."""

    def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: HTTPStatus, data: Any) -> None:
        body = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8")

    def _error(self, status: HTTPStatus, exc: BenchmarkError | TokenizerError) -> None:
        self._json(status, {"error": str(exc), "code": exc.code})

    def _host_allowed(self) -> bool:
        if self.headers.get("Host", "") in self.server.hosts:
            return True
        self._error(HTTPStatus.FORBIDDEN, BenchmarkError(
            f"request for host {self.headers.get('Host')!r}: this server answers {self.server.url} only",
            code="wrong_host", value=self.headers.get("Host")))  # fmt: skip
        return False

    def _content_length(self) -> int:
        """The body's declared length (-1: not a number)."""
        try:
            return int(self.headers.get("Content-Length", "0"))
        except ValueError:
            return -1

    def _refuse_too_large(self, length: int) -> None:
        self.close_connection = True
        self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, BenchmarkError(
            f"request body of {length:,} bytes: the limit is {MAX_REQUEST_BYTES:,} bytes",
            code="request_too_large", value=length))  # fmt: skip

    def handle_expect_100(self) -> bool:
        """A client that asks before sending a body (``Expect: 100-continue``) hears 413 instead of Continue
        when the body is over the limit, and sends nothing more (RFC 9110, 10.1.1)."""
        length = self._content_length()
        if length > MAX_REQUEST_BYTES:
            self._refuse_too_large(length)
            return False
        return super().handle_expect_100()

    def do_GET(self) -> None:
        if not self._host_allowed():
            return
        path = self.path.split("?", 1)[0]
        if path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, self.server.page, "text/html; charset=utf-8")
        elif path == "/api/tokenizers":
            self._json(HTTPStatus.OK, {**self.server.explorer.catalogue(), "max_request_bytes": MAX_REQUEST_BYTES})
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {path}", "code": "not_found"})

    do_HEAD = do_GET

    def do_POST(self) -> None:
        self.close_connection = True  # an unread or refused body must not be read as the next request
        if not self._host_allowed():
            return
        path = self.path.split("?", 1)[0]
        if path not in API_PATHS:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such endpoint: {path}", "code": "not_found"})
            return
        length = self._content_length()
        if length > MAX_REQUEST_BYTES:
            self._refuse_too_large(length)
            return
        media_type = self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        try:
            if length < 0:
                raise BenchmarkError("the Content-Length header is not a number", code="wrong_type",
                                     value=self.headers.get("Content-Length"))  # fmt: skip
            if media_type != "application/json":
                raise BenchmarkError(f"{path}: send the request as Content-Type: application/json, got "
                                     f"{media_type or 'none'!r}", code="not_json", value=media_type)  # fmt: skip
            try:
                request = json.loads(self.rfile.read(length).decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise BenchmarkError(f"{path}: the request body is not JSON text ({exc})", code="not_json") from None
            explorer = self.server.explorer
            answer = explorer.encode(request) if path == "/api/encode" else explorer.diff(request)
        except (BenchmarkError, TokenizerError) as exc:
            self._error(HTTPStatus.BAD_REQUEST, exc)
            return
        except Exception as exc:  # a bug: answered, and the server keeps serving the other requests
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR,
                       {"error": f"internal error (a bug in tokbench): {type(exc).__name__}: {exc}",
                        "code": "internal_error"})  # fmt: skip
            return
        self._json(HTTPStatus.OK, answer)


def make_server(explorer: Any, host: str = DEFAULT_HOST, port: int = 0) -> ExploreServer:
    """The server of ``explorer`` (a ``RunExplorer``) listening on ``host:port`` (0: a free port), not yet
    serving: call ``serve_forever``."""
    from benchmarks.report.explore_page import explore_page

    try:
        return ExploreServer((host, port), explorer, explore_page(explorer.run_dir.name or str(explorer.run_dir)))
    except OSError as exc:
        raise BenchmarkError(f"explore: cannot listen on {host}:{port}: {exc.strerror or exc}",
                             code="cannot_listen", value=f"{host}:{port}") from None  # fmt: skip


def run_explore(args: argparse.Namespace) -> int:
    from benchmarks.report.explore_api import RunExplorer

    if not 0 <= args.port <= 65535:
        raise BenchmarkError(f"--port must be 0 (a free port) to 65535, got {args.port}", code="out_of_range",
                             value=args.port, field="--port")  # fmt: skip
    explorer = RunExplorer(args.run_dir)
    for note in explorer.notes:
        print(f"explore: left out: {note}", file=sys.stderr)
    server = make_server(explorer, args.host, args.port)
    try:
        print(f"explore: serving {args.run_dir} at {server.url} (Ctrl-C stops)", flush=True)
        if args.open:
            webbrowser.open(server.url)
        server.serve_forever()
    except KeyboardInterrupt:
        print("explore: stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0
