"""Sharing results: `tokbench export-results` (a Hugging Face datasets folder) and `tokbench compare`."""

from __future__ import annotations

import html as html_module
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks.cli import main
from benchmarks.errors import BenchmarkError
from benchmarks.files import exported_schema, read_results, result_columns
from benchmarks.measure.metrics import GROUPS, METRICS
from benchmarks.report import load_run
from benchmarks.report.document import Heading
from benchmarks.report.html import page_table_count, to_html
from benchmarks.results.compare import run_cells, select_languages, select_metrics
from benchmarks.results.export import EXPORT_FILES
from tests.browser import WAIT_SECONDS, console_errors
from tests.errors import raises_code

REPO = Path(__file__).resolve().parents[2]
QUICK = REPO / "reports" / "quick"


@pytest.fixture
def quick_run(tmp_path: Path) -> Path:
    """The committed quick run: its results.csv and manifest.json are a finished run directory."""
    run = tmp_path / "quick"
    shutil.copytree(QUICK, run)
    return run


def test_export_loads_with_datasets_and_reads_back_identical(quick_run: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    out = tmp_path / "export"
    assert main(["export-results", str(quick_run), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "manifest.json", "results.parquet"]
    card = (out / "README.md").read_text(encoding="utf-8")
    header = card.split("---\n")[1]
    import yaml

    metadata = yaml.safe_load(header)
    assert metadata["configs"] == [{"config_name": "default", "data_files": "results.parquet"}]
    assert metadata["license"] == "other" and "Apache-2.0" in card and json.loads(
        (out / "manifest.json").read_text(encoding="utf-8")) == json.loads((quick_run / "manifest.json").read_text())

    assert pq.read_schema(out / "results.parquet").remove_metadata().equals(exported_schema())
    pd.testing.assert_frame_equal(read_results(out), read_results(quick_run))

    first = (out / "results.parquet").read_bytes()
    assert main(["export-results", str(quick_run), "--out", str(out)]) == 0  # an earlier export is rewritten
    assert (out / "results.parquet").read_bytes() == first  # deterministic

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    loaded = datasets.load_dataset(str(out), split="train", cache_dir=str(tmp_path / "hf-cache"))
    assert loaded.column_names == [*result_columns(), "schema_version"]
    expected = read_results(quick_run)
    assert len(loaded) == len(expected)
    frame = loaded.to_pandas()
    assert frame["metric"].tolist() == expected["metric"].tolist()
    assert frame["value"].fillna(-1).tolist() == expected["value"].fillna(-1).tolist()
    assert set(frame["schema_version"]) == {2}


def test_export_refuses_foreign_folders_and_read_checks_the_schema(quick_run: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture) -> None:  # fmt: skip
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["export-results", str(quick_run), "--out", str(occupied)]) == 2
    assert "notes.txt" in capsys.readouterr().err and not (occupied / "results.parquet").exists()

    # a folder holding only the user's README.md is not an earlier export: it is left alone
    readme_only = tmp_path / "readme-only"
    readme_only.mkdir()
    (readme_only / "README.md").write_text("# my notes\n", encoding="utf-8")
    assert main(["export-results", str(quick_run), "--out", str(readme_only)]) == 2
    assert "README.md" in capsys.readouterr().err
    assert (readme_only / "README.md").read_text(encoding="utf-8") == "# my notes\n"

    out = tmp_path / "export"
    assert main(["export-results", str(quick_run), "--out", str(out)]) == 0
    # an export killed mid-write leaves its temporary file: the next export recognises it and goes on
    (out / ".results.parquet.k1ll3d.tmp").write_bytes(b"PAR1 half")
    assert main(["export-results", str(quick_run), "--out", str(out)]) == 0
    assert sorted(path.name for path in out.iterdir()) == sorted(EXPORT_FILES)
    table = pq.read_table(out / "results.parquet")
    # a newer schema version, then a field of the wrong type: both named, exit 2
    versions = pa.array([3] * len(table), pa.int32())
    pq.write_table(table.set_column(table.schema.get_field_index("schema_version"), "schema_version", versions),
                   out / "results.parquet")  # fmt: skip
    assert main(["check", str(out), "--baseline", str(REPO / "results/baseline/quick.json")]) == 2
    assert "schema_version [3]" in capsys.readouterr().err
    n_as_text = pa.array([str(v) for v in table.column("n").to_pylist()])
    pq.write_table(table.set_column(table.schema.get_field_index("n"), "n", n_as_text), out / "results.parquet")
    assert main(["check", str(out), "--baseline", str(REPO / "results/baseline/quick.json")]) == 2
    assert "field 'n' is string, expected int64" in capsys.readouterr().err


def _tables(markdown: str) -> dict[str, list[str]]:
    """Markdown comparison: table heading (``### ``) -> its lines (caption, table, notes); group headings
    (``## ``) end a table."""
    tables: dict[str, list[str]] = {}
    heading = None
    for line in markdown.splitlines():
        if line.startswith("### "):
            heading = line[4:]
            tables[heading] = []
        elif line.startswith("#"):
            heading = None
        elif heading is not None and line:
            tables[heading].append(line)
    return tables


def _rows(lines: list[str]) -> dict[str, list[str]]:
    table = [line for line in lines if line.startswith("|")][2:]
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in table]
    return {row[0]: row[1:] for row in cells}


