"""`tokbench run flores200`'s pieces on the sample data root: `flores-200:all` is every FLORES file the data
root holds, and the report ranks tokenizers across languages (leaderboard, scripts, Gini) in a page that sorts
the leaderboard and finds a language by name."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from benchmarks.cli import main
from benchmarks.measure.fairness import gini
from tests.browser import WAIT_SECONDS, console_errors
from tests.conftest import SAMPLE_DATA_ROOT


@pytest.fixture(scope="module")
def flores_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample's four FLORES-200 languages (100 sentences each) × three tokenizers known by name."""
    folder = tmp_path_factory.mktemp("flores200")
    root = folder / "data"
    shutil.copytree(SAMPLE_DATA_ROOT / "flores", root / "flores")
    config = folder / "f.toml"
    config.write_text('name = "f"\ncorpora = ["flores-200:all"]\nproduction = ["cl100k", "bytes", "mistral-v3"]\n'
                      'metrics = ["bytes_per_token", "tokens_per_sentence", "parity_vs_eng", "parity_joined_vs_eng"]\n'
                      "[bootstrap]\nresamples = 50\n", encoding="utf-8")  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOKBENCH_CACHE", str(folder / "cache"))
        assert main(["run", str(config), "--data-dir", str(root), "--out", str(folder / "out"), "--quiet",
                     "--jobs", "1"]) == 0  # fmt: skip
    return folder / "out"


def test_all_is_every_flores_file_of_the_data_root(flores_run: Path) -> None:
    results = pd.read_csv(flores_run / "results.csv")
    assert sorted(results["language"].unique()) == ["eng_Latn", "kor_Hang", "rus_Cyrl", "tur_Latn"]
    assert set(results["corpus"]) == {"flores-eng-latn", "flores-kor-hang", "flores-rus-cyrl", "flores-tur-latn"}


def test_the_gini_table_is_the_gini_of_the_premiums_in_results(flores_run: Path) -> None:
    results = pd.read_csv(flores_run / "results.csv")
    table = pd.read_csv(flores_run / "tables" / "fairness-gini.csv")
    for tokenizer in ("bytes", "cl100k", "mistral-v3"):
        premiums = results[(results["tokenizer"] == tokenizer) & (results["metric"] == "parity_vs_eng")]["value"]
        assert len(premiums) == 3  # English itself is not paired with English
        cell = table[(table["tokenizer"] == tokenizer) & (table["column"] == "parity_vs_eng")].iloc[0]
        assert cell["value"] == pytest.approx(gini(premiums.to_list()))
    board = pd.read_csv(flores_run / "tables" / "premium-leaderboard.csv")
    assert set(board["tokenizer"]) == {"Korean (kor_Hang)", "Russian (rus_Cyrl)", "Turkish (tur_Latn)"}
    assert set(pd.read_csv(flores_run / "tables" / "premium-by-script.csv")["tokenizer"]) == {
        "Cyrl (1 language)", "Hang (1 language)", "Latn (1 language)"}


def test_the_leaderboard_sorts_by_a_tokenizer_and_finds_a_language_by_name(flores_run: Path, browser: Any) -> None:
    browser.get((flores_run / "report.html").as_uri())
    browser.implicitly_wait(WAIT_SECONDS)
    block = browser.find_element("css selector", '[data-slug="premium-leaderboard"]')
    table = block.find_element("css selector", "table")
    headers = table.find_elements("css selector", "thead th")
    column = [header.text for header in headers].index("cl100k")
    headers[column].click()
    values = browser.execute_script(
        "var c = arguments[1]; return Array.prototype.map.call(arguments[0].tBodies[0].rows,"
        " function (row) { return parseFloat(row.cells[c].getAttribute('data-value')); });", table, column)
    assert values == sorted(values) and len(values) == 3
    block.find_element("css selector", "input.table-find").send_keys("korean")
    shown = [row.find_element("css selector", "th").text for row in table.find_elements("css selector", "tbody tr")
             if row.is_displayed()]  # fmt: skip
    assert shown == ["Korean (kor_Hang)"]
    assert console_errors(browser) == []
