"""`tokbench data fetch` / `data verify` against a real HTTP server on 127.0.0.1 (never the internet).

The test manifest lists the files of the sample data root ``tests/fixtures/data`` under the shipped manifest's
URLs, with the three transforms the real data root needs: FLORES as ``concat:`` (dev then devtest), one file
``crlf-to-lf`` and one ``drop-line:N``.  The mirror serves the bytes upstream would (transforms undone).
"""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.cli import main
from benchmarks.data import fetch as datafetch
from benchmarks.data import manifest as datamanifest
from benchmarks.data.fetch import Entry
from tests.benchmarks.data_mirror import (
    build_layout,
    hang_after,
    serving,
    stall,
    status,
    truncated,
    url_path,
    wrong_byte,
)
from tests.conftest import FULL_DATA_ROOT, SAMPLE_DATA_ROOT

CRLF_FILE = "morph/rus/tikhonov_word2morph_rus.train"
DROP_FILE = "ud/en/en_ewt-ud-test.conllu"
SPLIT_LINE = 40  # the sample FLORES files have 100 lines: "dev" = the first 40


def sample_manifest() -> list[Entry]:
    shipped = {entry.path: entry for entry in datafetch.read_manifest()}
    entries = []
    for file in sorted(p for p in SAMPLE_DATA_ROOT.rglob("*") if p.is_file()):
        path = file.relative_to(SAMPLE_DATA_ROOT).as_posix()
        if path not in shipped:
            continue
        data = file.read_bytes()
        transform = {CRLF_FILE: "crlf-to-lf", DROP_FILE: "drop-line:3"}.get(path, "")
        urls = shipped[path].urls
        entries.append(Entry(path, hashlib.sha256(data).hexdigest(), len(data), urls, transform,
                             shipped[path].license))  # fmt: skip
    return entries


MANIFEST = sample_manifest()
ENG = "flores/eng_Latn.txt"


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    root = tmp_path / "mirror"
    build_layout(MANIFEST, SAMPLE_DATA_ROOT, root, SPLIT_LINE)
    manifest_file = tmp_path / "manifest.tsv"
    datafetch.write_manifest(manifest_file, MANIFEST)
    monkeypatch.setattr(datamanifest, "SHIPPED_MANIFEST", manifest_file)
    monkeypatch.setattr(datafetch, "BACKOFF", 0.01)
    monkeypatch.setattr(datafetch, "ATTEMPTS", 3)
    with serving(root) as server:
        monkeypatch.setenv(datafetch.MIRROR_VARIABLE, server.url)
        yield server


def fetch(root: Path, **options) -> datafetch.FetchResult:
    return datafetch.fetch(root, progress=False, **options)


def assert_identical(root: Path, paths=None) -> None:
    for entry in MANIFEST:
        if paths is None or entry.path in paths:
            assert (root / entry.path).read_bytes() == (SAMPLE_DATA_ROOT / entry.path).read_bytes(), entry.path


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob(".*") if p.is_file())


def test_the_test_manifest_covers_every_transform():
    assert any(len(e.urls) == 2 for e in MANIFEST)
    assert {e.transform for e in MANIFEST} >= {"crlf-to-lf", "drop-line:3"}
    assert len(MANIFEST) == 24