def test_a_run_and_its_exported_dataset_compare_cell_for_cell(quick_run: Path, tmp_path: Path) -> None:
    exported = tmp_path / "published"
    assert main(["export-results", str(quick_run), "--out", str(exported)]) == 0
    out = tmp_path / "comparison"
    assert main(["compare", str(quick_run), str(exported), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["comparison.csv", "comparison.html", "comparison.md", "tables"]
    tables = _tables((out / "comparison.md").read_text(encoding="utf-8"))
    heading = "bytes / token (`bytes_per_token`) on `test`"
    assert heading in tables and not any(", table 2" in h for h in tables)  # same data: never split
    for lines in tables.values():
        rows = _rows(lines)
        local = {label.split("/", 1)[1]: cells for label, cells in rows.items() if label.startswith("quick/")}
        published = {label.split("/", 1)[1]: cells for label, cells in rows.items() if label.startswith("published/")}
        assert local and local == published

    # the cells are the report's own: the quick report's bytes_per_token table, row for row
    report_md = (QUICK / "report.md").read_text(encoding="utf-8")
    section = report_md.split("### bytes / token (`bytes_per_token`)\n\n", 1)[1]
    report_rows = _rows(section.split("\n\n", 2)[1].splitlines())  # after the caption
    compared = _rows(tables[heading])
    assert len(report_rows) == 12 and report_rows == {
        label.split("/", 1)[1]: cells for label, cells in compared.items() if label.startswith("quick/")}

    frame = pd.read_csv(out / "comparison.csv", keep_default_na=False)
    assert set(frame["table"]) >= {"bytes_per_token--test"}
    html = (out / "comparison.html").read_text(encoding="utf-8")
    assert page_table_count(html) == len(tables) and "http" not in html
    # each table's LaTeX and CSV, as the report writes them (the links under each table point there)
    assert sorted(path.name for path in (out / "tables").iterdir()) == sorted(
        f"{slug}.{kind}" for slug in set(frame["table"]) for kind in ("csv", "tex"))
    text = pd.read_csv(out / "comparison.csv", keep_default_na=False, dtype=str)
    for slug in set(frame["table"]):
        assert f"(tables/{slug}.tex)" in (out / "comparison.md").read_text(encoding="utf-8")
        assert (out / "tables" / f"{slug}.tex").read_text(encoding="utf-8").startswith(f"% tokbench table {slug}:")
        cells = pd.read_csv(out / "tables" / f"{slug}.csv", keep_default_na=False, dtype=str)
        assert cells.to_dict("records") == text[text["table"] == slug].drop(columns="table").to_dict("records")


def test_runs_on_different_evaluation_data_get_separate_tables(quick_run: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(quick_run, other)
    manifest = json.loads((other / "manifest.json").read_text(encoding="utf-8"))
    korean = manifest["corpora"]["embedded-kor"]  # as if its Korean text were another
    korean["fingerprint"] = "0" * 64
    korean["eval_fingerprints"] = dict.fromkeys(korean.get("eval_fingerprints", {"test": ""}), "0" * 64)
    (other / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    out = tmp_path / "comparison"
    assert main(["compare", str(quick_run), str(other), "--out", str(out)]) == 0
    tables = _tables((out / "comparison.md").read_text(encoding="utf-8"))
    first, second = tables["bytes / token (`bytes_per_token`) on `test`"], \
        tables["bytes / token (`bytes_per_token`) on `test`, table 2"]  # fmt: skip
    assert all(label.startswith("quick/") for label in _rows(first))
    assert all(label.startswith("other/") for label in _rows(second))
    assert any("other data" in line and "kor_Hang" in line and "000000000000" in line for line in second)

    # only the columns shown are compared: without Korean the two runs agree, and share one table
    assert main(["compare", str(quick_run), str(other), "--metric", "bytes_per_token", "--language", "tur_Latn",
                 "--out", str(tmp_path / "turkish")]) == 0  # fmt: skip
    tables = _tables((tmp_path / "turkish" / "comparison.md").read_text(encoding="utf-8"))
    assert list(tables) == ["bytes / token (`bytes_per_token`) on `test`"]
    rows = _rows(tables["bytes / token (`bytes_per_token`) on `test`"])
    assert len(rows) == 24 and {label.split("/")[0] for label in rows} == {"quick", "other"}


def test_per_set_fingerprints_decide_when_every_run_has_them(quick_run: Path, tmp_path: Path) -> None:
    """Two runs trained on different text (corpus fingerprints differ) but tested on the same test text
    (the same per-set fingerprint) are comparable; a differing per-set fingerprint splits them."""
    other = tmp_path / "other"
    shutil.copytree(quick_run, other)
    for run, corpus_print in ((quick_run, "a" * 64), (other, "b" * 64)):
        manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
        for entry in manifest["corpora"].values():
            entry["fingerprint"], entry["eval_fingerprints"] = corpus_print, {"test": "c" * 64}
        (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    heading = "bytes / token (`bytes_per_token`) on `test`"
    assert main(["compare", str(quick_run), str(other), "--out", str(tmp_path / "same")]) == 0
    tables = _tables((tmp_path / "same" / "comparison.md").read_text(encoding="utf-8"))
    assert f"{heading}, table 2" not in tables and len(_rows(tables[heading])) == 24

    manifest = json.loads((other / "manifest.json").read_text(encoding="utf-8"))
    manifest["corpora"]["embedded-tur"]["eval_fingerprints"]["test"] = "d" * 64
    (other / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["compare", str(quick_run), str(other), "--out", str(tmp_path / "split")]) == 0
    tables = _tables((tmp_path / "split" / "comparison.md").read_text(encoding="utf-8"))
    assert any("tur_Latn" in line and "set fingerprint dddddddddddd" in line for line in tables[f"{heading}, table 2"])


def test_compare_names_an_unreadable_run_and_writes_nothing(quick_run: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:  # fmt: skip
    out = tmp_path / "comparison"
    assert main(["compare", str(quick_run), str(tmp_path / "absent"), "--out", str(out)]) == 2
    assert "absent: no such run directory" in capsys.readouterr().err
    assert not out.exists()
    broken = tmp_path / "broken"
    shutil.copytree(quick_run, broken)
    manifest = json.loads((broken / "manifest.json").read_text(encoding="utf-8"))
    del manifest["corpora"]["embedded-kor"]["fingerprint"]
    (broken / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["compare", str(quick_run), str(broken), "--out", str(out)]) == 2
    assert "corpora.embedded-kor.fingerprint is missing" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize(("edit", "command", "words"), [
    (lambda run: _edit_manifest(run, corpora=["ud-tur"]), "compare", ("manifest.json", "corpora", "list")),
    (lambda run: _edit_manifest(run, corpora={"embedded-tur": 3}), "report", ("manifest.json", "corpora.embedded-tur")),
    (lambda run: (run / "paired.csv").write_text("corpus,eval_set\nx,y\n", encoding="utf-8"), "report",
     ("paired.csv", "metric")),
])  # fmt: skip
def test_an_edited_run_folder_is_input_checked_naming_file_and_field(quick_run, tmp_path, edit, command, words,
                                                                     capsys) -> None:  # fmt: skip
    edit(quick_run)
    argv = ["compare", str(quick_run), str(QUICK), "--out", str(tmp_path / "cmp")] if command == "compare" \
        else ["report", str(quick_run)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert all(word in err for word in words) and "internal error" not in err


def _edit_manifest(run: Path, **fields) -> None:
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    (run / "manifest.json").write_text(json.dumps({**manifest, **fields}), encoding="utf-8")


# -- the comparison laid out as the report: registry order, groups, direction marks, selection, the page ----


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed quick run compared with itself (``quick`` and ``quick#2``): every metric and language."""
    out = tmp_path_factory.mktemp("compared")
    assert main(["compare", str(QUICK), str(QUICK), "--out", str(out)]) == 0
    return out


TABLE_HEADING = re.compile(r"^### .* \(`([a-z0-9_]+)`\) on `([a-z]+)`")


def _layout(markdown: str) -> list[tuple[str, str, str]]:
    """(the group heading above it, metric, evaluation set) of every table of a comparison, in page order."""
    layout, group = [], ""
    for line in markdown.splitlines():
        if line.startswith("## "):
            group = line[3:]
        elif match := TABLE_HEADING.match(line):
            layout.append((group, match[1], match[2]))
    return layout


def test_tables_are_in_registry_order_in_the_reports_groups(compared: Path) -> None:
    layout = _layout((compared / "comparison.md").read_text(encoding="utf-8"))
    # every comparable (metric, set) of the run's own results, each once
    results = pd.read_csv(QUICK / "results.csv", keep_default_na=False)
    comparable = results[(results["reference"] == "") & results["eval_set"].isin(["test", "eval"])
                         & (results["metric"].map(lambda m: METRICS[m].group) != "parity")]  # fmt: skip
    assert sorted((metric, eval_set) for _, metric, eval_set in layout) == sorted(
        set(zip(comparable["metric"], comparable["eval_set"], strict=True)))
    # each table under its registry group's heading, groups and metrics in registry order
    assert all(group == GROUPS[METRICS[metric].group] for group, metric, _ in layout)
    rank = {name: index for index, name in enumerate(METRICS)}
    group_rank = {title: index for index, title in enumerate(GROUPS.values())}
    keys = [(group_rank[group], rank[metric]) for group, metric, _ in layout]
    assert keys == sorted(keys) and len({group for group, _, _ in layout}) >= 5
    # ... which is the order of the same tables in the run's report.md
    report_metrics = re.findall(r"^### .* \(`([a-z0-9_]+)`\)$", (QUICK / "report.md").read_text(encoding="utf-8"),
                                flags=re.MULTILINE)  # fmt: skip
    shown = {metric for _, metric, _ in layout}
    assert [metric for _, metric, _ in layout] == [metric for metric in report_metrics if metric in shown]


def test_each_header_says_whether_lower_or_higher_is_better(compared: Path) -> None:
    tables = _tables((compared / "comparison.md").read_text(encoding="utf-8"))
    page = (compared / "comparison.html").read_text(encoding="utf-8")
    marks = set()
    for heading, lines in tables.items():
        metric = TABLE_HEADING.match(f"### {heading}")[1]  # type: ignore[index]
        better = METRICS[metric].higher_is_better
        corner = "tokenizer" if better is None else "tokenizer ↑" if better else "tokenizer ↓"
        marks.add(corner)
        header = next(line for line in lines if line.startswith("|"))
        assert header.strip("|").split("|")[0].strip() == corner
        block = page.split(f'data-slug="{metric}--test"', 1)[1]
        assert block.split("</th>", 1)[0].endswith(f'<th scope="col">{corner}')
    assert marks == {"tokenizer", "tokenizer ↑", "tokenizer ↓"}


def test_the_page_has_the_reports_navigation_sorting_filter_and_style(compared: Path) -> None:
    markdown = (compared / "comparison.md").read_text(encoding="utf-8")
    page = (compared / "comparison.html").read_text(encoding="utf-8")
    navigation = page.split('<nav id="navigation">', 1)[1].split("</nav>", 1)[0]
    level = {n: re.findall(rf'<li class="level-{n}"><a href="#[a-z0-9-]+">([^<]+)</a>', navigation) for n in (2, 3)}
    assert level[2] == re.findall(r"^## (.+)$", markdown, flags=re.MULTILINE)
    assert [html_module.unescape(label) for label in level[3]] == [
        heading.replace("`", "").replace("\\<", "<") for heading in re.findall(r"^### (.+)$", markdown, flags=re.M)]
    assert '<fieldset data-filter="language">' in navigation and '<fieldset data-filter="family">' in navigation
    assert "sortTable" in page and "hidden[name][value]" in page  # the report's script: sorting and the filter
    tables = _tables(markdown)
    cells = sum(len(rows) * len(next(iter(rows.values()))) for rows in map(_rows, tables.values()))
    assert page.count('<td class="num') == page.count(' data-value="') == cells > 1000  # every cell sorts by value
    char_rows = sum(label.endswith("/char") for rows in map(_rows, tables.values()) for label in rows)
    assert len(re.findall(r'<tr[^>]* data-family="char"', page)) == char_rows > 0  # the family the filter hides
    # the report's own style sheet, whatever it holds
    style = re.search(r"<style>.*?</style>", to_html([Heading(1, "x")], Path("plots")), flags=re.S)[0]  # type: ignore[index]
    assert style in page and '"Noto Sans CJK KR", "Noto Sans KR"' in style  # Hangul shown as glyphs, not boxes


def test_metric_and_language_select_tables_and_columns(compared: Path, tmp_path: Path) -> None:
    out = tmp_path / "selected"
    assert main(["compare", str(QUICK), str(QUICK), "--metric", "tokens_per_kchar", "bytes_per_token",
                 "--language", "tur_Latn", "--language", "kor_Hang", "--out", str(out)]) == 0  # fmt: skip
    markdown = (out / "comparison.md").read_text(encoding="utf-8")
    tables, full = _tables(markdown), _tables((compared / "comparison.md").read_text(encoding="utf-8"))
    # registry order, not the order given
    assert list(tables) == ["bytes / token (`bytes_per_token`) on `test`",
                            "tokens / 1k chars (`tokens_per_kchar`) on `test`"]  # fmt: skip
    assert ("Selected with `--metric` `tokens_per_kchar`, `bytes_per_token`; `--language` `tur_Latn`, `kor_Hang`."
            in markdown)  # fmt: skip
    for heading, lines in tables.items():
        header = [cell.strip() for cell in next(line for line in lines if line.startswith("|")).strip("|").split("|")]
        full_header = [cell.strip() for cell in next(line for line in full[heading] if line.startswith("|"))
                       .strip("|").split("|")]  # fmt: skip
        assert header[1:] == ["kor_Hang", "tur_Latn"]
        keep = [full_header.index(language) - 1 for language in header[1:]]
        assert _rows(lines) == {label: [cells[i] for i in keep] for label, cells in _rows(full[heading]).items()}
    assert sorted(path.name for path in (out / "tables").iterdir()) == [
        "bytes_per_token--test.csv", "bytes_per_token--test.tex", "tokens_per_kchar--test.csv",
        "tokens_per_kchar--test.tex"]  # fmt: skip
    frame = pd.read_csv(out / "comparison.csv", keep_default_na=False)
    assert set(frame["language"]) == {"kor_Hang", "tur_Latn"} and len(frame) == 2 * 24 * 2


@pytest.fixture(scope="module")
def quick_cells() -> pd.DataFrame:
    return run_cells(load_run(QUICK), "quick")


@pytest.mark.parametrize(("select", "code", "value", "words"), [
    (lambda cells: select_metrics(cells, ["bytes_per_tokn"]), "unknown_metric", "bytes_per_tokn",
     ("did you mean 'bytes_per_token'", "unk_token_rate, unk_word_rate", "tokens_per_kchar")),
    (lambda cells: select_metrics(cells, ["bytes_per_token", "boundary_f1"]), "metric_not_compared", "boundary_f1",
     ("morpheme reference", "bytes_per_token")),
    (lambda cells: select_metrics(cells, ["parity_vs_eng"]), "metric_not_compared", "parity_vs_eng",
     ("parity metrics are not compared",)),
    (lambda cells: select_languages(cells, ["kor_Hang", "fra_Latn"]), "language_not_compared", "fra_Latn",
     ("eng_Latn, kor_Hang, rus_Cyrl, tur_Latn",)),
])  # fmt: skip
def test_a_selection_the_runs_cannot_give_is_one_coded_error_listing_the_choices(quick_cells, select, code, value,
                                                                                 words) -> None:  # fmt: skip
    with raises_code(BenchmarkError, code, value=value) as caught:
        select(quick_cells)
    assert all(word in str(caught.value) for word in words), str(caught.value)
    # the choices listed are the metrics the run holds, in registry order
    if code == "unknown_metric":
        listed = str(caught.value).split("the metrics of these runs: ", 1)[1].split(" (every metric", 1)[0]
        assert listed.split(", ") == [metric for metric in METRICS if metric in set(quick_cells["metric"])]


def test_the_command_refuses_an_unknown_metric_and_writes_nothing(tmp_path: Path, capsys) -> None:
    out = tmp_path / "comparison"
    assert main(["compare", str(QUICK), "--metric", "bytes_per_token", "bytes_per_tokn", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown metric 'bytes_per_tokn'" in err and "fertility_running" in err
    assert not out.exists()


def test_the_page_sorts_a_column_and_filters_rows_in_a_browser(browser, compared: Path) -> None:
    browser.get((compared / "comparison.html").as_uri())
    browser.implicitly_wait(WAIT_SECONDS)
    table = browser.find_element("css selector", '[data-slug="bytes_per_token--test"] table')
    header = table.find_elements("css selector", "thead th")[2]  # kor_Hang
    assert header.text == "kor_Hang"

    def column() -> list[float]:
        return [float(value) for value in browser.execute_script(
            "return Array.prototype.map.call(arguments[0].tBodies[0].rows,"
            " function (row) { return row.cells[2].getAttribute('data-value'); });", table)]  # fmt: skip

    before = column()
    header.click()
    assert column() == sorted(before) and header.get_attribute("data-sorted") == "ascending"
    header.click()
    assert column() == sorted(before, reverse=True)

    def shown(selector: str, fact: str) -> list[str]:
        return browser.execute_script(
            "var name = arguments[1]; return Array.prototype.filter.call(document.querySelectorAll(arguments[0]),"
            " function (node) { return node.getClientRects().length > 0; })"
            ".map(function (node) { return node.getAttribute(name); });", selector, fact)  # fmt: skip

    rows = shown('[data-slug="bytes_per_token--test"] tbody tr', "data-tokenizer")
    assert len(rows) == 24 and {"quick/char", "quick#2/char"} <= set(rows)
    browser.find_element("css selector", '#filters input[data-filter-family="char"]').click()
    assert shown('[data-slug="bytes_per_token--test"] tbody tr', "data-tokenizer") == [
        row for row in rows if not row.endswith("/char")]
    for box in browser.find_elements("css selector", "#filters input[data-filter-language]"):
        if box.get_attribute("value") != "kor_Hang":
            box.click()
    assert set(shown("main td[data-language], main th[data-language]", "data-language")) == {"kor_Hang"}
    assert console_errors(browser) == []
