"""report.html (``benchmarks.report.html``): the same tables and cells as report.md, and the page in a real
browser (sorting by value, the language and family filters, markers on hover, the token explorer).

The page under test is the committed quick report (``reports/quick/report.html``); that it is what the
committed run files give is checked by ``test_report.py`` (the committed quick report is rebuilt there).
The splits section with its explorer is built from the committed quick files plus example sentences of the
sample data root, encoded by the run's published rows (re-loaded by name, as a run re-loads them)."""

from __future__ import annotations

import html.parser
import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from benchmarks.report import build_tables, cell_texts, load_run
from benchmarks.report.document import to_markdown
from benchmarks.report.html import page_table_count, to_html
from benchmarks.report.sections import Context
from benchmarks.report.sections.splits import splits_section
from benchmarks.report.tables import REACHED_MARK, UNK_MARK
from tests.browser import WAIT_SECONDS, console_errors
from tests.conftest import SAMPLE_DATA_ROOT

QUICK_REPORT = Path(__file__).resolve().parents[3] / "reports" / "quick"
QUICK_FILES = ("results.csv", "manifest.json", "costs.csv", "paired.csv")


# -- the same tables as report.md ------------------------------------------------------------------------


def markdown_tables(text: str) -> list[list[list[str]]]:
    """Every pipe table of a Markdown text: rows of cell texts (header first, the alignment row dropped),
    with Markdown's markup taken off (escapes, bold, code fences), as a reader sees them."""
    tables, current = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            current.append(line)
            continue
        if current:
            rows = [split_row(row) for row in current if not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", row)]
            tables.append(rows)
            current = []
    return tables


def split_row(row: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", row.strip())[1:-1]
    return [markdown_cell(cell.strip()) for cell in cells]


def markdown_cell(cell: str) -> str:
    fence = re.match(r"^(`+)", cell)
    if fence and cell.endswith(fence.group(1)):
        inner = cell[len(fence.group(1)) : -len(fence.group(1))]
        inner = inner[1:-1] if inner.startswith(" ") and inner.endswith(" ") and inner.strip() else inner
        return inner.replace("\\|", "|")
    cell = cell.replace("**", "").replace("\\|", "|").replace("\\<", "<")
    return re.sub(r"`([^`]*)`", r"\1", cell)


class TableReader(html.parser.HTMLParser):
    """The report tables of a page (``table.report-table``), as rows of cell texts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self.depth = 0  # inside a report table
        self.cell: list[str] | None = None
        self.values: list[str | None] = []  # every data-value seen, per cell, in order

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "table" and found.get("class") == "report-table":
            self.tables.append([])
            self.depth = 1
        elif self.depth and tag == "tr":
            self.tables[-1].append([])
        elif self.depth and tag in ("td", "th"):
            self.cell = []
            if tag == "td":
                self.values.append(found.get("data-value"))

    def handle_endtag(self, tag: str) -> None:
        if self.depth and tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif self.depth and tag == "table":
            self.depth = 0

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def html_tables(page: str) -> list[list[list[str]]]:
    reader = TableReader()
    reader.feed(page)
    return reader.tables


def normalized(tables: list[list[list[str]]]) -> list[list[list[str]]]:
    return [[[" ".join(cell.split()) for cell in row] for row in table] for table in tables]


def test_the_committed_quick_page_has_the_tables_and_cells_of_report_md() -> None:
    markdown = (QUICK_REPORT / "report.md").read_text(encoding="utf-8")
    page = (QUICK_REPORT / "report.html").read_text(encoding="utf-8")
    expected = normalized(markdown_tables(markdown))
    assert len(expected) >= 25
    assert page_table_count(page) == len(expected)
    assert normalized(html_tables(page)) == expected
    # best cells: bold in Markdown, <strong> in a highlighted cell of the page
    assert page.count('class="num best"') == markdown.count("**") // 2 - markdown.count("> **")
    # a self-contained page: no external resource, the plots inline
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert page.count("<svg") == len(list((QUICK_REPORT / "plots").glob("*.svg")))


def test_sort_values_are_the_cells_values_not_their_text() -> None:
    """Every numeric cell of a metric table sorts by its value as results.csv holds it (full precision)."""
    page = (QUICK_REPORT / "report.html").read_text(encoding="utf-8")
    table = page.split('data-slug="bytes_per_token"')[1].split("</table>")[0]
    found = re.findall(r'data-value="([^"]*)" data-language="([^"]+)">', table)
    assert found
    results = pd.read_csv(QUICK_REPORT / "results.csv")
    values = set(results.loc[results["metric"] == "bytes_per_token", "value"].round(12))
    assert {round(float(value), 12) for value, _ in found if value} <= values


@pytest.fixture(scope="module")
def splits_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed quick files and three FLORES sentences per language of the sample data root as the
    run's examples (the same keys in every language, as a run with parallel sets chooses them)."""
    run_dir = tmp_path_factory.mktemp("splits") / "quick"
    run_dir.mkdir()
    for name in QUICK_FILES:
        shutil.copy(QUICK_REPORT / name, run_dir / name)
    examples = []
    for language, corpus in (("eng_Latn", "embedded-eng"), ("kor_Hang", "embedded-kor"), ("tur_Latn", "embedded-tur")):
        lines = (SAMPLE_DATA_ROOT / "flores" / f"{language}.txt").read_text(encoding="utf-8").splitlines()
        for key in ("4", "7", "9"):
            examples.append({"corpus": corpus, "language": language, "id": f"flores/{language}.txt:{key}",
                             "key": key, "text": lines[int(key) - 1], "cut": False})  # fmt: skip
    document = {"role": "eval", "set": "flores", "keys": ["4", "7", "9"], "examples": examples}
    (run_dir / "examples.json").write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return run_dir


@pytest.fixture(scope="module")
def splits_blocks(splits_run: Path) -> list[Any]:
    return splits_section(Context(load_run(splits_run), [], {}))


def test_the_splits_section_has_the_same_tables_in_html(splits_blocks, tmp_path) -> None:
    markdown, page = to_markdown(splits_blocks), to_html(splits_blocks, tmp_path)
    expected = normalized(markdown_tables(markdown))
    assert len(expected) == 9  # three sentences in three languages
    assert normalized(html_tables(page)) == expected
    assert "data-tokbench-explorer" in page


# -- in a real browser -------------------------------------------------------------------------------------


def opened(browser: Any, page: Path) -> Any:
    browser.get(page.as_uri())
    browser.implicitly_wait(WAIT_SECONDS)
    return browser


def cell_values(browser: Any, table: Any, column: int) -> list[float | None]:
    values = browser.execute_script(
        "var column = arguments[1]; return Array.prototype.map.call(arguments[0].tBodies[0].rows,"
        " function (row) { return row.cells[column].getAttribute('data-value'); });", table, column)
    return [float(value) if value else None for value in values]


def test_the_quick_page_opens_without_errors_with_every_table(browser, tmp_path) -> None:
    opened(browser, QUICK_REPORT / "report.html")
    assert console_errors(browser) == []
    markdown = (QUICK_REPORT / "report.md").read_text(encoding="utf-8")
    tables = browser.find_elements("css selector", "table.report-table")
    assert len(tables) == len(markdown_tables(markdown))
    sections = [link.get_attribute("textContent") for link in browser.find_elements("css selector", "nav li.level-2 a")]
    assert sections == re.findall(r"^## (.+)$", markdown, flags=re.MULTILINE)
    shot = tmp_path / "overview.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000


def test_clicking_a_header_sorts_that_column_by_value(browser, tmp_path) -> None:
    opened(browser, QUICK_REPORT / "report.html")
    block = browser.find_element("css selector", '[data-slug="unk_word_rate"]')
    table = block.find_element("css selector", "table")
    header = table.find_elements("css selector", "thead th")[2]  # the second language
    # the quick run has a value in every cell: empty the first row's, as the page writes a cell without one (–)
    browser.execute_script("var cell = arguments[0].tBodies[0].rows[0].cells[2];"
                           " cell.setAttribute('data-value', ''); cell.textContent = '\u2013';", table)
    before = cell_values(browser, table, 2)
    assert before[0] is None and len(before) > 3  # a row without a value: it must stay last either way
    header.click()
    ascending = cell_values(browser, table, 2)
    numbers = sorted(value for value in before if value is not None)
    assert ascending == numbers + [None] * before.count(None)
    assert header.get_attribute("data-sorted") == "ascending"
    header.click()
    assert cell_values(browser, table, 2) == numbers[::-1] + [None] * before.count(None)
    # a text column sorts by its text
    first = table.find_elements("css selector", "thead th")[0]
    first.click()
    labels = [row.find_element("css selector", "th").text for row in table.find_elements("css selector", "tbody tr")]
    assert labels == sorted(labels)
    assert console_errors(browser) == []
    assert browser.save_screenshot(str(tmp_path / "sorted.png"))


def visible(browser: Any, selector: str, fact: str) -> set[str]:
    """The ``data-<fact>`` values of the elements matching ``selector`` that are displayed."""
    return set(browser.execute_script(
        "var name = arguments[1]; return Array.prototype.filter.call(document.querySelectorAll(arguments[0]),"
        " function (node) { return node.getClientRects().length > 0; })"
        ".map(function (node) { return node.getAttribute(name); });", selector, f"data-{fact}"))


def test_the_language_filter_hides_the_other_languages_everywhere(browser) -> None:
    opened(browser, QUICK_REPORT / "report.html")
    boxes = browser.find_elements("css selector", "#filters input[data-filter-language]")
    assert sorted(box.get_attribute("value") for box in boxes) == ["eng_Latn", "kor_Hang", "rus_Cyrl", "tur_Latn"]
    for box in boxes:
        if box.get_attribute("value") != "kor_Hang":
            box.click()
    assert visible(browser, "main td[data-language], main th[data-language]", "language") == {"kor_Hang"}
    # a morphology table is about one language: the others' tables are hidden, Korean's shown
    assert visible(browser, "main .table-block[data-language]", "language") == {"kor_Hang"}
    assert visible(browser, "main tr[data-language]", "language") == {"kor_Hang"}
    # the family filter: no char row left visible, the other families' rows still there
    before = visible(browser, "main tr[data-family]", "family")
    browser.find_element("css selector", '#filters input[data-filter-family="char"]').click()
    assert visible(browser, "main tr[data-family]", "family") == before - {"char"} and "char" in before
    assert console_errors(browser) == []


def test_markers_are_explained_by_their_tables_notes(browser) -> None:
    opened(browser, QUICK_REPORT / "report.html")
    markers = browser.find_elements("css selector", "abbr.marker")
    assert markers
    for marker in markers[:: max(1, len(markers) // 8)]:  # a sample over the page: each is a browser round trip
        block = marker.find_element("xpath", "ancestor::div[contains(@class, 'table-block')]")
        notes = [note.text.removeprefix("Note: ") for note in block.find_elements("css selector", ".note")]
        symbol, title = marker.text, marker.get_attribute("title")
        defining = [note for note in notes if note.startswith(symbol)]
        assert defining and title == defining[0], (symbol, title)


@pytest.fixture(scope="module")
def splits_page(splits_blocks, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("splits-page") / "report.html"
    path.write_text(to_html(splits_blocks, path.parent), encoding="utf-8")
    return path


def test_the_explorer_shows_a_korean_sentence_for_every_tokenizer(browser, splits_page, splits_run, tmp_path) -> None:
    from selenium.webdriver.support.ui import Select

    run = load_run(splits_run)
    opened(browser, splits_page)
    Select(browser.find_element("css selector", '[data-role="language"]')).select_by_value("kor_Hang")
    Select(browser.find_element("css selector", '[data-role="sentence"]')).select_by_value("7")
    text = browser.find_element("css selector", '[data-role="text"]').text
    assert text == (SAMPLE_DATA_ROOT / "flores" / "kor_Hang.txt").read_text(encoding="utf-8").splitlines()[6]
    rows = browser.find_elements("css selector", '[data-role="rows"] tr')
    assert [row.get_attribute("data-tokenizer") for row in rows] == sorted(run.tokenizers.pretrained)
    for row in rows:
        tokenizer = run.tokenizers.pretrained[row.get_attribute("data-tokenizer")]
        pieces = row.find_elements("css selector", '[data-role="piece"]')
        assert [int(piece.get_attribute("data-id")) for piece in pieces] == list(tokenizer.encode_with_spans(text).ids)
    assert console_errors(browser) == []
    assert browser.save_screenshot(str(tmp_path / "explorer.png"))


def test_number_attribute_is_empty_for_no_value() -> None:
    from benchmarks.report.html import _number

    assert _number(None) == "" and _number(math.nan) == "" and float(_number(0.125)) == 0.125


# -- notes name exactly the rows their markers are on (structure, not wording) ------------------------------


def test_every_table_note_names_exactly_the_rows_it_is_about() -> None:
    """On the committed quick run: the ‡ note of a table lists the tokenizers whose cells carry ‡ (with the
    range of their <unk> shares), a substitution note exists for each tokenizer shown at another size than
    the report size, and a cell carries † exactly when it reached another size than requested."""

    run = load_run(QUICK_REPORT)
    tables = build_tables(run)
    checked = 0
    for table in tables:
        cells = table.cells
        unk_rows = sorted(set(cells.loc[cells["not_ranked"] == "unk", "tokenizer"]))
        unk_notes = [note for note in table.notes if note.startswith(UNK_MARK)]
        if unk_rows:
            assert len(unk_notes) == 1, table.slug
            named = re.findall(r"(?:: |, )([^,:()]+) \(([\d.]+%)(?:–([\d.]+%))?\)", unk_notes[0])
            assert [name for name, _, _ in named] == unk_rows, table.slug
            for name, low, high in named:
                shares = cells.loc[(cells["tokenizer"] == name) & (cells["not_ranked"] == "unk"), "unk_share"]
                assert (low, high or low) == (f"{shares.min():.1%}", f"{shares.max():.1%}"), (table.slug, name)
                assert shares.min() > run.unk_threshold
            checked += 1
        else:
            assert unk_notes == [], table.slug
        shifted = sorted(set(cells.loc[cells["vocab_size"].notna() & (cells["vocab_size"] != run.report_vocab_size),
                                       "tokenizer"]))  # fmt: skip
        substitution = sorted(note.split(" was not run at ")[0] for note in table.notes if " was not run at " in note)
        assert substitution == shifted, table.slug
        for tokenizer in table.tokenizers:
            for column in table.columns:
                cell = table.cell(tokenizer, column)
                if cell is None:
                    continue
                _, _, reached = cell_texts(cell, str, str)
                short = not pd.isna(cell["reached"]) and not pd.isna(cell["vocab_size"]) \
                    and cell["reached"] != cell["vocab_size"]  # fmt: skip
                expected = f"{REACHED_MARK}{int(cell['reached']):,}" if short else ""
                assert reached == expected, (table.slug, tokenizer)
    assert checked >= 3  # the quick run has a degenerate row (word) in several tables
