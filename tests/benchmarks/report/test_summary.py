"""The answer first: the summary of the committed quick run against its own tables, the terminal summary and
the page (summary first, a direction mark on every metric table)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from benchmarks.commands.experiments import terminal_summary
from benchmarks.measure.metrics import METRICS
from benchmarks.report import load_run
from benchmarks.report.summary import cell_text, headlines
from tests.browser import WAIT_SECONDS, console_errors

QUICK_REPORT = Path(__file__).resolve().parents[3] / "reports" / "quick"


def test_the_best_of_each_language_is_its_tables_bold_cell_and_the_overlap_its_intervals() -> None:
    run = load_run(QUICK_REPORT)
    found = {headline.metric: headline for headline in headlines(run)}
    assert set(found) == {"bytes_per_token", "fertility_isolated"}  # the quick run has no gold reference, no parity
    for metric, headline in found.items():
        tables = QUICK_REPORT / "tables"
        table = pd.read_csv(next(path for path in (tables / f"{metric}--{headline.eval_set}.csv",
                                                   tables / f"{metric}.csv") if path.is_file()))  # fmt: skip
        for language, best in headline.best.items():
            cells = table[(table["language"] == language) & table["not_ranked"].isna()]
            # ties broken by tokenizer label (findings' stated tie-break)
            ordered = cells.sort_values(["value", "tokenizer"], ascending=[not METRICS[metric].higher_is_better, True])
            top, second = ordered.iloc[0], ordered.iloc[1]
            assert (best.tokenizer, best.value) == (top["tokenizer"], top["value"]) and bool(top["best"])
            assert best.runner_up == second["tokenizer"]
            assert best.overlaps == bool(top["ci_low"] <= second["ci_high"] and second["ci_low"] <= top["ci_high"])
            text = cell_text(headline, best)
            assert text.startswith(best.tokenizer) and ("≈" in text) == best.overlaps


def test_the_terminal_summary_is_the_reports_table() -> None:
    printed = terminal_summary(QUICK_REPORT)
    assert "At a glance" in printed and "compression: bytes / token ↑" in printed
    report = (QUICK_REPORT / "report.md").read_text(encoding="utf-8")
    for line in printed.splitlines()[4:8]:  # a language's row: the same cells as report.md's summary
        language, *cells = [cell.strip() for cell in line.split("  ") if cell.strip()]
        row = next(row for row in report.splitlines() if row.startswith(f"| {language} "))
        assert [cell.strip() for cell in row.strip("|").split("|")][1:] == cells
    assert "Significant after Holm" in printed


#: pages of runs made outside the test run, checked as the committed ones: CI sets it to the paper and research2025
#: runs' report.html files (os.pathsep between them) after `tokbench run paper` / `research2025`
RUN_PAGES = "TOKBENCH_RUN_PAGES"


@pytest.mark.parametrize("report", ["quick", "downstream"])  # downstream: gold references, parity and BPB
def test_the_page_answers_first_and_marks_every_metric_table(browser: Any, report: str) -> None:
    _check_answers_first(browser, QUICK_REPORT.parent / report / "report.html")


def test_the_pages_of_full_runs_answer_first(browser: Any) -> None:
    """The paper page (2.9 MB, 100+ tables) is not committed: CI checks the one its paper run writes."""
    pages = [Path(page) for page in os.environ.get(RUN_PAGES, "").split(os.pathsep) if page]
    if not pages:  # the default run: .ci/run runs this test again, with the pages, once its runs are written
        pytest.skip(f"{RUN_PAGES} names no report.html of a full run (.ci/run sets it after `tokbench run paper`)")
    for page in pages:
        _check_answers_first(browser, page)


def _check_answers_first(browser: Any, page: Path) -> None:
    browser.get(page.resolve().as_uri())
    browser.implicitly_wait(WAIT_SECONDS)
    sections = browser.find_elements("css selector", "main h2")
    assert sections[0].text == "At a glance"
    first_table = browser.find_element("css selector", "main table")
    assert first_table.location["y"] < sections[1].location["y"]  # the summary's table comes before any other
    for block in browser.find_elements("css selector", ".table-block"):
        headers = [header.text for header in block.find_elements("css selector", "thead th")]
        slug = block.get_attribute("data-slug")
        metric = slug.split("--")[0]
        if metric in METRICS and METRICS[metric].higher_is_better is not None:
            assert headers[0].endswith(("↓", "↑")), (slug, headers[0])
    assert console_errors(browser) == []