def test_full_fetch_then_verify_is_identical(mirror, tmp_path, capsys):
    root = tmp_path / "data"
    assert main(["data", "fetch", str(root), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"data root: {root}" in out
    assert f"{len(MANIFEST)} fetched, 0 already there, 0 failed" in out
    assert_identical(root)
    assert leftovers(root) == []
    assert main(["data", "verify", str(root)]) == 0
    assert f"{len(MANIFEST)} matching, 0 differing, 0 missing" in capsys.readouterr().out
    sources = (root / "SOURCES.tsv").read_text(encoding="utf-8").splitlines()
    assert sources[0] == "file\turl\ttransform\tlicense" and len(sources) == len(MANIFEST) + 1
    # a second run downloads nothing
    before = len(mirror.requests)
    assert main(["data", "fetch", str(root), "--quiet"]) == 0
    assert f"0 fetched, {len(MANIFEST)} already there" in capsys.readouterr().out
    assert len(mirror.requests) == before


def test_only_fetches_the_named_groups(mirror, tmp_path):
    result = fetch(tmp_path / "d", only=["flores"])
    assert sorted(result.fetched) == sorted(e.path for e in MANIFEST if e.group == "flores")
    assert not (tmp_path / "d" / "ud").exists()


def test_interrupted_download_resumes_with_a_range_request(mirror, tmp_path):
    root = tmp_path / "data"
    served = url_path(next(e for e in MANIFEST if e.path == "ud/en/en_ewt-ud-dev.conllu").urls[0])
    mirror.fail(served, truncated(1000))
    first = fetch(root, attempts=1)
    assert list(first.failed) == ["ud/en/en_ewt-ud-dev.conllu"]
    assert not (root / "ud/en/en_ewt-ud-dev.conllu").exists()  # nothing half-written under the real name
    part = root / "ud/en/.en_ewt-ud-dev.conllu.part0"
    assert part.stat().st_size == 1000
    second = fetch(root)
    assert second.fetched == ["ud/en/en_ewt-ud-dev.conllu"]
    assert mirror.requests[-1] == (served, "bytes=1000-")
    assert_identical(root)
    assert leftovers(root) == []


def test_a_fetch_killed_mid_file_resumes_and_ends_identical(mirror, tmp_path):
    root = tmp_path / "data"
    entry = next(e for e in MANIFEST if e.path == "ud/en/en_ewt-ud-dev.conllu")
    mirror.fail(url_path(entry.urls[0]), hang_after(2000, 60.0))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    child = ("import sys; from pathlib import Path; from benchmarks.data import manifest as datamanifest; "
             "from benchmarks.cli import main; "
             f"datamanifest.SHIPPED_MANIFEST = Path({str(datamanifest.SHIPPED_MANIFEST)!r}); "
             f"sys.exit(main(['data', 'fetch', {str(root)!r}, '--only', 'ud', '--quiet']))")  # the test manifest
    process = subprocess.Popen([sys.executable, "-c", child], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
    part = root / "ud/en/.en_ewt-ud-dev.conllu.part0"
    deadline = time.monotonic() + 30
    while not (part.is_file() and part.stat().st_size == 2000) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert part.stat().st_size == 2000 and not (root / entry.path).exists()
    result = fetch(root, only=["ud"])
    assert entry.path in result.fetched and not result.failed
    assert (url_path(entry.urls[0]), "bytes=2000-") in mirror.requests
    assert_identical(root, {e.path for e in MANIFEST if e.group == "ud"})
    assert leftovers(root) == []


def test_truncated_body_is_retried_and_resumed(mirror, tmp_path):
    root = tmp_path / "data"
    mirror.fail(url_path(MANIFEST[0].urls[0]), truncated(500))
    result = fetch(root, only=["flores"])
    assert not result.failed
    ranges = [r for p, r in mirror.requests if p == url_path(MANIFEST[0].urls[0])]
    assert ranges == [None, "bytes=500-"]
    assert_identical(root, {e.path for e in MANIFEST if e.group == "flores"})


def test_server_error_then_success_is_retried(mirror, tmp_path):
    target = url_path(next(e for e in MANIFEST if e.path == CRLF_FILE).urls[0])
    mirror.fail(target, status(500), status(503))
    result = fetch(tmp_path / "d", only=["morph"])
    assert not result.failed and CRLF_FILE in result.fetched
    assert [p for p, _ in mirror.requests].count(target) == 3
    assert_identical(tmp_path / "d", {CRLF_FILE})


def test_server_errors_beyond_the_retries_fail_that_file_only(mirror, tmp_path):
    target = url_path(next(e for e in MANIFEST if e.path == CRLF_FILE).urls[0])
    mirror.fail(target, status(500), status(500), status(500))
    result = fetch(tmp_path / "d", only=["morph"])
    assert list(result.failed) == [CRLF_FILE] and "HTTP 500" in result.failed[CRLF_FILE]
    assert len(result.fetched) == sum(e.group == "morph" for e in MANIFEST) - 1


def test_404_names_the_file_fetches_the_others_and_exits_1(mirror, tmp_path, capsys):
    root = tmp_path / "data"
    mirror.fail(url_path(MANIFEST[0].urls[1]), status(404))  # the devtest half of a concat row
    assert main(["data", "fetch", str(root), "--quiet"]) == 1
    captured = capsys.readouterr()
    assert f"failed: {MANIFEST[0].path}: " in captured.err and "HTTP 404" in captured.err
    assert f"{len(MANIFEST) - 1} fetched, 0 already there, 1 failed" in captured.out
    assert not (root / MANIFEST[0].path).exists() and leftovers(root) == []
    assert main(["data", "verify", str(root)]) == 1
    assert f"missing: {MANIFEST[0].path}" in capsys.readouterr().out


def test_a_wrong_byte_is_a_hash_mismatch_and_nothing_is_written(mirror, tmp_path):
    root = tmp_path / "data"
    entry = next(e for e in MANIFEST if e.path == DROP_FILE)
    mirror.fail(url_path(entry.urls[0]), wrong_byte(10))
    result = fetch(root, only=["ud"])
    assert list(result.failed) == [DROP_FILE] and "differs from the manifest" in result.failed[DROP_FILE]
    assert not (root / DROP_FILE).exists() and leftovers(root) == []
    assert fetch(root, only=["ud"]).fetched == [DROP_FILE]  # the next run downloads it again, whole
    assert_identical(root, {DROP_FILE})


def test_a_stalled_response_times_out_and_is_retried(mirror, tmp_path):
    target = url_path(MANIFEST[1].urls[0])
    mirror.fail(target, stall(1.5))
    result = fetch(tmp_path / "d", only=["flores"], timeout=0.3)
    assert not result.failed
    assert [p for p, _ in mirror.requests].count(target) == 2
    assert_identical(tmp_path / "d", {MANIFEST[1].path})


def test_a_stalled_response_beyond_the_retries_fails_that_file(mirror, tmp_path):
    target = url_path(MANIFEST[1].urls[0])
    mirror.fail(target, stall(1.0), stall(1.0))
    result = fetch(tmp_path / "d", only=["flores"], timeout=0.2, attempts=2)
    assert list(result.failed) == [MANIFEST[1].path] and "run again to resume" in result.failed[MANIFEST[1].path]


def test_a_changed_file_is_detected_by_verify_and_refetched(mirror, tmp_path, capsys):
    root = tmp_path / "data"
    fetch(root, only=["flores"])
    (root / ENG).write_bytes(b"edited\n")
    (root / "flores" / "extra.txt").write_text("x\n")
    assert main(["data", "verify", str(root), "--only", "flores"]) == 1
    out = capsys.readouterr().out
    assert f"differs: {ENG}" in out and "extra (not in the manifest): flores/extra.txt" in out
    assert fetch(root, only=["flores"]).fetched == [ENG]
    assert_identical(root, {ENG})


def test_no_network_is_one_line_naming_the_url(mirror, tmp_path, monkeypatch, capsys):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    monkeypatch.setenv(datafetch.MIRROR_VARIABLE, f"http://127.0.0.1:{closed}")
    assert main(["data", "fetch", str(tmp_path / "d"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"cannot reach http://127.0.0.1:{closed}/raw.githubusercontent.com/" in err and "--data-dir" in err


def test_an_unwritable_target_exits_2_with_the_path(mirror, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["data", "fetch", str(blocker / "data"), "--quiet"]) == 2
    assert str(blocker) in capsys.readouterr().err


def test_other_flores_languages_are_recorded_on_first_fetch(mirror, tmp_path):
    root = tmp_path / "data"
    eng = MANIFEST[0]
    dev, devtest = flores_standin("fin")
    for url, text in zip(eng.urls, [dev, devtest], strict=True):
        served = mirror.root / url_path(url.replace("/eng_Latn.", "/fin_Latn."))
        served.write_text(text, encoding="utf-8")
    result = fetch(root, languages=["fin_Latn"], only=["flores"])
    assert result.fetched == ["flores/fin_Latn.txt"]
    assert (root / "flores/fin_Latn.txt").read_text(encoding="utf-8") == dev + devtest
    recorded = {e.path: e for e in datafetch.read_manifest(root / datafetch.LOCAL_MANIFEST)}
    assert recorded["flores/fin_Latn.txt"].sha256 == hashlib.sha256((dev + devtest).encode()).hexdigest()
    assert datafetch.verify(root, only=["flores"]).matching == ["flores/fin_Latn.txt"]
    # upstream changes: the recorded hash catches it
    (root / "flores/fin_Latn.txt").unlink()
    served.write_text(devtest.replace("devtest 1\n", "devtest CHANGED\n"), encoding="utf-8")
    again = fetch(root, languages=["fin_Latn"], only=["flores"])
    assert list(again.failed) == ["flores/fin_Latn.txt"]


def flores_standin(language: str) -> tuple[str, str]:
    """A stand-in FLORES-200 pair of the right shape: 997 dev lines and 1,012 devtest lines."""
    return ("".join(f"{language} dev {n}\n" for n in range(1, 998)),
            "".join(f"{language} devtest {n}\n" for n in range(1, 1013)))  # fmt: skip


def serve_flores(mirror, language: str, dev: bytes, devtest: bytes) -> None:
    for url, body in zip(MANIFEST[0].urls, [dev, devtest], strict=True):
        served = mirror.root / url_path(url.replace("/eng_Latn.", f"/{language}."))
        served.parent.mkdir(parents=True, exist_ok=True)
        served.write_bytes(body)


@pytest.mark.parametrize(
    ("dev", "devtest", "words"),
    [
        (b"<!DOCTYPE html><html><body>rate limited</body></html>\n", b"", "HTML markup"),
        (None, b"\x1f\x8b\x08\x00gzip bytes", "not UTF-8 text"),
        (b"", b"", "0 lines"),
        (None, b"one line\n", "998 lines"),
        (None, None, "line 5 is empty"),
    ],
    ids=["error-page", "gzip-bytes", "empty", "too-short", "empty-line"],
)
def test_a_language_outside_the_manifest_is_checked_before_it_is_kept(mirror, tmp_path, capsys, dev, devtest, words):
    """No sha256 pins a --languages file, so its content is checked: FLORES-200 text of 2,009 non-empty lines,
    UTF-8, no NUL or markup; a bad one fails (exit 1), leaves nothing behind and records no hash."""
    standin_dev, standin_devtest = (part.encode() for part in flores_standin("fin"))
    if dev is None and devtest is None:
        dev = standin_dev.replace(b"fin dev 5\n", b"\n")
    dev, devtest = (standin if part is None else part for part, standin in ((dev, standin_dev),
                                                                            (devtest, standin_devtest)))
    serve_flores(mirror, "fin_Latn", dev, devtest)
    root = tmp_path / "data"
    assert main(["data", "fetch", str(root), "--only", "flores", "--languages", "fin_Latn", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "flores/fin_Latn.txt" in err and words in err and "nothing written" in err
    assert not (root / "flores/fin_Latn.txt").exists() and leftovers(root) == []
    assert not (root / datafetch.LOCAL_MANIFEST).exists()


@pytest.mark.parametrize(
    ("body", "words"),
    [(b"<html><body>404</body></html>\n", "HTML markup"), (b"1 x\n", "line 1: expected 10 tab-separated fields"),
     (b"# only comments\n\n", "no word line")],
    ids=["error-page", "not-tab-separated", "no-words"],
)
def test_a_treebank_file_must_be_conllu(mirror, tmp_path, capsys, body, words):
    repository = mirror.root / "raw.githubusercontent.com/UniversalDependencies/UD_Finnish-TDT/r2.16"
    repository.mkdir(parents=True)
    (repository / "fi_tdt-ud-test.conllu").write_bytes(body)
    root = tmp_path / "data"
    assert main(["data", "fetch", str(root), "--only", "ud", "--ud", "UD_Finnish-TDT", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "ud/fi/fi_tdt-ud-test.conllu" in err and words in err
    assert not (root / "ud/fi/fi_tdt-ud-test.conllu").exists() and leftovers(root) == []


def test_a_bad_language_code_is_bad_input(mirror, tmp_path, capsys):
    assert main(["data", "fetch", str(tmp_path / "d"), "--languages", "finnish"]) == 2
    assert "--languages finnish" in capsys.readouterr().err


def test_mirror_url_rewrites_host_and_path():
    assert datafetch.mirror_url("https://h.org/a/b.txt", "http://127.0.0.1:9/") == "http://127.0.0.1:9/h.org/a/b.txt"
    assert datafetch.mirror_url("https://h.org/a", "") == "https://h.org/a"


def test_restrictive_licences_are_found_in_the_shipped_manifest():
    found = datafetch.restrictive_licenses(datafetch.read_manifest())
    paths = sorted(p for ps in found.values() for p in ps)
    assert "tokenizers/llama2-tokenizer.model" in paths and "tokenizers/qwen.tiktoken" in paths
    assert "ud/tr/tr_imst-ud-train.conllu" in paths and "ud/tr/tr_boun-ud-dev.conllu" not in paths


@pytest.mark.skipif(FULL_DATA_ROOT is None, reason="data root absent: set TOKBENCH_DATA or place shared/data beside "
                    "the checkout")  # fmt: skip
def test_the_shipped_manifest_matches_the_data_root_in_use():
    check = datafetch.verify(FULL_DATA_ROOT)
    assert check.mismatched == {} and check.missing == [] and check.not_downloadable == []
    assert len(check.matching) == len(datafetch.read_manifest())


def test_the_shipped_manifest_is_well_formed():
    entries = datafetch.read_manifest()
    assert len({e.path for e in entries}) == len(entries) == 46
    for entry in entries:
        assert entry.sha256 and len(entry.sha256) == 64 and entry.size
        assert entry.urls or entry.note, entry.path
        assert all(url.startswith("https://") for url in entry.urls)
    assert os.path.basename(datamanifest.SHIPPED_MANIFEST) == "manifest.tsv"


@pytest.mark.parametrize("command", [["run", "paper"], ["run", "inference"], ["reproduce", "petrov2023"]])
def test_commands_without_a_data_root_say_how_to_fetch_one(mirror, tmp_path, monkeypatch, capsys, command):
    monkeypatch.delenv("TOKBENCH_DATA", raising=False)
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TOKBENCH_FETCH", raising=False)
    assert main([*command, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "needs a data root" in err and "`tokbench data fetch`" in err
    assert mirror.requests == []  # no network access without --fetch
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("how", ["flag", "variable"])
def test_fetch_option_fetches_into_the_cache_and_goes_on(mirror, tmp_path, monkeypatch, capsys, how):
    monkeypatch.delenv("TOKBENCH_DATA", raising=False)
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    argv = ["reproduce", "petrov2023", "--languages", "tur_Latn", "--out", str(tmp_path / "out")]
    if how == "flag":
        argv.append("--fetch")
    else:
        monkeypatch.setenv("TOKBENCH_FETCH", "1")
    # it goes on to read the fetched root: the sample's FLORES file is a 100-line excerpt, which petrov2023 refuses
    fetched = tmp_path / "cache" / "data"
    assert main(argv) == 2
    assert_identical(fetched)
    err = capsys.readouterr().err
    assert f"{fetched}/flores/tur_Latn.txt: 100 lines, expected 2,009" in err
    # a later run finds the fetched data root in the cache without --fetch and downloads nothing
    monkeypatch.delenv("TOKBENCH_FETCH", raising=False)
    before = len(mirror.requests)
    assert main(argv[:6]) == 2
    assert len(mirror.requests) == before
    err = capsys.readouterr().err
    assert f"data root: {fetched} (fetched by" in err and "100 lines, expected 2,009" in err


def test_provenance_records_a_data_root_that_differs(mirror, tmp_path):
    root = tmp_path / "data"
    fetch(root)
    assert datafetch.provenance(root)["matches_manifest"] is True
    (root / ENG).write_bytes(b"mine\n")
    (root / DROP_FILE).unlink()
    facts = datafetch.provenance(root)
    assert facts["matches_manifest"] is False
    assert facts["differing"] == [ENG] and facts["missing"] == [DROP_FILE]


def test_a_ud_treebank_is_fetched_from_its_release_tag_and_recorded(mirror, tmp_path, capsys):
    root = tmp_path / "data"
    repository = mirror.root / "raw.githubusercontent.com/UniversalDependencies/UD_Finnish-TDT/r2.15"
    repository.mkdir(parents=True)
    train = (SAMPLE_DATA_ROOT / "ud/en/en_ewt-ud-dev.conllu").read_bytes()
    test = b"# sent_id = 1\n1\tx\tx\tX\t_\t_\t0\troot\t_\t_\n\n"
    (repository / "fi_tdt-ud-train.conllu").write_bytes(train)
    (repository / "fi_tdt-ud-test.conllu").write_bytes(test)  # no dev split: a 404 that is no failure
    assert main(["data", "fetch", str(root), "--only", "ud", "--ud", "UD_Finnish-TDT@r2.15", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "not fetched: ud/fi/fi_tdt-ud-dev.conllu: not in this treebank" in captured.err
    assert (root / "ud/fi/fi_tdt-ud-train.conllu").read_bytes() == train
    recorded = {e.path: e for e in datafetch.read_manifest(root / datafetch.LOCAL_MANIFEST)}
    assert recorded["ud/fi/fi_tdt-ud-test.conllu"].sha256 == hashlib.sha256(test).hexdigest()
    assert "ud/fi/fi_tdt-ud-dev.conllu" not in recorded
    (root / "ud/fi/fi_tdt-ud-test.conllu").write_bytes(b"edited\n")
    assert main(["data", "verify", str(root), "--only", "ud"]) == 1
    assert "differs: ud/fi/fi_tdt-ud-test.conllu" in capsys.readouterr().out
    assert main(["data", "fetch", str(root), "--ud", "UD_Finnish", "--quiet"]) == 2
    assert "--ud UD_Finnish: expected a treebank name such as UD_Finnish-TDT" in capsys.readouterr().err


def test_adding_a_language_is_two_commands(mirror, tmp_path, monkeypatch, capsys):
    from corpora.loader import load_corpus

    root = tmp_path / "data"
    repository = mirror.root / "raw.githubusercontent.com/UniversalDependencies/UD_Finnish-TDT/r2.16"
    repository.mkdir(parents=True)
    for split, sample in (("train", "en_ewt-ud-dev"), ("test", "en_ewt-ud-test")):  # stand-ins in UD's format
        sample_bytes = (SAMPLE_DATA_ROOT / f"ud/en/{sample}.conllu").read_bytes()
        (repository / f"fi_tdt-ud-{split}.conllu").write_bytes(sample_bytes)
    flores = (SAMPLE_DATA_ROOT / ENG).read_bytes().splitlines(keepends=True) * 21  # 2,009 lines of the right shape
    serve_flores(mirror, "fin_Latn", b"".join(flores[:997]), b"".join(flores[997:2009]))
    assert main(["data", "fetch", str(root), "--only", "flores", "--languages", "fin_Latn", "--ud", "UD_Finnish-TDT",
                 "--quiet"]) == 0  # fmt: skip
    spec = tmp_path / "ud-fin.toml"
    new = ["corpora", "new", "fin_Latn", "--ud", "UD_Finnish-TDT", "--data-dir", str(root), "--out", str(spec)]
    assert main(new) == 0
    text = spec.read_text(encoding="utf-8")
    assert 'files = "ud/fi/fi_tdt-ud-train.conllu"' in text and 'files = "flores/fin_Latn.txt"' in text
    assert "UD_Finnish-TDT" in text and "CC BY-SA 4.0" in text
    corpus = load_corpus(spec, data_dir=root)
    assert corpus.spec.id == "ud-fin" and set(corpus.roles()) == {"train", "test", "eval"}
    assert len(corpus.documents("eval")) == 2009
    assert main(new) == 2
    assert "exists" in capsys.readouterr().err


# -- a data root's own files are untrusted input ---------------------------------------------------------

LOCAL_HEADER = "\t".join(datafetch.COLUMNS) + "\n"


@pytest.mark.parametrize(("row", "words"), [
    ("flores/../../evil.txt\t\t\thttps://h.org/x\t\tCC0\t", "must be relative and stay inside the data root"),
    ("/etc/evil.txt\t\t\thttps://h.org/x\t\tCC0\t", "must be relative and stay inside the data root"),
    ("flores/fin_Latn.txt\t\t\tfile:///etc/hostname\t\tCC0\t", "must be an https:// address"),
    ("flores/fin_Latn.txt\t\t\thttp://h.org/x\t\tCC0\t", "must be an https:// address"),
    ("flores/fin_Latn.txt\t\t\thttps://h.org/x\tdrop-line:x\tCC0\t", "transform 'drop-line:x'"),
    ("flores/fin_Latn.txt\t\tabc\thttps://h.org/x\t\tCC0\t", "bytes 'abc' is not a number"),
])  # fmt: skip
def test_a_bad_local_manifest_row_is_refused_naming_file_and_line(mirror, tmp_path, capsys, row, words):
    root = tmp_path / "data"
    root.mkdir()
    (root / datafetch.LOCAL_MANIFEST).write_text(LOCAL_HEADER + row + "\n", encoding="utf-8")
    for command in (["data", "verify", str(root)], ["data", "fetch", str(root), "--quiet"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert f"{datafetch.LOCAL_MANIFEST}:2: " in err and words in err, err
    assert not (tmp_path / "evil.txt").exists()


def test_a_local_manifest_that_is_not_utf8_is_one_clear_error(mirror, tmp_path, capsys):
    root = tmp_path / "data"
    root.mkdir()
    (root / datafetch.LOCAL_MANIFEST).write_bytes(LOCAL_HEADER.encode() + b"flores/\xff.txt\t\t\t\t\t\t\n")
    assert main(["data", "verify", str(root)]) == 2
    err = capsys.readouterr().err
    assert datafetch.LOCAL_MANIFEST in err and "not UTF-8" in err


def test_a_local_row_never_overrides_a_shipped_pin(mirror, tmp_path, capsys):
    """A tampered file whose new sha256 a local row records still differs from the shipped manifest."""
    root = tmp_path / "data"
    fetch(root, only=["flores"])
    tampered = b"tampered\n"
    (root / ENG).write_bytes(tampered)
    forged = Entry(ENG, hashlib.sha256(tampered).hexdigest(), len(tampered), ("https://h.org/eng.txt",))
    datafetch.write_manifest(root / datafetch.LOCAL_MANIFEST, [forged])
    assert main(["data", "verify", str(root), "--only", "flores"]) == 1
    assert f"differs: {ENG}" in capsys.readouterr().out


def test_verify_compares_sizes_before_hashing(mirror, tmp_path, monkeypatch):
    root = tmp_path / "data"
    fetch(root, only=["flores"])
    with (root / ENG).open("r+b") as handle:  # a sparse stand-in, far larger than the manifest's file
        handle.truncate(8 * 1024**3)
    hashed: list[Path] = []
    original = datafetch.sha256_file
    monkeypatch.setattr(datafetch, "sha256_file", lambda path: hashed.append(path) or original(path))
    check = datafetch.verify(root, only=["flores"])
    assert ENG in check.mismatched and "8589934592 bytes" in check.mismatched[ENG]
    assert root / ENG not in hashed


def test_a_treebank_that_cannot_be_had_fails_and_leaves_nothing(mirror, tmp_path, capsys):
    """Every split a 404 (a misspelt treebank, or one not released at the tag): exit 1, "treebank not found",
    no empty ud/<code>/ folder, nothing recorded."""
    root = tmp_path / "data"
    assert main(["data", "fetch", str(root), "--only", "ud", "--ud", "UD_Finnish-TDX", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "failed: UD_Finnish-TDX: treebank not found" in err and "not in this treebank" not in err
    assert not (root / "ud" / "fi").exists()
    assert not (root / datafetch.LOCAL_MANIFEST).exists()


@pytest.mark.parametrize("tag", ["..", "../../x", "r2.16/../..", ""])
def test_a_bad_treebank_tag_is_bad_input(mirror, tmp_path, capsys, tag):
    assert main(["data", "fetch", str(tmp_path / "d"), "--ud", f"UD_Finnish-TDT@{tag}", "--quiet"]) == 2
    assert "bad tag" in capsys.readouterr().err
    assert not (tmp_path / "d" / "ud").exists()


def test_a_second_fetch_into_the_same_root_is_refused_while_the_first_runs(mirror, tmp_path, capsys, monkeypatch):
    """Two fetches into one data root would interleave their writes: the second is refused, exit 2, nothing
    written; the root is fetched normally once the first lets go, and holds no lock file of its own."""
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "data"
    root.mkdir()
    with datafetch.data_root_lock(root):  # the first fetch, still running
        assert main(["data", "fetch", str(root), "--only", "flores", "--quiet"]) == 2
        assert "another `tokbench data fetch` is writing this data root" in capsys.readouterr().err
        assert not (root / "flores").exists()
    assert main(["data", "fetch", str(root), "--only", "flores", "--quiet"]) == 0
    assert datafetch.verify(root, only=["flores"]).ok and leftovers(root) == []


# -- every download is checked ------------------------------------------------------------------------


def answering(code: int, headers: dict[str, str], body: Callable[[bytes], bytes]) -> Callable:
    """A fault that answers with ``code``, ``headers`` (``{size}``: the body's length) and ``body(file bytes)``,
    then closes the connection."""

    def answer(handler, _path: str, data: bytes) -> bool:
        sent = body(data)
        handler.send_response(code)
        for name, value in headers.items():
            handler.send_header(name, value.format(size=len(sent), last=len(sent) - 1))
        handler.end_headers()
        handler.wfile.write(sent)
        handler.wfile.flush()
        handler.close_connection = True
        return True

    return answer


def test_a_206_from_byte_0_is_no_resume(mirror, tmp_path):
    """The first attempt is cut after 500 bytes; the server answers the range request with the whole body as a
    206 from byte 0: appended to the 500 bytes it would corrupt the file; it is written from the start."""
    target = url_path(MANIFEST[0].urls[0])
    whole = answering(206, {"Content-Range": "bytes 0-{last}/{size}", "Content-Length": "{size}"}, lambda b: b)
    mirror.fail(target, truncated(500), whole)
    result = fetch(tmp_path / "data", only=["flores"])
    assert not result.failed
    assert_identical(tmp_path / "data", {e.path for e in MANIFEST if e.group == "flores"})


def test_a_content_length_that_is_not_a_number_is_read_to_the_end(mirror, tmp_path):
    mirror.fail(url_path(MANIFEST[0].urls[0]), answering(200, {"Content-Length": "abc"}, lambda b: b))
    assert not fetch(tmp_path / "data", only=["flores"]).failed
    assert_identical(tmp_path / "data", {e.path for e in MANIFEST if e.group == "flores"})


def test_an_endless_body_is_cut_off_and_nothing_is_kept(mirror, tmp_path):
    """No Content-Length and far more bytes than the file can have (the manifest gives its size): the file
    fails at the cap, its part files are removed, the other files are fetched."""
    entry = MANIFEST[0]
    endless = answering(200, {}, lambda b: b"x" * (2 * entry.size + (2 << 20)))
    mirror.fail(url_path(entry.urls[0]), endless)
    result = fetch(tmp_path / "data", only=["flores"])
    assert list(result.failed) == [entry.path] and "larger than" in result.failed[entry.path]
    assert not (tmp_path / "data" / entry.path).exists() and leftovers(tmp_path / "data") == []


def test_an_encoded_body_is_not_taken_for_the_file(mirror, tmp_path):
    import gzip

    entry = MANIFEST[0]
    mirror.fail(url_path(entry.urls[0]), answering(200, {"Content-Encoding": "gzip", "Content-Length": "{size}"},
                                                   gzip.compress))  # fmt: skip
    result = fetch(tmp_path / "data", only=["flores"])
    assert list(result.failed) == [entry.path] and "Content-Encoding 'gzip'" in result.failed[entry.path]
    assert leftovers(tmp_path / "data") == []


@pytest.mark.parametrize("value", ["not a url", "ftp://h.org/x", "127.0.0.1:8000"])
def test_a_mirror_that_is_not_an_address_is_bad_input(mirror, tmp_path, monkeypatch, capsys, value):
    monkeypatch.setenv(datafetch.MIRROR_VARIABLE, value)
    assert main(["data", "fetch", str(tmp_path / "d"), "--only", "flores", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{datafetch.MIRROR_VARIABLE}={value!r}: expected the address of a mirror" in err and "internal" not in err


def test_languages_all_fetches_every_language_of_petrov_et_al(mirror, tmp_path, monkeypatch, capsys):
    """`--languages all` is the 204 languages of Petrov et al.'s published table; the run is spied on rather
    than served (204 files), and `all` beside codes is bad input."""
    from benchmarks.commands import data as data_command

    asked = {}
    monkeypatch.setattr(data_command, "run_fetch", lambda root, **options: asked.update(options) or
                        datafetch.FetchResult())  # fmt: skip
    assert main(["data", "fetch", str(tmp_path / "d"), "--only", "flores", "--languages", "all", "--quiet"]) == 0
    languages = asked["languages"]
    assert len(languages) == 204 and languages == sorted(languages) and {"eng_Latn", "kaz_Cyrl"} <= set(languages)
    assert main(["data", "fetch", str(tmp_path / "d"), "--languages", "all", "fin_Latn"]) == 2
    assert "--languages all" in capsys.readouterr().err
