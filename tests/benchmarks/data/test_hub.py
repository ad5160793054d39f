"""``hf:ORG/NAME[@REVISION]`` tokenizers, fetched with huggingface_hub from a loopback server that answers as
the Hub's file endpoint does (``HF_ENDPOINT``/``{repo}/resolve/{revision}/{file}``: ``X-Repo-Commit``,
``ETag`` and ``X-Error-Code`` headers), never from the internet."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import bpe
from benchmarks.data.hub import hub_label, hub_tokenizer_file
from benchmarks.errors import BenchmarkError
from benchmarks.run.pretrained import resolve_pretrained
from bpe.models.spm_training import run_trainer
from bpe.pretrained.published import PretrainedSpec
from tests.errors import raises_code

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tokenizers"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
TEXT = "Merhaba dünya, 안녕하세요 세계! The tokenizer of the Hub."


class _Hub(http.server.BaseHTTPRequestHandler):
    root: Path
    revisions = ("main", COMMIT)

    def _answer(self, with_body: bool) -> None:
        parts = self.path.split("?", 1)[0].strip("/").split("/")
        if len(parts) < 5 or parts[2] != "resolve":
            return self._error(404, "EntryNotFound")
        repo, revision, name = "/".join(parts[:2]), parts[3], "/".join(parts[4:])
        if not (self.root / repo).is_dir():
            return self._error(401, "RepoNotFound")  # the Hub's answer for a missing (or private) repository
        if revision not in self.revisions:
            return self._error(404, "RevisionNotFound")
        file = self.root / repo / name
        if not file.is_file():
            return self._error(404, "EntryNotFound")
        data = file.read_bytes()
        self.send_response(200)
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if with_body:
            self.wfile.write(data)

    def _error(self, status: int, code: str) -> None:
        self.send_response(status)
        self.send_header("X-Error-Code", code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_HEAD(self) -> None:
        self._answer(False)

    def do_GET(self) -> None:
        self._answer(True)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A loopback hub holding ``org/bpe`` (a tokenizer.json exported from a tokbench byte-bpe) and ``org/spm``
    (only a tokenizer.model); its endpoint is set for this process and for the CLI's child processes."""
    root = tmp_path / "hub"
    (root / "org" / "bpe").mkdir(parents=True)
    (root / "org" / "spm").mkdir(parents=True)
    subprocess.run([sys.executable, "-m", "benchmarks.cli", "export", "--tokenizer", str(FIXTURES / "byte-bpe.json"),
                    "--format", "hf", "--out", str(root / "org" / "bpe" / "tokenizer.json")],
                   check=True, capture_output=True)  # fmt: skip
    model = run_trainer("unigram", [TEXT, "another line of text"] * 50, 320, 1.0)
    (root / "org" / "spm" / "tokenizer.model").write_bytes(model)
    handler = type("Hub", (_Hub,), {"root": root})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    yield endpoint
    server.shutdown()


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchmarks.cli", *argv], capture_output=True, text=True,
                          env=os.environ.copy())  # fmt: skip


def test_a_hub_tokenizer_is_fetched_into_the_cache_at_its_commit(hub: str, tmp_path: Path) -> None:
    file = hub_tokenizer_file("hf:org/bpe@main")
    assert file.name == "tokenizer.json" and file.parent.name == COMMIT  # pinned: the commit the revision named
    assert file.is_relative_to(tmp_path / "cache" / "hub")  # nothing outside tokbench's cache
    assert hub_tokenizer_file(f"hf:org/bpe@{COMMIT}") == file
    assert hub_tokenizer_file("hf:org/spm").name == "tokenizer.model"  # no tokenizer.json: the sentencepiece model
    assert hub_label("hf:org/bpe@main") == "bpe"


def test_encode_show_and_audit_take_a_hub_tokenizer(hub: str, tmp_path: Path) -> None:
    text = tmp_path / "text.txt"
    text.write_text(TEXT + "\n", encoding="utf-8")
    exported = hub_tokenizer_file("hf:org/bpe")
    for source in ("hf:org/bpe@main", "hf:org/spm"):
        encoded = _cli("encode", "--tokenizer", source, "--input", str(text))
        assert encoded.returncode == 0, encoded.stderr
        expected = bpe.load(hub_tokenizer_file(source)).encode(TEXT)
        assert json.loads(encoded.stdout.splitlines()[0]) == expected
    assert json.loads(_cli("encode", "--tokenizer", str(exported), "--input", str(text)).stdout) == bpe.load(
        FIXTURES / "byte-bpe.json"
    ).encode(TEXT)  # the exported file encodes as the tokbench tokenizer it came from
    shown = _cli("show", "--tokenizer", "hf:org/bpe", TEXT)
    assert shown.returncode == 0, shown.stderr
    audited = _cli("audit", "--tokenizer", "hf:org/spm")
    assert audited.returncode == 0, audited.stderr


def test_a_config_row_takes_a_hub_tokenizer_and_the_cache_serves_it_offline(hub: str, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    rows = resolve_pretrained((PretrainedSpec("bpe", "hf:org/bpe@main"),), "config.toml", None)
    row = rows["bpe"]
    assert row.file is not None and row.file.parent.name == COMMIT
    assert row.sha256 == hashlib.sha256(row.file.read_bytes()).hexdigest()
    assert row.load().encode(TEXT) == bpe.load(FIXTURES / "byte-bpe.json").encode(TEXT)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    again = resolve_pretrained((PretrainedSpec("bpe", "hf:org/bpe@main"),), "config.toml", None)
    assert again["bpe"].file == row.file and again["bpe"].sha256 == row.sha256


@pytest.mark.parametrize(
    ("source", "code", "value"),
    [
        ("hf:org", "bad_hub_source", "hf:org"),
        ("hf:org/none", "unknown_tokenizer", "org/none"),
        ("hf:org/bpe@v9", "unknown_tokenizer", "v9"),
    ],
)
def test_a_bad_hub_source_says_what_is_wrong(hub: str, source: str, code: str, value: str) -> None:
    with raises_code(BenchmarkError, code, value=value):
        hub_tokenizer_file(source)


def test_a_repository_without_a_tokenizer_file_is_refused(hub: str, tmp_path: Path) -> None:
    (tmp_path / "hub" / "org" / "empty").mkdir()
    with raises_code(BenchmarkError, "missing_file", value="org/empty"):
        hub_tokenizer_file("hf:org/empty")


def test_an_unreachable_hub_without_a_cached_file_is_an_error(hub: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)  # as HF_HUB_OFFLINE=1 at start-up
    with raises_code(BenchmarkError, "unreachable", value="org/bpe"):
        hub_tokenizer_file("hf:org/bpe")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = _cli("encode", "--tokenizer", "hf:org/bpe", "--input", os.devnull)
    assert result.returncode != 0 and "Traceback" not in result.stderr and "org/bpe" in result.stderr
